"""``--controllers`` switches each part of push mode by its own name: a control
plane started with ``*,-execution`` keeps a Push cluster's status and Lease
(``clusterStatus``) and reflects the status of member objects into its Works
(``workStatus``), but applies nothing; and which name switches what, as a table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controlplane.push_members import Parts
from localkube.simulation import SimulationConfig
from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread, start_server


@pytest.mark.parametrize(
    ("controllers", "expected"),
    [
        (("clusterStatus", "execution", "workStatus"), Parts(status=True, apply=True, reflect=True)),
        (("clusterStatus", "workStatus"), Parts(status=True, apply=False, reflect=True)),
        (("clusterStatus", "execution"), Parts(status=True, apply=True, reflect=False)),
        (("execution", "workStatus", "cluster"), Parts(status=False, apply=True, reflect=True)),
        (("cluster", "scheduler"), Parts(status=False, apply=False, reflect=False)),
    ],
)
def test_each_name_switches_its_own_part(controllers: tuple[str, ...], expected: Parts) -> None:
    parts = Parts.of(controllers)
    assert parts == expected
    assert parts.works == (expected.apply or expected.reflect)


@pytest.fixture(scope="module")
def without_execution(localkube: ServerThread, workdir: Path) -> Iterator[PullMode]:
    env = PullMode(localkube, workdir).install()
    env.start_controlplane("--controllers=*,-execution")
    try:
        yield env
    finally:
        env.stop()


@pytest.fixture(scope="module")
def member() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix="m1", workloads=True))


def _json(kubectl: Kubectl, *args: str) -> Any:
    result = kubectl(*args, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def _deployment(replicas: int, **metadata: Any) -> dict[str, Any]:
    labels = {"app": "nginx"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", **metadata},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]},
            },
        },
    }


POLICY = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "PropagationPolicy",
    "metadata": {"name": "nginx", "namespace": "default"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
        "placement": {"clusterAffinity": {"clusterNames": ["member1"]}},
    },
}


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_without_execution_works_are_not_applied_and_status_still_flows(
    without_execution: PullMode, member: ServerThread
) -> None:
    env = without_execution
    env.join(member, "member1")
    wait_for(lambda: env.ready("member1") == "True", timeout=40, what="member1 Ready (clusterStatus runs)")
    lease = _json(env.admin, "get", "lease", "member1", "-n", "karmada-cluster") or {}
    assert lease["spec"]["holderIdentity"] == "member1"

    env.admin("apply", "-f", "-", stdin=json.dumps({"kind": "List", "apiVersion": "v1", "items": [POLICY]}))
    env.admin("apply", "-f", "-", stdin=json.dumps(_deployment(2)))
    works = wait_for(
        lambda: (_json(env.admin, "get", "work", "-n", "karmada-es-member1") or {}).get("items"),
        timeout=30,
        what="the Work of nginx for member1",
    )
    work = works[0]["metadata"]
    in_member = env.member_admin(member, "member1")
    # an object in the member the Work names: workStatus reflects it, execution would have rescaled it
    marks = {"work.karmada.io/name": work["name"], "work.karmada.io/namespace": work["namespace"]}
    in_member(
        "apply", "-f", "-", stdin=json.dumps(_deployment(3, labels={"karmada.io/managed": "true"}, annotations=marks))
    )

    def reflected() -> Any:
        found = _json(env.admin, "get", "work", work["name"], "-n", work["namespace"]) or {}
        statuses = (found.get("status") or {}).get("manifestStatuses") or []
        return found if statuses and (statuses[0].get("status") or {}).get("readyReplicas") == 3 else None

    found = wait_for(reflected, timeout=40, what="the member object's status in the Work")
    assert found["status"]["manifestStatuses"][0]["identifier"]["name"] == "nginx"
    assert "Applied" not in [c["type"] for c in found["status"].get("conditions") or []]
    assert (_json(in_member, "get", "deploy", "nginx") or {})["spec"]["replicas"] == 3, "nothing was applied"

    # as Karmada's binding status: a Work not Applied contributes no status, only that it is not applied
    def aggregated() -> Any:
        binding = _json(env.admin, "get", "rb", "nginx-deployment") or {}
        return (binding.get("status") or {}).get("aggregatedStatus")

    assert wait_for(aggregated, timeout=30, what="the binding's aggregated status") == [
        {"clusterName": "member1", "health": "Unknown"}  # applied: false, omitted as Karmada omits it
    ]
