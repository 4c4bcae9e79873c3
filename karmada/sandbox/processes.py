"""Background processes of the sandbox: started detached (they outlive the
command that started them), logging to files, found again by PID, stopped
with SIGTERM then SIGKILL."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from karmada.private_files import open_private_append, private_directory


@dataclass
class ProcessRecord:
    """One process the sandbox started."""

    name: str
    pid: int
    args: list[str]
    log: str

    def alive(self) -> bool:
        """Whether the PID still runs this command (a reused PID does not count)."""
        try:
            cmdline = Path(f"/proc/{self.pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return False
        return bool(cmdline) and cmdline[0].decode(errors="replace") == self.args[0]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def python_module(module: str) -> list[str]:
    """How to run one of our programs: this interpreter and the program's module."""
    return [sys.executable, "-m", module]


def start(name: str, args: list[str], log: Path) -> ProcessRecord:
    """Start ``args`` detached from this process group, output appended to ``log``."""
    private_directory(log.parent)
    with os.fdopen(open_private_append(log), "ab") as out:
        process = subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    return ProcessRecord(name, process.pid, args, str(log))


def wait_for_line(record: ProcessRecord, marker: str, timeout: float) -> str:
    """The first log line containing ``marker``; RuntimeError if the process dies or time runs out."""
    deadline = time.monotonic() + timeout
    path = Path(record.log)
    while time.monotonic() < deadline:
        if path.exists():
            for line in path.read_text(errors="replace").splitlines():
                if marker in line:
                    return line
        if not record.alive():
            tail = path.read_text(errors="replace")[-800:] if path.exists() else ""
            raise RuntimeError(f"{record.name} exited during start-up; its log ({record.log}) ends with:\n{tail}")
        time.sleep(0.05)
    raise RuntimeError(f"{record.name} did not start within {timeout:g}s (see {record.log})")


def stop(record: ProcessRecord, timeout: float = 10.0) -> bool:
    """SIGTERM, then SIGKILL after ``timeout``; whether it was running."""
    if not record.alive():
        return False
    try:
        os.kill(record.pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout
    while record.alive() and time.monotonic() < deadline:
        _reap(record.pid)
        time.sleep(0.05)
    if record.alive():
        with contextlib.suppress(ProcessLookupError):
            os.kill(record.pid, signal.SIGKILL)
    _reap(record.pid)
    return True


def _reap(pid: int) -> None:
    """Collect a child's exit status if it is ours (no zombies in long test runs)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
