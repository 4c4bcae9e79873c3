"""charts/karmada-py rendered with the real helm (installed by the test extra, helm-binary)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

CHART = Path(__file__).resolve().parents[2] / "charts" / "karmada-py"
HOOK_KINDS = {"Job", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}


def helm() -> str:
    beside = Path(sys.executable).parent / "helm"  # the venv's, from the test extra
    found = str(beside) if beside.exists() else shutil.which("helm")
    assert found, "helm is installed by the test extra (helm-binary)"
    return found


def render(*sets: str, namespace: str = "karmada-system") -> subprocess.CompletedProcess[str]:
    args = [helm(), "template", "karmada", str(CHART), "-n", namespace]
    for value in sets:
        args += ["--set", value]
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
