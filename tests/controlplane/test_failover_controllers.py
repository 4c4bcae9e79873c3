"""The failover controllers against a real API server (localkube with
Karmada's CRDs), called directly: the taint manager's evictions are paced as
Karmada's eviction workers pace them (three per binding kind at once, then
one per ``1/--resource-eviction-rate`` seconds), a held eviction takes no
slot, and each eviction is written; the application failover controller
clears its own hold once a binding is no longer judged, and no one else's."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from controlplane.application_failover import ApplicationFailoverController
from controlplane.failover_bindings import CRB, RB, RESOURCES
from controlplane.taint_manager import TaintManager
from karmada.kube import EventRecorder, KubeClient, from_kubeconfig
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import CLUSTERS
from karmada.timestamps import now_time
from tests.pullmode import PullMode
from tests.servers import ServerThread

Obj = dict[str, Any]
RATE = 0.5  # Karmada's default: one eviction per worker every 2 s
PLACEMENT = {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}


@pytest.fixture(scope="module")
def installed(localkube: ServerThread, workdir: Path) -> PullMode:
    return PullMode(localkube, workdir).install()


def cluster(name: str, taints: list[Obj]) -> Obj:
    spec: Obj = {"syncMode": "Push", "apiEndpoint": "https://127.0.0.1:1"}
    if taints:
        spec["taints"] = taints
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name}, "spec": spec}


READY_STATUS = {
    "conditions": [
        {
            "type": "Ready",
            "status": "True",
            "reason": "ClusterReady",
            "message": "ok",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ],
    "apiEnablements": [{"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"}]}],
}


def binding(name: str, placement: Obj) -> Obj:
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": f"{name}-configmap",
            "namespace": "default",
            "annotations": {"policy.karmada.io/applied-placement": json.dumps(placement)},
        },
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": name},
            "placement": placement,
            "clusters": [{"name": "member1"}],
        },
    }


@pytest.fixture
async def manager(installed: PullMode) -> AsyncIterator[tuple[KubeClient, TaintManager]]:
    client = KubeClient(from_kubeconfig(installed.kubeconfig))
    taint = {"key": "unavailable", "value": "true", "effect": "NoExecute", "timeAdded": now_time()}
    for name, taints in (("member1", [taint]), ("member2", [])):
        stored = await client.create(CLUSTERS, cluster(name, taints))
        await client.update(CLUSTERS, {**stored, "status": READY_STATUS}, subresource="status")
    for i in range(4):
        await client.create(RESOURCES[RB], binding(f"cfg{i}", PLACEMENT), "default")
    # nowhere else to go: member2 excluded by its placement
    await client.create(RESOURCES[RB], binding("pinned", {"clusterAffinity": {"clusterNames": ["member1"]}}), "default")
    informers = InformerFactory(client)
    clusters = informers.informer(CLUSTERS)
    caches = {RB: informers.informer(RESOURCES[RB]), CRB: informers.informer(RESOURCES[CRB])}
    await informers.start(sync_timeout=20)
    tm = TaintManager(
        client,
        clusters,
        caches,
        EventRecorder(client, "test"),
        evict=True,
        purge_mode="Gracefully",
        rate=RATE,
        stateful_injection=False,
    )
    try:
        yield client, tm
    finally:
        await informers.stop()
        await client.close()


async def test_evictions_are_paced_per_binding_kind(manager: tuple[KubeClient, TaintManager]) -> None:
    client, tm = manager

    async def targets(name: str) -> list[str]:
        stored = await client.get(RESOURCES[RB], f"{name}-configmap", "default")
        return [c["name"] for c in stored["spec"].get("clusters") or []]

    # the held one first: it writes a condition, takes no slot
    assert await tm.reconcile((RB, "default", "pinned-configmap")) == 10.0
    held = await client.get(RESOURCES[RB], "pinned-configmap", "default")
    assert [c["reason"] for c in held["status"]["conditions"]] == ["NoClusterFit"]
    # three at once (Karmada's three workers), each written with its task
    for i in range(3):
        assert await tm.reconcile((RB, "default", f"cfg{i}-configmap")) is None
        assert await targets(f"cfg{i}") == []
        stored = await client.get(RESOURCES[RB], f"cfg{i}-configmap", "default")
        assert [t["fromCluster"] for t in stored["spec"]["gracefulEvictionTasks"]] == ["member1"]
    # the fourth waits for the first worker to be free: about 2 s, and is not written meanwhile
    wait = await tm.reconcile((RB, "default", "cfg3-configmap"))
    assert wait is not None and 1.0 < wait <= 1.0 / RATE
    assert await targets("cfg3") == ["member1"]
    # the ClusterResourceBinding queue has its own workers
    assert tm.pacers[CRB].claim(0.0) == 0.0


def held(name: str) -> Obj:
    body = binding(name, PLACEMENT)
    body["spec"]["failover"] = {
        "application": {"decisionConditions": {"tolerationSeconds": 5}, "purgeMode": "Directly"}
    }
    return body


async def test_application_failover_clears_its_hold_once_not_judged(installed: PullMode) -> None:
    client = KubeClient(from_kubeconfig(installed.kubeconfig))
    try:
        for name, reason in (("unhealthy", "UnhealthyNoClusterFit"), ("tainted", "NoClusterFit")):
            stored = await client.create(RESOURCES[RB], held(name), "default")
            condition = {
                "type": "Failover",
                "status": "False",
                "reason": reason,
                "message": "it stays in member1",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
            await client.update(
                RESOURCES[RB], {**stored, "status": {"conditions": [condition]}}, "default", subresource="status"
            )
        informers = InformerFactory(client)
        clusters = informers.informer(CLUSTERS)
        caches = {RB: informers.informer(RESOURCES[RB]), CRB: informers.informer(RESOURCES[CRB])}
        await informers.start(sync_timeout=20)
        try:
            controller = ApplicationFailoverController(
                client,
                clusters,
                caches,
                EventRecorder(client, "test"),
                graceful_eviction=True,
                stateful_injection=False,
            )
            # propagateDeps is off: the binding is not judged, so its application hold no longer applies
            for name in ("unhealthy", "tainted"):
                assert await controller.reconcile((RB, "default", f"{name}-configmap")) is None
            unhealthy = await client.get(RESOURCES[RB], "unhealthy-configmap", "default")
            assert not (unhealthy.get("status") or {}).get("conditions")
            # the taint manager's hold is the taint manager's to clear
            tainted = await client.get(RESOURCES[RB], "tainted-configmap", "default")
            assert [c["reason"] for c in tainted["status"]["conditions"]] == ["NoClusterFit"]
        finally:
            await informers.stop()
    finally:
        await client.close()
