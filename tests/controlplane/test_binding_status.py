"""The bindingStatus controller against localkube: Work status written as the
agent writes it flows into the binding (aggregatedStatus, FullyApplied) and the
Deployment template's status, so ``kubectl rollout status`` finishes; a member
refusing a manifest shows on the binding and as a Warning on the template; a
stale binding (409) is re-read, keeping the scheduler's fields."""

from __future__ import annotations

import concurrent.futures
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controlplane.binding_status import CRB, RB, BindingStatusController, binding_keys, work_keys
from karmada.api.names import work_name
from karmada.kube import EventRecorder, KubeClient, ResourceMapper, from_kubeconfig
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import CLUSTER_RESOURCE_BINDINGS, RESOURCE_BINDINGS, WORKS
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread

BINDING_ID = str(uuid.uuid4())
WORK = work_name("Deployment", "nginx", "default")
SCHEDULED = {
    "type": "Scheduled",
    "status": "True",
    "reason": "Success",
    "message": "Binding has been scheduled successfully.",
    "lastTransitionTime": "2024-05-01T00:00:00Z",
}


def _binding(rv: str = "1", scheduled: bool = True, **meta: Any) -> dict[str, Any]:
    status = {"lastScheduledTime": "2024-05-01T00:00:00Z"} if scheduled else {}
    return {
        "metadata": {"name": "b", "namespace": "ns", **meta},
        "spec": {"resource": {"resourceVersion": rv}},
        "status": status,
    }


_SCHEDULED = _binding()


@pytest.mark.parametrize(
    ("event", "obj", "old", "queued"),
    [
        ("ADDED", _SCHEDULED, None, True),
        ("ADDED", _binding(scheduled=False), None, False),
        ("MODIFIED", _SCHEDULED, _SCHEDULED, True),  # a resync
        ("MODIFIED", _binding("2"), _binding("1"), True),  # the template changed
        ("MODIFIED", _binding(generation=3), _binding(generation=2), False),  # spec only: Works will tell
        ("MODIFIED", {**_binding(), "status": {"lastScheduledTime": "x", "conditions": []}}, _binding(), False),
        ("MODIFIED", _binding(labels={"id": "1"}), _binding(), True),  # its permanent id arrived
        ("DELETED", _SCHEDULED, _SCHEDULED, False),
    ],
)
def test_binding_events(event: str, obj: dict[str, Any], old: dict[str, Any] | None, queued: bool) -> None:
    assert binding_keys(RB)(event, obj, old) == ([(RB, "ns", "b")] if queued else [])


RB_WORK = {
    "metadata": {"annotations": {"resourcebinding.karmada.io/namespace": "ns", "resourcebinding.karmada.io/name": "b"}}
}
CRB_WORK = {"metadata": {"annotations": {"clusterresourcebinding.karmada.io/name": "c"}}}
APPLIED = {"status": {"conditions": [{"type": "Applied", "status": "True"}]}}


@pytest.mark.parametrize(
    ("event", "obj", "old", "keys"),
    [
        ("ADDED", RB_WORK, None, []),  # just written, no status yet
        ("ADDED", {**RB_WORK, **APPLIED}, None, [(RB, "ns", "b")]),  # a relist or a restart
        ("MODIFIED", {**RB_WORK, **APPLIED}, RB_WORK, [(RB, "ns", "b")]),
        ("MODIFIED", {**RB_WORK, **APPLIED, "spec": {}}, {**RB_WORK, **APPLIED}, []),  # spec only
        ("DELETED", RB_WORK, RB_WORK, [(RB, "ns", "b")]),
        ("DELETED", CRB_WORK, CRB_WORK, [(CRB, "", "c")]),
        ("DELETED", {"metadata": {"name": "w"}}, None, []),  # no binding's
    ],
)
def test_work_events(event: str, obj: dict[str, Any], old: dict[str, Any] | None, keys: list[Any]) -> None:
    assert work_keys(event, obj, old) == keys


@pytest.fixture(scope="module")
def env(localkube: ServerThread, workdir: Path) -> Iterator[PullMode]:
    pull = PullMode(localkube, workdir).install()
    pull.start_controlplane("--controllers=bindingStatus", "--leader-elect=false")
    try:
        yield pull
    finally:
        pull.stop()


def apply(env: PullMode, obj: dict[str, Any]) -> None:
    env.admin("apply", "-f", "-", stdin=json.dumps(obj))


def get(env: PullMode, *args: str) -> dict[str, Any]:
    return dict(json.loads(env.admin("get", *args, "-o", "json").stdout))


def patch_status(env: PullMode, kind: str, name: str, namespace: str, status: dict[str, Any]) -> None:
    env.admin(
        "patch",
        kind,
        name,
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": status}),
    )


def deployment(replicas: int = 3) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
            },
        },
    }


def binding(uid: str, clusters: dict[str, int]) -> dict[str, Any]:
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": "nginx-deployment",
            "namespace": "default",
            "labels": {"resourcebinding.karmada.io/permanent-id": BINDING_ID},
        },
        "spec": {
            "resource": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": "default",
                "name": "nginx",
                "uid": uid,
            },
            "replicas": sum(clusters.values()),
            "clusters": [{"name": n, "replicas": r} for n, r in clusters.items()],
        },
    }


def work(cluster: str, replicas: int) -> dict[str, Any]:
    manifest = deployment(replicas)
    manifest["metadata"]["labels"] = {"karmada.io/managed": "true"}
    return {
        "apiVersion": "work.karmada.io/v1alpha1",
        "kind": "Work",
        "metadata": {
            "name": WORK,
            "namespace": f"karmada-es-{cluster}",
            "labels": {"resourcebinding.karmada.io/permanent-id": BINDING_ID},
            "annotations": {
                "resourcebinding.karmada.io/namespace": "default",
                "resourcebinding.karmada.io/name": "nginx-deployment",
            },
        },
        "spec": {"workload": {"manifests": [manifest]}},
    }


def applied(replicas: int, updated: int | None = None, generation: int = 1) -> dict[str, Any]:
    """Work status as the agent writes it for a rolled-out Deployment."""
    updated = replicas if updated is None else updated
    return {
        "conditions": [
            {
                "type": "Applied",
                "status": "True",
                "reason": "AppliedSuccessful",
                "message": "Manifest has been successfully applied",
                "lastTransitionTime": "2024-05-01T00:00:00Z",
            }
        ],
        "manifestStatuses": [
            {
                "identifier": {
                    "ordinal": 0,
                    "group": "apps",
                    "version": "v1",
                    "kind": "Deployment",
                    "resource": "deployments",
                    "namespace": "default",
                    "name": "nginx",
                },
                "status": {
                    "replicas": replicas,
                    "updatedReplicas": updated,
                    "readyReplicas": updated,
                    "availableReplicas": updated,
                    "observedGeneration": 1,
                    "generation": 1,
                    "resourceTemplateGeneration": generation,
                },
                "health": "Healthy" if updated == replicas else "Unhealthy",
            }
        ],
    }


REFUSED = "Failed to apply all manifests (0/1): admission webhook denied the request: no nginx here"


def failed() -> dict[str, Any]:
    return {
        "conditions": [
            {
                "type": "Applied",
                "status": "False",
                "reason": "AppliedFailed",
                "message": REFUSED,
                "lastTransitionTime": "2024-05-01T00:00:00Z",
            }
        ]
    }


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), {})


def rb(env: PullMode) -> dict[str, Any]:
    return get(env, "resourcebinding", "nginx-deployment", "-n", "default")


def test_status_flows_to_binding_and_template_and_rollout_finishes(env: PullMode) -> None:
    for cluster in ("m1", "m2"):
        env.admin("create", "namespace", f"karmada-es-{cluster}")
    apply(env, deployment())
    template = get(env, "deploy", "nginx", "-n", "default")
    apply(env, binding(template["metadata"]["uid"], {"m1": 2, "m2": 1}))
    # the scheduler's part of the status
    patch_status(
        env,
        "resourcebinding",
        "nginx-deployment",
        "default",
        {"lastScheduledTime": "2024-05-01T00:00:00Z", "schedulerObservedGeneration": 1, "conditions": [SCHEDULED]},
    )
    apply(env, work("m1", 2))
    apply(env, work("m2", 1))
    patch_status(env, "work", WORK, "karmada-es-m1", applied(2))
    # m2 has not reported yet: one item not applied, FullyApplied False
    wait_for(lambda: len((rb(env).get("status") or {}).get("aggregatedStatus") or []) == 2, what="aggregatedStatus")
    status = rb(env)["status"]
    assert status["aggregatedStatus"][1] == {"clusterName": "m2", "health": "Unknown"}
    assert status["aggregatedStatus"][0]["applied"] is True and status["aggregatedStatus"][0]["health"] == "Healthy"
    fully = condition(rb(env), "FullyApplied")
    assert (fully["status"], fully["reason"]) == ("False", "FullyAppliedFailed")
    assert condition(rb(env), "Scheduled") == SCHEDULED and status["schedulerObservedGeneration"] == 1
    # the template: counters of m1 only, observedGeneration not advanced while m2 is silent
    wait_for(lambda: (get(env, "deploy", "nginx", "-n", "default").get("status") or {}).get("replicas") == 2)
    assert "observedGeneration" not in get(env, "deploy", "nginx", "-n", "default")["status"]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        rollout = pool.submit(
            env.admin, "rollout", "status", "deploy/nginx", "-n", "default", "--timeout=40s", check=False, timeout=60
        )
        patch_status(env, "work", WORK, "karmada-es-m2", applied(1, updated=0))
        wait_for(lambda: (get(env, "deploy", "nginx", "-n", "default")["status"]).get("observedGeneration") == 1)
        assert not rollout.done()  # 2 of 3 updated: still waiting
        patch_status(env, "work", WORK, "karmada-es-m2", applied(1))
        result = rollout.result(timeout=60)
    assert result.returncode == 0, result.stderr
    assert 'deployment "nginx" successfully rolled out' in result.stdout
    deploy_status = get(env, "deploy", "nginx", "-n", "default")["status"]
    assert deploy_status == {
        "observedGeneration": 1,
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
    }
    wait_for(lambda: condition(rb(env), "FullyApplied").get("status") == "True", what="FullyApplied")
    fully = condition(rb(env), "FullyApplied")
    assert (fully["reason"], fully["message"]) == ("FullyAppliedSuccess", "All works have been successfully applied")
    events = env.admin("get", "events", "-n", "default", "-o", "json").stdout
    reasons = {(e["involvedObject"]["kind"], e["reason"]) for e in json.loads(events)["items"]}
    assert ("ResourceBinding", "AggregateStatusSucceed") in reasons
    assert ("Deployment", "AggregateStatusSucceed") in reasons


def test_refused_manifest_shows_on_binding_and_template(env: PullMode) -> None:
    patch_status(env, "work", WORK, "karmada-es-m2", failed())
    wait_for(lambda: condition(rb(env), "FullyApplied").get("status") == "False", what="FullyApplied False")
    items = rb(env)["status"]["aggregatedStatus"]
    assert items[1] == {"clusterName": "m2", "appliedMessage": REFUSED, "health": "Unknown"}

    def warning() -> dict[str, Any] | None:
        events = json.loads(env.admin("get", "events", "-n", "default", "-o", "json").stdout)["items"]
        return next((e for e in events if e["reason"] == "SyncFailed"), None)

    event = wait_for(warning, what="SyncFailed on the template")
    assert event["type"] == "Warning" and event["involvedObject"]["name"] == "nginx"
    assert event["message"] == f"Failed to create or update resource(default/nginx) in member cluster(m2): {REFUSED}"
    # the template keeps m1's counters only; observedGeneration stays where it was
    wait_for(lambda: get(env, "deploy", "nginx", "-n", "default")["status"].get("replicas") == 2)
    assert get(env, "deploy", "nginx", "-n", "default")["status"]["observedGeneration"] == 1
    # the member accepts it again: FullyApplied comes back
    patch_status(env, "work", WORK, "karmada-es-m2", applied(1))
    wait_for(lambda: condition(rb(env), "FullyApplied").get("status") == "True", what="FullyApplied again")


async def test_a_stale_binding_is_read_again_and_the_schedulers_fields_kept(env: PullMode) -> None:
    """409: the status write carries the cached resourceVersion; the scheduler wrote since."""
    async with KubeClient(from_kubeconfig(env.kubeconfig)) as client:
        informers = InformerFactory(client)
        controller = BindingStatusController(
            client,
            ResourceMapper(client),
            informers,
            informers.informer(RESOURCE_BINDINGS),
            informers.informer(CLUSTER_RESOURCE_BINDINGS),
            informers.informer(WORKS),
            EventRecorder(client, "test"),
        )
        try:
            await informers.start(sync_timeout=20)
            stale = await client.get(RESOURCE_BINDINGS, "nginx-deployment", "default")
            latest = dict(stale, status={**stale["status"], "schedulerObservedGeneration": 7})
            await client.update(RESOURCE_BINDINGS, latest, "default", subresource="status")
            stale["status"].pop("aggregatedStatus")  # something to write
            stored = await controller._write_binding(RB, stale, [{"clusterName": "m1", "applied": True}])
            assert stored is not None
            assert stored["status"]["schedulerObservedGeneration"] == 7
            assert stored["status"]["aggregatedStatus"] == [{"clusterName": "m1", "applied": True}]
        finally:
            await informers.stop()


def test_observed_generation_waits_for_every_member_to_render_the_new_template(env: PullMode) -> None:
    env.admin("set", "image", "deploy/nginx", "-n", "default", "nginx=nginx:1.27")
    assert get(env, "deploy", "nginx", "-n", "default")["metadata"]["generation"] == 2
    # m1 renders generation 2, m2 still reports the old one: observedGeneration stays 1
    patch_status(env, "work", WORK, "karmada-es-m1", applied(2, updated=1, generation=2))
    wait_for(lambda: get(env, "deploy", "nginx", "-n", "default")["status"].get("updatedReplicas") == 2)
    assert get(env, "deploy", "nginx", "-n", "default")["status"]["observedGeneration"] == 1
    rollout = env.admin("rollout", "status", "deploy/nginx", "-n", "default", "--timeout=1s", check=False)
    assert rollout.returncode != 0 and "Waiting for deployment spec update to be observed" in rollout.stdout
    patch_status(env, "work", WORK, "karmada-es-m1", applied(2, generation=2))
    patch_status(env, "work", WORK, "karmada-es-m2", applied(1, generation=2))
    wait_for(lambda: get(env, "deploy", "nginx", "-n", "default")["status"].get("observedGeneration") == 2)
    env.admin("rollout", "status", "deploy/nginx", "-n", "default", "--timeout=20s", timeout=30)


def test_cluster_resource_binding_of_a_persistent_volume(env: PullMode) -> None:
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "data"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}},
    }
    apply(env, pv)
    uid = get(env, "pv", "data")["metadata"]["uid"]
    crb_id = str(uuid.uuid4())
    crb = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ClusterResourceBinding",
        "metadata": {
            "name": "data-persistentvolume",
            "labels": {"clusterresourcebinding.karmada.io/permanent-id": crb_id},
        },
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "PersistentVolume", "name": "data", "uid": uid},
            "clusters": [{"name": "m1"}],
        },
    }
    apply(env, crb)
    env.admin(
        "patch",
        "clusterresourcebinding",
        "data-persistentvolume",
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": {"lastScheduledTime": "2024-05-01T00:00:00Z"}}),
    )
    name = work_name("PersistentVolume", "data")
    manifest = dict(pv)
    apply(
        env,
        {
            "apiVersion": "work.karmada.io/v1alpha1",
            "kind": "Work",
            "metadata": {
                "name": name,
                "namespace": "karmada-es-m1",
                "labels": {"clusterresourcebinding.karmada.io/permanent-id": crb_id},
                "annotations": {"clusterresourcebinding.karmada.io/name": "data-persistentvolume"},
            },
            "spec": {"workload": {"manifests": [manifest]}},
        },
    )
    status = applied(1)
    status["manifestStatuses"] = [
        {
            "identifier": {
                "ordinal": 0,
                "version": "v1",
                "kind": "PersistentVolume",
                "resource": "persistentvolumes",
                "name": "data",
            },
            "status": {"phase": "Bound"},
            "health": "Healthy",
        }
    ]
    patch_status(env, "work", name, "karmada-es-m1", status)

    def crb_applied() -> bool:
        return (
            condition(get(env, "clusterresourcebinding", "data-persistentvolume"), "FullyApplied").get("status")
            == "True"
        )

    wait_for(crb_applied, what="CRB FullyApplied")
    items = get(env, "clusterresourcebinding", "data-persistentvolume")["status"]["aggregatedStatus"]
    assert items == [{"clusterName": "m1", "applied": True, "status": {"phase": "Bound"}, "health": "Healthy"}]
    wait_for(lambda: (get(env, "pv", "data").get("status") or {}).get("phase") == "Bound", what="PV status")


def test_a_work_without_the_template_fails_its_binding_only(env: PullMode) -> None:
    """Bad input: a Work labelled for a binding whose template it does not carry."""
    other_id = str(uuid.uuid4())
    apply(env, dict(deployment(), metadata={"name": "lonely", "namespace": "default"}))
    uid = get(env, "deploy", "lonely", "-n", "default")["metadata"]["uid"]
    broken = binding(uid, {"m1": 1})
    broken["metadata"] = {
        "name": "lonely-deployment",
        "namespace": "default",
        "labels": {"resourcebinding.karmada.io/permanent-id": other_id},
    }
    broken["spec"]["resource"]["name"] = "lonely"
    apply(env, broken)
    patch_status(env, "resourcebinding", "lonely-deployment", "default", {"lastScheduledTime": "2024-05-01T00:00:00Z"})
    stray = work("m1", 1)  # carries nginx, not lonely
    stray["metadata"].update(
        name=work_name("Deployment", "lonely", "default"),
        labels={"resourcebinding.karmada.io/permanent-id": other_id},
        annotations={
            "resourcebinding.karmada.io/namespace": "default",
            "resourcebinding.karmada.io/name": "lonely-deployment",
        },
    )
    apply(env, stray)
    patch_status(env, "work", stray["metadata"]["name"], "karmada-es-m1", applied(1))

    def failed_event() -> dict[str, Any] | None:
        events = json.loads(env.admin("get", "events", "-n", "default", "-o", "json").stdout)["items"]
        return next(
            (
                e
                for e in events
                if e["reason"] == "AggregateStatusFailed" and e["involvedObject"]["name"] == "lonely-deployment"
            ),
            None,
        )

    event = wait_for(failed_event, what="AggregateStatusFailed on the binding")
    assert event["type"] == "Warning" and "holds no manifest Deployment default/lonely" in event["message"]
    # the good binding is still served: a status change there still flows
    patch_status(env, "work", WORK, "karmada-es-m2", failed())
    wait_for(lambda: condition(rb(env), "FullyApplied").get("status") == "False", what="nginx still aggregated")


def test_a_restart_writes_nothing(env: PullMode) -> None:
    def versions() -> tuple[str, str]:
        return (
            rb(env)["metadata"]["resourceVersion"],
            get(env, "deploy", "nginx", "-n", "default")["metadata"]["resourceVersion"],
        )

    before = versions()
    assert env.controlplane is not None
    env.controlplane.stop()
    env.start_controlplane("--controllers=bindingStatus", "--leader-elect=false")
    # something to do after the start-up pass: the volume is released in m1
    name = work_name("PersistentVolume", "data")
    status = json.loads(env.admin("get", "work", name, "-n", "karmada-es-m1", "-o", "json").stdout)["status"]
    status["manifestStatuses"][0]["status"] = {"phase": "Released"}
    patch_status(env, "work", name, "karmada-es-m1", status)
    wait_for(lambda: get(env, "pv", "data")["status"].get("phase") == "Released", what="PV status after the restart")
    assert versions() == before
