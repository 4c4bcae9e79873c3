"""How tests start the installed programs: through their console scripts and the real kubectl.

The console scripts live beside the Python running the tests (the virtual
environment's ``bin``); kubectl's plugin discovery finds ``kubectl-karmada``
there once that directory leads PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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


def kubectl() -> str:
    """The real kubectl binary; tests that need it fail loudly when it is missing."""
    found = shutil.which("kubectl", path=program_env()["PATH"])
    if not found:
        raise RuntimeError("kubectl is not on PATH: install kubectl v1.32 (see README)")
    return found
