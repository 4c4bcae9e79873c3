"""Status writes of a wide binding are paced by its size (binding_status.WritePacer):
Works reporting one after another do not each rewrite the binding's whole status."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from controlplane.binding_status import RB, BindingStatusController, WritePacer
from karmada.api.names import work_name
from karmada.kube import EventRecorder, Informer, KubeClient, ResourceMapper, from_kubeconfig
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import CLUSTER_RESOURCE_BINDINGS, NAMESPACES, RESOURCE_BINDINGS, WORKS
from tests.pullmode import PullMode
from tests.servers import ServerThread

pytestmark = pytest.mark.timeout(120)
Obj = dict[str, Any]
CLUSTERS = [f"p{i:02}" for i in range(40)]
BINDING_ID = str(uuid.uuid4())
WORK = work_name("ConfigMap", "wide", "default")
KEY = (RB, "default", "wide-configmap")


@pytest.mark.parametrize(
    ("entries", "elapsed", "wait"),
    [
        (1000, 0.0, 2.0),  # 2 ms an entry
        (1000, 1.5, 0.5),
        (1000, 2.0, 0.0),  # due: written at once
        (3, 0.0, 0.006),
        (10_000, 0.0, 5.0),  # at most 5 s
        (0, 0.0, 0.0),  # an empty status: nothing to pace
    ],
)
def test_the_pace_grows_with_the_entries_written(entries: int, elapsed: float, wait: float) -> None:
    now = [100.0]
    pacer = WritePacer(clock=lambda: now[0])
    assert pacer.wait(KEY) == 0.0  # never written
    pacer.written(KEY, entries)
    now[0] += elapsed
    assert pacer.wait(KEY) == pytest.approx(wait)
    assert pacer.wait(("ResourceBinding", "default", "other")) == 0.0  # per binding


def _applied() -> Obj:
    condition = {"type": "Applied", "status": "True", "reason": "AppliedSuccessful", "message": "ok"}
    return {"conditions": [{**condition, "lastTransitionTime": "2024-05-01T00:00:00Z"}]}


async def _report(client: KubeClient, works: Informer, clusters: list[str]) -> None:
    """The agents of ``clusters`` write Applied; then wait for the cache to see it."""
    for name in clusters:
        stored = await client.get(WORKS, WORK, f"karmada-es-{name}")
        await client.update(WORKS, {**stored, "status": _applied()}, f"karmada-es-{name}", subresource="status")
    for _ in range(200):
        if all((works.get(WORK, f"karmada-es-{n}") or {}).get("status") for n in clusters):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the Work cache never saw the statuses")


async def _setup(client: KubeClient) -> None:
    for name in CLUSTERS:
        space = f"karmada-es-{name}"
        await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": space}})
        manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "wide", "namespace": "default"}}
        work = {
            "apiVersion": "work.karmada.io/v1alpha1",
            "kind": "Work",
            "metadata": {
                "name": WORK,
                "namespace": space,
                "labels": {"resourcebinding.karmada.io/permanent-id": BINDING_ID},
                "annotations": {
                    "resourcebinding.karmada.io/namespace": "default",
                    "resourcebinding.karmada.io/name": "wide-configmap",
                },
            },
            "spec": {"workload": {"manifests": [manifest]}},
        }
        await client.create(WORKS, work, space)
    binding = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": "wide-configmap",
            "namespace": "default",
            "labels": {"resourcebinding.karmada.io/permanent-id": BINDING_ID},
        },
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "wide"},
            "clusters": [{"name": n} for n in CLUSTERS],
        },
    }
    stored = await client.create(RESOURCE_BINDINGS, binding, "default")
    stored["status"] = {"lastScheduledTime": "2024-05-01T00:00:00Z"}
    await client.update(RESOURCE_BINDINGS, stored, "default", subresource="status")


async def test_works_reporting_meanwhile_go_into_one_write_once_due(localkube: ServerThread, workdir: Path) -> None:
    mode = PullMode(localkube, workdir).install()
    async with KubeClient(from_kubeconfig(mode.kubeconfig)) as client:
        await _setup(client)
        informers = InformerFactory(client)
        bindings, works = informers.informer(RESOURCE_BINDINGS), informers.informer(WORKS)
        controller = BindingStatusController(
            client,
            ResourceMapper(client),
            informers,
            bindings,
            informers.informer(CLUSTER_RESOURCE_BINDINGS),
            works,
            EventRecorder(client, "test"),
        )
        now = [0.0]
        controller.pacer = WritePacer(per_entry=1.0, limit=100.0, clock=lambda: now[0])  # 40 entries: 40 s

        async def applied() -> tuple[str, int]:
            stored = await client.get(RESOURCE_BINDINGS, "wide-configmap", "default")
            entries = stored["status"].get("aggregatedStatus") or []
            return stored["metadata"]["resourceVersion"], sum(1 for e in entries if e.get("applied"))

        try:
            await informers.start(sync_timeout=20)
            await _report(client, works, CLUSTERS[:10])
            assert await controller.reconcile(KEY) is None
            version, count = await applied()
            assert count == 10

            await _report(client, works, CLUSTERS[10:30])
            now[0] += 5.0
            assert await controller.reconcile(KEY) == pytest.approx(35.0)  # come back when due
            assert await applied() == (version, 10), "nothing written before it is due"

            now[0] += 35.0
            assert await controller.reconcile(KEY) is None
            assert (await applied())[1] == 30, "everything that arrived meanwhile, in one write"
        finally:
            await informers.stop()
            await controller.recorder.flush()
