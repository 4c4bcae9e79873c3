"""Simulated nodes and workloads, checked with the real kubectl's own tools
(``rollout status``, ``wait``, ``get pods -o wide``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from localkube.simulation import SimulationConfig
from tests.pullmode import wait_for
from tests.servers import Kubectl, ServerThread, start_server


@pytest.fixture(scope="module")
def simulated() -> Iterator[ServerThread]:
    # containers that exit a moment after SIGTERM, as nginx does, so scaled-down Pods leave quickly
    config = SimulationConfig(
        nodes=2, node_cpu="2", node_memory="4Gi", node_pods=10, node_prefix="m1", workloads=True, shutdown_seconds=0.5
    )
    yield from start_server(port=0, simulation=config)


def _pods(kubectl: Kubectl, selector: str) -> list[dict[str, Any]]:
    return list(json.loads(kubectl("get", "pods", "-l", selector, "-o", "json").stdout)["items"])


def test_nodes_are_ready_with_capacity(kubectl: Kubectl) -> None:
    nodes = json.loads(kubectl("get", "nodes", "-o", "json").stdout)["items"]
    assert [n["metadata"]["name"] for n in nodes] == ["m1-1", "m1-2"]
    assert nodes[0]["status"]["allocatable"] == {"cpu": "2", "memory": "4Gi", "pods": "10"}
    assert "Ready" in kubectl("get", "nodes").stdout


def test_deployment_rolls_out(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=nginx", "--replicas=3")
    kubectl("rollout", "status", "deployment/web", "--timeout=20s", timeout=30)
    status = json.loads(kubectl("get", "deploy", "web", "-o", "json").stdout)["status"]
    assert status["readyReplicas"] == 3 and "unavailableReplicas" not in status, "zero counters are left out"
    pods = _pods(kubectl, "app=web")
    assert len(pods) == 3
    assert all(p["status"]["phase"] == "Running" and p["spec"]["nodeName"] for p in pods)
    rs = json.loads(kubectl("get", "rs", "-l", "app=web", "-o", "json").stdout)["items"]
    assert len(rs) == 1 and rs[0]["status"]["readyReplicas"] == 3
    kubectl("scale", "deployment/web", "--replicas=1")
    wait_for(lambda: len(_pods(kubectl, "app=web")) == 1, what="scale down")
    deployment = json.loads(kubectl("get", "deploy", "web", "-o", "json").stdout)
    wait_for(
        lambda: (
            json.loads(kubectl("get", "deploy", "web", "-o", "json").stdout)["status"].get("availableReplicas") == 1
        ),
        what="status after scale",
    )
    assert deployment["metadata"]["name"] == "web"


def test_pods_that_do_not_fit_stay_pending(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "big", "--image=nginx", "--replicas=3")
    kubectl("set", "resources", "deployment/big", "--requests=cpu=1500m,memory=1Gi")

    def placed() -> bool:
        pods = _pods(kubectl, "app=big")
        phases = sorted(str(p["status"]["phase"]) for p in pods)
        return len(pods) == 3 and phases == ["Pending", "Running", "Running"]

    wait_for(placed, what="two big pods placed, one pending")
    pending = next(p for p in _pods(kubectl, "app=big") if p["status"]["phase"] == "Pending")
    condition = pending["status"]["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"]) == ("PodScheduled", "False", "Unschedulable")
    kubectl("delete", "deployment", "big")


def test_statefulset_daemonset_and_job(kubectl: Kubectl) -> None:
    statefulset = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 2,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "pg"}]},
            },
        },
    }
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "a", "image": "a"}]},
            },
        },
    }
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all([statefulset, daemonset]))
    kubectl("rollout", "status", "statefulset/db", "--timeout=20s", timeout=30)
    assert sorted(str(p["metadata"]["name"]) for p in _pods(kubectl, "app=db")) == ["db-0", "db-1"]
    kubectl("rollout", "status", "daemonset/agent", "--timeout=20s", timeout=30)
    nodes = sorted(str(p["spec"]["nodeName"]) for p in _pods(kubectl, "app=agent"))
    assert nodes == ["m1-1", "m1-2"]
    kubectl("create", "job", "once", "--image=busybox")
    kubectl("wait", "--for=condition=complete", "job/once", "--timeout=20s", timeout=30)


def test_a_node_added_by_hand_takes_pods(kubectl: Kubectl) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "manual"}}
    kubectl("apply", "-f", "-", stdin=json.dumps(node))
    status = {
        "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"},
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "10"},
            "conditions": [{"type": "Ready", "status": "True"}],
        }
    }
    kubectl("patch", "node", "manual", "--subresource=status", "--type=merge", "-p", json.dumps(status))
    kubectl("create", "deployment", "wide", "--image=nginx", "--replicas=1")
    kubectl("set", "resources", "deployment/wide", "--requests=cpu=3")
    wait_for(
        lambda: [p["spec"].get("nodeName") for p in _pods(kubectl, "app=wide")] == ["manual"],
        what="the big pod on the hand-made node",
    )
