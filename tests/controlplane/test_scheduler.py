"""The scheduler controller against localkube: ``karmada-controlplane --controllers=scheduler``
schedules bindings written as the detector writes them, and the real kubectl reads the result.

Three Clusters (created with kubectl, their status patched as an agent would
report it): member1 and member2 plain, member3 tainted ``dedicated=infra:NoSchedule``.
Tests that change a cluster put it back before they end.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controlplane.scheduler_controller import SchedulerController
from karmada.api.keys import APPLIED_PLACEMENT_ANNOTATION
from karmada.clusters.conditions import set_condition
from karmada.kube import EventRecorder, Informer, KubeClient, from_kubeconfig
from karmada.kube.resources import CLUSTER_RESOURCE_BINDINGS, CLUSTERS, RESOURCE_BINDINGS
from karmada.scheduling.decisions import DECISIONS_ANNOTATION, decode_decisions
from karmada.timestamps import now_time, parse_time
from tests.factories import cluster
from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread

RB = "resourcebindings.work.karmada.io"
TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
APIS = {"apps/v1": ["Deployment"], "v1": ["ConfigMap", "Namespace"]}


def add_cluster(
    admin: Kubectl,
    name: str,
    labels: dict[str, str],
    taints: list[dict[str, str]] | None = None,
    finalizers: list[str] | None = None,
) -> None:
    """A Cluster as registration leaves it, with the status its agent reports."""
    obj = cluster(name, labels=labels, taints=taints, apis=APIS).to_dict()
    if finalizers:
        obj["metadata"]["finalizers"] = finalizers
    status = obj.pop("status")
    status["conditions"] = [
        {
            "type": "Ready",
            "status": "True",
            "reason": "ClusterReady",
            "message": "cluster is healthy and ready to accept workloads",
            "lastTransitionTime": now_time(),
        }
    ]
    admin("apply", "-f", "-", stdin=json.dumps(obj))
    admin("patch", "cluster", name, "--subresource=status", "--type=merge", "-p", json.dumps({"status": status}))


@pytest.fixture(scope="module")
def env(localkube: ServerThread, workdir: Path) -> Iterator[PullMode]:
    env = PullMode(localkube, workdir).install()
    add_cluster(env.admin, "member1", {"env": "prod"})
    add_cluster(env.admin, "member2", {"env": "prod"})
    add_cluster(env.admin, "member3", {"env": "infra"}, [TAINT])
    env.start_controlplane("--controllers=scheduler")
    try:
        yield env
    finally:
        env.stop()


def binding(
    name: str,
    placement: dict[str, Any],
    *,
    replicas: int = 0,
    kind: str = "Deployment",
    labels: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A ResourceBinding as the detector writes it for a template ``default/<name>``."""
    api_version = "apps/v1" if kind == "Deployment" else "v1"
    body: dict[str, Any] = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": f"{name}-{kind.lower()}",
            "namespace": "default",
            "labels": {
                "propagationpolicy.karmada.io/permanent-id": str(uuid.uuid4()),
                "resourcebinding.karmada.io/permanent-id": str(uuid.uuid4()),
            }
            if labels is None
            else labels,
            "annotations": {
                "propagationpolicy.karmada.io/name": name,
                "propagationpolicy.karmada.io/namespace": "default",
            },
        },
        "spec": {
            "resource": {
                "apiVersion": api_version,
                "kind": kind,
                "namespace": "default",
                "name": name,
                "uid": str(uuid.uuid4()),
            },
            "placement": placement,
            **({"replicas": replicas} if replicas else {}),
            **spec,
        },
    }
    return body


def create(admin: Kubectl, body: dict[str, Any]) -> str:
    admin("create", "-f", "-", stdin=json.dumps(body))
    return str(body["metadata"]["name"])


def get(admin: Kubectl, name: str) -> dict[str, Any]:
    return dict(json.loads(admin("get", RB, name, "-n", "default", "-o", "json").stdout))


def scheduled(admin: Kubectl, name: str) -> dict[str, Any] | None:
    """The binding once its Scheduled condition reflects its current generation."""
    obj = get(admin, name)
    status = obj.get("status") or {}
    if status.get("schedulerObservedGeneration") != obj["metadata"]["generation"]:
        return None
    if not any(c["type"] == "Scheduled" for c in status.get("conditions") or []):
        return None
    return obj


def condition(obj: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in obj["status"]["conditions"] if c["type"] == "Scheduled")


def targets(obj: dict[str, Any]) -> dict[str, int | None]:
    return {c["name"]: c.get("replicas") for c in obj["spec"].get("clusters") or []}


def events(admin: Kubectl, kind: str, name: str) -> list[dict[str, Any]]:
    items = json.loads(admin("get", "events", "-n", "default", "-o", "json").stdout)["items"]
    return [e for e in items if e["involvedObject"]["kind"] == kind and e["involvedObject"]["name"] == name]


def set_taints(admin: Kubectl, name: str, taints: list[dict[str, str]]) -> None:
    admin("patch", "cluster", name, "--type=merge", "-p", json.dumps({"spec": {"taints": taints or None}}))


def test_static_weights_split_three_replicas_one_to_two(env: PullMode) -> None:
    placement = {
        "clusterAffinity": {"clusterNames": ["member1", "member2"]},
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {
                "staticWeightList": [
                    {"targetCluster": {"clusterNames": ["member1"]}, "weight": 1},
                    {"targetCluster": {"clusterNames": ["member2"]}, "weight": 2},
                ]
            },
        },
    }
    name = create(env.admin, binding("web", placement, replicas=3))
    obj = wait_for(lambda: scheduled(env.admin, name), what="web scheduled")
    assert targets(obj) == {"member1": 1, "member2": 2}
    cond = condition(obj)
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True",
        "Success",
        "Binding has been scheduled successfully.",
    )
    assert obj["status"]["lastScheduledTime"]
    assert json.loads(obj["metadata"]["annotations"][APPLIED_PLACEMENT_ANNOTATION]) == placement
    decisions = decode_decisions(obj["metadata"]["annotations"][DECISIONS_ANNOTATION])
    assert decisions is not None and decisions["outcome"] == "Success"
    by_name = {c["name"]: c for c in decisions["clusters"]}
    assert by_name["member2"]["replicas"] == 2 and by_name["member2"]["selected"]
    assert by_name["member3"]["filtered"][0][0] == "TaintToleration"

    expected = "Binding has been scheduled successfully. Result: {member1:1, member2:2}"
    wait_for(
        lambda: [e for e in events(env.admin, "ResourceBinding", name) if e["reason"] == "ScheduleBindingSucceed"],
        what="event on the binding",
    )
    on_template = [e for e in events(env.admin, "Deployment", "web") if e["reason"] == "ScheduleBindingSucceed"]
    assert on_template and on_template[0]["message"] == expected and on_template[0]["type"] == "Normal"

    # settled: no further writes (our own spec write was observed along with it)
    version = obj["metadata"]["resourceVersion"]
    time.sleep(1.5)
    assert get(env.admin, name)["metadata"]["resourceVersion"] == version

    # scale up: replicas changed -> rescheduled with the same weights
    env.admin("patch", RB, name, "-n", "default", "--type=merge", "-p", '{"spec":{"replicas":6}}')
    obj = wait_for(
        lambda: (o := scheduled(env.admin, name)) and targets(o) == {"member1": 2, "member2": 4} and o,
        what="web rescheduled for 6 replicas",
    )


def test_duplicated_goes_everywhere_it_is_tolerated(env: PullMode) -> None:
    placement = {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}
    name = create(env.admin, binding("dup", placement, replicas=2))
    obj = wait_for(lambda: scheduled(env.admin, name), what="dup scheduled")
    assert targets(obj) == {"member1": 2, "member2": 2}

    tolerant = {**placement, "clusterTolerations": [{"key": "dedicated", "operator": "Exists"}]}
    env.admin("patch", RB, name, "-n", "default", "--type=merge", "-p", json.dumps({"spec": {"placement": tolerant}}))
    obj = wait_for(
        lambda: (o := scheduled(env.admin, name)) and len(targets(o)) == 3 and o, what="dup on all three clusters"
    )
    assert targets(obj) == {"member1": 2, "member2": 2, "member3": 2}

    # a cluster change reschedules it; the same result again costs no write
    version = obj["metadata"]["resourceVersion"]
    env.admin("label", "cluster", "member1", "rack=r1")
    try:
        time.sleep(1.0)
        assert get(env.admin, name)["metadata"]["resourceVersion"] == version
    finally:
        env.admin("label", "cluster", "member1", "rack-")


def test_no_cluster_fit_empties_the_result_with_karmadas_message(env: PullMode) -> None:
    placement = {"clusterAffinity": {"clusterNames": ["member3"]}}
    name = create(env.admin, binding("infra", placement, replicas=1))
    obj = wait_for(lambda: scheduled(env.admin, name), what="infra observed")
    cond = condition(obj)
    assert (cond["status"], cond["reason"]) == ("False", "NoClusterFit")
    message = (
        "0/3 clusters are available: 1 cluster(s) had untolerated taint {dedicated=infra:NoSchedule}, "
        "2 cluster(s) did not match the placement cluster affinity constraint."
    )
    assert cond["message"] == message
    assert not obj["spec"].get("clusters")
    assert "lastScheduledTime" not in obj["status"]
    failed = wait_for(
        lambda: [e for e in events(env.admin, "Deployment", "infra") if e["reason"] == "ScheduleBindingFailed"],
        what="failure event on the template",
    )
    assert failed[0]["type"] == "Warning" and failed[0]["message"] == message
    decisions = decode_decisions(obj["metadata"]["annotations"][DECISIONS_ANNOTATION])
    assert decisions is not None and decisions["outcome"] == "NoClusterFit"
    assert {c["name"]: c["filtered"][0][0] for c in decisions["clusters"]} == {
        "member1": "ClusterAffinity",
        "member2": "ClusterAffinity",
        "member3": "TaintToleration",
    }


def test_a_taint_change_reschedules_a_duplicated_binding(env: PullMode) -> None:
    set_taints(env.admin, "member2", [{"key": "maintenance", "effect": "NoSchedule"}])
    try:
        placement = {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}
        name = create(env.admin, binding("cache", placement, replicas=1))
        obj = wait_for(lambda: scheduled(env.admin, name), what="cache scheduled")
        assert targets(obj) == {"member1": 1}
    finally:
        set_taints(env.admin, "member2", [])
    wait_for(
        lambda: (o := scheduled(env.admin, name)) and targets(o) == {"member1": 1, "member2": 1},
        what="cache on member2 once its taint is gone",
    )


def test_reschedule_triggered_at_walks_cluster_affinities_from_the_first_term(env: PullMode) -> None:
    placement = {
        "clusterAffinities": [
            {"affinityName": "primary", "labelSelector": {"matchLabels": {"env": "dr"}}},
            {"affinityName": "backup", "clusterNames": ["member1"]},
        ]
    }
    name = create(env.admin, binding("settings", placement, kind="ConfigMap"))
    obj = wait_for(lambda: scheduled(env.admin, name), what="settings scheduled")
    assert targets(obj) == {"member1": None}
    assert obj["status"]["schedulerObservingAffinityName"] == "backup"
    first = obj["status"]["lastScheduledTime"]
    failed = wait_for(
        lambda: [e for e in events(env.admin, "ResourceBinding", name) if e["reason"] == "ScheduleBindingFailed"],
        what="the primary term's failure reported",
    )
    assert failed[0]["message"].startswith(
        f"failed to schedule ResourceBinding(default/{name}) with clusterAffiliates index(0): "
        "0/3 clusters are available"
    )

    env.admin("label", "cluster", "member2", "env=dr", "--overwrite")
    try:
        time.sleep(1.0)  # the label alone does not move it: the scheduler observes the backup term
        assert targets(get(env.admin, name)) == {"member1": None}
        while now_time() <= first:  # timestamps have whole seconds
            time.sleep(0.1)
        patch = {"spec": {"rescheduleTriggeredAt": now_time()}}
        env.admin("patch", RB, name, "-n", "default", "--type=merge", "-p", json.dumps(patch))
        obj = wait_for(
            lambda: (o := scheduled(env.admin, name)) and targets(o) == {"member2": None} and o,
            what="settings moved to the primary term",
        )
        assert obj["status"]["schedulerObservingAffinityName"] == "primary"
        assert parse_time(obj["status"]["lastScheduledTime"]) >= parse_time(obj["spec"]["rescheduleTriggeredAt"])
    finally:
        env.admin("label", "cluster", "member2", "env=prod", "--overwrite")


def test_bindings_that_are_not_the_schedulers_are_left_alone(env: PullMode) -> None:
    placement = {"clusterAffinity": {"clusterNames": ["member1"]}}
    unclaimed = create(env.admin, binding("orphan", placement, kind="ConfigMap", labels={}))
    other = create(env.admin, binding("other", placement, kind="ConfigMap", schedulerName="my-scheduler"))
    suspended = create(env.admin, binding("paused", placement, kind="ConfigMap", suspension={"scheduling": True}))
    control = create(env.admin, binding("control", placement, kind="ConfigMap"))
    wait_for(lambda: scheduled(env.admin, control), what="the control binding scheduled")
    time.sleep(0.5)
    for name in (unclaimed, other, suspended):
        obj = get(env.admin, name)
        assert not obj["spec"].get("clusters") and not obj.get("status", {}).get("conditions"), name


async def test_a_status_conflict_is_retried_on_the_latest_binding(env: PullMode, workdir: Path) -> None:
    """The bindingStatus controller writes the same status: our write of a stale copy gets a
    409, re-reads, and keeps both its fields and ours."""
    async with KubeClient(from_kubeconfig(env.kubeconfig)) as client:
        body = binding("racy", {"clusterAffinity": {"clusterNames": ["member1"]}}, kind="ConfigMap", labels={})
        stale = await client.create(RESOURCE_BINDINGS, body, "default")
        fresh = json.loads(json.dumps(stale))
        fresh["status"] = {"aggregatedStatus": [{"clusterName": "member1", "applied": True}]}
        await client.update(RESOURCE_BINDINGS, fresh, "default", subresource="status")

        scheduler = SchedulerController(
            client,
            Informer(client, RESOURCE_BINDINGS),
            Informer(client, CLUSTER_RESOURCE_BINDINGS),
            Informer(client, CLUSTERS),
            EventRecorder(client, "default-scheduler"),
        )
        calls = []

        def mutate(status: dict[str, Any]) -> bool:
            calls.append(status.get("aggregatedStatus"))
            conditions = status.setdefault("conditions", [])
            return set_condition(conditions, "Scheduled", "True", "Success", "ok", now_time())

        assert await scheduler._write_status(("default", stale["metadata"]["name"]), stale, mutate)
        stored = await client.get(RESOURCE_BINDINGS, stale["metadata"]["name"], "default")
        assert calls == [None, [{"clusterName": "member1", "applied": True}]]  # the retry saw the latest
        assert stored["status"]["aggregatedStatus"] == [{"clusterName": "member1", "applied": True}]
        assert [c["type"] for c in stored["status"]["conditions"]] == ["Scheduled"]
        await asyncio.sleep(0)


def test_a_cluster_resource_binding_for_a_namespace(env: PullMode) -> None:
    body = binding("team-a", {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}, kind="Namespace")
    body["kind"] = "ClusterResourceBinding"
    del body["metadata"]["namespace"], body["spec"]["resource"]["namespace"]
    body["metadata"]["name"] = "team-a-namespace"
    env.admin("create", "-f", "-", stdin=json.dumps(body))

    def done() -> dict[str, Any] | None:
        obj = json.loads(
            env.admin("get", "clusterresourcebindings.work.karmada.io", "team-a-namespace", "-o", "json").stdout
        )
        return (
            obj if obj.get("status", {}).get("schedulerObservedGeneration") == obj["metadata"]["generation"] else None
        )

    obj = wait_for(done, what="the ClusterResourceBinding scheduled")
    assert targets(obj) == {"member1": None, "member2": None}
    assert condition(obj)["reason"] == "Success"
    on_template = wait_for(lambda: events(env.admin, "Namespace", "team-a"), what="event on the Namespace")
    assert on_template[0]["message"] == "Binding has been scheduled successfully. Result {member1:0, member2:0}"


async def test_cluster_snapshots_are_kept_per_resource_version(env: PullMode) -> None:
    async with KubeClient(from_kubeconfig(env.kubeconfig)) as client:
        clusters = Informer(client, CLUSTERS)
        scheduler = SchedulerController(
            client,
            Informer(client, RESOURCE_BINDINGS),
            Informer(client, CLUSTER_RESOURCE_BINDINGS),
            clusters,
            EventRecorder(client, "default-scheduler"),
        )
        member1 = await client.get(CLUSTERS, "member1")
        first = scheduler.snapshot(member1)
        assert scheduler.snapshot(json.loads(json.dumps(member1))) is first  # same version: no rebuild
        member1["metadata"]["resourceVersion"] = str(int(member1["metadata"]["resourceVersion"]) + 1)
        assert scheduler.snapshot(member1) is not first


def test_unschedulable_is_retried_until_capacity_appears(env: PullMode) -> None:
    placement = {
        "clusterAffinity": {"clusterNames": ["member1"]},
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"},
        },
    }
    body = binding("batch", placement, replicas=2, replicaRequirements={"resourceRequest": {"cpu": "1"}})
    name = create(env.admin, body)

    def unschedulable() -> dict[str, Any] | None:
        obj = get(env.admin, name)
        conditions = (obj.get("status") or {}).get("conditions") or []
        return obj if any(c["reason"] == "Unschedulable" for c in conditions) else None

    obj = wait_for(unschedulable, what="batch Unschedulable")
    assert condition(obj)["status"] == "False" and not obj["spec"].get("clusters")
    assert "schedulerObservedGeneration" not in obj["status"]  # retried, so not observed yet
    summary = {"resourceSummary": {"allocatable": {"cpu": "4", "pods": "110"}}}
    env.admin(
        "patch", "cluster", "member1", "--subresource=status", "--type=merge", "-p", json.dumps({"status": summary})
    )
    obj = wait_for(lambda: scheduled(env.admin, name), timeout=30, what="batch scheduled once member1 has room")
    assert targets(obj) == {"member1": 2} and condition(obj)["reason"] == "Success"


def test_a_deleting_target_cluster_moves_its_replicas(env: PullMode) -> None:
    add_cluster(env.admin, "member4", {"env": "prod"}, finalizers=["tests.karmada-py.io/hold"])
    try:
        placement = {
            "clusterAffinity": {"clusterNames": ["member1", "member4"]},
            "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"},
        }
        name = create(env.admin, binding("db", placement, replicas=2))
        obj = wait_for(lambda: scheduled(env.admin, name), what="db scheduled")
        assert targets(obj) == {"member1": 1, "member4": 1}
        env.admin("delete", "cluster", "member4", "--wait=false")
        wait_for(
            lambda: (o := scheduled(env.admin, name)) and targets(o) == {"member1": 2},
            what="db off the deleting cluster",
        )
    finally:
        env.admin("patch", "cluster", "member4", "--type=merge", "-p", '{"metadata":{"finalizers":null}}', check=False)


async def test_the_sorted_cluster_snapshots_are_rebuilt_only_when_a_cluster_changes(env: PullMode) -> None:
    """One sorted list for every binding until the Cluster cache changes: a new cluster
    joins it, an updated one is re-snapshotted, a deleting one is named, a deleted one leaves."""
    async with KubeClient(from_kubeconfig(env.kubeconfig)) as client:
        clusters = Informer(client, CLUSTERS)
        scheduler = SchedulerController(
            client,
            Informer(client, RESOURCE_BINDINGS),
            Informer(client, CLUSTER_RESOURCE_BINDINGS),
            clusters,
            EventRecorder(client, "default-scheduler"),
        )
        clusters.start()
        try:
            await clusters.wait_synced(20)
            first = scheduler.cluster_snapshots()
            assert [s.name for s in first] == sorted(s.name for s in first)
            assert scheduler.cluster_snapshots() is first  # nothing changed: the same list
            by_name = {s.name: s for s in first}

            def changed_since(changes: int) -> Any:
                async def check() -> bool:
                    return clusters.changes > changes

                return check

            async def until(check: Any) -> None:
                async with asyncio.timeout(20):
                    while not await check():
                        await asyncio.sleep(0.05)

            changes = clusters.changes
            body = cluster("member0", labels={"env": "scratch"}, apis=APIS).to_dict()
            body.pop("status")
            body["metadata"]["finalizers"] = ["test.karmada.io/hold"]
            await client.create(CLUSTERS, body)
            await until(changed_since(changes))
            second = scheduler.cluster_snapshots()
            assert second is not first and second[0].name == "member0"  # added, in order
            # the clusters that did not change keep their snapshots
            assert all(s is by_name[s.name] for s in second if s.name != "member0")
            assert scheduler.deleting_clusters() == frozenset()

            changes = clusters.changes
            current = await client.get(CLUSTERS, "member0")
            current["metadata"]["labels"] = {"env": "scratch", "tier": "2"}
            await client.update(CLUSTERS, current)
            await until(changed_since(changes))
            third = scheduler.cluster_snapshots()
            updated = next(s for s in third if s.name == "member0")
            assert updated.cluster.metadata.labels == {"env": "scratch", "tier": "2"}  # updated

            changes = clusters.changes
            await client.delete(CLUSTERS, "member0")
            await until(changed_since(changes))
            assert scheduler.deleting_clusters() == frozenset({"member0"})  # deleting: still listed
            assert any(s.name == "member0" and s.deleting for s in scheduler.cluster_snapshots())

            changes = clusters.changes
            held = await client.get(CLUSTERS, "member0")
            held["metadata"]["finalizers"] = []
            await client.update(CLUSTERS, held)
            await until(lambda: _gone(clusters, "member0"))
            fourth = scheduler.cluster_snapshots()
            assert "member0" not in {s.name for s in fourth}  # deleted: gone
            assert scheduler.deleting_clusters() == frozenset()
            assert "member0" not in scheduler._snapshots
        finally:
            await clusters.stop()


async def _gone(clusters: Informer, name: str) -> bool:
    return clusters.get(name) is None


SYNC_MODE_ENUM = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/syncMode/enum"


def test_a_cluster_that_stops_parsing_keeps_its_place(env: PullMode) -> None:
    """A newer Karmada's CRD lets a Cluster carry a value this scheduler's model refuses: the
    cluster counts as its last valid version (it does not vanish, so a Duplicated binding is
    not moved off it and the member's workloads stay), and a Warning says why."""
    placement = {
        "clusterAffinity": {"clusterNames": ["member1", "member2", "member3"]},
        "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
    }
    name = create(env.admin, binding("skewed", placement))
    obj = wait_for(lambda: scheduled(env.admin, name), what="skewed scheduled")
    assert targets(obj) == {"member1": None, "member2": None}  # member3's taint is not tolerated
    patch = [{"op": "add", "path": f"{SYNC_MODE_ENUM}/-", "value": "Hybrid"}]
    env.admin("patch", "crd", "clusters.cluster.karmada.io", "--type=json", "-p", json.dumps(patch))
    try:
        env.admin("patch", "cluster", "member2", "--type=merge", "-p", '{"spec":{"syncMode":"Hybrid"}}')
        warning = wait_for(
            lambda: (
                [e for e in events(env.admin, "Cluster", "member2") if e["reason"] == "InvalidCluster"]
                or [
                    e
                    for e in json.loads(env.admin("get", "events", "-A", "-o", "json").stdout)["items"]
                    if e["involvedObject"]["kind"] == "Cluster"
                    and e["involvedObject"]["name"] == "member2"
                    and e["reason"] == "InvalidCluster"
                ]
            ),
            what="the InvalidCluster event",
        )
        assert warning[0]["type"] == "Warning" and "its last valid version is used" in warning[0]["message"]
        # a new generation must be scheduled now: member3 tolerated, member2 still there
        env.admin(
            "patch", RB, name, "-n", "default", "--type=merge",
            "-p", json.dumps({"spec": {"placement": {"clusterTolerations": [{**TAINT, "operator": "Equal"}]}}}),
        )  # fmt: skip
        obj = wait_for(lambda: scheduled(env.admin, name), what="skewed rescheduled")
        assert targets(obj) == {"member1": None, "member2": None, "member3": None}
    finally:
        env.admin("patch", "cluster", "member2", "--type=merge", "-p", '{"spec":{"syncMode":"Pull"}}')
        restore = [{"op": "remove", "path": f"{SYNC_MODE_ENUM}/2"}]
        env.admin("patch", "crd", "clusters.cluster.karmada.io", "--type=json", "-p", json.dumps(restore))


async def test_a_cluster_never_read_holds_the_bindings_placed_on_it(env: PullMode) -> None:
    """A Cluster that has not parsed once (the scheduler started after it changed) is left out of
    new decisions, but a binding already placed on it keeps its result rather than losing it."""
    async with KubeClient(from_kubeconfig(env.kubeconfig)) as client:
        clusters = Informer(client, CLUSTERS)
        bindings = Informer(client, RESOURCE_BINDINGS)
        recorder = EventRecorder(client, "test")
        scheduler = SchedulerController(
            client, bindings, Informer(client, CLUSTER_RESOURCE_BINDINGS), clusters, recorder
        )
        good = cluster("far", labels={"env": "prod"}, apis=APIS).to_dict()
        good["metadata"]["resourceVersion"] = "1"
        bad = json.loads(json.dumps(good))
        bad["spec"]["syncMode"] = "Hybrid"
        bad["metadata"]["resourceVersion"] = "2"
        clusters.store(bad)
        assert [s.name for s in scheduler.cluster_snapshots()] == []
        assert scheduler.unreadable_clusters() == {"far"}
        placement = {"clusterAffinity": {"clusterNames": ["far"]}, "replicaScheduling": {}}
        body = binding("held", placement, clusters=[{"name": "far"}])
        body["metadata"].update(generation=1, resourceVersion="5")
        bindings.store(body)
        assert await scheduler.reconcile(("default", body["metadata"]["name"])) is None
        await recorder.close()
        assert scheduler._blocked == {"far": {("default", "held-deployment")}}
        # it parses again: the waiting binding is requeued
        good["metadata"]["resourceVersion"] = "3"
        assert scheduler.on_cluster("MODIFIED", good, bad) == [("default", "held-deployment")]
        clusters.store(good)
        assert [s.name for s in scheduler.cluster_snapshots()] == ["far"]
        # and a later version that does not parse is replaced by this one
        bad["metadata"]["resourceVersion"] = "4"
        clusters.store(bad)
        assert [s.name for s in scheduler.cluster_snapshots()] == ["far"] and not scheduler.unreadable_clusters()
        # being deleted, though it does not parse: its bindings move off it
        bad["metadata"].update(resourceVersion="6", deletionTimestamp=now_time())
        clusters.store(bad)
        (held,) = scheduler.cluster_snapshots()
        assert held.deleting and scheduler.deleting_clusters() == {"far"}
