"""Make pw.x the process that leaves an output file: write the text, start pw.x with the file as its
standard output, drop our own descriptor, and stop pw.x before it prints anything. The kernel closes the
file when pw.x exits, so pw.x is its last writer."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


def write_as_pwx(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, text.encode())
    proc = subprocess.Popen(["pw.x", "-input", "/dev/null"], stdout=fd, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    os.close(fd)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(0.02)
    if Path(path).read_text() != text:  # pw.x got a word in: try again
        write_as_pwx(path, text)
