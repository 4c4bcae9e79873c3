"""The failover examples run as their READMEs say, in a sandbox started with
their ``## Sandbox`` command (failover switched on), checked in the members
with the real kubectl."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.examples.sandbox import LocalSandbox, readme_blocks, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]

MEMBERS = ("member1", "member2", "member3")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    (command,) = readme_blocks("failover-gracefully")["Sandbox"]
    for folder in ("failover-directly", "failover-taint-policy", "failover-application", "failover-dependencies"):
        assert readme_blocks(folder)["Sandbox"] == [command]
    sandbox = LocalSandbox(tmp_path_factory.mktemp("home"))
    sandbox.sh(command, timeout=180)
    try:
        yield sandbox
    finally:
        sandbox.down()


def placed(sandbox: LocalSandbox) -> list[str]:
    return [c for c in MEMBERS if sandbox.get(c, "deployment", "nginx") is not None]


def binding(sandbox: LocalSandbox) -> dict[str, Any]:
    return sandbox.get(None, "rb", "nginx-deployment") or {}


def clusters_state(sandbox: LocalSandbox) -> dict[str, Any]:
    """Each member's Ready condition and taints, for a failure message."""
    state = {}
    for c in MEMBERS:
        cluster = sandbox.get(None, "cluster", c) or {}
        ready = [x for x in (cluster.get("status") or {}).get("conditions") or [] if x.get("type") == "Ready"]
        state[c] = (ready, (cluster.get("spec") or {}).get("taints"))
    return state


def clean(sandbox: LocalSandbox, folder: str) -> None:
    sandbox.run_block(folder, "Clean up")
    wait_until(lambda: not placed(sandbox), f"{folder}: nginx gone from the members", timeout=60)


def test_gracefully(sandbox: LocalSandbox) -> None:
    try:
        sandbox.run_block("failover-gracefully", "Run")
        spec = binding(sandbox)["spec"]
        old = spec["gracefulEvictionTasks"][0]["fromCluster"] if spec.get("gracefulEvictionTasks") else None
        new = wait_until(lambda: [c for c in placed(sandbox) if c != old] or None, "nginx in another cluster", 60)
        assert old is None or old not in [c["name"] for c in binding(sandbox)["spec"].get("clusters") or []]
        wait_until(lambda: len(placed(sandbox)) == 1, "the old copy gone once the new one runs", 90)
        assert placed(sandbox) == new
        assert (sandbox.get(new[0], "deployment", "nginx") or {})["status"].get("readyReplicas") == 6
    finally:
        clean(sandbox, "failover-gracefully")


def test_directly(sandbox: LocalSandbox) -> None:
    try:
        sandbox.run_block("failover-directly", "Run")
        wait_until(
            lambda: (len(placed(sandbox)) == 1 and not (binding(sandbox)["spec"].get("gracefulEvictionTasks"))) or None,
            "nginx in one cluster again, the eviction done",
            90,
        )
        tainted = [
            c
            for c in MEMBERS
            if any(
                t["key"] == "unavailable"
                for t in ((sandbox.get(None, "cluster", c) or {}).get("spec") or {}).get("taints") or []
            )
        ]
        assert len(tainted) == 1 and placed(sandbox) != tainted
        # the order the README gives: the old copy confirmed gone, then the new Work
        events = sandbox.karmada("get", "events", "--field-selector=involvedObject.kind=ResourceBinding")
        for reason in ("PurgeWorkloadFromClusterPending", "PurgeWorkloadFromClusterSucceed", "CreateWorkSucceed"):
            assert reason in events, events
        assert f"Purge workload from cluster {tainted[0]} succeed" in events, events
    finally:
        clean(sandbox, "failover-directly")


def test_application(sandbox: LocalSandbox) -> None:
    try:
        sandbox.run_block("failover-application", "Run")
        wait_until(lambda: placed(sandbox) == ["member2"] or None, "nginx moved to member2", 120)
        spec = binding(sandbox)["spec"]
        assert [c["name"] for c in spec["clusters"]] == ["member2"]
        events = sandbox.karmada("get", "events", "--field-selector=reason=EvictWorkloadFromClusterSucceed")
        assert "Evict from cluster member1 succeed." in events
    finally:
        clean(sandbox, "failover-application")


def evicted_from(sandbox: LocalSandbox) -> str | None:
    """The cluster the binding's ``Failover`` condition says the workload was evicted from (the eviction
    task itself lasts only until the new copy is healthy, a second or so)."""
    conditions = (binding(sandbox).get("status") or {}).get("conditions") or []
    message = next((c.get("message") or "" for c in conditions if c.get("type") == "Failover"), "")
    match = re.match(r"Evicted from cluster (\S+): NoExecute taint not tolerated", message)
    return match.group(1) if match else None


def test_taint_policy(sandbox: LocalSandbox) -> None:
    try:
        # the Run block freezes the serving cluster's agent, waits past the grace period, adds the policy
        sandbox.run_block("failover-taint-policy", "Run")
        frozen = wait_until(
            lambda: evicted_from(sandbox),
            "an eviction by the taint manager",
            60,
            last=lambda: (clusters_state(sandbox), binding(sandbox).get("status")),
        )
        cluster = sandbox.get(None, "cluster", frozen) or {}
        assert "cluster.karmada.io/not-ready" in [t["key"] for t in cluster["spec"].get("taints") or []]
        wait_until(lambda: [c for c in placed(sandbox) if c != frozen] or None, "nginx running in another cluster", 90)
        # the frozen agent cannot remove the old copy: its Work waits, deleting, and the copy is still there
        works = json.loads(sandbox.karmada("get", "work", "-n", f"karmada-es-{frozen}", "-o", "json"))["items"]
        assert [w["metadata"].get("deletionTimestamp") is not None for w in works] == [True]
        assert frozen in placed(sandbox)
    finally:
        clean(sandbox, "failover-taint-policy")
        wait_until(lambda: not sandbox.karmada("get", "work", "-A", "-o", "name"), "every Work gone", 60)


SHOP = (("deployment", "shop"), ("configmap", "shop-page"), ("secret", "shop-password"))


def test_dependencies(sandbox: LocalSandbox) -> None:
    def holding(cluster: str) -> list[str]:
        return [kind for kind, name in SHOP if sandbox.get(cluster, kind, name) is not None]

    try:
        sandbox.run_block("failover-dependencies", "Run")
        spec = (sandbox.get(None, "rb", "shop-deployment") or {})["spec"]
        old = spec["gracefulEvictionTasks"][0]["fromCluster"] if spec.get("gracefulEvictionTasks") else None
        new = wait_until(
            lambda: [c for c in MEMBERS if c != old and len(holding(c)) == 3] or None, "shop and its deps elsewhere", 60
        )
        if old is not None:
            # while the old copy waits for its replacement, its ConfigMap and Secret wait with it
            there = holding(old)
            pending = (sandbox.get(None, "rb", "shop-deployment") or {})["spec"].get("gracefulEvictionTasks")
            if pending:
                assert "configmap" in there and "secret" in there, there
            wait_until(lambda: not holding(old), "the old copies gone", 90)
        assert (sandbox.get(new[0], "deployment", "shop") or {})["status"].get("readyReplicas") == 2
        attached = (sandbox.get(None, "rb", "shop-page-configmap") or {})["spec"]["requiredBy"]
        assert [[c["name"] for c in s.get("clusters") or []] for s in attached] == [new]
    finally:
        sandbox.run_block("failover-dependencies", "Clean up")
        wait_until(lambda: not any(holding(c) for c in MEMBERS), "shop gone from the members", 60)
