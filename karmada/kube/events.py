"""Recording Kubernetes Events about objects (what ``kubectl describe`` shows).

Repeats of the same event (object, type, reason, message) within ten minutes
bump ``count`` and ``lastTimestamp`` of one Event instead of creating new ones,
as client-go's correlator does; if that Event is gone (events expire after an
hour) a new one is created. The correlator remembers the 4,096 most recently
recorded events (client-go's LRU size), so memory stays bounded however many
objects come and go. Recording never raises: events are advisory.

As client-go's broadcaster, :meth:`EventRecorder.record` does not wait for the
API server: the event goes to a bounded queue (1,000, as client-go's; beyond
that events are dropped with a warning) served by a few writer tasks, so a
controller's reconcile costs no round trip per event. Repeats of one event go
to the same writer, in order, so they aggregate. An Event's times are those of
its recording, not of its (maybe delayed) write. :meth:`flush` waits until
everything recorded so far is written.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime
import hashlib
import logging
import time
from dataclasses import dataclass
from typing import Any

from karmada.kube.client import KubeClient, KubeError
from karmada.kube.resources import EVENTS

log = logging.getLogger("karmada.kube.events")

Obj = dict[str, Any]
AGGREGATION_WINDOW = 600.0
CACHE_SIZE = 4096
QUEUE_SIZE = 1000  # client-go's maxQueuedEvents
WRITERS = 4


@dataclass(frozen=True)
class _Pending:
    identity: str
    namespace: str
    obj_name: str
    involved: dict[str, str]
    event_type: str
    reason: str
    message: str
    when: str


def _time() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class EventRecorder:
    """Writes core/v1 Events as ``component``."""

    def __init__(self, client: KubeClient, component: str, host: str = "", *, cache_size: int = CACHE_SIZE) -> None:
        self.client = client
        self.component = component
        self.host = host
        self.cache_size = cache_size
        # identity -> (Event name, count, when last recorded), least recently recorded first
        self._seen: collections.OrderedDict[str, tuple[str, int, float]] = collections.OrderedDict()
        self._queues: list[asyncio.Queue[_Pending]] = []
        self._writers: list[asyncio.Task[None]] = []
        self.dropped = 0

    def __len__(self) -> int:
        """Events remembered for aggregation."""
        return len(self._seen)

    def _remember(self, identity: str, name: str, count: int) -> None:
        self._seen[identity] = (name, count, time.monotonic())
        self._seen.move_to_end(identity)
        while len(self._seen) > self.cache_size:
            self._seen.popitem(last=False)

    async def record(self, obj: Obj, event_type: str, reason: str, message: str) -> None:
        """Record one event about ``obj`` (``event_type`` is Normal or Warning); returns at once."""
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        involved = {
            "apiVersion": obj.get("apiVersion", ""),
            "kind": obj.get("kind", ""),
            "name": meta.get("name", ""),
            "uid": meta.get("uid", ""),
        }
        if meta.get("namespace"):
            involved["namespace"] = meta["namespace"]
        key = f"{involved}/{event_type}/{reason}/{message}"
        identity = hashlib.sha1(key.encode(), usedforsecurity=False).hexdigest()[:10]
        pending = _Pending(identity, namespace, meta.get("name", ""), involved, event_type, reason, message, _time())
        if not self._queues:
            self._start()
        queue = self._queues[int(identity, 16) % len(self._queues)]
        try:
            queue.put_nowait(pending)
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 100 == 0:
                log.warning("event queue full: dropped %d events so far (latest: %s)", self.dropped, reason)

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        self._queues = [asyncio.Queue(QUEUE_SIZE // WRITERS) for _ in range(WRITERS)]
        self._writers = [
            loop.create_task(self._writer(q), name=f"event-writer-{i}") for i, q in enumerate(self._queues)
        ]

    async def _writer(self, queue: asyncio.Queue[_Pending]) -> None:
        while True:
            pending = await queue.get()
            try:
                await self._write(pending)
            except Exception:  # a bug here must not stop the writer
                log.exception("recording event %s failed", pending.reason)
            finally:
                queue.task_done()

    async def flush(self) -> None:
        """Wait until every event recorded so far is written (or given up)."""
        for queue in self._queues:
            await queue.join()

    async def close(self, grace: float = 2.0) -> None:
        """Write what is queued (for ``grace`` seconds at most), then stop the writers."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace):
                await self.flush()
        for task in self._writers:
            task.cancel()
        for task in self._writers:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._queues, self._writers = [], []

    async def _write(self, pending: _Pending) -> None:
        identity, namespace, now = pending.identity, pending.namespace, pending.when
        meta = {"name": pending.obj_name}
        involved, event_type, reason, message = pending.involved, pending.event_type, pending.reason, pending.message
        try:
            seen = self._seen.get(identity)
            if seen and time.monotonic() - seen[2] < AGGREGATION_WINDOW:
                name, count, _ = seen
                patch = {"count": count + 1, "lastTimestamp": now}
                try:
                    await self.client.patch(EVENTS, name, patch, namespace)
                except KubeError as exc:
                    if not exc.not_found:
                        raise
                    self._seen.pop(identity, None)  # the Event expired: record a new one below
                else:
                    self._remember(identity, name, count + 1)
                    return
            name = f"{meta.get('name', 'object')}.{identity}{int(time.time() * 1000) % 100000:05d}"
            body = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": involved,
                "reason": reason,
                "message": message[:1024],
                "type": event_type,
                "source": {"component": self.component, **({"host": self.host} if self.host else {})},
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
                "reportingComponent": self.component,
                "reportingInstance": self.host,
            }
            await self.client.create(EVENTS, body, namespace)
            self._remember(identity, name, 1)
        except KubeError as exc:
            log.warning("could not record event %s on %s/%s: %s", reason, namespace, meta.get("name"), exc)
