"""A watch cache: list once, then watch, keeping a local copy of every object.

Controllers read the cache instead of listing the server, and receive each
change through their handler. The list is read in pages (``page_size``). The
watch resumes from the last resourceVersion seen (bookmarks included) after a
broken connection; anything else that goes wrong (410 Gone, an error status,
an answer that does not decode, an event too large, a bug in a transform)
ends in a fresh list. Every failure is logged and retried after an
exponential backoff with jitter (0.2 s doubling to 30 s; a 410 right after a
working watch relists at once), so the task only ends when it is stopped.
Every cached object is replayed to the handler each ``resync_period`` so
level-triggered controllers converge even after a missed edge. Each watch asks
the server to end it after ``min_watch_timeout`` times 1 to 2 seconds (client-go's
reflector, 5 minutes by default), so the thousand informers of a large fleet,
started together, do not all watch again in the same second. One task per
informer; handlers run on that task and must not block.

A handler added to a cache that has already listed is first called with
``ADDED`` for every object the cache holds (client-go's ``AddEventHandler`` on
a started informer), right in :meth:`Informer.add_handler`, so a reader that
comes late (a controller of a new leadership term, a kind a second controller
watches) builds its indexes from the whole cache without a list. It must
therefore be ready to be called when it is added.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Iterator
from typing import Any

from karmada.kube.client import CONNECTION_ERROR, PAGE_SIZE, KubeClient, KubeError
from karmada.kube.resources import Resource

log = logging.getLogger("karmada.kube.informer")

Obj = dict[str, Any]
Handler = Callable[[str, Obj, Obj | None], None]
"""Called with (event type, object, previous object or None)."""

FIRST_BACKOFF = 0.2
MAX_BACKOFF = 30.0
MIN_WATCH_TIMEOUT = 300.0  # client-go's reflector: minWatchTimeout, 5 minutes


def backoff(failures: int, cap: float = MAX_BACKOFF) -> float:
    """Seconds to wait after ``failures`` failures in a row: doubling up to ``cap``, times 1
    to 2 (client-go's reflector jitter), so informers of many processes do not retry in step."""
    return min(FIRST_BACKOFF * 2.0 ** min(failures - 1, 32), cap) * random.uniform(1.0, 2.0)


def watch_timeout(minimum: float, rand: Callable[[], float] = random.random) -> int:
    """The ``timeoutSeconds`` of one watch: ``minimum`` times 1 to 2 (``rand`` in [0, 1)),
    whole seconds, at least 1 (0 would mean the server's own default)."""
    return max(1, int(minimum * (1.0 + rand())))


def object_key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace", ""), meta.get("name", "")


class Informer:
    """A cache of one resource (optionally one namespace and a label selector)."""

    def __init__(
        self,
        client: KubeClient,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        resync_period: float = 0.0,
        min_watch_timeout: float = MIN_WATCH_TIMEOUT,
        page_size: int = PAGE_SIZE,
        max_backoff: float = MAX_BACKOFF,
        transform: Callable[[Obj], Obj] | None = None,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.resync_period = resync_period
        self.min_watch_timeout = min_watch_timeout
        self._rand = rand  # the watch timeout's jitter; tests inject their own
        self.page_size = page_size
        self.max_backoff = max_backoff
        self.transform = transform or strip_managed_fields
        self._cache: dict[tuple[str, str], Obj] = {}
        self._handlers: list[Handler] = []
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.resource_version = ""
        self.relists = 0
        self.failures = 0
        """Failed lists and watches in a row (0 while all is well)."""
        self._applied = 0
        self.changes = 0
        """Counts every change of what :meth:`get` and :meth:`items` return (an event, a list,
        a stored write), so a reader can keep something derived from the whole cache and
        rebuild it only when this moved."""
        # objects this process wrote (``store``) that the watch has not delivered yet: read
        # in place of the cached copy, but kept apart so that the watch event, when it
        # comes, reaches every handler with the previous object it really replaces
        self._written: dict[tuple[str, str], Obj] = {}

    # -- reading ------------------------------------------------------------
    def get(self, name: str, namespace: str = "") -> Obj | None:
        key = (namespace, name)
        written = self._written.get(key)
        return written if written is not None else self._cache.get(key)

    def items(self) -> Iterator[Obj]:
        if not self._written:
            return iter(list(self._cache.values()))
        return iter(list({**self._cache, **self._written}.values()))

    def __len__(self) -> int:
        return len(self._cache) + sum(1 for key in self._written if key not in self._cache)

    def store(self, obj: Obj) -> None:
        """Put an object this process just wrote into the cache, so its next read sees
        the write before the watch delivers it (the watch event still follows).

        An object the cache does not hold, at a version the watch has already
        passed, was deleted meanwhile (or is outside the selector): it stays out,
        else it would sit in the cache for ever."""
        key = object_key(obj)
        old = self._written.get(key) or self._cache.get(key)
        new_rv = _version(obj.get("metadata", {}).get("resourceVersion", ""))
        if old is None:
            seen = _version(self.resource_version)
            if new_rv is not None and seen is not None and new_rv <= seen:
                return
        else:
            old_rv = _version(old.get("metadata", {}).get("resourceVersion", ""))
            if new_rv is None or old_rv is None or new_rv < old_rv:
                return
        self._written[key] = self.transform(obj)
        self.changes += 1

    @property
    def handlers(self) -> tuple[Handler, ...]:
        return tuple(self._handlers)

    @property
    def synced(self) -> bool:
        """Listed at least once since it started."""
        return self._synced.is_set()

    @property
    def running(self) -> bool:
        return self._task is not None

    def add_handler(self, handler: Handler) -> None:
        """Call ``handler`` for every change from now on; once synced, first with ``ADDED``
        for each cached object (what the watch has delivered, without this process's
        stored writes: their watch events still follow)."""
        self._handlers.append(handler)
        if self._synced.is_set():
            for obj in list(self._cache.values()):
                self._call(handler, "ADDED", obj, None)

    def remove_handler(self, handler: Handler) -> None:
        """Stop calling ``handler`` (a reader that no longer needs this cache)."""
        if handler in self._handlers:
            self._handlers.remove(handler)

    async def wait_synced(self, timeout: float | None = None) -> None:
        async with asyncio.timeout(timeout):
            await self._synced.wait()

    # -- running ------------------------------------------------------------
    def start(self) -> asyncio.Task[None]:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"informer-{self.resource.plural}")
        return self._task

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def _params(self) -> dict[str, str]:
        params = {}
        if self.label_selector:
            params["labelSelector"] = self.label_selector
        if self.field_selector:
            params["fieldSelector"] = self.field_selector
        return params

    def _emit(self, kind: str, obj: Obj, old: Obj | None) -> None:
        for handler in list(self._handlers):  # a handler may add or remove handlers
            self._call(handler, kind, obj, old)

    def _call(self, handler: Handler, kind: str, obj: Obj, old: Obj | None) -> None:
        try:
            handler(kind, obj, old)
        except Exception:  # one bad handler must not stop the cache
            log.exception("informer handler failed for %s %s", self.resource.plural, object_key(obj))

    async def _list(self) -> None:
        listing = await self.client.list_all(
            self.resource, self.namespace, page_size=self.page_size, transform=self.transform, **self._params()
        )
        fresh = {object_key(o): o for o in listing["items"]}
        for key, obj in fresh.items():
            old = self._cache.get(key)
            if old is None:
                self._emit("ADDED", obj, None)
            elif old.get("metadata", {}).get("resourceVersion") != obj["metadata"].get("resourceVersion"):
                self._emit("MODIFIED", obj, old)
        for key, old in list(self._cache.items()):
            if key not in fresh:
                self._emit("DELETED", old, old)
        self._cache = fresh
        self.changes += 1
        self.resource_version = listing["metadata"]["resourceVersion"]
        listed = _version(self.resource_version)
        for key, written in list(self._written.items()):
            mine = _version(written.get("metadata", {}).get("resourceVersion", ""))
            if key in fresh:
                self._forget_written(key, fresh[key])
            elif listed is None or mine is None or mine <= listed:  # deleted since it was written
                del self._written[key]
        self._synced.set()

    async def _watch(self) -> None:
        stream = self.client.watch(
            self.resource,
            self.namespace,
            resource_version=self.resource_version,
            timeout_seconds=watch_timeout(self.min_watch_timeout, self._rand),
            params=self._params(),
        )
        # aclosing: a cancelled informer closes its HTTP stream at once
        async with contextlib.aclosing(stream) as events:
            async for kind, obj in events:
                self._apply(kind, obj)

    def _apply(self, kind: str, obj: Obj) -> None:
        self._applied += 1
        if kind == "BOOKMARK":
            self.resource_version = obj["metadata"].get("resourceVersion", self.resource_version)
            return
        obj = self.transform(obj)
        key = object_key(obj)
        old = self._cache.get(key)
        if kind == "DELETED":
            self._cache.pop(key, None)
        else:
            self._cache[key] = obj
        self.changes += 1
        self.resource_version = obj["metadata"].get("resourceVersion", self.resource_version)
        self._forget_written(key, obj, deleted=kind == "DELETED")
        self._emit(kind, obj, old)

    def _forget_written(self, key: tuple[str, str], obj: Obj, deleted: bool = False) -> None:
        """Drop a stored write once the watch (or a list) caught up with it."""
        written = self._written.get(key)
        if written is None:
            return
        seen = _version(obj.get("metadata", {}).get("resourceVersion", ""))
        mine = _version(written.get("metadata", {}).get("resourceVersion", ""))
        if deleted or seen is None or mine is None or seen >= mine:
            del self._written[key]

    async def _resync(self) -> None:
        while True:
            await asyncio.sleep(self.resync_period)
            for obj in list(self._cache.values()):
                self._emit("MODIFIED", obj, obj)

    async def _run(self) -> None:
        resync = asyncio.get_running_loop().create_task(self._resync()) if self.resync_period > 0 else None
        need_list = True
        self.failures = 0
        try:
            while True:
                applied = self._applied
                try:
                    if need_list:
                        await self._list()
                        self.relists += 1
                        need_list = False
                    await self._watch()
                    self.failures = 0  # the server ended the watch at its timeout: watch again
                    continue
                except KubeError as exc:
                    error: Exception = exc
                    resume = exc.status == 429 or (exc.status == 0 and exc.reason == CONNECTION_ERROR)
                    urgent = exc.gone or exc.status == 504  # expired or too new: start from a fresh list
                except Exception as exc:  # a bug or a malformed object: start again rather than stop
                    error, resume, urgent = exc, False, False
                if self._applied > applied:
                    self.failures = 0  # the watch worked for a while: this failure starts a new series
                phase = "list" if need_list else "watch"
                need_list = need_list or not resume
                if urgent and self.failures == 0:
                    self.failures = 1
                    log.info("%s of %s: %s; listing again", phase, self.resource.plural, error)
                    continue
                self.failures += 1
                delay = backoff(self.failures, self.max_backoff)
                then = "listing again" if need_list else "watching again"
                if isinstance(error, KubeError):
                    log.warning("%s of %s failed: %s; %s in %.1fs", phase, self.resource.plural, error, then, delay)
                else:
                    log.error("%s of %s failed; %s in %.1fs", phase, self.resource.plural, then, delay, exc_info=error)
                await asyncio.sleep(delay)
        finally:
            if resync is not None:
                resync.cancel()


def _version(rv: str) -> int | None:
    return int(rv) if rv.isdigit() else None


def strip_managed_fields(obj: Obj) -> Obj:
    """Drop ``managedFields`` (large, never read by controllers) before caching."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        meta = dict(meta)
        meta.pop("managedFields")
        obj = {**obj, "metadata": meta}
    return obj
