"""Background processes of the sandbox, seen from ``local up|status|down``:
each program runs under its own supervisor (:mod:`karmada.sandbox.supervisor`),
detached (it outlives the command that started it), logging to a file; found
again through its lock and state files, stopped by signalling its process
group (SIGTERM, then SIGKILL)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from karmada.private_files import private_directory
from karmada.sandbox.supervisor import lock_path, state_path

START_TIMEOUT = 10.0


@dataclass
class ProcessRecord:
    """One program the sandbox started; ``pid`` is its supervisor's (= its process group's)."""

    name: str
    pid: int
    args: list[str]
    log: str
    run_dir: str

    def alive(self) -> bool:
        """Whether the supervisor or the program still runs: the lock they hold is taken."""
        try:
            fd = os.open(lock_path(Path(self.run_dir), self.name), os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return True
            raise
        finally:
            os.close(fd)  # closing releases a lock taken by the test itself
        return False

    def state(self) -> dict[str, Any]:
        """What the supervisor last recorded (empty before it wrote anything)."""
        try:
            data: dict[str, Any] = json.loads(state_path(Path(self.run_dir), self.name).read_text())
        except (FileNotFoundError, ValueError):
            return {}
        return data

    def condition(self) -> tuple[bool, str]:
        """Whether the program is up, and a word or two saying how it is."""
        state = self.state()
        if not self.alive():
            if state.get("state") == "failed":
                return False, f"gone (gave up after {state.get('restarts', 0)} restarts, exit {state.get('last_exit')})"
            return False, "gone (its supervisor is not running)"
        if state.get("state") == "running":
            restarts = state.get("restarts", 0)
            return True, "running" + (f" (restarts: {restarts})" if restarts else "")
        if state.get("state") == "restarting":
            return False, f"restarting (exited with status {state.get('last_exit')})"
        return False, str(state.get("state") or "starting")

    def program_pid(self) -> int | None:
        pid = self.state().get("pid")
        return int(pid) if pid is not None else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def python_module(module: str) -> list[str]:
    """How to run one of our programs: this interpreter and the program's module."""
    return [sys.executable, "-m", module]


def start(name: str, args: list[str], log: Path, run_dir: Path, *, niceness: int = 0) -> ProcessRecord:
    """Start ``args`` under a supervisor, detached from this process group, output appended
    to ``log``; returns once the supervisor holds its lock and has started the program.
    ``niceness`` lowers the CPU priority of the supervisor and so of the program (``nice``
    execs the supervisor: the pid stays the one recorded)."""
    for directory in (log.parent, run_dir):
        private_directory(directory)
    state_path(run_dir, name).unlink(missing_ok=True)
    command = [
        *python_module("karmada.sandbox.supervisor"),
        f"--name={name}",
        f"--log={log}",
        f"--run-dir={run_dir}",
        "--",
        *args,
    ]
    nice = shutil.which("nice") if niceness else None
    if nice is not None:
        command = [nice, "-n", str(niceness), *command]
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    record = ProcessRecord(name, process.pid, args, str(log), str(run_dir))
    deadline = time.monotonic() + START_TIMEOUT
    while record.state().get("supervisor") != process.pid:
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the supervisor of {name} did not start (see {log})")
        time.sleep(0.02)
    return record


def wait_for_line(record: ProcessRecord, marker: str, timeout: float) -> str:
    """The first log line containing ``marker``; RuntimeError if the program exits first or time runs out."""
    deadline = time.monotonic() + timeout
    path = Path(record.log)
    while time.monotonic() < deadline:
        if path.exists():
            for line in path.read_text(errors="replace").splitlines():
                if marker in line:
                    return line
        state = record.state()
        if not record.alive() or state.get("restarts") or state.get("state") != "running":
            tail = path.read_text(errors="replace")[-800:] if path.exists() else ""
            raise RuntimeError(f"{record.name} exited during start-up; its log ({record.log}) ends with:\n{tail}")
        time.sleep(0.05)
    raise RuntimeError(f"{record.name} did not start within {timeout:g}s (see {record.log})")


def stop(records: list[ProcessRecord], timeout: float = 10.0) -> list[ProcessRecord]:
    """Ask each supervisor to stop its program (it forwards SIGTERM, then SIGKILLs), all at
    once; SIGKILL a whole group still there after ``timeout``. The records that were running."""
    running = [record for record in records if record.alive()]
    for record in running:
        try:
            os.kill(record.pid, signal.SIGTERM)
        except ProcessLookupError:
            # the supervisor is gone but its program still holds the lock: reach it through the group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while any(record.alive() for record in running) and time.monotonic() < deadline:
        for record in running:
            _reap(record.pid)
        time.sleep(0.05)
    for record in running:
        if record.alive():  # the lock is held, so the group exists and is ours
            with contextlib.suppress(ProcessLookupError):
                os.killpg(record.pid, signal.SIGKILL)
    while any(record.alive() for record in running) and time.monotonic() < deadline + 5:
        time.sleep(0.05)
    for record in records:
        _reap(record.pid)
    return running


def _reap(pid: int) -> None:
    """Collect a supervisor's exit status if it is our child (no zombies in long test runs)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
