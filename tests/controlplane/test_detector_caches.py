"""Caches made on demand (the kinds policies select) end when their last reader releases them."""

from __future__ import annotations

from pathlib import Path

from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import CONFIGMAPS, SECRETS
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
