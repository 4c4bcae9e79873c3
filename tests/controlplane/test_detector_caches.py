"""Caches made on demand (the kinds policies select, the dependency kinds bindings name) end
when their last reader releases them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from controlplane.binding_controller import Templates
from controlplane.dependencies_distributor import DependenciesDistributor
from karmada.api.binding import ObjectReference
from karmada.api.interpreter import DependentObjectReference
from karmada.api.keys import BINDING_DEPENDENCIES_ANNOTATION
from karmada.dependencies.references import annotation_value
from karmada.kube import EventRecorder, KubeClient, ResourceMapper, from_kubeconfig
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import CONFIGMAPS, RESOURCE_BINDINGS, SECRETS
from tests.pullmode import PullMode
from tests.servers import ServerThread


async def test_the_last_release_stops_a_shared_cache(localkube: ServerThread, workdir: Path) -> None:
    async with KubeClient(from_kubeconfig(localkube.kubeconfig(workdir))) as client:
        factory = InformerFactory(client)
        try:
            await factory.start(sync_timeout=20)
            first = factory.informer(CONFIGMAPS)  # e.g. the detector, for a policy
            second = factory.informer(CONFIGMAPS)  # and another controller reading the same kind
            assert first is second
            await first.wait_synced(20)
            calls: list[str] = []

            def handler(kind: str, obj: dict[str, object], old: dict[str, object] | None) -> None:
                calls.append(kind)

            first.add_handler(handler)  # synced: the ConfigMaps it holds are replayed at once
            replayed = list(calls)
            first.remove_handler(handler)
            first.remove_handler(handler)  # twice is harmless
            await factory.release(first)
            assert len(factory) == 1 and first._task is not None  # still read by the other one
            await factory.release(first)
            assert len(factory) == 0 and first._task is None  # stopped
            await factory.release(factory.informer(SECRETS))
            assert len(factory) == 0
            again = factory.informer(CONFIGMAPS)  # asked for later: a new cache
            assert again is not first
            await again.wait_synced(20)
            assert calls == replayed  # nothing after its removal
        finally:
            await factory.stop()


async def test_reading_templates_makes_no_reader_of_their_cache(localkube: ServerThread, workdir: Path) -> None:
    """The binding controller reads templates from the detector's cache without counting as a
    reader: when the detector releases the kind, the user count is zero and the watch ends."""
    async with KubeClient(from_kubeconfig(localkube.kubeconfig(workdir))) as client:
        factory = InformerFactory(client)
        templates = Templates(client, factory, ResourceMapper(client))
        reference = ObjectReference(api_version="v1", kind="ConfigMap", namespace="default", name="kube-root-ca.crt")
        try:
            await factory.start(sync_timeout=20)
            found = await templates.get(reference)  # no cache anywhere: read from the API
            assert found is not None and found["kind"] == "ConfigMap" and len(factory) == 0
            held = factory.informer(CONFIGMAPS)  # the detector watches the kind
            await held.wait_synced(20)
            assert factory.existing(CONFIGMAPS) is held
            cached = await templates.get(reference)  # from the cache (managedFields stripped there)
            assert cached is not None and cached["metadata"]["uid"] == found["metadata"]["uid"]
            assert "managedFields" not in cached["metadata"]
            assert templates.cached("v1", "ConfigMap", "kube-root-ca.crt", "default") is not None
            await factory.release(held)  # no policy selects ConfigMaps any more
            assert len(factory) == 0 and held._task is None
            assert factory.existing(CONFIGMAPS) is None
            assert templates.cached("v1", "ConfigMap", "kube-root-ca.crt", "default") is None
        finally:
            await factory.stop()


def _binding(name: str, *kinds: str) -> dict[str, object]:
    references = [DependentObjectReference(api_version="v1", kind=k, namespace="default", name="x") for k in kinds]
    annotations = {BINDING_DEPENDENCIES_ANNOTATION: annotation_value(references)} if references else {}
    return {"metadata": {"name": name, "namespace": "default", "annotations": annotations}}


async def test_a_dependency_kind_no_binding_names_is_released(localkube: ServerThread, workdir: Path) -> None:
    """The dependencies distributor watches a dependency kind while some binding's annotation
    names it, and releases its cache when the last such binding goes or stops naming it."""
    PullMode(localkube, workdir).install()  # the CRDs the distributor's own caches list
    async with KubeClient(from_kubeconfig(localkube.kubeconfig(workdir))) as client:
        factory = InformerFactory(client)
        bindings = factory.informer(RESOURCE_BINDINGS)
        distributor = DependenciesDistributor(
            client, EventRecorder(client, "test"), bindings, factory, ResourceMapper(client)
        )
        try:
            await factory.start(sync_timeout=20)
            own = len(factory)  # the bindings, the interpreter's customizations
            first, second = _binding("a", "ConfigMap"), _binding("b", "ConfigMap", "Secret")
            distributor._index("ADDED", first, None)
            distributor._index("ADDED", second, None)
            config_maps = await distributor._watch("v1", "ConfigMap")
            secrets = await distributor._watch("v1", "Secret")
            assert len(factory) == own + 2
            distributor._index("MODIFIED", _binding("b", "ConfigMap"), second)  # b no longer names Secrets
            await distributor.released()
            assert factory.existing(SECRETS) is None and secrets._task is None
            distributor._index("DELETED", first, None)  # b still names ConfigMaps
            await distributor.released()
            assert factory.existing(CONFIGMAPS) is config_maps
            distributor._index("DELETED", _binding("b", "ConfigMap"), None)
            await distributor.released()
            assert factory.existing(CONFIGMAPS) is None and config_maps._task is None
            assert len(factory) == own
            again = await distributor._watch("v1", "ConfigMap")  # named again later: a new cache
            assert again is not config_maps and factory.existing(CONFIGMAPS) is again
            # watched for a binding deleted before its annotation was written: released with it
            distributor._index("DELETED", _binding("c"), None)
            await distributor.released()
            assert factory.existing(CONFIGMAPS) is None and len(factory) == own
            # two workers watching one kind at once, while the mapper is cold: one cache, one handler
            fresh = DependenciesDistributor(
                client, EventRecorder(client, "test"), bindings, factory, ResourceMapper(client)
            )
            one, two = await asyncio.gather(fresh._watch("v1", "Secret"), fresh._watch("v1", "Secret"))
            assert one is two and len(one._handlers) == 1
            fresh._index("ADDED", _binding("d", "Secret"), None)
            fresh._index("DELETED", _binding("d", "Secret"), None)
            await fresh.released()
            assert factory.existing(SECRETS) is None
        finally:
            await factory.stop()
