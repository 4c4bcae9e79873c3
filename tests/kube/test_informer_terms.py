"""Caches across leadership terms: a handler added to a synced cache first sees what it
holds; a term's handlers go with the term, and so do the caches it made on demand,
while the caches of its setup keep watching without a new list."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from karmada.kube import Informer, KubeClient
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import CONFIGMAPS, SECRETS

WAIT = 20.0
Obj = dict[str, Any]
Seen = list[tuple[str, str, str | None]]


async def until(condition: Callable[[], bool], timeout: float = WAIT) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


def recorder(seen: Seen) -> Callable[[str, Obj, Obj | None], None]:
    def handler(kind: str, obj: Obj, old: Obj | None) -> None:
        seen.append((kind, obj["metadata"]["name"], None if old is None else old["metadata"]["name"]))

    return handler


async def configmap(kube: KubeClient, name: str, label: str) -> None:
    await kube.create(CONFIGMAPS, {"metadata": {"name": name, "labels": {"app": label}}}, "default")


async def test_a_handler_added_to_a_synced_informer_first_gets_added_for_each_cached_object(kube: KubeClient) -> None:
    for name in ("late-a", "late-b"):
        await configmap(kube, name, "late")
    informer = Informer(kube, CONFIGMAPS, namespace="default", label_selector="app=late")
    early: Seen = []
    informer.add_handler(recorder(early))  # not listed yet: nothing to replay
    assert early == []
    informer.start()
    try:
        await informer.wait_synced(WAIT)
        late: Seen = []
        informer.add_handler(recorder(late))
        assert sorted(late) == [("ADDED", "late-a", None), ("ADDED", "late-b", None)]  # at once, from the cache
        assert sorted(early) == sorted(late)  # what the list delivered to the first one
        await configmap(kube, "late-c", "late")
        await until(lambda: ("ADDED", "late-c", None) in late)
        assert ("ADDED", "late-c", None) in early
        assert informer.relists == 1
    finally:
        await informer.stop()


async def test_handlers_of_an_ended_term_no_longer_get_events_and_its_caches_stay_warm(kube: KubeClient) -> None:
    shared = InformerFactory(kube)
    try:
        first = shared.term()
        maps = first.informer(CONFIGMAPS, namespace="default", label_selector="app=term")
        old_term: Seen = []
        maps.add_handler(recorder(old_term))
        await first.start(sync_timeout=WAIT)
        await configmap(kube, "term-1", "term")
        await until(lambda: ("ADDED", "term-1", None) in old_term)
        await first.stop()

        assert maps.running and maps.handlers == ()  # still watching, nobody called
        await configmap(kube, "term-gap", "term")  # while campaigning again
        await until(lambda: maps.get("term-gap", "default") is not None)

        second = shared.term()
        again = second.informer(CONFIGMAPS, namespace="default", label_selector="app=term")
        assert again is maps
        new_term: Seen = []
        again.add_handler(recorder(new_term))
        assert sorted(new_term) == [("ADDED", "term-1", None), ("ADDED", "term-gap", None)]
        await second.start(sync_timeout=WAIT)
        await configmap(kube, "term-2", "term")
        await until(lambda: ("ADDED", "term-2", None) in new_term)
        assert [name for _, name, _ in old_term] == ["term-1"]  # the old term's handler heard nothing more
        assert maps.relists == 1  # no list for the second term
        # the second term counts its own uses: its one release stops the cache
        await second.release(again)
        assert not maps.running and len(shared) == 0
        await second.stop()
    finally:
        await shared.stop()


async def test_a_cache_made_on_demand_during_a_term_is_stopped_at_its_end(kube: KubeClient) -> None:
    shared = InformerFactory(kube)
    try:
        term = shared.term()
        kept = term.informer(CONFIGMAPS, namespace="default", label_selector="app=demand")
        await term.start(sync_timeout=WAIT)
        on_demand = term.informer(SECRETS, namespace="default")  # asked for after start: a policy's kind, say
        await on_demand.wait_synced(WAIT)
        assert on_demand.running and len(shared) == 2
        await term.stop()
        assert not on_demand.running and kept.running and len(shared) == 1

        # a kept cache the next term's setup does not ask for is stopped when that term starts
        later = shared.term()
        await later.start(sync_timeout=WAIT)
        assert not kept.running and len(shared) == 0
        assert later.informer(SECRETS, namespace="default") is not on_demand  # a new cache
        await later.stop()
    finally:
        await shared.stop()
