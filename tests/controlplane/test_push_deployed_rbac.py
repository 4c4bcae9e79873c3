"""Push mode under the deployed control plane's RBAC (``manifests/deploy``): the
control plane runs with the token of its service account, not as an admin, and
still works a joined Push cluster: it reads the member's Secret in
``karmada-cluster`` by name, probes it, applies its Works, reflects their
status, and removes them at unjoin, with no request refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localkube.simulation import SimulationConfig
from tests.programs import Background
from tests.pullmode import PullMode, wait_for
from tests.registration.test_deploy_rbac import deployed  # noqa: F401 (the fixture: the control plane as its SA)
from tests.servers import Kubectl, ServerThread, start_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "duplicated"


@pytest.fixture(scope="module")
def member() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix="m1", workloads=True))


def _json(kubectl: Kubectl, *args: str) -> Any:
    result = kubectl(*args, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def test_a_push_member_worked_with_the_deployed_rules(
    deployed: tuple[PullMode, Kubectl, Background],  # noqa: F811 (the imported fixture)
    member: ServerThread,
    workdir: Path,
) -> None:
    env, identity, controlplane = deployed
    # what it may do with the join Secrets: read one by name, nothing more
    assert identity("auth", "can-i", "get", "secrets/member1", "-n", "karmada-cluster").stdout.strip() == "yes"
    for verb in ("list", "watch", "create", "delete"):
        answer = identity("auth", "can-i", verb, "secrets", "-n", "karmada-cluster", check=False).stdout.strip()
        assert answer == "no", verb

    env.join(member, "member1")
    wait_for(lambda: env.ready("member1") == "True", timeout=40, what="member1 (push) Ready")
    wait_for(lambda: env.taint_keys("member1") == [], what="not-ready taint removed")
    env.admin("apply", "-f", str(EXAMPLE))
    in_member = env.member_admin(member, "member1")

    def ready_in_member() -> bool:
        found = _json(in_member, "get", "deploy", "nginx") or {}
        return bool((found.get("status") or {}).get("readyReplicas"))

    wait_for(ready_in_member, timeout=40, what="nginx running in member1")
    wanted = (_json(in_member, "get", "deploy", "nginx") or {})["spec"]["replicas"]

    def summed() -> bool:
        status = (_json(env.admin, "get", "deploy", "nginx") or {}).get("status") or {}
        return bool(status.get("readyReplicas") == wanted)

    wait_for(summed, timeout=30, what="the template's status from member1's Work")

    member_kubeconfig = member.kubeconfig(workdir, "member1-admin", ["system:masters"])
    out = env.plugin("unjoin", "member1", "--cluster-kubeconfig", str(member_kubeconfig)).stdout
    assert "cluster(member1) is unjoined successfully" in out
    assert in_member("get", "deploy", "nginx", check=False).returncode != 0, "its Works' objects are removed"
    log = controlplane.output()
    assert controlplane.running, log[-2000:]
    assert "forbidden" not in log.lower(), log[-2000:]
    env.admin("delete", "-f", str(EXAMPLE), "--ignore-not-found")
