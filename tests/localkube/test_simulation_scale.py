"""A simulating member survives absurd workloads: the API stays responsive,
nodes hold no more Pods than their ``pods`` capacity, Pods that fit nowhere
are created a bounded number at a time, and the workload's status still tells
the truth."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from localkube.simulation import PENDING_PER_WORKLOAD, SimulationConfig
from tests.pullmode import wait_for
from tests.servers import Kubectl, Raw, ServerThread, start_server

NODES, PODS_PER_NODE = 2, 10
INT32_MAX = 2147483647


@pytest.fixture(scope="module")
def simulated() -> Iterator[ServerThread]:
    config = SimulationConfig(nodes=NODES, node_pods=PODS_PER_NODE, node_prefix="s", workloads=True)
    yield from start_server(port=0, simulation=config)


def _pods(kubectl: Kubectl, selector: str) -> list[dict[str, Any]]:
    return list(json.loads(kubectl("get", "pods", "-l", selector, "-o", "json", timeout=60).stdout)["items"])


async def _assert_ready_answers(raw: Raw, times: int = 8) -> None:
    """/readyz answers ok within a generous bound, again and again (a liveness check)."""
    for _ in range(times):
        began = time.monotonic()
        status, body, _ = await raw.request("GET", "/readyz")
        elapsed = time.monotonic() - began
        assert (status, body) == (200, "ok")
        assert elapsed < 2, f"/readyz took {elapsed:.1f}s"


def _placed(pods: list[dict[str, Any]]) -> Counter[str]:
    return Counter(str(p["spec"]["nodeName"]) for p in pods if p["spec"].get("nodeName"))


async def test_a_deployment_of_int32_max_replicas_leaves_the_server_serving(kubectl: Kubectl, sim_raw: Raw) -> None:
    kubectl("create", "deployment", "huge", "--image=nginx", f"--replicas={INT32_MAX}")
    await _assert_ready_answers(sim_raw)
    capacity = NODES * PODS_PER_NODE

    def settled() -> list[dict[str, Any]] | None:
        pods = _pods(kubectl, "app=huge")
        bound = sum(_placed(pods).values())
        return pods if bound == capacity and len(pods) == capacity + PENDING_PER_WORKLOAD else None

    pods = wait_for(settled, timeout=40, interval=0.5, what="nodes full and a bounded number of Pods pending")
    await _assert_ready_answers(sim_raw)
    # no node holds more Pods than its capacity; the rest wait, marked Unschedulable
    assert set(_placed(pods).values()) == {PODS_PER_NODE}
    pending = [p for p in pods if not p["spec"].get("nodeName")]
    assert all(p["status"]["phase"] == "Pending" for p in pending)
    assert {c["reason"] for p in pending for c in p["status"].get("conditions") or []} <= {"Unschedulable"}

    def status() -> dict[str, Any] | None:
        current = json.loads(kubectl("get", "deployment", "huge", "-o", "json").stdout)["status"]
        return current if current.get("availableReplicas") == capacity else None

    truth = wait_for(status, timeout=20, what="the Deployment's status")
    assert truth["replicas"] == capacity + PENDING_PER_WORKLOAD
    assert truth["unavailableReplicas"] == INT32_MAX - capacity
    available = next(c for c in truth["conditions"] if c["type"] == "Available")
    assert (available["status"], available["reason"]) == ("False", "MinimumReplicasUnavailable")
    rs = json.loads(kubectl("get", "rs", "-l", "app=huge", "-o", "json").stdout)["items"]
    assert [r["spec"]["replicas"] for r in rs] == [INT32_MAX]
    assert rs[0]["status"]["replicas"] == capacity + PENDING_PER_WORKLOAD
    kubectl("delete", "deployment", "huge", "--wait=false")
    # unbound Pods go at once; the bound ones terminate gracefully: the deletions, too, leave it serving
    await _assert_ready_answers(sim_raw)
    wait_for(lambda: all(p["spec"].get("nodeName") for p in _pods(kubectl, "app=huge")), what="pending Pods deleted")


async def test_a_statefulset_of_int32_max_replicas_creates_its_lowest_ordinals(kubectl: Kubectl, sim_raw: Raw) -> None:
    statefulset = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "wide"},
        "spec": {
            "replicas": INT32_MAX,
            "serviceName": "wide",
            "selector": {"matchLabels": {"app": "wide"}},
            "template": {
                "metadata": {"labels": {"app": "wide"}},
                # more than a node has: none fits, so every Pod waits
                "spec": {
                    "containers": [{"name": "c", "image": "c", "resources": {"requests": {"cpu": "100"}}}],
                },
            },
        },
    }
    kubectl("apply", "-f", "-", stdin=json.dumps(statefulset))
    await _assert_ready_answers(sim_raw)
    wanted = {f"wide-{i}" for i in range(PENDING_PER_WORKLOAD)}
    wait_for(
        lambda: {p["metadata"]["name"] for p in _pods(kubectl, "app=wide")} == wanted,
        timeout=30,
        what="the lowest ordinals, a bounded number of them",
    )
    await _assert_ready_answers(sim_raw)
    kubectl("delete", "statefulset", "wide")


def test_the_kubelet_refuses_pods_placed_beyond_a_nodes_capacity(kubectl: Kubectl) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "tiny", "labels": {"size": "tiny"}}}
    kubectl("apply", "-f", "-", stdin=json.dumps(node))
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "2"}
    status = {
        "status": {"allocatable": capacity, "capacity": capacity, "conditions": [{"type": "Ready", "status": "True"}]}
    }
    kubectl("patch", "node", "tiny", "--subresource=status", "--type=merge", "-p", json.dumps(status))
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"placed-{i}", "labels": {"app": "placed"}},
            "spec": {"nodeName": "tiny", "containers": [{"name": "c", "image": "c"}]},
        }
        for i in range(3)
    ]
    kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))

    def phases() -> list[tuple[str, str]] | None:
        found = sorted(
            (p["status"].get("phase", ""), p["status"].get("reason", "")) for p in _pods(kubectl, "app=placed")
        )
        return found if len(found) == 3 and all(phase != "Pending" for phase, _ in found) else None

    assert wait_for(phases, what="the pods admitted or refused") == [
        ("Failed", "OutOfpods"),
        ("Running", ""),
        ("Running", ""),
    ]
