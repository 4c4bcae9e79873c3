"""Running ``localkube serve`` as a child process: for the sandbox, which keeps
one server per cluster, and for tests and benchmarks that must measure or kill
a server from outside."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import IO

from localkube.private_files import open_private_append

READY_PREFIX = "localkube serving on "


class LocalKubeProcess:
    """One ``localkube serve`` child; :meth:`start` returns once it serves. ``env`` replaces
    the child's environment (``None``: this process's); ``log`` is created 0600."""

    def __init__(
        self,
        kubeconfig_out: Path,
        *,
        data_dir: Path | None = None,
        port: int = 0,
        extra_args: tuple[str, ...] = (),
        log: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.kubeconfig = kubeconfig_out
        self.data_dir = data_dir
        self.port = port
        self.extra_args = extra_args
        self.log = log
        self.env = env
        self.url = ""
        self._process: subprocess.Popen[str] | None = None
        self._log_file: IO[str] | None = None

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError("localkube is not running")
        return self._process.pid

    def start(self, timeout: float = 20) -> str:
        """Start the server and wait for it to serve; its URL."""
        command = [sys.executable, "-m", "localkube", "serve", "--port", str(self.port)]
        command += ["--kubeconfig-out", str(self.kubeconfig)]
        if self.data_dir is not None:
            command += ["--data-dir", str(self.data_dir)]
        command += list(self.extra_args)
        if self.log is not None:
            self._log_file = os.fdopen(open_private_append(self.log), "a", encoding="utf-8")
        self._process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=self._log_file if self._log_file is not None else subprocess.DEVNULL,
            text=True,
            env=self.env,
            start_new_session=True,  # a Ctrl-C in the caller's terminal is the caller's to handle
        )
        assert self._process.stdout is not None
        ready, _, _ = select.select([self._process.stdout], [], [], timeout)
        line = self._process.stdout.readline() if ready else ""
        if not line.startswith(READY_PREFIX):
            code = self._process.poll()
            self.stop()
            raise RuntimeError(f"localkube did not start (exit code {code}): {line.strip() or 'no output'}")
        self.url = line[len(READY_PREFIX) :].strip()
        return self.url

    def stop(self, timeout: float = 10) -> None:
        """SIGTERM, then SIGKILL if it has not exited within ``timeout``."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._close()

    def kill(self) -> None:
        """SIGKILL: the crash a data directory must survive."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._close()

    def _close(self) -> None:
        if self._process is not None and self._process.stdout is not None:
            self._process.stdout.close()
        self._process = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def __enter__(self) -> LocalKubeProcess:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
