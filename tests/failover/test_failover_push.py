"""Cluster failover when the serving cluster is a Push member (joined with
``kubectl karmada join``; the control plane applies its Works and probes
its health itself): a NoExecute taint moves the workload Gracefully, and a
member that stops answering turns Ready=False, a ClusterTaintPolicy taints
it NoExecute and the workload moves; back, the old copy is removed."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from localkube.server import ServerConfig
from localkube.simulation import SimulationConfig
from tests.failover.flow import FAILOVER_FLAGS, Bed, deployment, policy, selector, unready_in
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

PUSH = ("member1", "member2")


def member_config(name: str, data: Path, port: int = 0) -> ServerConfig:
    simulation = SimulationConfig(nodes=1, node_prefix=name, workloads=True)
    return ServerConfig(port=port, data_dir=data / name, simulation=simulation)


@pytest.fixture(scope="module")
def bed(localkube: ServerThread, workdir: Path) -> Iterator[Bed]:
    servers = {name: ServerThread(member_config(name, workdir)).start() for name in PUSH}
    pull = PullMode(localkube, workdir).install()
    pull.start_controlplane(*FAILOVER_FLAGS, "--graceful-eviction-timeout=90s")
    try:
        for name, server in servers.items():
            pull.join(server, name)
        for name in PUSH:
            wait_for(partial(is_ready, pull, name), timeout=60, what=f"{name} Ready")
        yield Bed(pull, servers)
    finally:
        pull.stop()
        for server in servers.values():
            server.stop()


def is_ready(pull: PullMode, name: str) -> bool:
    return pull.ready(name) == "True"


def absent(bed: Bed, cluster: str, name: str) -> bool:
    return bed.in_member(cluster, "deployment", name) is None


def primary_then_backup(name: str, **extra: Any) -> dict[str, Any]:
    """member1 while it can take the workload, else member2 (ordered cluster affinities)."""
    doc = policy(name, [selector("Deployment", name)], clusters=PUSH, **extra)
    placement = doc["spec"]["placement"]
    del placement["clusterAffinity"]
    placement["clusterAffinities"] = [
        {"affinityName": "primary", "clusterNames": ["member1"]},
        {"affinityName": "backup", "clusterNames": ["member2"]},
    ]
    return doc


def clean(bed: Bed, name: str) -> None:
    bed.admin("delete", "deployment", name, "--ignore-not-found")
    bed.admin("delete", "propagationpolicy", name, "--ignore-not-found")
    for cluster in PUSH:
        wait_for(partial(absent, bed, cluster, name), timeout=30, what=f"{name} gone from {cluster}")


def test_a_no_execute_taint_moves_a_workload_off_a_push_member(bed: Bed) -> None:
    bed.apply(deployment("cart"), primary_then_backup("cart", failover={"cluster": {"purgeMode": "Gracefully"}}))
    assert bed.serving("cart-deployment") == "member1"
    bed.apply(unready_in("cart", ["member2"]))  # the task stays pending while it is looked at
    try:
        bed.taint("member1", "unavailable=true:NoExecute")
        tasks = wait_for(lambda: bed.tasks("cart-deployment"), timeout=30, what="an eviction task")
        assert (tasks[0]["fromCluster"], tasks[0]["purgeMode"]) == ("member1", "Gracefully")
        wait_for(lambda: bed.in_member("member2", "deployment", "cart"), timeout=30, what="the new copy in member2")
        assert bed.in_member("member1", "deployment", "cart") is not None and bed.tasks("cart-deployment")
        bed.admin("delete", "overridepolicy", "cart-unready")
        samples: list[tuple[bool, bool]] = []

        def old_gone() -> bool:
            present = bed.in_member("member1", "deployment", "cart") is not None
            samples.append((present, bed.ready_in("member2", "cart")))
            return not present

        wait_for(old_gone, timeout=90, interval=0.1, what="the old copy removed from the push member")
        first_gone = next(i for i, (present, _) in enumerate(samples) if not present)
        assert any(ready for _, ready in samples[: first_gone + 1]), samples
        assert bed.serving("cart-deployment") == "member2"
    finally:
        bed.admin("delete", "overridepolicy", "cart-unready", "--ignore-not-found")
        bed.pull.plugin("taint", "clusters", "member1", "unavailable-", check=False)
        clean(bed, "cart")


TAINT_POLICY = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "ClusterTaintPolicy",
    "metadata": {"name": "push-not-ready"},
    "spec": {
        "targetClusters": {"clusterNames": ["member1"]},
        "addOnConditions": [{"conditionType": "Ready", "operator": "In", "statusValues": ["False"]}],
        "removeOnConditions": [{"conditionType": "Ready", "operator": "In", "statusValues": ["True"]}],
        "taints": [{"key": "failover.example.io/unreachable", "effect": "NoExecute"}],
    },
}


def test_a_push_member_that_stops_answering_is_failed_over_by_a_taint_policy(bed: Bed, workdir: Path) -> None:
    bed.apply(TAINT_POLICY, deployment("till"), primary_then_backup("till"))
    assert bed.serving("till-deployment") == "member1"
    server = bed.servers["member1"]
    port = int(server.url.rsplit(":", 1)[1])
    server.stop()
    try:
        # the control plane's own probes find it unreachable; the policy taints it; the workload moves
        wait_for(lambda: bed.pull.ready("member1") == "False", timeout=30, what="member1 Ready=False")
        wait_for(
            lambda: "failover.example.io/unreachable" in bed.pull.taint_keys("member1"),
            timeout=30,
            what="the policy's NoExecute taint",
        )
        wait_for(lambda: bed.targets("till-deployment") == ["member2"], timeout=30, what="till rescheduled")
        wait_for(partial(bed.ready_in, "member2", "till"), timeout=60, what="till ready in member2")
    finally:
        server = ServerThread(member_config("member1", workdir, port)).start()
        bed.servers["member1"] = server
    # back: Ready again, the policy's taint goes, the old copy is removed (its Work was deleted)
    wait_for(lambda: bed.pull.ready("member1") == "True", timeout=60, what="member1 Ready again")
    wait_for(
        lambda: "failover.example.io/unreachable" not in bed.pull.taint_keys("member1"), timeout=30, what="untainted"
    )
    wait_for(lambda: bed.in_member("member1", "deployment", "till") is None, timeout=60, what="the old copy removed")
    assert bed.targets("till-deployment") == ["member2"]  # nothing moves back
    bed.admin("delete", "clustertaintpolicy", "push-not-ready")
    clean(bed, "till")
