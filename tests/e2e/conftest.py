"""Where the end-to-end suite runs: any control plane and members described by
kubeconfigs. By default a sandbox of its own (``kubectl karmada local up``);
with ``KARMADA_E2E_KIND=1``, the kind clusters ``hack/kind-e2e.sh`` deployed
Karmada into, named by the environment:

- ``KARMADA_E2E_KUBECONFIG``: the control plane (Karmada's API server);
- ``KARMADA_E2E_MEMBERS_KUBECONFIG``: one context per member, named as its Cluster;
- ``KARMADA_E2E_MEMBERS``: those names, comma-separated (at least two);
- ``KARMADA_E2E_TIMEOUT``: seconds to wait for a state (default 45; kind pulls images).

Without kind and docker on PATH, or without those variables, the kind run is
skipped, saying why.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.examples.sandbox import sandbox_at
from tests.programs import kubectl, run


@dataclass
class Clusters:
    """The real kubectl against the control plane and each member."""

    control_plane: Path
    members_kubeconfig: Path
    members: list[str]
    cache: Path
    timeout: float

    def kubectl(self, member: str | None, *args: str, stdin: str | None = None, check: bool = True) -> Any:
        target = (
            [f"--kubeconfig={self.control_plane}"]
            if member is None
            else [
                f"--kubeconfig={self.members_kubeconfig}",
                f"--context={member}",
            ]
        )
        result = run([kubectl(), *target, f"--cache-dir={self.cache}", *args], stdin=stdin, timeout=60)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} on {member or 'karmada'} failed:\n{result.stderr}")
        return result

    def get(self, member: str | None, resource: str, name: str, namespace: str) -> dict[str, Any] | None:
        result = self.kubectl(member, "get", resource, name, "-n", namespace, "-o", "json", "--ignore-not-found")
        found: dict[str, Any] | None = json.loads(result.stdout) if result.stdout.strip() else None
        return found


def kind_settings(environ: dict[str, str]) -> tuple[Path, Path, list[str]] | str:
    """The kind run's kubeconfigs and member names, or why it cannot run."""
    missing = [tool for tool in ("kind", "docker") if shutil.which(tool) is None]
    if missing:
        return f"KARMADA_E2E_KIND=1 needs {' and '.join(missing)} on PATH"
    unset = [
        name
        for name in ("KARMADA_E2E_KUBECONFIG", "KARMADA_E2E_MEMBERS_KUBECONFIG", "KARMADA_E2E_MEMBERS")
        if not environ.get(name)
    ]
    if unset:
        return f"KARMADA_E2E_KIND=1 needs {', '.join(unset)} (hack/kind-e2e.sh sets them)"
    members = [name.strip() for name in environ["KARMADA_E2E_MEMBERS"].split(",") if name.strip()]
    if len(members) < 2:
        return "KARMADA_E2E_MEMBERS names fewer than two members"
    return Path(environ["KARMADA_E2E_KUBECONFIG"]), Path(environ["KARMADA_E2E_MEMBERS_KUBECONFIG"]), members


@pytest.fixture(scope="session")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clusters]:
    cache = tmp_path_factory.mktemp("e2e-cache")
    timeout = float(os.environ.get("KARMADA_E2E_TIMEOUT", "45"))
    if os.environ.get("KARMADA_E2E_KIND") == "1":
        settings = kind_settings(dict(os.environ))
        if isinstance(settings, str):
            pytest.skip(settings)
        control_plane, members_kubeconfig, members = settings
        yield Clusters(control_plane, members_kubeconfig, members, cache, timeout)
        return
    for sandbox in sandbox_at(tmp_path_factory.mktemp("e2e-home")):
        yield Clusters(
            sandbox.dir / "karmada.config",
            sandbox.dir / "members.config",
            ["member1", "member2", "member3"],
            cache,
            timeout,
        )
