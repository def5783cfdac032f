"""The workbench's own Python inside a sandbox: what the scoring worker runs on (:mod:`.scoring.worker`).

Everything that parses a submission's files runs in a sandbox, as the unprivileged sandbox user, who can
read neither the workbench's virtualenv (often under /root) nor the repository it came from. So the
readers get a runtime of their own in the environments directory (world-readable, outside any home):

* ``runtime-<digest>/``: a venv made from the host's ``/usr/bin/python3`` holding the readers'
  dependencies at the workbench's own versions (pydantic, numpy, pandas): made once, then reused;
* ``runtime-src-<digest>/workbench/``: a copy of the workbench package itself, keyed by its content,
  so an edited checkout gets a fresh copy and a running batch keeps the one it started with.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import json
import logging
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import WorkbenchError
from ..io import digest_of, sha256_bytes, tree_hashes
from ..sandbox.environments import envs_root

log = logging.getLogger(__name__)

BASE_PYTHON = os.environ.get("WORKBENCH_RUNTIME_PYTHON", "/usr/bin/python3")
READER_DEPENDENCIES = ("pydantic", "numpy", "pandas")
MARKER = ".workbench-runtime.json"
PACKAGE = Path(__file__).resolve().parents[1]  # the workbench package


@dataclass(frozen=True)
class Runtime:
    env: Path  # the venv: env/bin/python
    src: Path  # the directory holding the workbench package

    @property
    def python(self) -> str:
        return str(self.env / "bin" / "python")

    def argv(self, module: str, *args: str) -> list[str]:
        """Run ``module`` isolated (-I: no cwd, no PYTHONPATH, no user site), with only the copy on its path."""
        boot = (f"import runpy, sys; sys.path.insert(0, {str(self.src)!r}); "
                f"runpy.run_module({module!r}, run_name='__main__')")
        return [self.python, "-I", "-c", boot, *args]


def pins() -> list[str]:
    """The readers' dependencies at the versions the workbench itself runs with."""
    return [f"{name}=={importlib.metadata.version(name)}" for name in READER_DEPENDENCIES]


def _base_version() -> str:
    if not Path(BASE_PYTHON).is_file():
        raise WorkbenchError(f"the scoring runtime needs {BASE_PYTHON} (Debian's python3 and python3-venv)")
    out = subprocess.run([BASE_PYTHON, "-c", "import sys; print(sys.version)"], capture_output=True, text=True)
    return out.stdout.strip()


def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    fh = open(path, "a+")
    fcntl.flock(fh, fcntl.LOCK_EX)
    return fh


def _world_readable(root: Path) -> None:
    os.chmod(root, 0o755)
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames:
            os.chmod(os.path.join(dirpath, n), 0o755)
        for n in filenames:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | 0o444)


def ensure_env() -> Path:
    """The readers' venv, made on first use (a minute: pip installs the pinned wheels)."""
    want = pins()
    key = sha256_bytes(json.dumps({"python": _base_version(), "pins": want}).encode())[:16]
    env = envs_root() / f"runtime-{key}"
    if (env / MARKER).is_file():
        return env
    with _locked(env.with_name(env.name + ".lock")):
        if (env / MARKER).is_file():
            return env
        log.info("making the scoring runtime %s (%s)", env, ", ".join(want))
        shutil.rmtree(env, ignore_errors=True)
        subprocess.run([BASE_PYTHON, "-m", "venv", str(env)], check=True, capture_output=True)
        proc = subprocess.run([str(env / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                               "--no-input", *want], capture_output=True, text=True)
        if proc.returncode != 0:
            shutil.rmtree(env, ignore_errors=True)
            raise WorkbenchError(f"could not make the scoring runtime: pip install {' '.join(want)}: "
                                 f"{(proc.stderr or proc.stdout).strip()[-500:]}")
        _world_readable(env)
        (env / MARKER).write_text(json.dumps({"pins": want, "python": BASE_PYTHON}))
    return env


def ensure_src() -> Path:
    """A world-readable copy of the workbench package, keyed by its content."""
    hashes = {k: v for k, v in tree_hashes(PACKAGE).items() if k.endswith(".py")}
    src = envs_root() / f"runtime-src-{digest_of(hashes)[:16]}"
    if (src / "workbench" / "__init__.py").is_file():
        return src
    with _locked(src.with_name(src.name + ".lock")):
        if not (src / "workbench" / "__init__.py").is_file():
            tmp = src.with_name(src.name + f".partial-{os.getpid()}")
            shutil.rmtree(tmp, ignore_errors=True)
            for rel in hashes:
                (tmp / "workbench" / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(PACKAGE / rel, tmp / "workbench" / rel)
            _world_readable(tmp)
            os.replace(tmp, src)
    return src


def ensure_runtime() -> Runtime:
    """The scoring runtime (venv + package copy), made or reused."""
    return Runtime(ensure_env(), ensure_src())
