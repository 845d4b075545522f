"""A terminal for the tests: a text stream that says it is one, and a child process whose standard error is a
pseudo-terminal (what a user at a terminal sees) while its standard output goes to a pipe."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import threading


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def run_with_terminal_stderr(argv: list[str], env: dict[str, str] | None = None,
                             timeout_s: float = 600.0) -> tuple[int, str, str]:
    """Run ``argv`` with standard error on a pseudo-terminal and standard output on a pipe; return the exit
    code, standard output and what the terminal received."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL,
                            env={**os.environ, **(env or {})})
    os.close(slave)
    received = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:                 # the child closed the terminal
                return
            if not chunk:
                return
            received.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    out, _ = proc.communicate(timeout=timeout_s)
    reader.join(timeout=10)
    os.close(master)
    return proc.returncode, out.decode(), received.decode(errors="replace")
