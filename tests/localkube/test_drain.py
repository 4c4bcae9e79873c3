"""``kubectl drain`` against a simulating localkube: cordon, evictions through
``pods/eviction`` that honour a PodDisruptionBudget, and Pods rescheduled elsewhere."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from localkube.simulation import SimulationConfig
from tests.pullmode import wait_for
from tests.servers import Kubectl, ServerThread, start_server


@pytest.fixture(scope="module")
def simulated() -> Iterator[ServerThread]:
    config = SimulationConfig(nodes=2, node_prefix="dr", workloads=True, shutdown_seconds=0.2)
    yield from start_server(port=0, simulation=config)


def _nodes_of_pods(kubectl: Kubectl) -> list[str]:
    pods = json.loads(kubectl("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]
    return [p["spec"].get("nodeName", "") for p in pods if not p["metadata"].get("deletionTimestamp")]


def test_drain_evicts_within_the_disruption_budget(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    busy = _nodes_of_pods(kubectl)[0]
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
    }
    kubectl("apply", "-f", "-", stdin=json.dumps(budget))
    blocked = kubectl("drain", busy, "--ignore-daemonsets", "--timeout=3s", check=False, timeout=30)
    assert blocked.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget" in blocked.stderr
    kubectl("delete", "pdb", "web")
    drained = kubectl("drain", busy, "--ignore-daemonsets", "--timeout=30s", timeout=60)
    assert f"node/{busy} drained" in drained.stdout
    node = json.loads(kubectl("get", "node", busy, "-o", "json").stdout)
    assert node["spec"]["unschedulable"] is True
    wait_for(lambda: len(nodes := _nodes_of_pods(kubectl)) == 2 and busy not in nodes, timeout=30)
