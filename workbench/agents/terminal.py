"""A person's terminal, carried to a shell in a session sandbox: the door they attach through, the recording.

The :class:`Door` is a Unix socket in a fresh 0700 directory of the workbench's user, so only that user (the
person who started the run, their ``workbench attach``, their ``workbench view``) can type into the shell;
nothing on the network and no other local user reaches it. Its address is written to the trial's
``session/terminal.json`` while the session waits or runs. A client sends one JSON line (``{"cols", "rows",
"name"}``) and then the raw keys; it receives the raw output. A second client replaces the first (a person
whose terminal closed attaches again; the shell went on).

The :class:`Cast` writes what the shell printed as an asciinema v2 recording (the standard format: a header
line, then ``[seconds, "o", text]`` per chunk), capped like every log of a sandbox. :class:`Commands` cuts the
same stream into the commands typed and their output, from a marker the shell's prompt prints after each
command (an OSC sequence, which terminals ignore; it is taken out before anything is shown or recorded).
"""

from __future__ import annotations

import base64
import codecs
import contextlib
import json
import os
import re
import select
import socket
import struct
import sys
import tempfile
import termios
import threading
import time
import tty
from pathlib import Path
from typing import Any

from ..io import atomic_write_json, remove_tree

MARK = b"\x1b]7770;"  # ... <exit code>;<the command, base64>\a: printed by the prompt after each command
BEL = b"\x07"
MAX_MARK = 64 << 10  # a marker longer than this is output, not a marker
HEADER_MAX = 4096
SEND_TIMEOUT_SEC = 5  # a terminal that stops reading this long is dropped (the shell and the recording go on)
ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])|\r")


class Door:
    """The Unix socket a person's terminal attaches through; what they type goes to ``keys`` (an fd)."""

    def __init__(self, keys: int, announce: Path, about: dict[str, Any]):
        self.keys = keys
        self.dir = Path(tempfile.mkdtemp(prefix="workbench-terminal-"))  # 0700: this user only
        self.path = self.dir / "door"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(self.path))
        self.sock.listen(4)
        self.announce = announce
        atomic_write_json(announce, {"socket": str(self.path), "pid": os.getpid(), **about})
        self.attached = threading.Event()
        self.size = (80, 24)
        self.name: str | None = None
        self._client: socket.socket | None = None
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True, name="terminal-door").start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            try:
                header = _read_header(conn)
            except (OSError, ValueError):
                conn.close()
                continue
            # sends time out (SO_SNDTIMEO; receiving keys does not): a stopped terminal cannot hold the relay,
            # and with it the shell's output and the next terminal's attach, for ever
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", SEND_TIMEOUT_SEC, 0))
            with self._lock:
                if self._client is not None:
                    with contextlib.suppress(OSError):
                        self._client.sendall(b"\r\n[workbench] another terminal attached to this session\r\n")
                        self._client.close()
                self._client = conn
                if not self.attached.is_set():
                    self.size = (_bounded(header.get("cols"), 80), _bounded(header.get("rows"), 24))
                    self.name = str(header.get("name") or "")[:80] or None
            self.attached.set()
            threading.Thread(target=self._keys_from, args=(conn,), daemon=True, name="terminal-keys").start()

    def _keys_from(self, conn: socket.socket) -> None:
        try:
            while data := conn.recv(1 << 16):
                os.write(self.keys, data)
        except OSError:
            pass

    def send(self, data: bytes) -> None:
        """Show output to the attached terminal, if any (a closed one is dropped; the shell goes on)."""
        with self._lock:
            if self._client is None:
                return
            try:
                self._client.sendall(data)
            except OSError:
                self._client = None

    def close(self, farewell: bytes = b"") -> None:
        self._closed = True
        self.announce.unlink(missing_ok=True)
        if farewell:
            self.send(farewell)
        with self._lock:
            if self._client is not None:
                with contextlib.suppress(OSError):
                    self._client.shutdown(socket.SHUT_RDWR)
                self._client.close()
        self.sock.close()
        remove_tree(self.dir)


def _read_header(conn: socket.socket) -> dict[str, Any]:
    conn.settimeout(10)
    line = b""
    while not line.endswith(b"\n"):
        chunk = conn.recv(1)
        if not chunk or len(line) > HEADER_MAX:
            raise ValueError("no header")
        line += chunk
    conn.settimeout(None)
    value = json.loads(line)
    return value if isinstance(value, dict) else {}


def _bounded(value: Any, default: int) -> int:
    try:
        return min(500, max(10, int(value)))
    except (TypeError, ValueError):
        return default


class Cast:
    """An asciinema v2 recording of what the terminal showed, capped at ``cap_bytes``."""

    def __init__(self, path: Path, size: tuple[int, int], title: str, cap_bytes: int):
        self.path, self.cap = Path(path), cap_bytes
        self.start = time.monotonic()
        self.capped = False
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._fh = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()
        header = {"version": 2, "width": size[0], "height": size[1], "timestamp": int(time.time()),
                  "title": title, "env": {"SHELL": "/bin/bash", "TERM": "xterm-256color"}}
        self._write(json.dumps(header) + "\n")

    def _write(self, line: str) -> None:
        self._fh.write(line)
        self._fh.flush()

    @property
    def size(self) -> int:
        return self._fh.tell()

    def output(self, data: bytes) -> None:
        text = self._decode.decode(data)
        if not text or self.capped:
            return
        line = json.dumps([round(time.monotonic() - self.start, 6), "o", text]) + "\n"
        if self.size + len(line) > self.cap:
            self.capped = True
            line = json.dumps([round(time.monotonic() - self.start, 6), "o",
                               f"\r\n[workbench: the recording stopped at its cap of {self.cap >> 20} MB]\r\n"]) + "\n"
        self._write(line)

    def close(self) -> None:
        self._fh.close()


class Commands:
    """Cuts the shell's output into (command, exit code, output) at the prompt's markers, taking the markers
    out: ``feed`` returns what is to be shown, ``on_command`` gets each finished command."""

    def __init__(self, on_command, keep: int = 256 << 10):
        self.on_command = on_command
        self.keep = keep
        self.pending = b""  # the start of a marker, not yet whole
        self.since = bytearray()  # output since the last marker (its last ``keep`` bytes)

    def feed(self, data: bytes) -> bytes:
        data = self.pending + data
        self.pending = b""
        shown = bytearray()
        while data:
            at = data.find(MARK)
            if at < 0:
                cut = len(data) - _partial_suffix(data, MARK)
                shown += data[:cut]
                self._output(data[:cut])
                self.pending = data[cut:]
                break
            shown += data[:at]
            self._output(data[:at])
            end = data.find(BEL, at)
            if end < 0:
                if len(data) - at > MAX_MARK:  # not a marker after all
                    shown += data[at:]
                    self._output(data[at:])
                else:
                    self.pending = data[at:]
                break
            self._marker(data[at + len(MARK):end])
            data = data[end + 1:]
        return bytes(shown)

    def _output(self, data: bytes) -> None:
        self.since += data
        if len(self.since) > self.keep:
            del self.since[:-self.keep]

    def _marker(self, body: bytes) -> None:
        rc, _, cmd = body.partition(b";")
        try:
            command = base64.b64decode(cmd, validate=False).decode("utf-8", errors="replace")
            code = int(rc)
        except ValueError:
            return
        self.on_command(command, code, ANSI.sub("", self.since.decode("utf-8", errors="replace")))
        self.since.clear()


def _partial_suffix(data: bytes, mark: bytes) -> int:
    """How many bytes at the end of ``data`` could be the start of ``mark``."""
    for n in range(min(len(mark) - 1, len(data)), 0, -1):
        if data.endswith(mark[:n]):
            return n
    return 0


def connect(socket_path: str | Path, cols: int, rows: int, name: str | None = None) -> socket.socket:
    """A client of a session's door: connected, its header sent; then raw keys in, raw output out."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(str(socket_path))
    conn.sendall(json.dumps({"cols": cols, "rows": rows, "name": name}).encode() + b"\n")
    return conn


def attach(socket_path: str | Path, name: str | None = None, stdin=None, stdout=None) -> None:
    """Bridge this process's terminal to a session's door until the session ends (or the door closes).

    Args:
        socket_path: the door's Unix socket (from a trial's ``session/terminal.json``).
        name: who is attaching (recorded with the session).
        stdin: the terminal to read keys from (default: this process's stdin; put in raw mode while attached).
        stdout: where the output goes (default: this process's stdout).
    """
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    in_fd, out_fd = stdin.fileno(), stdout.fileno()
    cols, rows = (os.get_terminal_size(out_fd) if os.isatty(out_fd) else os.terminal_size((80, 24)))
    conn = connect(socket_path, cols, rows, name)
    saved = termios.tcgetattr(in_fd) if os.isatty(in_fd) else None
    if saved is not None:
        tty.setraw(in_fd)
    try:
        while True:
            ready, _, _ = select.select([conn, in_fd], [], [])
            if conn in ready:
                data = conn.recv(1 << 16)
                if not data:
                    break
                os.write(out_fd, data)
            if in_fd in ready:
                keys = os.read(in_fd, 1 << 16)
                if not keys:
                    break
                conn.sendall(keys)
    except OSError:
        pass
    finally:
        if saved is not None:
            termios.tcsetattr(in_fd, termios.TCSADRAIN, saved)
        conn.close()


def waiting(root: Path, person: str | None = None) -> list[Path]:
    """The trials under ``root`` (a trial, a run's ``trials/``, a discovery run's ``sessions/``) whose person's
    session waits or runs now; with ``person``, theirs first, then those that name nobody."""
    root = Path(root)
    doors = [root / "session" / "terminal.json"] if (root / "session").is_dir() else \
        sorted(root.glob("*/*/session/terminal.json"))
    found = []
    for door in doors:
        try:
            found.append((json.loads(door.read_text(encoding="utf-8")).get("person"), door.parent.parent))
        except (OSError, ValueError, AttributeError):  # gone (the session ended) or being written
            continue
    if person is None:
        return [t for _, t in found]
    return [t for p, t in found if p == person] + [t for p, t in found if p is None]
