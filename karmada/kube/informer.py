"""A watch cache: list once, then watch, keeping a local copy of every object.

Controllers read the cache instead of listing the server, and receive each
change through their handler. The informer relists when the watch's
resourceVersion has expired (410), reconnects with backoff on connection
errors, resumes watches from the last resourceVersion seen (bookmarks
included), and replays every cached object to the handler each
``resync_period`` so level-triggered controllers converge even after a missed
edge. One task per informer; handlers run on that task and must not block.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

from karmada.kube.client import KubeClient, KubeError
from karmada.kube.resources import Resource

log = logging.getLogger("karmada.kube.informer")

Obj = dict[str, Any]
Handler = Callable[[str, Obj, Obj | None], None]
"""Called with (event type, object, previous object or None)."""


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
        watch_timeout: int = 300,
        transform: Callable[[Obj], Obj] | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.resync_period = resync_period
        self.watch_timeout = watch_timeout
        self.transform = transform or strip_managed_fields
        self._cache: dict[tuple[str, str], Obj] = {}
        self._handlers: list[Handler] = []
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.resource_version = ""
        self.relists = 0

    # -- reading ------------------------------------------------------------
    def get(self, name: str, namespace: str = "") -> Obj | None:
        return self._cache.get((namespace, name))

    def items(self) -> Iterator[Obj]:
        return iter(list(self._cache.values()))

    def __len__(self) -> int:
        return len(self._cache)

    def store(self, obj: Obj) -> None:
        """Put an object this process just wrote into the cache, so its next read sees
        the write before the watch delivers it (the watch event still follows)."""
        key = object_key(obj)
        old = self._cache.get(key)
        new_rv = obj.get("metadata", {}).get("resourceVersion", "")
        old_rv = (old or {}).get("metadata", {}).get("resourceVersion", "")
        if old is None or (new_rv.isdigit() and old_rv.isdigit() and int(new_rv) >= int(old_rv)):
            self._cache[key] = self.transform(obj)

    def add_handler(self, handler: Handler) -> None:
        self._handlers.append(handler)

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
        for handler in self._handlers:
            try:
                handler(kind, obj, old)
            except Exception:  # one bad handler must not stop the cache
                log.exception("informer handler failed for %s %s", self.resource.plural, object_key(obj))

    async def _list(self) -> None:
        listing = await self.client.list(self.resource, self.namespace, **self._params())
        fresh = {object_key(o): self.transform(o) for o in listing.get("items") or []}
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
        self.resource_version = (listing.get("metadata") or {}).get("resourceVersion", "")
        self._synced.set()

    def _apply(self, kind: str, obj: Obj) -> None:
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
        self.resource_version = obj["metadata"].get("resourceVersion", self.resource_version)
        self._emit(kind, obj, old)

    async def _resync(self) -> None:
        while True:
            await asyncio.sleep(self.resync_period)
            for obj in list(self._cache.values()):
                self._emit("MODIFIED", obj, obj)

    async def _run(self) -> None:
        backoff = 0.2
        resync = asyncio.get_running_loop().create_task(self._resync()) if self.resync_period > 0 else None
        try:
            need_list = True
            while True:
                try:
                    if need_list:
                        await self._list()
                        self.relists += 1
                        need_list = False
                    stream = self.client.watch(
                        self.resource,
                        self.namespace,
                        resource_version=self.resource_version,
                        timeout_seconds=self.watch_timeout,
                        params=self._params(),
                    )
                    # aclosing: a cancelled informer closes its HTTP stream at once
                    async with contextlib.aclosing(stream) as events:
                        async for kind, obj in events:
                            self._apply(kind, obj)
                    backoff = 0.2
                except KubeError as exc:
                    if exc.gone or exc.status == 504:
                        need_list = True  # expired or too new: start again from a fresh list
                        continue
                    log.warning("watch of %s failed: %s; retrying in %.1fs", self.resource.plural, exc, backoff)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 30.0)
                    if exc.status in (0, 401, 403, 404, 500, 503):
                        need_list = need_list or exc.status != 0
        finally:
            if resync is not None:
                resync.cancel()


def strip_managed_fields(obj: Obj) -> Obj:
    """Drop ``managedFields`` (large, never read by controllers) before caching."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        meta = dict(meta)
        meta.pop("managedFields")
        obj = {**obj, "metadata": meta}
    return obj
