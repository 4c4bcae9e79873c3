"""How tests start the installed programs: through their console scripts and the real kubectl.

The console scripts live beside the Python running the tests (the virtual
environment's ``bin``); kubectl's plugin discovery finds ``kubectl-karmada``
there once that directory leads PATH.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

BIN_DIR = Path(sys.executable).parent


def program_env() -> dict[str, str]:
    """The environment with our console scripts first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{BIN_DIR}{os.pathsep}{env.get('PATH', '')}"
    return env


def run(
    args: list[str], stdin: str | None = None, timeout: float = 30, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a program to completion, capturing its output."""
    return subprocess.run(
        args,
        input=stdin,
        capture_output=True,
        text=True,
        env=program_env(),
        timeout=timeout,
        check=False,
        cwd=cwd,
    )


def free_port() -> int:
    """A loopback port nothing listens on now (for a program's --metrics-bind-address)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def metric(port: int, name: str, /, **labels: str) -> float:
    """The sum of the samples of ``name`` with ``labels`` on ``http://127.0.0.1:<port>/metrics``
    (0 while the program does not answer)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return 0.0
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def kubectl() -> str:
    """The real kubectl binary; tests that need it fail loudly when it is missing."""
    found = shutil.which("kubectl", path=program_env()["PATH"])
    if not found:
        raise RuntimeError("kubectl is not on PATH: install kubectl v1.32 (see README)")
    return found


class Background:
    """One of our programs running in the background, its output in a log file."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.args = args
        self.log = log
        self.env = env or {}  # on top of program_env()
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> Background:
        with self.log.open("ab") as out:
            env = {**program_env(), **self.env}
            self._process = subprocess.Popen(self.args, stdout=out, stderr=subprocess.STDOUT, env=env)
        return self

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int:
        assert self._process is not None, "not started"
        return self._process.pid

    def stop(self, timeout: float = 10) -> None:
        """SIGTERM, then SIGKILL."""
        if self._process is None:
            return
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None

    def kill(self) -> None:
        """SIGKILL: the process vanishes without cleaning up."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def signal(self, sig: int) -> None:
        """Send ``sig`` (SIGSTOP, SIGCONT: a process frozen past its Lease, then thawed)."""
        assert self._process is not None and self._process.poll() is None
        self._process.send_signal(sig)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""
