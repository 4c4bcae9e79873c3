"""A plain (non-editable) install carries what the commands need at run time."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.programs import run
from tests.seeds import REPO_ROOT


def test_installed_copy_carries_the_crds(tmp_path: Path) -> None:
    # Run from an empty directory so the checkout is not on sys.path.
    script = (
        "import manifests; print(manifests.__file__); print(len(manifests.crd_files()));"
        "print(len(manifests.controlplane_files())); print(len(manifests.deploy_files()))"
    )
    result = run([sys.executable, "-c", script], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    location, count, controlplane, deploy = result.stdout.split()
    assert int(count) == len(list((REPO_ROOT / "manifests" / "crds").glob("*.yaml"))) > 0
    assert int(controlplane) == len(list((REPO_ROOT / "manifests" / "controlplane").glob("*.yaml"))) > 0
    assert int(deploy) == len(list((REPO_ROOT / "manifests" / "deploy").glob("*.yaml"))) > 0
    assert Path(location).parent.is_dir()
