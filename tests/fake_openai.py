"""A scripted OpenAI-compatible chat-completions server for tests (real HTTP, real openai client)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def reply(content: str = "", tools: list[tuple[str, Any]] | None = None, usage: tuple[int, int] = (100, 20),
          refusal: str | None = None) -> dict[str, Any]:
    """A scripted assistant turn; a tool's arguments may be a dict or a raw (possibly malformed) string."""
    return {"content": content, "tools": tools or [], "usage": usage, "refusal": refusal}


def error(status: int, retry_after: str | None = None) -> dict[str, Any]:
    return {"status": status, "retry_after": retry_after}


def slow(seconds: float, then: dict[str, Any]) -> dict[str, Any]:
    """Answer with ``then`` only after ``seconds`` (to trip client timeouts)."""
    return {**then, "delay": seconds}


class ScriptedServer:
    """POST /v1/chat/completions answers with the next scripted step; every request body is kept."""

    def __init__(self, steps: list[dict[str, Any]], default: dict[str, Any] | None = None):
        self.steps = list(steps)
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []
        self.auth: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.times.append(time.monotonic())
                server.auth.append(self.headers.get("Authorization", ""))
                step = server.steps.pop(0) if server.steps else server.default
                if step is None:
                    step = reply("nothing left in the script", [("finish", {"summary": "script ended"})])
                if step.get("delay"):
                    time.sleep(step["delay"])
                if "status" in step:
                    self.send_response(step["status"])
                    if step.get("retry_after") is not None:
                        self.send_header("Retry-After", step["retry_after"])
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(json.dumps({"error": {"message": "scripted", "type": "scripted"}}).encode())
                    return
                n = len(server.requests)
                calls = [{"id": f"call_{n}_{i}", "type": "function", "function": {
                    "name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                         for i, (name, args) in enumerate(step["tools"])]
                message = {"role": "assistant", "content": step["content"] or None,
                           **({"tool_calls": calls} if calls else {}), "refusal": step["refusal"]}
                p, c = step["usage"]
                payload = {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                           "model": body.get("model", "scripted"),
                           "choices": [{"index": 0, "message": message,
                                        "finish_reason": "tool_calls" if calls else "stop"}],
                           "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}
                data = json.dumps(payload).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *a):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
