"""Watch events encoded once for every watcher: the same line for each, one encoding per
(stored object, resource type, event type), a selector change still seen as ADDED/DELETED."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

from localkube.resources import ResourceType
from localkube.watch_encoding import EncodedEvents
from tests.servers import Raw, ServerThread


def _type() -> ResourceType:
    """Stands for a ResourceType: only its identity matters to the cache."""
    return cast(ResourceType, object())


def test_a_line_is_encoded_once_per_object_type_and_event() -> None:
    cache = EncodedEvents(size=8)
    views: list[str] = []
    stored: dict[str, Any] = {"metadata": {"name": "a", "resourceVersion": "5"}}
    v1, v2 = _type(), _type()

    def view(tag: str) -> Any:
        def make() -> dict[str, Any]:
            views.append(tag)
            return {"tag": tag, **stored}

        return make

    first = cache.line(v1, "MODIFIED", stored, view("v1"))
    assert cache.line(v1, "MODIFIED", stored, view("v1")) is first
    assert views == ["v1"]
    assert first.endswith(b"\n") and first.startswith(b'{"type":"MODIFIED","object":{"tag":"v1"')
    cache.line(v2, "MODIFIED", stored, view("v2"))  # another version's view
    cache.line(v1, "DELETED", stored, view("v1"))  # another event type
    replaced = dict(stored)  # the next write stores a new object, never the same one changed
    cache.line(v1, "MODIFIED", replaced, view("v1"))
    assert views == ["v1", "v2", "v1", "v1"] and (cache.encoded, cache.shared) == (4, 1)


def test_the_cache_keeps_only_the_most_recent_lines() -> None:
    cache = EncodedEvents(size=2)
    rt = _type()
    objects = [{"n": index} for index in range(3)]
    for obj in objects:
        cache.line(rt, "ADDED", obj, lambda obj=obj: obj)  # type: ignore[misc]
    cache.line(rt, "ADDED", objects[0], lambda: objects[0])  # evicted: encoded again
    cache.line(rt, "ADDED", objects[2], lambda: objects[2])  # still there
    assert (cache.encoded, cache.shared) == (4, 1)


def test_watchers_of_one_write_share_its_encoding_and_each_sees_it_as_it_must(tmp_path: Path) -> None:
    thread = ServerThread().start()
    try:
        raw = Raw(thread, thread.kubeconfig(tmp_path))
        encoded = thread.server.watches.encoded
        base = "/api/v1/namespaces/default/configmaps"

        async def scenario() -> tuple[list[Any], ...]:
            watches = [
                asyncio.create_task(raw.watch(f"{base}?watch=true", 2.5)),
                asyncio.create_task(raw.watch(f"{base}?watch=true", 2.5)),
                asyncio.create_task(raw.watch(f"{base}?watch=true&labelSelector=team%3Da", 2.5)),
            ]
            await asyncio.sleep(0.8)
            before = (encoded.encoded, encoded.shared)
            status, _, _ = await raw.request("POST", base, {"metadata": {"name": "shared", "labels": {"team": "a"}}})
            assert status == 201
            patch = {"metadata": {"labels": {"team": "b"}}}
            status, _, _ = await raw.request(
                "PATCH", f"{base}/shared", patch, content_type="application/merge-patch+json"
            )
            assert status == 200
            results = [await task for task in watches]
            assert encoded.encoded - before[0] == 3  # ADDED, MODIFIED, and the filtered watch's DELETED
            assert encoded.shared - before[1] == 3  # the other watchers' ADDED and MODIFIED, the filtered ADDED
            # a watch without a resourceVersion starts with the namespace's objects (kube-root-ca.crt)
            return tuple([e for e in events if e["object"]["metadata"]["name"] == "shared"] for _, events in results)

        everything, again, team_a = asyncio.run(scenario())
        assert everything == again
        assert [e["type"] for e in everything] == ["ADDED", "MODIFIED"]
        assert [e["type"] for e in team_a] == ["ADDED", "DELETED"]  # the label change left its selector
        assert team_a[1]["object"]["metadata"]["labels"] == {"team": "b"}
        assert everything[0]["object"]["kind"] == "ConfigMap"
    finally:
        thread.stop()
