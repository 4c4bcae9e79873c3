"""Watches: the stream of a resource's changes as kube-apiserver's watch cache
serves it (initial events and their end bookmark for a watch list, the history
since a resourceVersion or 410 when it is gone, periodic bookmarks, selectors
applied to the old and the new object so an object leaving them is DELETED).

Each watch is one task of the server's event loop, reading its own queue of the
store's events; :meth:`Watches.cancel` ends them all when the server stops. The
store queues an event only for the watches that can match it (by namespace, and
by name for a ``metadata.name`` field selector), so a write costs the watches of
its object, not every watch of the resource.

An idle watch sleeps until an event, its next bookmark or its timeout. A client
that went away is noticed by one sweeper task per event loop (shared by every
server on it), which looks at the open watches' connections every
``DISCONNECT_CHECK`` seconds and wakes those whose connection closed: no watch
wakes on its own just to look.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from multidict import MultiMapping

from localkube import json_codec, paging, protobuf
from localkube import tables as tablemod
from localkube.api import ResourceAPI
from localkube.crd import apply_defaults, defaults_pending
from localkube.errors import Cause, expired, invalid
from localkube.query import int_param, resource_version_param
from localkube.request_options import truthy
from localkube.resources import ResourceType
from localkube.store import Event, Watcher
from localkube.watch_encoding import EncodedEvents

Obj = dict[str, Any]
Send = Callable[[str, Obj], Awaitable[None]]
JSON = "application/json"
BOOKMARK_INTERVAL = 60.0
DISCONNECT_CHECK = 2.0
WATCH_SLICE = 0.005  # seconds a watch sends its backlog before letting other work run


@dataclass(frozen=True)
class WatchOptions:
    """What a watch request asks for besides its selectors and resourceVersion."""

    bookmarks: bool
    timeout: float
    send_initial: bool


def watch_options(query: MultiMapping[str]) -> WatchOptions:
    """The options of a watch (422 for resourceVersionMatch without sendInitialEvents, 400 for a bad number)."""
    if query.get("resourceVersionMatch") and not query.get("sendInitialEvents"):
        raise invalid(
            "ListOptions",
            "meta.k8s.io",
            "",
            [
                Cause(
                    "FieldValueForbidden",
                    "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    "resourceVersionMatch",
                )
            ],
        )
    bookmarks = truthy(query.get("allowWatchBookmarks"))
    timeout = float(int_param(query, "timeoutSeconds") or 1800)
    send_initial = truthy(query.get("sendInitialEvents"))
    return WatchOptions(bookmarks, timeout, send_initial)


# queued to a watch whose client went away
DISCONNECTED = Event(-1, "DISCONNECTED", {"metadata": {"name": ""}})


class _Sweeper:
    """The open watches of one event loop and their connections, looked at every
    ``DISCONNECT_CHECK`` seconds while any is open (Go cancels a request's context when
    its client leaves; aiohttp tells a streaming handler nothing)."""

    def __init__(self) -> None:
        self.watches: dict[Watcher, asyncio.BaseTransport | None] = {}
        self.task: asyncio.Task[None] | None = None

    def add(self, watcher: Watcher, transport: asyncio.BaseTransport | None) -> None:
        self.watches[watcher] = transport
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run(), name="localkube-watch-sweeper")

    def discard(self, watcher: Watcher) -> None:
        self.watches.pop(watcher, None)

    async def _run(self) -> None:
        while self.watches:
            await asyncio.sleep(DISCONNECT_CHECK)
            for watcher, transport in list(self.watches.items()):
                if transport is None or transport.is_closing():
                    del self.watches[watcher]
                    watcher.queue.put_nowait(DISCONNECTED)
        loop = asyncio.get_running_loop()
        if _SWEEPERS.get(loop) is self:
            del _SWEEPERS[loop]


# weak: a loop that is gone takes its sweeper with it
_SWEEPERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Sweeper] = weakref.WeakKeyDictionary()


def _sweeper() -> _Sweeper:
    loop = asyncio.get_running_loop()
    sweeper = _SWEEPERS.get(loop)
    if sweeper is None:
        sweeper = _SWEEPERS[loop] = _Sweeper()
    return sweeper


class _Turn:
    """A watch's share of the loop: sending a backlog (a burst of writes, a big initial list)
    never suspends by itself, since the queue and the socket buffer have room, so it yields
    after each ``WATCH_SLICE`` of work; other requests (and the webhook answers writes wait
    for) would otherwise wait behind one watcher's hundreds of events."""

    def __init__(self) -> None:
        self.began = time.perf_counter()

    def rest(self) -> None:
        """The watch is about to wait: its next slice starts when it wakes."""
        self.began = -1.0

    async def maybe_yield(self) -> None:
        now = time.perf_counter()
        if self.began < 0:
            self.began = now
        elif now - self.began >= WATCH_SLICE:
            await asyncio.sleep(0)
            self.began = time.perf_counter()


class Watches:
    """The open watches of one server."""

    def __init__(self, api: ResourceAPI) -> None:
        self.api = api
        self.store = api.store
        self.count = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self.encoded = EncodedEvents()

    def cancel(self) -> None:
        """End every open watch (the server is stopping)."""
        for task in list(self._tasks):
            task.cancel()

    async def serve(
        self,
        request: web.Request,
        rt: ResourceType,
        namespace: str,
        matches: Callable[[Obj], bool],
        options: WatchOptions,
        mode: str,
        include: str,
        name: str = "",
    ) -> web.StreamResponse:
        """Stream the changes of ``rt`` in ``namespace`` (all when empty) that ``matches``
        selects (all named ``name``, when given), as JSON lines, as Tables when ``mode`` is
        ``"table"``, or as protobuf frames."""
        requested_rv = resource_version_param(request.query)
        # a watch list at a resourceVersion ahead waits for it (an ERROR event below if in vain);
        # a plain watch from a future resourceVersion just starts there, as kube-apiserver's does
        fresh = (
            requested_rv is None
            or not options.send_initial
            or await self.store.wait_for_rv(requested_rv, paging.TOO_LARGE_WAIT)
        )
        stream_type = protobuf.WATCH_CONTENT_TYPE if mode == "protobuf" else JSON
        response = web.StreamResponse(
            status=200, headers={"Content-Type": stream_type, "Cache-Control": "no-cache, private"}
        )
        response.enable_chunked_encoding()
        await response.prepare(request)
        first_table = [True]

        async def send(kind: str, obj: Obj) -> None:
            if mode == "table" and kind in ("ADDED", "MODIFIED", "DELETED"):
                meta = {"resourceVersion": obj["metadata"].get("resourceVersion", "")}
                obj = tablemod.table(rt, [obj], include, meta, with_columns=first_table[0])
                first_table[0] = False
            await self.store.durable()  # no client sees a change that a crash could still undo
            if mode == "protobuf":
                await response.write(protobuf.watch_frame(kind, obj))
                return
            await response.write(json_codec.dumps({"type": kind, "object": obj}) + b"\n")

        async def emit(kind: str, stored: Obj) -> None:
            """``send`` of a stored object's view; as JSON, encoded once for every watcher."""
            if mode in ("table", "protobuf"):
                await send(kind, self._view(rt, stored))
                return
            line = self.encoded.line(rt, kind, stored, lambda: self._encoded_view(rt, stored))
            await self.store.durable()
            await response.write(line)

        if not fresh:
            assert requested_rv is not None
            await send("ERROR", paging.too_large(requested_rv, self.store.rv).status())
            return response
        watcher = self.store.subscribe(rt.storage_key, namespace, name)
        sweeper = _sweeper()
        sweeper.add(watcher, request.transport)
        self.count += 1
        current = asyncio.current_task()
        if current is not None:
            self._tasks.add(current)
        try:
            initial: list[tuple[str, Obj]] = []
            backlog: list[Event] = []
            if requested_rv is None or options.send_initial:
                if name and (namespace or not rt.namespaced):
                    found = self.store.get(rt.storage_key, namespace, name)
                    candidates = [] if found is None else [found]
                else:
                    candidates = self.store.items(rt.storage_key, namespace or None)
                for obj in candidates:
                    if matches(obj):
                        initial.append(("ADDED", obj))
            else:
                history = self.store.history_since(rt.storage_key, requested_rv)
                if history is None:
                    oldest = self.store.oldest_retained(rt.storage_key)
                    await send("ERROR", expired(f"too old resource version: {requested_rv} ({oldest})").status())
                    return response
                backlog = history
            turn = _Turn()
            for kind, obj in initial:
                await emit(kind, obj)
                await turn.maybe_yield()
            if options.send_initial:
                await send(
                    "BOOKMARK",
                    {
                        "kind": rt.kind,
                        "apiVersion": rt.api_version,
                        "metadata": {
                            "resourceVersion": str(self.store.rv),
                            "annotations": {"k8s.io/initial-events-end": "true"},
                        },
                    },
                )
            for event in backlog:
                await self._send_event(emit, namespace, matches, event)
                await turn.maybe_yield()
            deadline = time.monotonic() + options.timeout
            last_bookmark = time.monotonic()
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                wait = (
                    min(remaining, BOOKMARK_INTERVAL - (time.monotonic() - last_bookmark))
                    if options.bookmarks
                    else remaining
                )
                try:
                    if watcher.queue.empty():
                        turn.rest()
                        async with asyncio.timeout(max(wait, 0.01)):
                            event = await watcher.queue.get()
                    else:  # a backlog: taken without a timer, a slice at a time (see _Turn)
                        event = watcher.queue.get_nowait()
                        await turn.maybe_yield()
                except TimeoutError:
                    transport = request.transport
                    if transport is None or transport.is_closing():
                        break
                    if options.bookmarks and time.monotonic() - last_bookmark >= BOOKMARK_INTERVAL - 0.01:
                        await send(
                            "BOOKMARK",
                            {
                                "kind": rt.kind,
                                "apiVersion": rt.api_version,
                                "metadata": {"resourceVersion": str(self.store.rv)},
                            },
                        )
                        last_bookmark = time.monotonic()
                    continue
                if event is DISCONNECTED:
                    break
                if requested_rv is None or event.rv > requested_rv:
                    await self._send_event(emit, namespace, matches, event)
        except ConnectionResetError:
            return response
        finally:
            self.store.unsubscribe(rt.storage_key, watcher)
            sweeper.discard(watcher)
            self.count -= 1
            if current is not None:
                self._tasks.discard(current)
        transport = request.transport
        if transport is not None and not transport.is_closing():
            with contextlib.suppress(ConnectionResetError, RuntimeError):
                await response.write_eof()
        return response

    def _encoded_view(self, rt: ResourceType, obj: Obj) -> Obj:
        """The view of a stored object that is encoded at once and dropped: shared unless a
        custom resource still lacks defaults its schema gives."""
        if rt.custom and rt.schema is not None and defaults_pending(obj, rt.schema):
            return self._view(rt, obj)
        return self.api.shared_view(rt, obj)

    def _view(self, rt: ResourceType, obj: Obj) -> Obj:
        view = self.api._view(rt, obj)
        if rt.custom and rt.schema is not None:
            apply_defaults(view, rt.schema)
        return view

    async def _send_event(self, emit: Send, namespace: str, matches: Callable[[Obj], bool], event: Event) -> None:
        """``emit`` the event as this watch sees it (a change into or out of its selector
        is an ADDED or a DELETED), with the stored object; nothing if it does not concern it."""
        obj = event.obj
        if namespace and obj["metadata"].get("namespace", "") != namespace:
            return
        now_match = matches(obj)
        old_match = event.old is not None and matches(event.old)
        if event.type == "ADDED":
            if now_match:
                await emit("ADDED", obj)
        elif event.type == "MODIFIED":
            if now_match and old_match:
                await emit("MODIFIED", obj)
            elif now_match:
                await emit("ADDED", obj)
            elif old_match:
                await emit("DELETED", obj)
        elif event.type == "DELETED" and (old_match or now_match):
            await emit("DELETED", obj)
