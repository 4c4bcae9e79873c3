"""Which events wake which bindings: the binding controller's event mapping,
on caches filled by hand (no server: nothing here is started)."""

from __future__ import annotations

from typing import Any

import pytest

from controlplane.binding_controller import (
    CLUSTER_OVERRIDE_POLICIES,
    OVERRIDE_POLICIES,
    BindingController,
    Models,
    Templates,
    WorkIndex,
)
from karmada.api.cluster import Cluster
from karmada.api.override import ClusterOverridePolicy, OverridePolicy
from karmada.kube import EventRecorder, Informer, KubeClient, ResourceMapper
from karmada.kube.config import ClusterConfig
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import CLUSTER_RESOURCE_BINDINGS, CLUSTERS, RESOURCE_BINDINGS, WORKS
from karmada.works import CLUSTER_RESOURCE_BINDING, RESOURCE_BINDING

Obj = dict[str, Any]


def rb(namespace: str, name: str, kind: str = "Deployment", clusters: tuple[str, ...] = ("m1",), **meta: Any) -> Obj:
    api_version = "apps/v1" if kind == "Deployment" else "v1"
    return {
        "metadata": {"namespace": namespace, "name": name, "generation": 1, "resourceVersion": "1", **meta},
        "spec": {
            "resource": {"apiVersion": api_version, "kind": kind, "namespace": namespace, "name": name},
            "clusters": [{"name": c} for c in clusters],
        },
    }


def crb(name: str) -> Obj:
    return {
        "metadata": {"name": name, "generation": 1, "resourceVersion": "1"},
        "spec": {"resource": {"apiVersion": "v1", "kind": "Namespace", "name": name}, "clusters": [{"name": "m2"}]},
    }


@pytest.fixture
async def controllers() -> Any:
    client = KubeClient(ClusterConfig(server="http://127.0.0.1:9"))  # never contacted
    works = Informer(client, WORKS)
    index = WorkIndex(works)
    clusters = Models(Informer(client, CLUSTERS), Cluster)
    cops = Models(Informer(client, CLUSTER_OVERRIDE_POLICIES), ClusterOverridePolicy)
    ops = Models(Informer(client, OVERRIDE_POLICIES), OverridePolicy)
    templates = Templates(client, InformerFactory(client), ResourceMapper(client))
    recorder = EventRecorder(client, "test")
    built = []
    for scope, resource, namespaced_ops, items in (
        (
            RESOURCE_BINDING,
            RESOURCE_BINDINGS,
            ops,
            [rb("default", "web"), rb("default", "cfg", "ConfigMap"), rb("prod", "api")],
        ),
        (CLUSTER_RESOURCE_BINDING, CLUSTER_RESOURCE_BINDINGS, None, [crb("team")]),
    ):
        bindings = Informer(client, resource)
        controller = BindingController(
            scope, resource, client, recorder, bindings, works, index, clusters, cops, namespaced_ops, templates
        )
        for item in items:
            bindings.store(item)
            controller.index_binding("ADDED", item, None)
        built.append(controller)
    yield built
    await client.close()


def test_binding_events(controllers: list[BindingController]) -> None:
    ctl = controllers[0]
    web = rb("default", "web")
    assert ctl.binding_keys("ADDED", web, None) == [("default", "web")]
    assert ctl.binding_keys("DELETED", web, web) == []
    assert ctl.binding_keys("MODIFIED", {**web, "status": {"x": 1}}, web) == []  # status only
    assert ctl.binding_keys("MODIFIED", web, web) == []  # a resync
    bumped = rb("default", "web", generation=2)
    assert ctl.binding_keys("MODIFIED", bumped, web) == [("default", "web")]
    deleting = rb("default", "web", deletionTimestamp="2024-01-01T00:00:00Z")
    assert ctl.binding_keys("MODIFIED", deleting, web) == [("default", "web")]


def policy(namespace: str | None, *selectors: Obj, generation: int = 1) -> Obj:
    meta: Obj = {"name": "p", "generation": generation}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta, "spec": {"resourceSelectors": list(selectors)} if selectors else {}}


CONFIGMAPS = {"apiVersion": "v1", "kind": "ConfigMap"}


@pytest.mark.parametrize(
    ("obj", "namespaced_keys", "cluster_keys"),
    [
        # listed items carry no kind: a namespace makes it an OverridePolicy
        (policy("default"), [("default", "cfg"), ("default", "web")], []),
        (policy(None), [("default", "cfg"), ("default", "web"), ("prod", "api")], [("", "team")]),
        (policy("default", CONFIGMAPS), [("default", "cfg")], []),
        (policy("prod", CONFIGMAPS), [], []),
        (policy(None, {"apiVersion": "v1", "kind": "Namespace"}), [], [("", "team")]),
    ],
)
def test_policy_events(
    controllers: list[BindingController], obj: Obj, namespaced_keys: list[Any], cluster_keys: list[Any]
) -> None:
    rbs, crbs = controllers
    assert rbs.policy_keys("ADDED", obj, None) == namespaced_keys
    assert crbs.policy_keys("ADDED", obj, None) == cluster_keys
    assert rbs.policy_keys("MODIFIED", obj, obj) == [], "no generation change: nothing to render"


def test_a_changed_selector_wakes_the_old_and_the_new_selection(controllers: list[BindingController]) -> None:
    old = policy("default", CONFIGMAPS)
    new = policy("default", {"apiVersion": "apps/v1", "kind": "Deployment"}, generation=2)
    assert controllers[0].policy_keys("MODIFIED", new, old) == [("default", "cfg"), ("default", "web")]


def test_cluster_and_work_events(controllers: list[BindingController]) -> None:
    rbs, crbs = controllers
    m1: Obj = {"metadata": {"name": "m1", "labels": {}}, "spec": {}}
    assert rbs.cluster_keys("ADDED", m1, None) == [("default", "cfg"), ("default", "web"), ("prod", "api")]
    assert rbs.cluster_keys("MODIFIED", {**m1, "status": {"conditions": []}}, m1) == []  # heartbeat
    relabelled = {**m1, "metadata": {"name": "m1", "labels": {"env": "prod"}}}
    assert len(rbs.cluster_keys("MODIFIED", relabelled, m1)) == 3
    assert crbs.cluster_keys("ADDED", m1, None) == []
    work: Obj = {
        "metadata": {
            "name": "w",
            "namespace": "karmada-es-m1",
            "annotations": {
                "resourcebinding.karmada.io/namespace": "default",
                "resourcebinding.karmada.io/name": "web",
            },
        }
    }
    assert rbs.work_keys("DELETED", work, work) == [("default", "web")]
    assert rbs.work_keys("MODIFIED", work, work) == []
    assert crbs.work_keys("DELETED", work, work) == []
    cluster_work = {"metadata": {"name": "w", "annotations": {"clusterresourcebinding.karmada.io/name": "team"}}}
    assert crbs.work_keys("DELETED", cluster_work, cluster_work) == [("", "team")]
    # a binding's new target set moves it in the cluster index
    moved = rb("prod", "api", clusters=("m3",))
    rbs.index_binding("MODIFIED", moved, rb("prod", "api"))
    assert ("prod", "api") not in rbs.cluster_keys("ADDED", m1, None)
    assert rbs.cluster_keys("ADDED", {"metadata": {"name": "m3"}}, None) == [("prod", "api")]
