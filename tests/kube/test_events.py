"""The event recorder's correlation cache: bounded, and robust to Events that expired."""

from __future__ import annotations

import time
from typing import Any

from karmada.kube import EventRecorder, KubeClient
from karmada.kube.events import CACHE_SIZE
from karmada.kube.resources import CONFIGMAPS, EVENTS


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
        await recorder.flush()  # writes in recording order, so the cache's order is known
    assert len(recorder) == 8
    await recorder.record(target, "Normal", "Step", "step 19")  # remembered: aggregated
    await recorder.record(target, "Normal", "Step", "step 00")  # forgotten: a new Event
    await recorder.flush()
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
    await recorder.flush()
    (first,) = await events_about(kube, "quiet")
    await kube.delete(EVENTS, first["metadata"]["name"], "default")  # what the server's event TTL does
    await recorder.record(target, "Warning", "Failed", "no luck")
    await recorder.record(target, "Warning", "Failed", "no luck")
    await recorder.flush()
    (second,) = await events_about(kube, "quiet")
    assert second["metadata"]["name"] != first["metadata"]["name"]
    assert (second["count"], second["type"]) == (2, "Warning")


async def test_recording_does_not_wait_for_the_server_and_a_full_queue_drops(kube: KubeClient) -> None:
    """As client-go's broadcaster: record returns at once; past 1,000 queued events the rest are dropped."""
    target = await kube.create(CONFIGMAPS, {"metadata": {"name": "flood"}}, "default")
    target.update(apiVersion="v1", kind="ConfigMap")
    recorder = EventRecorder(kube, "karmada-test")
    for step in range(1100):  # no await yields to the writers in between: all of them queue at once
        await recorder.record(target, "Normal", "Flood", f"event {step}")
    assert recorder.dropped >= 100
    await recorder.flush()
    await recorder.close()
    written = await events_about(kube, "flood")
    assert len(written) == 1100 - recorder.dropped


def _stamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


async def test_an_event_carries_the_time_it_was_recorded_not_written(kube: KubeClient) -> None:
    target = await kube.create(CONFIGMAPS, {"metadata": {"name": "late"}}, "default")
    target.update(apiVersion="v1", kind="ConfigMap")
    recorder = EventRecorder(kube, "karmada-test")
    before = _stamp()
    await recorder.record(target, "Normal", "Early", "recorded first")
    after = _stamp()
    time.sleep(1.1)  # no await: the writers run only after this, in a later second
    await recorder.flush()
    (event,) = await events_about(kube, "late")
    assert event["firstTimestamp"] in (before, after) and event["lastTimestamp"] == event["firstTimestamp"]
    assert event["firstTimestamp"] < _stamp()
    await recorder.close()
