"""The by-value index of a watch cache follows adds, updates, deletes and a late attach."""

from __future__ import annotations

from typing import Any

from karmada.kube import Informer, KubeClient
from karmada.kube.indexer import Index, shared_index
from karmada.kube.resources import CONFIGMAPS
from tests.kube.test_informer import WAIT, running, until


def clusters(obj: dict[str, Any]) -> set[str]:
    return {c for c in ((obj.get("data") or {}).get("clusters") or "").split(",") if c}


def names(index: Index, value: str) -> list[str]:
    return [o["metadata"]["name"] for o in index.get(value)]


async def test_the_index_follows_the_cache(kube: KubeClient) -> None:
    informer = Informer(kube, CONFIGMAPS, namespace="default", label_selector="app=idx")
    index = shared_index(informer, "clusters", clusters)
    assert shared_index(informer, "clusters", clusters) is index  # one per cache and name
    labels = {"app": "idx"}
    async with running(informer):
        await informer.wait_synced(WAIT)
        for name, data in (("one", "a,b"), ("two", "b"), ("three", "")):
            body = {"metadata": {"name": name, "labels": labels}, "data": {"clusters": data}}
            await kube.create(CONFIGMAPS, body, "default")
        await until(lambda: len(informer) == 3)
        assert names(index, "a") == ["one"] and names(index, "b") == ["one", "two"]
        assert names(index, "c") == [] and len(index) == 2  # "three" names none
        one = informer.get("one", "default")
        assert one is not None
        await kube.update(CONFIGMAPS, {**one, "data": {"clusters": "c"}}, "default")
        await until(lambda: names(index, "c") == ["one"])
        assert names(index, "a") == [] and names(index, "b") == ["two"]
        await kube.delete(CONFIGMAPS, "two", "default")
        await until(lambda: names(index, "b") == [])
        # a reader that comes after the sync (or whose handler a term removed) sees it all
        late = Index(informer, clusters)
        assert names(late, "c") == ["one"]
        informer.remove_handler(late._on_event)
        assert names(late, "c") == ["one"]
