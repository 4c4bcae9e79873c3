"""The agent and the CLI stay light: kubernetes_asyncio (1,261 modules) is only
imported when a kubeconfig needs an exec credential plugin."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "statement",
    ["import kubectl_karmada.cli", "import agent.cli, karmada.kube, karmada.api", "import controlplane.cli"],
)
def test_programs_do_not_load_kubernetes_asyncio(statement: str) -> None:
    probe = f"{statement}; import sys; print('kubernetes_asyncio' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "False"
