"""A work queue with per-key de-duplication and exponential backoff (client-go's semantics).

A key added several times before a worker takes it is processed once; a key
added while a worker holds it is processed again after ``done``; failed keys
come back after ``base * 2^failures`` (capped), and ``forget`` resets that
count. Workers are tasks of the same event loop.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import time
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class ShutDown(Exception):
    """The queue was shut down."""


class WorkQueue(Generic[K]):
    """De-duplicating, rate-limited queue of keys."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self._queue: collections.deque[K] = collections.deque()
        self._queued: set[K] = set()
        self._processing: set[K] = set()
        self._dirty: set[K] = set()
        self._failures: dict[K, int] = {}
        self._delayed: list[tuple[float, int, K]] = []
        self._counter = 0
        self._ready = asyncio.Event()
        self._timer: asyncio.Task[None] | None = None
        self._closed = False
        self.base_delay = base_delay
        self.max_delay = max_delay

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: K) -> None:
        """Queue ``key`` unless it is already waiting."""
        if self._closed:
            return
        if key in self._processing:
            self._dirty.add(key)
            return
        if key in self._queued:
            return
        self._queued.add(key)
        self._queue.append(key)
        self._ready.set()

    def add_after(self, key: K, delay: float) -> None:
        """Queue ``key`` in ``delay`` seconds."""
        if delay <= 0:
            self.add(key)
            return
        self._counter += 1
        heapq.heappush(self._delayed, (time.monotonic() + delay, self._counter, key))
        if self._timer is None or self._timer.done():
            self._timer = asyncio.get_running_loop().create_task(self._drain_delayed())

    async def _drain_delayed(self) -> None:
        while self._delayed and not self._closed:
            when, _, key = self._delayed[0]
            now = time.monotonic()
            if when > now:
                await asyncio.sleep(when - now)
                continue
            heapq.heappop(self._delayed)
            self.add(key)

    def add_rate_limited(self, key: K) -> float:
        """Queue ``key`` after its backoff; returns the delay used."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        delay = float(min(self.base_delay * (2**failures), self.max_delay))
        self.add_after(key, delay)
        return delay

    def failures(self, key: K) -> int:
        return self._failures.get(key, 0)

    def forget(self, key: K) -> None:
        """Reset the backoff of ``key`` (after a success)."""
        self._failures.pop(key, None)

    async def get(self) -> K:
        """The next key; the caller must call :meth:`done` with it."""
        while not self._queue:
            if self._closed:
                raise ShutDown
            self._ready.clear()
            await self._ready.wait()
        key = self._queue.popleft()
        self._queued.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: K) -> None:
        """Finish processing; a key added meanwhile is queued again."""
        self._processing.discard(key)
        if key in self._dirty:
            self._dirty.discard(key)
            self.add(key)

    async def shutdown(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
        self._ready.set()
