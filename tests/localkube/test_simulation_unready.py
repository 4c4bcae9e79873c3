"""The simulation's knob for an unhealthy application: Pods annotated
``simulation.localkube.io/unready: "true"`` run but never turn Ready, so their
Deployment stays unavailable; without the annotation they roll out again."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from localkube.simulation import SimulationConfig
from tests.pullmode import wait_for
from tests.servers import ServerThread, start_server


@pytest.fixture(scope="module")
def simulated() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix="u", workloads=True))


def test_annotated_pods_stay_unready_until_the_annotation_goes(kubectl) -> None:  # type: ignore[no-untyped-def]
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "sick", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "sick"}},
            "template": {
                "metadata": {"labels": {"app": "sick"}, "annotations": {"simulation.localkube.io/unready": "true"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    kubectl("apply", "-f", "-", stdin=json.dumps(manifest))

    def status() -> dict[str, int]:
        return dict(json.loads(kubectl("get", "deploy", "sick", "-o", "json").stdout).get("status") or {})

    def pods_unready() -> bool:
        pods = json.loads(kubectl("get", "pods", "-l", "app=sick", "-o", "json").stdout)["items"]
        held = [p for p in pods if p["metadata"].get("annotations", {}).get("simulation.localkube.io/unready")]
        return (
            len(held) == 2
            and all(p["status"].get("phase") == "Running" for p in held)
            and not any(
                c["status"] == "True" for p in held for c in p["status"].get("conditions", []) if c["type"] == "Ready"
            )
        )

    wait_for(pods_unready, timeout=20, what="two running, unready pods")
    assert not status().get("readyReplicas")
    kubectl(
        "patch",
        "deployment",
        "sick",
        "--type=json",
        "-p",
        json.dumps([{"op": "remove", "path": "/spec/template/metadata/annotations"}]),
    )
    kubectl("rollout", "status", "deployment/sick", "--timeout=30s", timeout=40)
    wait_for(lambda: status().get("readyReplicas") == 2, what="ready again")
