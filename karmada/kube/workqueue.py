"""A work queue of keys with client-go's semantics (``util/workqueue``).

- A key is *dirty* from ``add`` until a worker takes it with ``get``; adding a
  dirty key again does nothing, so a burst of changes is processed once.
- A key a worker holds (between ``get`` and ``done``) is never handed to a
  second worker: adding it meanwhile marks it dirty, and ``done`` queues it
  again.
- ``add_after`` holds a key in a delayed set until its deadline; a key waits
  there once, and a new ``add_after`` only ever moves its deadline earlier. One
  timer, always set for the earliest deadline, moves due keys to the queue.
- ``add_rate_limited`` delays a failed key by the controller rate limiter
  (per-key 5 ms doubling to 1,000 s, and 10 retries a second overall after a
  burst of 100); ``forget`` resets the key's backoff and drops its entry.
- ``shutdown`` stops accepting keys and drops the delayed ones; workers still
  get the keys already queued, then :class:`ShutDown`. With ``drain=True`` it
  also waits until those keys and every key in flight are ``done``.

Workers are tasks of the event loop that made the queue; nothing here blocks.

A queue given a ``name`` exports client-go's work-queue metrics under it
(``workqueue_depth``, ``_adds_total``, ``_queue_duration_seconds``,
``_work_duration_seconds``, ``_retries_total``; see :mod:`karmada.metrics`).
Several queues may share a name in one process (every agent of a
``karmada-agent --fleet`` process has its own ``execution`` queue, and so on):
the series then show the process's sum over them, as one program's series
would. Counters and histograms add up by themselves; the depth gauge is moved
by each queue's change (client-go's inc/dec) rather than set to one queue's
length, and a queue shut down takes its remaining keys out of it, since no
one counts them any more once its workers are gone.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import time
from collections.abc import Hashable
from typing import Generic, TypeVar

from karmada import metrics
from karmada.kube.ratelimit import BASE_DELAY, BURST, MAX_DELAY, QPS, ControllerRateLimiter

K = TypeVar("K", bound=Hashable)


class ShutDown(Exception):
    """The queue was shut down."""


class WorkQueue(Generic[K]):
    """De-duplicating, delaying, rate-limited queue of keys."""

    def __init__(
        self,
        base_delay: float = BASE_DELAY,
        max_delay: float = MAX_DELAY,
        *,
        qps: float = QPS,
        burst: int = BURST,
        name: str | None = None,
    ) -> None:
        self._queue: collections.deque[K] = collections.deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        # delayed keys: key -> (deadline, sequence); the heap may hold stale entries
        # for keys whose deadline moved earlier, skipped when they surface
        self._waiting: dict[K, tuple[float, int]] = {}
        self._heap: list[tuple[float, int, K]] = []
        self._sequence = 0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0
        self._getters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._idle: list[asyncio.Future[None]] = []
        self._shutting_down = False
        self.limiter: ControllerRateLimiter[K] = ControllerRateLimiter(base_delay, max_delay, qps, burst)
        self.name = name
        # when each dirty key was added and each held key was taken (metrics only)
        self._added_at: dict[K, float] = {}
        self._started_at: dict[K, float] = {}
        if name is not None:
            self._depth = metrics.WORKQUEUE_DEPTH.labels(name)
            self._adds = metrics.WORKQUEUE_ADDS.labels(name)
            self._queue_duration = metrics.WORKQUEUE_QUEUE_DURATION.labels(name)
            self._work_duration = metrics.WORKQUEUE_WORK_DURATION.labels(name)
            self._retries = metrics.WORKQUEUE_RETRIES.labels(name)
        # this queue's share of workqueue_depth{name}, which other queues of the name share
        self._depth_counted = 0

    def __len__(self) -> int:
        """Keys ready for a worker."""
        return len(self._queue)

    def waiting(self) -> int:
        """Keys in the delayed set."""
        return len(self._waiting)

    def processing(self) -> int:
        """Keys held by workers."""
        return len(self._processing)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    # -- adding --------------------------------------------------------------
    def add(self, key: K) -> None:
        """Queue ``key`` unless it is already waiting for a worker."""
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if self.name is not None:
            self._adds.inc()
            self._added_at[key] = time.perf_counter()
        if key in self._processing:
            return  # queued again by done()
        self._queue.append(key)
        self._measure_depth()
        self._wake()

    def _measure_depth(self) -> None:
        """Move the shared depth gauge by this queue's change since the last time (a
        ``set()`` would overwrite the other queues' share); after shutdown, not at all."""
        if self.name is None or self._shutting_down:
            return
        depth = len(self._queue)
        if depth != self._depth_counted:
            self._depth.inc(depth - self._depth_counted)
            self._depth_counted = depth

    def add_after(self, key: K, delay: float) -> None:
        """Queue ``key`` in ``delay`` seconds, or sooner if it already waits with an earlier deadline."""
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + delay
        current = self._waiting.get(key)
        if current is not None and current[0] <= deadline:
            return
        self._sequence += 1
        self._waiting[key] = (deadline, self._sequence)
        heapq.heappush(self._heap, (deadline, self._sequence, key))
        if len(self._heap) > 2 * len(self._waiting) + 64:
            self._compact()
        if self._timer is None or deadline < self._timer_at:
            self._arm(loop, deadline)

    def add_rate_limited(self, key: K) -> float:
        """Queue ``key`` after its backoff; returns the delay used."""
        delay = self.limiter.when(key)
        if self.name is not None:
            self._retries.inc()
        self.add_after(key, delay)
        return delay

    def failures(self, key: K) -> int:
        return self.limiter.failures(key)

    def forget(self, key: K) -> None:
        """Reset the backoff of ``key`` (after a success, or when the key is gone)."""
        self.limiter.forget(key)

    # -- the delayed set -----------------------------------------------------
    def _arm(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = deadline
        self._timer = loop.call_at(deadline, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if self._shutting_down:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        while self._heap:
            deadline, sequence, key = self._heap[0]
            if self._waiting.get(key) != (deadline, sequence):
                heapq.heappop(self._heap)  # stale: the key moved earlier and already left
                continue
            if deadline > now:
                self._arm(loop, deadline)
                return
            heapq.heappop(self._heap)
            del self._waiting[key]
            self.add(key)

    def _compact(self) -> None:
        self._heap = [(deadline, sequence, key) for key, (deadline, sequence) in self._waiting.items()]
        heapq.heapify(self._heap)

    # -- workers -------------------------------------------------------------
    def _wake(self, everyone: bool = False) -> None:
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
                if not everyone:
                    return

    def _check_idle(self) -> None:
        if not self._queue and not self._processing:
            for waiter in self._idle:
                if not waiter.done():
                    waiter.set_result(None)
            self._idle.clear()

    async def get(self) -> K:
        """The next key; the caller must call :meth:`done` with it. Raises
        :class:`ShutDown` once the queue is shut down and empty."""
        while not self._queue:
            if self._shutting_down:
                raise ShutDown
            getter = asyncio.get_running_loop().create_future()
            self._getters.append(getter)
            try:
                await getter
            except asyncio.CancelledError:
                if getter.done() and not getter.cancelled():
                    self._wake()  # pass on the wake-up this cancelled worker received
                raise
        key = self._queue.popleft()
        self._dirty.discard(key)
        self._processing.add(key)
        if self.name is not None:
            now = time.perf_counter()
            added = self._added_at.pop(key, None)
            if added is not None:
                self._queue_duration.observe(now - added)
            self._started_at[key] = now
            self._measure_depth()
        return key

    def done(self, key: K) -> None:
        """Finish processing; a key added meanwhile is queued again."""
        self._processing.discard(key)
        started = self._started_at.pop(key, None)
        if started is not None:
            self._work_duration.observe(time.perf_counter() - started)
        if key in self._dirty:
            self._queue.append(key)
            self._measure_depth()
            self._wake()
        self._check_idle()

    async def shutdown(self, *, drain: bool = False) -> None:
        """Stop taking keys; with ``drain``, return once every queued and in-flight key is done."""
        self._shutting_down = True
        if self.name is not None and self._depth_counted:
            self._depth.dec(self._depth_counted)
            self._depth_counted = 0
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._waiting.clear()
        self._heap.clear()
        self._wake(everyone=True)
        if drain and (self._queue or self._processing):
            idle = asyncio.get_running_loop().create_future()
            self._idle.append(idle)
            await idle
