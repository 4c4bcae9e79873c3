"""Informers never die: large objects, paged lists, a restarted API server, and a fake
server answering every kind of nonsense before it answers well."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import json
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from karmada.kube import ClusterConfig, Informer, KubeClient, KubeError, from_kubeconfig
from karmada.kube.client import MAX_EVENT_BYTES
from karmada.kube.informer import MIN_WATCH_TIMEOUT, watch_timeout
from karmada.kube.resources import CONFIGMAPS, CRDS, Resource
from tests.factories import crd
from tests.servers import ServerThread

WAIT = 20.0
MIB = 1024 * 1024
BLOBS = Resource("test.karmada.io", "v1", "blobs", "Blob", True)
BLOB_CRD = crd(
    "test.karmada.io",
    "Blob",
    {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
)


async def until(condition: Callable[[], bool], timeout: float = WAIT) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def running(informer: Informer) -> AsyncIterator[Informer]:
    task = informer.start()
    try:
        yield informer
        assert not task.done(), "the informer's task ended"
    finally:
        await informer.stop()


def sized(obj: dict[str, Any]) -> int:
    return len(json.dumps(obj))


# -- large objects ------------------------------------------------------------
async def test_a_1mib_configmap_and_a_1_4mib_object_flow_through_list_and_watch(kube: KubeClient) -> None:
    """The largest objects a default API server stores (etcd takes 1.5 MiB); the fake
    server below sends 2.5 MiB ones, as a server with a larger etcd limit may."""
    await kube.create(CRDS, BLOB_CRD)
    await until_served(kube, BLOBS)
    big_data = {"blob": "x" * MIB}  # a ConfigMap's data may hold 1 MiB
    big_spec = {"chunks": ["y" * (480 * 1024)] * 3}  # 1.4 MiB: under etcd's 1.5 MiB
    labels = {"size": "large"}
    await kube.create(CONFIGMAPS, {"metadata": {"name": "listed", "labels": labels}, "data": big_data}, "default")
    await kube.create(
        BLOBS,
        {"apiVersion": "test.karmada.io/v1", "kind": "Blob", "metadata": {"name": "listed"}, "spec": big_spec},
        "default",
    )
    maps = Informer(kube, CONFIGMAPS, namespace="default", label_selector="size=large")
    blobs = Informer(kube, BLOBS, namespace="default")
    async with running(maps), running(blobs):
        await maps.wait_synced(WAIT)
        await blobs.wait_synced(WAIT)
        listed_map, listed_blob = maps.get("listed", "default"), blobs.get("listed", "default")
        assert listed_map is not None and listed_map["data"] == big_data
        assert listed_blob is not None and sized(listed_blob) > 1.4 * MIB
        await kube.create(CONFIGMAPS, {"metadata": {"name": "watched", "labels": labels}, "data": big_data}, "default")
        await kube.create(
            BLOBS,
            {"apiVersion": "test.karmada.io/v1", "kind": "Blob", "metadata": {"name": "watched"}, "spec": big_spec},
            "default",
        )
        await kube.patch(BLOBS, "listed", {"spec": {"chunks": ["z" * (480 * 1024)] * 3}}, "default")
        await until(lambda: maps.get("watched", "default") is not None and blobs.get("watched", "default") is not None)
        await until(lambda: (blobs.get("listed", "default") or {})["spec"]["chunks"][0][0] == "z")
        watched = blobs.get("watched", "default")
        assert watched is not None and watched["spec"] == big_spec
        assert (maps.failures, blobs.failures, maps.relists, blobs.relists) == (0, 0, 1, 1)


async def until_served(kube: KubeClient, resource: Resource) -> None:
    async with asyncio.timeout(WAIT):
        while True:
            with contextlib.suppress(Exception):
                await kube.list(resource, "default")
                return
            await asyncio.sleep(0.05)


# -- paging -------------------------------------------------------------------
async def test_small_pages_give_the_full_set(kube: KubeClient) -> None:
    names = {f"paged-{index:02d}" for index in range(23)}
    for name in names:
        await kube.create(CONFIGMAPS, {"metadata": {"name": name, "labels": {"app": "paged"}}}, "default")
    listing = await kube.list_all(CONFIGMAPS, "default", page_size=4, labelSelector="app=paged")
    assert {o["metadata"]["name"] for o in listing["items"]} == names and len(listing["items"]) == 23
    assert listing["metadata"]["resourceVersion"]
    informer = Informer(kube, CONFIGMAPS, namespace="default", label_selector="app=paged", page_size=5)
    async with running(informer):
        await informer.wait_synced(WAIT)
        assert {o["metadata"]["name"] for o in informer.items()} == names


# -- a dropped connection -------------------------------------------------------
class Proxy:
    """A TCP relay in front of an API server whose connections the test can cut."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.connections: list[asyncio.StreamWriter] = []
        self.accepted = 0
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.connections += [writer, upstream_writer]
        pipes = [
            asyncio.create_task(self._pipe(reader, upstream_writer)),
            asyncio.create_task(self._pipe(upstream_reader, writer)),
        ]
        self._pipes.update(pipes)
        await asyncio.gather(*pipes, return_exceptions=True)
        self._pipes.difference_update(pipes)

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    def cut(self) -> None:
        """Reset every open connection, as a NAT or load balancer dropping them would."""
        for writer in self.connections:
            writer.transport.abort()
        self.connections.clear()

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._pipes):
            task.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)


async def test_a_dropped_watch_connection_resumes_without_a_list(localkube: ServerThread, workdir: Path) -> None:
    proxy = Proxy(int(localkube.url.rsplit(":", 1)[1]))
    port = await proxy.start()
    config = dataclasses.replace(from_kubeconfig(localkube.kubeconfig(workdir)), server=f"https://127.0.0.1:{port}")
    try:
        async with KubeClient(config) as client:
            informer = Informer(client, CONFIGMAPS, namespace="default", label_selector="app=cut", max_backoff=0.5)
            async with running(informer):
                await informer.wait_synced(WAIT)
                await client.create(CONFIGMAPS, {"metadata": {"name": "before", "labels": {"app": "cut"}}}, "default")
                await until(lambda: informer.get("before", "default") is not None)
                for round_ in range(3):
                    accepted = proxy.accepted
                    proxy.cut()
                    await until(lambda: proxy.accepted > accepted)  # noqa: B023 (awaited here)
                    body = cut_map(f"after-{round_}")
                    await retry(lambda: client.create(CONFIGMAPS, body, "default"))  # noqa: B023
                    await until(lambda: informer.get(body["metadata"]["name"], "default") is not None)  # noqa: B023
                await retry(lambda: client.delete(CONFIGMAPS, "before", "default"))
                await until(lambda: informer.get("before", "default") is None)
                assert informer.relists == 1  # each drop resumed the watch where it was
    finally:
        await proxy.close()


def cut_map(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"app": "cut"}}}


async def retry(call: Callable[[], Awaitable[Any]]) -> None:
    """A write right after a cut may meet a pooled connection that was reset."""
    for _ in range(20):
        try:
            await call()
            return
        except KubeError:
            await asyncio.sleep(0.1)
    await call()


# -- a fake server for what localkube will not do --------------------------------
class Script:
    """Answers to list and watch requests, in order; the requests seen."""

    def __init__(self) -> None:
        self.lists: collections.deque[Callable[[web.Request], Awaitable[web.StreamResponse]]] = collections.deque()
        self.watches: collections.deque[Callable[[web.Request], Awaitable[web.StreamResponse]]] = collections.deque()
        self.requests: list[dict[str, str]] = []
        self.release = asyncio.Event()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        query = dict(request.query)
        self.requests.append(query)
        answers = self.watches if query.get("watch") == "true" else self.lists
        if not answers:
            await self.release.wait()
            return web.Response(status=503)
        return await answers.popleft()(request)


def configmap(name: str, rv: int, **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "resourceVersion": str(rv)}, **extra}


def page(items: list[dict[str, Any]], rv: int, token: str = "") -> Callable[[web.Request], Awaitable[web.Response]]:
    async def answer(request: web.Request) -> web.Response:
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if token:
            meta["continue"] = token
        return web.json_response({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": meta, "items": items})

    return answer


def status(code: int, reason: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def answer(request: web.Request) -> web.Response:
        body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code}
        return web.json_response(body, status=code)

    return answer


def text(body: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def answer(request: web.Request) -> web.Response:
        return web.Response(text=body, content_type="application/json")

    return answer


def stream(
    lines: list[bytes], script: Script, *, then: str = "hold"
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A watch answering ``lines``, then holding the stream open or cutting the connection."""

    async def answer(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        with contextlib.suppress(ConnectionError):
            for line in lines:
                await response.write(line)
            if then == "cut" and request.transport is not None:
                request.transport.abort()
                return response
            await script.release.wait()
        return response

    return answer


def event(kind: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": kind, "object": obj}).encode() + b"\n"


@pytest.fixture
async def fake() -> AsyncIterator[tuple[Script, str]]:
    script = Script()
    app = web.Application()
    app.router.add_get("/api/v1/namespaces/default/configmaps", script.handle)
    runner = web.AppRunner(app, shutdown_timeout=1)
    await runner.setup()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    await web.SockSite(runner, listener).start()
    try:
        yield script, f"http://127.0.0.1:{port}"
    finally:
        script.release.set()
        await runner.cleanup()


async def test_the_informer_survives_every_failure_and_syncs(
    fake: tuple[Script, str], caplog: pytest.LogCaptureFixture
) -> None:
    script, url = fake
    # objects of 2.5 MiB: what a server whose etcd takes more than 1.5 MiB may store (bodies reach 3 MiB)
    a, b, c = configmap("a", 5), configmap("b", 6), configmap("c", 9, data={"blob": "c" * (5 * MIB // 2)})
    big = configmap("d", 12, data={"blob": "d" * (5 * MIB // 2)})  # one watch line over aiohttp's 512 KiB
    script.lists.extend(
        [
            hang(script),  # the list times out
            status(500, "InternalError"),
            text("{not json"),  # a 200 that is no list must not empty the cache
            page([a, b], 10, "token-1"),
            status(410, "Expired"),  # the continue token expired: one full list instead
            page([a, b, c], 11),
            page([a, b, c], 11),  # after the oversized event
            page([a, b, c], 11),  # after the garbage event
        ]
    )
    script.watches.extend(
        [
            stream([b"[" * 10 + b"x" * (MAX_EVENT_BYTES + 1)], script),  # over the informer's limit
            stream([b"this is no event\n"], script),
            stream([event("ADDED", big)], script, then="cut"),  # the connection drops after an event
            stream(
                [event("MODIFIED", configmap("a", 13, data={"k": "v"})), event("BOOKMARK", configmap("", 14))], script
            ),
        ]
    )
    caplog.set_level(logging.INFO, logger="karmada.kube.informer")
    async with KubeClient(ClusterConfig(server=url), timeout=0.5) as client:
        informer = Informer(client, CONFIGMAPS, namespace="default", page_size=2, max_backoff=0.1)
        async with running(informer):
            await until(lambda: informer.resource_version == "14")
            assert sorted(o["metadata"]["name"] for o in informer.items()) == ["a", "b", "c", "d"]
            assert (informer.get("a", "default") or {}).get("data") == {"k": "v"}
            assert (informer.get("d", "default") or {})["data"] == big["data"]
            assert (informer.get("c", "default") or {})["data"] == c["data"]
            assert informer.relists == 3
    lists = [r for r in script.requests if r.get("watch") != "true"]
    watches = [r for r in script.requests if r.get("watch") == "true"]
    assert [r.get("limit") for r in lists[:5]] == ["2", "2", "2", "2", "2"]
    assert lists[4].get("continue") == "token-1" and "limit" not in lists[5] and "continue" not in lists[5]
    # after the cut connection the watch resumed where it was, without a list
    assert [r.get("resourceVersion") for r in watches] == ["11", "11", "11", "12"]
    failures = [r.getMessage() for r in caplog.records if "configmaps failed" in r.getMessage()]
    assert len(failures) == 6, failures  # timeout, 500, no list, too long, no event, cut


def hang(script: Script) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def answer(request: web.Request) -> web.Response:
        await script.release.wait()
        return web.Response(status=503)

    return answer


# -- watch timeouts ------------------------------------------------------------
@pytest.mark.parametrize(
    ("minimum", "rand", "expected"),
    [
        (MIN_WATCH_TIMEOUT, 0.0, 300),  # client-go's 5 minutes at the least
        (MIN_WATCH_TIMEOUT, 0.5, 450),
        (MIN_WATCH_TIMEOUT, 0.999999, 599),  # rand < 1: always short of twice the minimum
        (1.0, 0.7, 1),
        (0.2, 0.0, 1),  # never 0, which would ask for the server's default
    ],
)
def test_watch_timeout_is_the_minimum_times_one_to_two(minimum: float, rand: float, expected: int) -> None:
    assert watch_timeout(minimum, lambda: rand) == expected


def test_watch_timeouts_of_many_informers_spread_over_the_window() -> None:
    # 1,000 informers started together: a fixed timeout puts every re-watch in one second
    timeouts = [watch_timeout(MIN_WATCH_TIMEOUT) for _ in range(1000)]
    assert all(300 <= t < 600 for t in timeouts)
    assert max(timeouts.count(t) for t in set(timeouts)) < 20 and len(set(timeouts)) > 250


async def test_each_watch_asks_for_its_own_jittered_timeout(fake: tuple[Script, str]) -> None:
    script, url = fake
    script.lists.append(page([configmap("a", 5)], 10))
    script.watches.extend([ended(), ended(), ended()])  # the server ends each watch: watch again
    draws = iter([0.0, 0.5, 0.25, 0.75])
    async with KubeClient(ClusterConfig(server=url)) as client:
        informer = Informer(client, CONFIGMAPS, namespace="default", min_watch_timeout=10, rand=lambda: next(draws))
        async with running(informer):
            await until(lambda: sum(r.get("watch") == "true" for r in script.requests) == 4)
    watches = [r for r in script.requests if r.get("watch") == "true"]
    assert [r.get("timeoutSeconds") for r in watches] == ["10", "15", "12", "17"]
    assert informer.relists == 1  # a watch the server ended is resumed, not relisted


def ended() -> Callable[[web.Request], Awaitable[web.Response]]:
    async def answer(request: web.Request) -> web.Response:
        return web.Response(text="", content_type="application/json")

    return answer


# -- bounded memory -------------------------------------------------------------
async def test_deleted_objects_leave_the_cache(kube: KubeClient) -> None:
    informer = Informer(kube, CONFIGMAPS, namespace="default", label_selector="app=mem")
    async with running(informer):
        await informer.wait_synced(WAIT)
        written = [
            await kube.create(CONFIGMAPS, {"metadata": {"name": f"mem-{i}", "labels": {"app": "mem"}}}, "default")
            for i in range(30)
        ]
        await until(lambda: len(informer) == 30)
        for obj in written:
            await kube.delete(CONFIGMAPS, obj["metadata"]["name"], "default")
        await until(lambda: len(informer) == 0)
        # a controller storing its (older) write after the deletion arrived must not bring it back
        for obj in written:
            informer.store(obj)
        assert len(informer) == 0
        fresh = await kube.create(CONFIGMAPS, {"metadata": {"name": "mem-new", "labels": {"app": "mem"}}}, "default")
        informer.store(fresh)  # newer than anything the watch has seen: kept until its event comes
        assert informer.get("mem-new", "default") is not None


async def test_objects_deleted_while_the_watch_was_gone_leave_on_relist(
    small_history: ServerThread, workdir: Path
) -> None:
    config = from_kubeconfig(small_history.kubeconfig(workdir, "informer-admin", ["system:masters"]))
    async with KubeClient(config) as client:
        informer = Informer(client, CONFIGMAPS, namespace="default", label_selector="app=gap")
        seen: list[tuple[str, str]] = []
        informer.add_handler(lambda kind, obj, old: seen.append((kind, obj["metadata"]["name"])))
        async with running(informer):
            await informer.wait_synced(WAIT)
            await client.create(CONFIGMAPS, {"metadata": {"name": "gone", "labels": {"app": "gap"}}}, "default")
            await until(lambda: informer.get("gone", "default") is not None)
        relists = informer.relists
        await client.delete(CONFIGMAPS, "gone", "default")
        for index in range(10):  # more changes than the server keeps: the informer's version expires
            await client.create(CONFIGMAPS, {"metadata": {"name": f"gap-churn-{index}"}}, "default")
        async with running(informer):
            await until(lambda: informer.relists > relists)
            assert len(informer) == 0 and ("DELETED", "gone") in seen


async def test_a_stored_write_still_reaches_every_handler_with_the_object_it_replaced(kube: KubeClient) -> None:
    """Two controllers share a cache; one writes and stores its result. The other must
    still see the change: the watch event carries the object the write replaced."""
    informer = Informer(kube, CONFIGMAPS, namespace="default")
    seen: list[tuple[str, str | None, str | None]] = []

    def other_controller(kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if obj["metadata"]["name"] == "shared-write":
            before = None if old is None else (old.get("data") or {}).get("v")
            seen.append((kind, before, (obj.get("data") or {}).get("v")))

    informer.add_handler(other_controller)
    async with running(informer):
        await informer.wait_synced(WAIT)
        body = {"metadata": {"name": "shared-write"}, "data": {"v": "1"}}
        informer.store(await kube.create(CONFIGMAPS, body, "default"))
        await until(lambda: ("ADDED", None, "1") in seen)
        current = informer.get("shared-write", "default")
        assert current is not None
        updated = await kube.update(CONFIGMAPS, {**current, "data": {"v": "2"}}, "default")
        informer.store(updated)
        stored = informer.get("shared-write", "default")
        assert stored is not None and stored["data"] == {"v": "2"}, "the writer reads its own write at once"
        await until(lambda: ("MODIFIED", "1", "2") in seen)
        assert len(informer) == len(list(informer.items()))


async def test_changes_counts_every_change_of_what_readers_see(kube: KubeClient) -> None:
    """Readers that derive something from the whole cache rebuild it when ``changes`` moved:
    it moves on add, update, delete and an accepted stored write, and on nothing else."""
    informer = Informer(kube, CONFIGMAPS, namespace="default", label_selector="app=changes")
    async with running(informer):
        await informer.wait_synced(WAIT)
        synced = informer.changes
        assert synced >= 1  # the first list

        def moved(since: int) -> Callable[[], bool]:
            return lambda: informer.changes > since

        body = {"metadata": {"name": "counted", "labels": {"app": "changes"}}, "data": {"v": "1"}}
        created = await kube.create(CONFIGMAPS, body, "default")
        await until(moved(synced))  # add
        after_add = informer.changes
        assert informer.get("counted", "default") is not None
        updated = await kube.update(CONFIGMAPS, {**created, "data": {"v": "2"}}, "default")
        await until(moved(after_add))  # update
        after_update = informer.changes
        informer.store(created)  # older than what the cache holds: refused, nothing changed
        assert informer.changes == after_update
        newer = await kube.update(CONFIGMAPS, {**updated, "data": {"v": "3"}}, "default")
        informer.store(newer)  # accepted at once, before its event
        assert informer.changes == after_update + 1
        await until(lambda: (informer._cache.get(("default", "counted")) or {}).get("data") == {"v": "3"})
        before_delete = informer.changes
        await kube.delete(CONFIGMAPS, "counted", "default")
        await until(moved(before_delete))  # delete
        assert informer.get("counted", "default") is None
        # a change outside the selector is not seen and not counted
        quiet = informer.changes
        await kube.create(CONFIGMAPS, {"metadata": {"name": "other", "labels": {"app": "elsewhere"}}}, "default")
        await asyncio.sleep(0.3)
        assert informer.changes == quiet
