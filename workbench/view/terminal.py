"""A person's session in a browser: the view attaches to the session's door (:mod:`workbench.agents.terminal`)
and carries it over HTTP, so a class can work from a browser on this machine.

The browser posts its keys and long-polls the output from an offset; the view keeps the last
:data:`KEEP` bytes of output (a browser that fell further behind sees from there). Only a client holding
the view's token reaches these routes (the view's own authentication), and the door itself is a socket of
the workbench's user: the view is one more of that user's terminals, and attaching replaces the terminal
attached before (the session goes on).
"""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path

from ..agents.terminal import connect

KEEP = 1 << 20  # output kept for browsers that poll from behind
POLL_SEC = 10.0  # a long poll answers after this long without output


class Bridge:
    """One browser-side attachment to a session's door."""

    def __init__(self, door: Path, cols: int = 110, rows: int = 30, name: str | None = None):
        info = json.loads(Path(door).read_text(encoding="utf-8"))
        self.conn = connect(info["socket"], cols, rows, name)
        self.buffer = bytearray()
        self.start = 0  # the offset of buffer[0] in the whole output
        self.open = True
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True, name="view-terminal").start()

    def _read(self) -> None:
        try:
            while data := self.conn.recv(1 << 16):
                with self.changed:
                    self.buffer += data
                    if len(self.buffer) > KEEP:
                        cut = len(self.buffer) - KEEP
                        del self.buffer[:cut]
                        self.start += cut
                    self.changed.notify_all()
        except OSError:
            pass
        with self.changed:
            self.open = False
            self.changed.notify_all()
        self.conn.close()  # the session is over (or attached elsewhere): a long-lived view keeps no socket

    def output(self, offset: int, wait: float = POLL_SEC) -> dict:
        """Output from ``offset`` on (waiting up to ``wait`` s for some): base64 data, the next offset, and
        whether the session is still open."""
        with self.changed:
            end = self.start + len(self.buffer)
            if offset >= end and self.open:
                self.changed.wait(wait)
                end = self.start + len(self.buffer)
            offset = min(max(offset, self.start), end)
            data = bytes(self.buffer[offset - self.start:])
            return {"data": base64.b64encode(data).decode(), "next": end, "open": self.open}

    def keys(self, text: str) -> bool:
        """Type ``text``; False when the session is over."""
        if not self.open:
            return False
        try:
            self.conn.sendall(text.encode("utf-8"))
        except OSError:
            return False
        return True

    def close(self) -> None:
        self.open = False
        self.conn.close()
