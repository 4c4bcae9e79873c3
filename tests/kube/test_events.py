"""The event recorder's correlation cache: bounded, and robust to Events that expired."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from karmada.kube import EventRecorder, KubeClient, from_kubeconfig
from karmada.kube.events import CACHE_SIZE
from karmada.kube.resources import CONFIGMAPS, EVENTS
from tests.servers import ServerThread


@pytest.fixture
async def kube(localkube: ServerThread, workdir: Path) -> AsyncIterator[KubeClient]:
    async with KubeClient(from_kubeconfig(localkube.kubeconfig(workdir))) as client:
        yield client


async def events_about(kube: KubeClient, name: str) -> list[dict[str, Any]]:
    listing = await kube.list(EVENTS, "default", fieldSelector=f"involvedObject.name={name}")
    return sorted(listing["items"], key=lambda e: (e["message"], e["count"]))


async def test_the_cache_keeps_the_most_recent_events_only(kube: KubeClient) -> None:
    assert EventRecorder(kube, "any").cache_size == CACHE_SIZE == 4096  # client-go's correlator LRU
    target = await kube.create(CONFIGMAPS, {"metadata": {"name": "busy"}}, "default")
    target.update(apiVersion="v1", kind="ConfigMap")
    recorder = EventRecorder(kube, "karmada-test", cache_size=8)
    for step in range(20):
        await recorder.record(target, "Normal", "Step", f"step {step:02d}")
    assert len(recorder) == 8
    await recorder.record(target, "Normal", "Step", "step 19")  # remembered: aggregated
    await recorder.record(target, "Normal", "Step", "step 00")  # forgotten: a new Event
    assert len(recorder) == 8
    counts = [(e["message"], e["count"]) for e in await events_about(kube, "busy")]
    assert counts.count(("step 19", 2)) == 1 and ("step 19", 1) not in counts
    assert counts.count(("step 00", 1)) == 2
    assert len(counts) == 21


async def test_an_expired_event_is_recorded_anew(kube: KubeClient) -> None:
    target = await kube.create(CONFIGMAPS, {"metadata": {"name": "quiet"}}, "default")
    target.update(apiVersion="v1", kind="ConfigMap")
    recorder = EventRecorder(kube, "karmada-test")
    await recorder.record(target, "Warning", "Failed", "no luck")
    (first,) = await events_about(kube, "quiet")
    await kube.delete(EVENTS, first["metadata"]["name"], "default")  # what the server's event TTL does
    await recorder.record(target, "Warning", "Failed", "no luck")
    await recorder.record(target, "Warning", "Failed", "no luck")
    (second,) = await events_about(kube, "quiet")
    assert second["metadata"]["name"] != first["metadata"]["name"]
    assert (second["count"], second["type"]) == (2, "Warning")
