"""What a policy's reconcile looks at: the templates its selectors may select (from the
detector's indexes by namespace and by name), not every template of the kind; and which
kinds stay watched: those some policy's selectors name (an index, not a walk of every policy).
Offline: the caches are filled by hand and the client is never contacted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from controlplane.detector import Detector
from karmada.kube import EventRecorder, Informer, KubeClient, ResourceMapper
from karmada.kube.config import ClusterConfig
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import Resource

Obj = dict[str, Any]
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)
PP_ID = "propagationpolicy.karmada.io/permanent-id"


class CountingInformer(Informer):
    """A template cache that counts the objects read from it."""

    reads = 0

    def get(self, name: str, namespace: str = "") -> Obj | None:
        self.reads += 1
        return super().get(name, namespace)

    def items(self) -> Iterator[Obj]:
        for obj in super().items():
            self.reads += 1
            yield obj


def deployment(namespace: str, name: str, **labels: str) -> Obj:
    meta = {"name": name, "namespace": namespace, "resourceVersion": "1", "labels": labels}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {}}


def policy(namespace: str, name: str, selector: Obj) -> Obj:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": "1", "labels": {PP_ID: f"id-{name}"}},
        "spec": {"resourceSelectors": [selector]},
    }


async def drain(detector: Detector) -> set[tuple[str, str, str, str]]:
    found = set()
    while len(detector.templates.queue):
        key = await detector.templates.queue.get()
        detector.templates.queue.done(key)
        found.add(key)
    return found


@pytest.fixture
def detector() -> Detector:
    client = KubeClient(ClusterConfig(server="http://127.0.0.1:9"))  # never contacted
    return Detector(client, InformerFactory(client), ResourceMapper(client), EventRecorder(client, "test"))


def templates_in(detector: Detector, namespaces: int, per_namespace: int) -> CountingInformer:
    informer = CountingInformer(detector.client, DEPLOYMENTS)
    handler = detector._template_handler("apps/v1", "Deployment")
    for n in range(namespaces):
        for i in range(per_namespace):
            obj = deployment(f"ns-{n}", f"app-{i}", tier="front" if i < 5 else "back")
            informer.store(obj)
            handler("ADDED", obj, None)
    detector.kinds[("apps/v1", "Deployment")] = informer
    return informer


@pytest.mark.parametrize(
    ("selector", "selected", "most_reads"),
    [
        ({"labelSelector": {"matchLabels": {"tier": "front"}}}, 5, 100),  # its namespace only
        ({"name": "app-7"}, 1, 1),
        ({}, 100, 100),
    ],
)
async def test_a_policy_reconcile_reads_only_its_namespace(
    detector: Detector, selector: Obj, selected: int, most_reads: int
) -> None:
    informer = templates_in(detector, namespaces=20, per_namespace=100)
    obj = policy("ns-3", "p", {"apiVersion": "apps/v1", "kind": "Deployment", **selector})
    detector.pps.store(obj)
    parsed = detector._policy(("PropagationPolicy", "ns-3", "p"))
    assert parsed is not None
    informer.reads = 0
    detector._enqueue_selected(parsed)
    assert informer.reads <= most_reads  # of 2,000 templates
    found = await drain(detector)
    assert len(found) == selected and {key[2] for key in found} == {"ns-3"}


async def test_a_deleted_template_leaves_the_indexes(detector: Detector) -> None:
    informer = templates_in(detector, namespaces=1, per_namespace=2)
    handler = detector._template_handler("apps/v1", "Deployment")
    gone = deployment("ns-0", "app-0", tier="front")
    handler("DELETED", gone, None)  # (the cache itself still holds it: only the index tells)
    detector.pps.store(policy("ns-0", "p", {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ns-0"}))
    parsed = detector._policy(("PropagationPolicy", "ns-0", "p"))
    assert parsed is not None
    informer.reads = 0
    detector._enqueue_selected(parsed)
    assert informer.reads == 1
    assert await drain(detector) == {("apps/v1", "Deployment", "ns-0", "app-1")}


def test_the_kinds_policies_select_are_indexed_per_policy(detector: Detector) -> None:
    first = policy("a", "p1", {"apiVersion": "apps/v1", "kind": "Deployment"})
    second = policy("b", "p2", {"apiVersion": "apps/v1", "kind": "Deployment"})
    detector._on_policy("ADDED", first, None)
    detector._on_policy("ADDED", second, None)
    assert detector._selecting[("apps/v1", "Deployment")] == {
        ("PropagationPolicy", "a", "p1"),
        ("PropagationPolicy", "b", "p2"),
    }
    moved = {**first, "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap"}]}}
    detector._on_policy("MODIFIED", moved, first)
    assert detector._selecting == {
        ("apps/v1", "Deployment"): {("PropagationPolicy", "b", "p2")},
        ("v1", "ConfigMap"): {("PropagationPolicy", "a", "p1")},
    }
    detector._on_policy("DELETED", second, None)
    detector._on_policy("DELETED", moved, None)
    assert detector._selecting == {} and detector._selects == {}
