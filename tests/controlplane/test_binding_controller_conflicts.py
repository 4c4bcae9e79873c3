"""Failure paths of the binding controller, driven in process against localkube:
a Work changed behind a stale cache (a real 409, then a fresh read and a retry),
a binding whose template kind is not served, a binding gone mid-flight, and
one Work write failing among many written at once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from controlplane import binding_controller
from controlplane.binding_controller import BindingController
from controlplane.context import Context
from controlplane.options import Options
from karmada.api.names import work_name
from karmada.kube import EventRecorder, KubeClient, KubeError, from_kubeconfig
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import EVENTS, RESOURCE_BINDINGS, WORKS
from tests.factories import cluster
from tests.pullmode import PullMode
from tests.servers import Kubectl, ServerThread

pytestmark = pytest.mark.timeout(120)
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def installed(localkube: ServerThread, workdir: Path) -> PullMode:
    mode = PullMode(localkube, workdir).install()
    mode.admin("apply", "-f", "-", stdin=json.dumps(cluster("member1").to_dict()))
    mode.admin("create", "namespace", "karmada-es-member1")
    return mode


def binding(admin: Kubectl, template_kind: str, name: str, api_version: str = "v1", replicas: int = 0) -> Obj:
    spec: Obj = {
        "resource": {"apiVersion": api_version, "kind": template_kind, "namespace": "default", "name": name},
        "clusters": [{"name": "member1", "replicas": replicas}],
    }
    if replicas:
        spec["replicas"] = replicas
    body = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": f"{name}-{template_kind.lower()}",
            "namespace": "default",
            "labels": {"resourcebinding.karmada.io/permanent-id": f"id-{name}"},
        },
        "spec": spec,
    }
    admin("apply", "-f", "-", stdin=json.dumps(body))
    return body


async def started(installed: PullMode) -> tuple[KubeClient, InformerFactory, BindingController]:
    client = KubeClient(from_kubeconfig(installed.kubeconfig))
    informers = InformerFactory(client)
    context = Context(client, informers, EventRecorder(client, "test"), Options())
    loops = binding_controller.setup(context)
    await informers.start(sync_timeout=20)
    controller = loops[0].reconcile.__self__  # type: ignore[attr-defined]
    assert isinstance(controller, BindingController)
    return client, informers, controller


async def test_a_stale_work_cache_meets_a_409_and_retries(installed: PullMode) -> None:
    admin = installed.admin
    admin("create", "deployment", "web", "--image=nginx", "--replicas=2")
    binding(admin, "Deployment", "web", "apps/v1", replicas=2)
    client, informers, controller = await started(installed)
    try:
        key = ("default", "web-deployment")
        assert await controller.reconcile(key) is None
        name = work_name("Deployment", "web", "default")
        stored = await client.get(WORKS, name, "karmada-es-member1")
        assert stored["spec"]["workload"]["manifests"][0]["spec"]["replicas"] == 2
        # freeze the Work cache, then change the Work behind it
        await controller.works.stop()
        admin("label", "work", name, "-n", "karmada-es-member1", "team=a")
        patch = {"spec": {"clusters": [{"name": "member1", "replicas": 1}]}}
        updated = await client.patch(RESOURCE_BINDINGS, "web-deployment", patch, "default")
        controller.bindings.store(updated)
        assert await controller.reconcile(key) is None  # the 409 is answered by a fresh read
        after = await client.get(WORKS, name, "karmada-es-member1")
        assert after["spec"]["workload"]["manifests"][0]["spec"]["replicas"] == 1
        assert after["metadata"]["labels"]["team"] == "a", "the change made meanwhile survives"
    finally:
        await informers.stop()
        await client.close()


async def test_an_unserved_template_kind_is_reported_and_retried_later(installed: PullMode) -> None:
    binding(installed.admin, "Nothing", "ghost", "example.com/v1")
    client, informers, controller = await started(installed)
    try:
        again = await controller.reconcile(("default", "ghost-nothing"))
        assert again == binding_controller.UNKNOWN_KIND_REQUEUE
        await controller.recorder.flush()  # events are written in the background
        listing = await client.list(EVENTS, "default", fieldSelector="involvedObject.name=ghost-nothing")
        messages = [e["message"] for e in listing["items"] if e["reason"] == "SyncWorkFailed"]
        assert messages and "does not serve Nothing in example.com/v1" in messages[0]
        assert await controller.reconcile(("default", "no-such-binding")) is None
    finally:
        await informers.stop()
        await client.close()


async def test_a_binding_deleted_before_the_watch_reports_its_works_still_deletes_them(installed: PullMode) -> None:
    admin = installed.admin
    admin("create", "configmap", "quick", "--from-literal=k=v")
    binding(admin, "ConfigMap", "quick")
    client, informers, controller = await started(installed)
    try:
        await controller.works.stop()  # no watch event will tell the index about the new Work
        key = ("default", "quick-configmap")
        assert await controller.reconcile(key) is None
        name = work_name("ConfigMap", "quick", "default")
        assert await client.get_or_none(WORKS, name, "karmada-es-member1") is not None
        await client.delete(RESOURCE_BINDINGS, "quick-configmap", "default")
        controller.bindings.store(await client.get(RESOURCE_BINDINGS, "quick-configmap", "default"))
        assert await controller.reconcile(key) is None
        work = await client.get(WORKS, name, "karmada-es-member1")
        assert work["metadata"].get("deletionTimestamp"), "the Work was deleted"
        assert await client.get_or_none(RESOURCE_BINDINGS, "quick-configmap", "default") is None
    finally:
        await informers.stop()
        await client.close()


def wide_binding(admin: Kubectl, name: str, count: int) -> list[str]:
    """``count`` clusters ``<name>00``.. with their execution namespaces, and ConfigMap ``name``
    bound to all of them; the cluster names."""
    names = [f"{name}{i:02}" for i in range(count)]
    clusters = [cluster(n).to_dict() for n in names]
    spaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"karmada-es-{n}"}} for n in names]
    admin("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": clusters + spaces}))
    admin("create", "configmap", name, "--from-literal=k=v")
    body = binding(admin, "ConfigMap", name)
    body["spec"]["clusters"] = [{"name": n} for n in names]
    admin("apply", "-f", "-", stdin=json.dumps(body))
    return names


async def test_a_bindings_works_are_written_at_once_and_one_failure_spares_the_others(installed: PullMode) -> None:
    names = wide_binding(installed.admin, "wide", 24)
    client, informers, controller = await started(installed)
    running = peak = 0
    real_create = client.create

    async def create(resource: Any, obj: Obj, namespace: str | None = None, **params: str) -> Obj:
        nonlocal running, peak
        if resource is not WORKS:
            return await real_create(resource, obj, namespace, **params)
        running += 1
        peak = max(peak, running)
        try:
            await asyncio.sleep(0.05)  # a round trip long enough for the others to start
            if namespace == "karmada-es-wide07":
                raise KubeError(500, "InternalError", "injected")
            return await real_create(resource, obj, namespace, **params)
        finally:
            running -= 1

    client.create = create  # type: ignore[method-assign,assignment]
    try:
        with pytest.raises(KubeError, match="injected"):
            await controller.reconcile(("default", "wide-configmap"))
        assert 1 < peak <= binding_controller.WORK_WRITES_IN_FLIGHT
        name = work_name("ConfigMap", "wide", "default")
        written = [n for n in names if await client.get_or_none(WORKS, name, f"karmada-es-{n}") is not None]
        assert written == [n for n in names if n != "wide07"]
        client.create = real_create  # type: ignore[method-assign]
        assert await controller.reconcile(("default", "wide-configmap")) is None  # the retry writes the last one
        assert await client.get_or_none(WORKS, name, "karmada-es-wide07") is not None
    finally:
        await informers.stop()
        await client.close()


async def test_rendering_for_many_clusters_gives_the_loop_turns_to_others(
    installed: PullMode, monkeypatch: pytest.MonkeyPatch
) -> None:
    wide_binding(installed.admin, "turns", 40)
    client, informers, controller = await started(installed)
    rendered = 0
    real_render = binding_controller.render_work  # type: ignore[attr-defined]

    def render(*args: Any, **kwargs: Any) -> Any:
        nonlocal rendered
        rendered += 1
        return real_render(*args, **kwargs)

    monkeypatch.setattr(binding_controller, "render_work", render)
    seen: set[int] = set()

    async def other_task() -> None:  # stands for the leader's renewal, due while the binding renders
        while True:
            seen.add(rendered)
            await asyncio.sleep(0)

    other = asyncio.get_running_loop().create_task(other_task())
    try:
        await controller.reconcile(("default", "turns-configmap"))
        assert rendered == 40
        assert {count for count in seen if 0 < count < 40}, f"no turn while rendering: {sorted(seen)}"
    finally:
        other.cancel()
        await informers.stop()
        await client.close()
