"""Killed half-way: the control plane (SIGKILL) while 200 Deployments propagate,
then an agent. After the restart every binding and Work converges: none lost,
none duplicated, every member object present once."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from karmada.api.names import binding_name, work_name
from tests.factories import deployment_list
from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]  # 200 Deployments twice, and their teardown
COUNT = 200
LEASE = ("--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s")
MEMBERS = ("member1", "member2")


@pytest.fixture(scope="module")
def fleet(localkube: ServerThread, workdir: Path, member1: ServerThread, member2: ServerThread) -> Iterator[PullMode]:
    env = PullMode(localkube, workdir).install()
    env.start_controlplane(*LEASE)
    try:
        for server, name in ((member1, "member1"), (member2, "member2")):
            env.register(server, name)
            env.start_agent(server, name)
        for name in MEMBERS:
            wait_for(_ready(env, name), timeout=30, what=f"{name} Ready")
        env.admin("apply", "-f", "-", stdin=json.dumps(_policy()))
        yield env
    finally:
        env.stop()


def _ready(env: PullMode, name: str) -> Callable[[], bool]:
    return lambda: env.ready(name) == "True"


def _count_at_least(kubectl: Kubectl, prefix: str, count: int, *args: str) -> Callable[[], bool]:
    return lambda: len(_of(prefix, _names(kubectl, *args))) >= count


def _policy() -> dict[str, Any]:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "restart", "namespace": "default"},
        "spec": {
            "resourceSelectors": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "labelSelector": {"matchLabels": {"test": "restart"}},
                }
            ],
            "placement": {
                "clusterAffinity": {"clusterNames": list(MEMBERS)},
                "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
            },
        },
    }


def _names(kubectl: Kubectl, *args: str) -> list[str]:
    out = kubectl("get", *args, "-o", "jsonpath={range .items[*]}{.metadata.name}{'\\n'}{end}", timeout=60).stdout
    return [line for line in out.splitlines() if line]


def _of(prefix: str, names: list[str]) -> list[str]:
    return [n for n in names if n.startswith(prefix + "-")]


def _converged(env: PullMode, members: dict[str, Kubectl], prefix: str) -> None:
    """Every binding scheduled to both members, one Work per member and binding, every member object."""
    expected_bindings = sorted(binding_name("Deployment", f"{prefix}-{i}") for i in range(COUNT))
    expected_works = sorted(work_name("Deployment", f"{prefix}-{i}", "default") for i in range(COUNT))

    def bindings_done() -> bool:
        listed = json.loads(env.admin("get", "resourcebindings", "-n", "default", "-o", "json", timeout=60).stdout)
        ours = [b for b in listed["items"] if b["metadata"]["name"].startswith(prefix + "-")]
        scheduled = [b for b in ours if {c["name"] for c in b["spec"].get("clusters") or []} == set(MEMBERS)]
        return len(scheduled) == COUNT

    wait_for(bindings_done, timeout=180, interval=1, what=f"{COUNT} {prefix} bindings scheduled")
    bindings = sorted(_of(prefix, _names(env.admin, "resourcebindings", "-n", "default")))
    assert bindings == expected_bindings
    for member in MEMBERS:
        space = f"karmada-es-{member}"
        wait_for(
            _count_at_least(env.admin, prefix, COUNT, "works", "-n", space),
            timeout=180,
            interval=1,
            what=f"{COUNT} {prefix} Works in {space}",
        )
        works = sorted(n for n in _names(env.admin, "works", "-n", space) if n in set(expected_works))
        everything = [n for n in _names(env.admin, "works", "-n", space) if n.startswith(prefix + "-")]
        assert works == expected_works and len(everything) == COUNT, "a Work lost or duplicated"
        kubectl = members[member]
        wait_for(
            _count_at_least(kubectl, prefix, COUNT, "deployments", "-n", "default"),
            timeout=180,
            interval=1,
            what=f"{COUNT} {prefix} Deployments in {member}",
        )
        assert len(_of(prefix, _names(kubectl, "deployments", "-n", "default"))) == COUNT


def test_control_plane_killed_mid_propagation(fleet: PullMode, member1: ServerThread, member2: ServerThread) -> None:
    members = {"member1": fleet.member_admin(member1, "member1"), "member2": fleet.member_admin(member2, "member2")}
    fleet.admin("apply", "-f", "-", stdin=json.dumps(deployment_list("cp", COUNT, "restart")), timeout=120)
    wait_for(
        lambda: len(_of("cp", _names(fleet.admin, "works", "-n", "karmada-es-member1"))) >= 10,
        timeout=120,
        interval=0.2,
        what="propagation under way",
    )
    assert fleet.controlplane is not None
    fleet.controlplane.kill()
    fleet.start_controlplane(*LEASE)
    _converged(fleet, members, "cp")


def test_agent_killed_mid_propagation(fleet: PullMode, member1: ServerThread, member2: ServerThread) -> None:
    members = {"member1": fleet.member_admin(member1, "member1"), "member2": fleet.member_admin(member2, "member2")}
    fleet.admin("apply", "-f", "-", stdin=json.dumps(deployment_list("ag", COUNT, "restart")), timeout=120)
    wait_for(
        lambda: len(_of("ag", _names(members["member1"], "deployments", "-n", "default"))) >= 10,
        timeout=120,
        interval=0.2,
        what="member1 applying",
    )
    fleet.agents["member1"].kill()
    fleet.start_agent(member1, "member1")
    _converged(fleet, members, "ag")
    # every Work of member1 ends Applied
    listed = json.loads(fleet.admin("get", "works", "-n", "karmada-es-member1", "-o", "json", timeout=60).stdout)
    for work in listed["items"]:
        if work["metadata"]["name"].startswith("ag-"):
            conditions = {c["type"]: c["status"] for c in (work.get("status") or {}).get("conditions") or []}
            assert conditions.get("Applied") == "True", work["metadata"]["name"]
