"""Graceful deletion of bound Pods, as kube-apiserver does it (apiserver's
``registry/rest/delete.go`` BeforeDelete, ``pkg/registry/core/pod/strategy.go``
CheckGracefulDelete, the generic store's ``updateForGracefulDeletionAndFinalizers``),
with the simulation as the kubelet that finishes it."""

from __future__ import annotations

import asyncio
import datetime
import json
from collections.abc import Iterator
from typing import Any

import pytest

from localkube.meta import parse_time
from localkube.simulation import SimulationConfig
from tests.pullmode import wait_for
from tests.servers import Kubectl, Raw, ServerThread, start_server

PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture(scope="module")
def simulated() -> Iterator[ServerThread]:
    # containers take their whole grace period to exit (the default), so Terminating is observable
    config = SimulationConfig(nodes=1, node_prefix="gd", workloads=True)
    yield from start_server(port=0, simulation=config)


def _pod(name: str, node: str = "gd-1", grace: int | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}], **spec}
    if node:
        body["nodeName"] = node
    if grace is not None:
        body["terminationGracePeriodSeconds"] = grace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def _seconds_from_now(stamp: str) -> float:
    return (parse_time(stamp) - datetime.datetime.now(datetime.UTC)).total_seconds()


def _get(kubectl: Kubectl, name: str) -> dict[str, Any] | None:
    found = kubectl("get", "pod", name, "-o", "json", "--ignore-not-found")
    return json.loads(found.stdout) if found.stdout.strip() else None


def _ready(pod: dict[str, Any] | None) -> str | None:
    if pod is None:
        return None
    return next((c["status"] for c in pod["status"].get("conditions") or [] if c["type"] == "Ready"), None)


def test_kubectl_delete_leaves_a_bound_pod_terminating_until_the_kubelet_ends_it(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=json.dumps(_pod("calm", grace=3)))
    wait_for(lambda: _ready(_get(kubectl, "calm")) == "True", what="the pod running")
    kubectl("delete", "pod", "calm", "--wait=false")
    assert "Terminating" in kubectl("get", "pod", "calm").stdout
    pod = _get(kubectl, "calm")
    assert pod is not None and pod["metadata"]["deletionGracePeriodSeconds"] == 3
    assert 0 < _seconds_from_now(pod["metadata"]["deletionTimestamp"]) <= 4
    # the kubelet stops the containers (no longer Ready), then deletes the Pod once the grace is over
    wait_for(lambda: _ready(_get(kubectl, "calm")) in ("False", None), what="Ready=False while terminating")
    wait_for(lambda: _get(kubectl, "calm") is None, timeout=15, what="the pod removed after its grace period")


def test_force_delete_removes_at_once(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=json.dumps(_pod("stubborn")))  # the default grace period: 30 s
    wait_for(lambda: _ready(_get(kubectl, "stubborn")) == "True", what="the pod running")
    kubectl("delete", "pod", "stubborn", "--grace-period=0", "--force")
    assert _get(kubectl, "stubborn") is None


async def _watch_types(raw: Raw, resource_version: str) -> list[tuple[str, str]]:
    _, events = await raw.watch(f"{PODS}?watch=true&resourceVersion={resource_version}&timeoutSeconds=1", 10)
    return [(event["type"], event["object"]["metadata"]["name"]) for event in events]


async def test_delete_options_and_their_rules(sim_raw: Raw) -> None:
    status, created, _ = await sim_raw.request("POST", PODS, _pod("ruled"))
    assert status == 201
    status, first, _ = await sim_raw.request("DELETE", f"{PODS}/ruled")
    # kept, with the Pod's own grace period (defaulted to 30)
    assert status == 200 and first["kind"] == "Pod"
    assert first["metadata"]["deletionGracePeriodSeconds"] == 30
    assert 25 < _seconds_from_now(first["metadata"]["deletionTimestamp"]) <= 31
    # a longer grace period changes nothing
    status, second, _ = await sim_raw.request("DELETE", f"{PODS}/ruled", {"gracePeriodSeconds": 60})
    assert status == 200
    assert [second["metadata"][k] for k in ("deletionTimestamp", "deletionGracePeriodSeconds")] == [
        first["metadata"]["deletionTimestamp"],
        30,
    ]
    # a shorter one moves the deadline earlier by the difference
    status, third, _ = await sim_raw.request("DELETE", f"{PODS}/ruled?gracePeriodSeconds=10")
    assert status == 200 and third["metadata"]["deletionGracePeriodSeconds"] == 10
    moved = parse_time(first["metadata"]["deletionTimestamp"]) - parse_time(third["metadata"]["deletionTimestamp"])
    assert moved == datetime.timedelta(seconds=20)
    assert (await sim_raw.request("GET", f"{PODS}/ruled"))[0] == 200
    # watchers saw the deletion as changes to a Pod that still exists
    events = await _watch_types(sim_raw, created["metadata"]["resourceVersion"])
    assert [t for t, name in events if name == "ruled"][-2:] == ["MODIFIED", "MODIFIED"]
    # grace 0 ends it, after one last MODIFIED with the deletion fields, as kube-apiserver's two steps
    status, gone, _ = await sim_raw.request("DELETE", f"{PODS}/ruled", {"gracePeriodSeconds": 0})
    assert status == 200 and gone["metadata"]["deletionGracePeriodSeconds"] == 0
    assert (await sim_raw.request("GET", f"{PODS}/ruled"))[0] == 404
    events = await _watch_types(sim_raw, third["metadata"]["resourceVersion"])
    assert [t for t, name in events if name == "ruled"] == ["MODIFIED", "DELETED"]


async def test_negative_grace_means_one_second(sim_raw: Raw) -> None:
    await sim_raw.request("POST", PODS, _pod("hasty"))
    status, pod, _ = await sim_raw.request("DELETE", f"{PODS}/hasty", {"gracePeriodSeconds": -5})
    assert status == 200 and pod["metadata"]["deletionGracePeriodSeconds"] == 1

    async def gone() -> None:
        while (await sim_raw.request("GET", f"{PODS}/hasty"))[0] != 404:
            await asyncio.sleep(0.1)

    await asyncio.wait_for(gone(), 10)


async def test_an_unbound_pod_goes_at_once(sim_raw: Raw) -> None:
    # no node has this label: the Pod is never scheduled
    await sim_raw.request("POST", PODS, _pod("floating", node="", nodeSelector={"nowhere": "true"}))
    status, pod, _ = await sim_raw.request("DELETE", f"{PODS}/floating")
    assert status == 200 and pod["metadata"]["deletionGracePeriodSeconds"] == 0
    assert (await sim_raw.request("GET", f"{PODS}/floating"))[0] == 404


async def test_finalizers_hold_a_pod_whose_grace_is_over(sim_raw: Raw) -> None:
    body = _pod("held", grace=1)
    body["metadata"]["finalizers"] = ["example.com/hold"]
    await sim_raw.request("POST", PODS, body)
    status, pod, _ = await sim_raw.request("DELETE", f"{PODS}/held", {"gracePeriodSeconds": 0})
    assert status == 200 and pod["metadata"]["deletionGracePeriodSeconds"] == 0
    status, held, _ = await sim_raw.request("GET", f"{PODS}/held")
    assert status == 200 and held["metadata"]["finalizers"] == ["example.com/hold"]
    patch = [{"op": "remove", "path": "/metadata/finalizers"}]
    status, _, _ = await sim_raw.request("PATCH", f"{PODS}/held", patch, content_type="application/json-patch+json")
    assert status == 200
    assert (await sim_raw.request("GET", f"{PODS}/held"))[0] == 404


async def test_without_a_kubelet_a_bound_pod_stays_terminating(raw: Raw) -> None:
    """The plain localkube simulates no node: like a cluster whose kubelet is gone, nobody ends the
    Pod; a status update does not end it either; only grace 0 removes it. A finished Pod goes at once."""
    await raw.request("POST", PODS, _pod("orphan", node="elsewhere", grace=1))
    status, pod, _ = await raw.request("DELETE", f"{PODS}/orphan")
    assert status == 200 and pod["metadata"]["deletionGracePeriodSeconds"] == 1
    pod["status"] = {"phase": "Running"}
    assert (await raw.request("PUT", f"{PODS}/orphan/status", pod))[0] == 200
    assert (await raw.request("GET", f"{PODS}/orphan"))[0] == 200
    await raw.request("DELETE", f"{PODS}/orphan?gracePeriodSeconds=0")
    assert (await raw.request("GET", f"{PODS}/orphan"))[0] == 404

    _, done, _ = await raw.request("POST", PODS, _pod("done", node="elsewhere"))
    done["status"] = {"phase": "Succeeded"}
    assert (await raw.request("PUT", f"{PODS}/done/status", done))[0] == 200
    status, pod, _ = await raw.request("DELETE", f"{PODS}/done")
    assert status == 200 and pod["metadata"]["deletionGracePeriodSeconds"] == 0
    assert (await raw.request("GET", f"{PODS}/done"))[0] == 404


def _deployment(name: str, replicas: int, grace: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"terminationGracePeriodSeconds": grace, "containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def _pods(kubectl: Kubectl, selector: str, namespace: str = "default") -> list[dict[str, Any]]:
    listed = kubectl("get", "pods", "-n", namespace, "-l", selector, "-o", "json").stdout
    return list(json.loads(listed)["items"])


def test_scale_down_uses_the_pods_grace_period_and_status_counts_live_pods(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=json.dumps(_deployment("slow", 2, 30)))
    kubectl("rollout", "status", "deployment/slow", "--timeout=20s", timeout=30)
    kubectl("scale", "deployment/slow", "--replicas=1")

    def one_terminating() -> list[dict[str, Any]] | None:
        pods = _pods(kubectl, "app=slow")
        leaving = [p for p in pods if p["metadata"].get("deletionTimestamp")]
        return leaving if len(pods) == 2 and len(leaving) == 1 else None

    leaving = wait_for(one_terminating, what="one pod terminating")
    assert leaving[0]["metadata"]["deletionGracePeriodSeconds"] == 30
    # the ReplicaSet and Deployment no longer count the terminating Pod
    wait_for(
        lambda: json.loads(kubectl("get", "deploy", "slow", "-o", "json").stdout)["status"].get("replicas") == 1,
        what="the Deployment counting one replica",
    )
    kubectl("delete", "deployment", "slow", "--wait=false")
    kubectl("delete", "pods", "-l", "app=slow", "--grace-period=0", "--force")


def test_namespace_deletion_and_garbage_collection_wait_for_terminating_pods(kubectl: Kubectl) -> None:
    kubectl("create", "namespace", "brief")
    kubectl("apply", "-n", "brief", "-f", "-", stdin=json.dumps(_deployment("quick", 2, 1)))
    kubectl("rollout", "status", "-n", "brief", "deployment/quick", "--timeout=20s", timeout=30)
    kubectl("delete", "namespace", "brief", "--wait=false")
    wait_for(
        lambda: not kubectl("get", "namespace", "brief", "--ignore-not-found").stdout.strip(),
        timeout=20,
        what="the namespace gone once its pods have terminated",
    )
    kubectl("apply", "-f", "-", stdin=json.dumps(_deployment("collected", 2, 1)))
    kubectl("rollout", "status", "deployment/collected", "--timeout=20s", timeout=30)
    kubectl("delete", "deployment", "collected", "--wait=false")
    wait_for(lambda: not _pods(kubectl, "app=collected"), timeout=20, what="the deployment's pods collected")
