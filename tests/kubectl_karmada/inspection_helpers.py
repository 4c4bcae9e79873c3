"""Running ``kubectl karmada`` in a test sandbox's home (so the sandbox is the default
control plane, no kubeconfig flag needed), keeping exit code and both streams."""

from __future__ import annotations

import subprocess

from tests.examples.sandbox import LocalSandbox
from tests.programs import kubectl
from tests.seeds import REPO_ROOT


def plugin(sandbox: LocalSandbox, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``kubectl karmada ARGS`` as the sandbox's user; no kubeconfig flag, no $KUBECONFIG."""
    return subprocess.run(
        [kubectl(), "karmada", *args],
        capture_output=True,
        text=True,
        env=sandbox.env,
        timeout=timeout,
        check=False,
        cwd=REPO_ROOT,
    )


def ok(sandbox: LocalSandbox, *args: str) -> str:
    result = plugin(sandbox, *args)
    assert result.returncode == 0, f"kubectl karmada {' '.join(args)} failed ({result.returncode}):\n{result.stderr}"
    return result.stdout


def members(sandbox: LocalSandbox, cluster: str, *args: str) -> str:
    """Plain kubectl against one member of the sandbox."""
    result = subprocess.run(
        [kubectl(), f"--kubeconfig={sandbox.dir / 'members.config'}", "--context", cluster, *args],
        capture_output=True,
        text=True,
        env=sandbox.env,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def table(text: str) -> list[list[str]]:
    """A printed table as rows of cells (cells hold no spaces in these tests)."""
    return [line.split() for line in text.splitlines() if line.strip()]
