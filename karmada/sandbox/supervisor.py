"""The supervisor of one sandbox program: runs it, restarts it when it dies,
stops it on request (``python -m karmada.sandbox.supervisor``).

``local up`` starts every program of the sandbox (the API servers, the control
plane, one agent per member) through a supervisor of its own, in a session and
process group of its own (the group's id is the supervisor's PID).

Identity without ``/proc`` (Linux and macOS alike): the supervisor takes an
exclusive ``flock`` on ``<run>/<name>.lock`` and hands that descriptor to its
child, so the lock is held exactly as long as the supervisor or the program
lives, and is released by the kernel when both are gone, however they end.
``status`` and ``down`` test the lock instead of trusting a PID: a reused PID
holds no lock. While the lock is held, the process group exists, and a
group's id is never given to another process, so ``down`` may signal it.

Restarts: whatever the exit status, the program is started again after a
backoff of 1 s doubling to 30 s (back to 1 s after it ran for a minute).
After ``GIVE_UP_AFTER`` exits in a row that each came within
``SHORT_RUN`` seconds, the supervisor records ``failed`` and exits: the
program is gone, and ``status`` says so.

State: ``<run>/<name>.json`` (written to a temporary file, then renamed, so
readers never see half of it) holds the program's PID, the state
(``running``, ``restarting``, ``failed``, ``stopped``), the number of
restarts and the last exit status.

Concurrency: one thread. SIGTERM/SIGINT only set a flag and forward SIGTERM
to the program; the main loop polls the child every 0.1 s and, once asked to
stop, waits up to ``STOP_TIMEOUT`` before SIGKILL.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

from karmada.private_files import open_private_append, write_private

FIRST_BACKOFF = 1.0
MAX_BACKOFF = 30.0
RESET_AFTER = 60.0
SHORT_RUN = 10.0
GIVE_UP_AFTER = 5
STOP_TIMEOUT = 5.0
POLL = 0.1


def lock_path(run_dir: Path, name: str) -> Path:
    return run_dir / f"{name}.lock"


def state_path(run_dir: Path, name: str) -> Path:
    return run_dir / f"{name}.json"


def write_state(path: Path, state: dict[str, Any]) -> None:
    """Replace the state file atomically, private from the first byte."""
    write_private(path, json.dumps(state).encode())


class Supervisor:
    """Runs ``args`` until told to stop, appending its output to ``log``."""

    def __init__(self, name: str, args: list[str], log: Path, run_dir: Path) -> None:
        self.name = name
        self.args = args
        self.log = log
        self.run_dir = run_dir
        self.child: subprocess.Popen[bytes] | None = None
        self.stopping = False
        self.restarts = 0
        self.last_exit: int | None = None

    def _note(self, line: str) -> None:
        with os.fdopen(open_private_append(self.log), "ab") as out:
            out.write(f"[supervisor] {time.strftime('%Y-%m-%d %H:%M:%S')} {self.name}: {line}\n".encode())

    def _record(self, state: str, **extra: Any) -> None:
        record = {
            "supervisor": os.getpid(),
            "pid": self.child.pid if self.child is not None else None,
            "state": state,
            "restarts": self.restarts,
            "last_exit": self.last_exit,
            "since": time.time(),
            **extra,
        }
        write_state(state_path(self.run_dir, self.name), record)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.stopping = True
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)

    def _spawn(self, lock_fd: int) -> float:
        with os.fdopen(open_private_append(self.log), "ab") as out:
            self.child = subprocess.Popen(
                self.args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, pass_fds=(lock_fd,)
            )
        self._record("running")
        return time.monotonic()

    def _sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self.stopping and time.monotonic() < deadline:
            time.sleep(POLL)

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        fd = os.open(lock_path(self.run_dir, self.name), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # blocking: a status check may hold it for an instant
        backoff, short_exits = FIRST_BACKOFF, 0
        started = self._spawn(fd)
        while True:
            assert self.child is not None
            code = self.child.poll()
            if code is None:
                if self.stopping:
                    return self._stop()
                time.sleep(POLL)
                continue
            self.last_exit = code
            if self.stopping:
                self._record("stopped")
                return 0
            ran = time.monotonic() - started
            if ran >= RESET_AFTER:
                backoff = FIRST_BACKOFF
            short_exits = short_exits + 1 if ran < SHORT_RUN else 0
            if short_exits >= GIVE_UP_AFTER:
                self._note(f"exited with status {code} {short_exits} times in a row, soon after each start; giving up")
                self._record("failed")
                return 1
            self._note(f"exited with status {code} after {ran:.1f}s; restarting in {backoff:g}s")
            self._record("restarting", restart_at=time.time() + backoff)
            self._sleep(backoff)
            if self.stopping:
                self._record("stopped")
                return 0
            self.restarts += 1
            backoff = min(backoff * 2, MAX_BACKOFF)
            started = self._spawn(fd)

    def _stop(self) -> int:
        assert self.child is not None
        try:
            self.child.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.child.kill()
            self.child.wait()
        self.last_exit = self.child.returncode
        self._record("stopped")
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="karmada-sandbox-supervisor", description=__doc__.split("\n")[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--run-dir", type=Path, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS...")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no program to run")
    return Supervisor(args.name, command, args.log, args.run_dir).run()


if __name__ == "__main__":
    sys.exit(main())
