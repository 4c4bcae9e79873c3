"""The controller registry and the shared caches it is built on."""

from __future__ import annotations

import asyncio
from pathlib import Path

from controlplane.controllers import REGISTRY, enabled
from controlplane.options import ALL_CONTROLLERS, Options, feature_gates
from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import CONFIGMAPS, NAMESPACES
from tests.servers import ServerThread


def test_every_flag_name_has_a_controller() -> None:
    assert set(REGISTRY) == set(ALL_CONTROLLERS)


def test_the_dependencies_distributor_follows_its_gate() -> None:
    # Karmada starts it by the PropagateDeps gate (default on), not by --controllers
    assert "dependencies-distributor" not in ALL_CONTROLLERS
    assert enabled(Options())[-1] == "dependencies-distributor"
    assert "dependencies-distributor" not in enabled(Options(feature_gates={"PropagateDeps": False}))
    assert "dependencies-distributor" not in enabled(
        Options(controllers=("detector",), feature_gates=feature_gates("PropagateDeps=false"))
    )


async def test_one_cache_per_resource_however_many_readers(localkube: ServerThread, workdir: Path) -> None:
    async with KubeClient(from_kubeconfig(localkube.kubeconfig(workdir))) as client:
        factory = InformerFactory(client)
        first = factory.informer(NAMESPACES, resync_period=60)
        second = factory.informer(NAMESPACES, resync_period=30)
        assert first is second and first.resync_period == 30
        labelled = factory.informer(NAMESPACES, label_selector="a=b")
        assert labelled is not first and len(factory) == 2
        try:
            await factory.start(sync_timeout=20)
            assert first.get("default") is not None and len(labelled) == 0
            late = factory.informer(CONFIGMAPS, namespace="default")  # asked for after start: starts at once
            await late.wait_synced(20)
            async with asyncio.timeout(20):  # localkube's controller publishes it shortly after start
                while late.get("kube-root-ca.crt", "default") is None:
                    await asyncio.sleep(0.05)
        finally:
            await factory.stop()


async def test_the_base_resync_period_applies_to_caches_asked_for_without_one(
    localkube: ServerThread, workdir: Path
) -> None:
    """Karmada's --resync-period: 0 (its default) means no cache replays; a base period applies
    to every cache that does not ask for a shorter one of its own."""
    async with KubeClient(from_kubeconfig(localkube.kubeconfig(workdir))) as client:
        assert InformerFactory(client).informer(NAMESPACES).resync_period == 0
        based = InformerFactory(client, resync_period=120)
        assert based.informer(NAMESPACES).resync_period == 120
        assert based.informer(CONFIGMAPS, resync_period=30).resync_period == 30
        assert Options().resync_period == 0


def test_the_resync_period_flag() -> None:
    import argparse

    from controlplane.options import add_flags, from_args

    parser = argparse.ArgumentParser()
    add_flags(parser)
    assert from_args(parser.parse_args([])).resync_period == 0
    assert from_args(parser.parse_args(["--resync-period=10m"])).resync_period == 600
    assert from_args(parser.parse_args(["--concurrent-cluster-syncs=2"])).concurrent_cluster_syncs == 2
    assert from_args(parser.parse_args([])).concurrent_cluster_syncs == 5
