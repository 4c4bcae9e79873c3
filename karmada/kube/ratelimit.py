"""How long a failed key waits before it is retried (client-go's default controller rate limiter).

The delay is the larger of two limits: a per-key exponential backoff
(``base * 2^failures``, capped at ``max_delay``; ``forget`` after a success
resets it and frees its entry), and one token bucket shared by all keys
(``qps`` retries a second after a burst of ``burst``), so a control plane
coming back after an outage is not hit by every failed key at once.
Plain bookkeeping: no tasks, no locks; callers run on one event loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

BASE_DELAY = 0.005
MAX_DELAY = 1000.0
QPS = 10.0
BURST = 100


class ItemBackoff(Generic[K]):
    """Per-key exponential backoff: 5 ms, 10 ms, 20 ms, ... up to 1,000 s by default."""

    def __init__(self, base_delay: float = BASE_DELAY, max_delay: float = MAX_DELAY) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._failures: dict[K, int] = {}

    def when(self, key: K) -> float:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        # past the cap the exponent stops mattering; bounding it keeps 2**n a small float
        if failures >= 1024 or self.base_delay * 2.0**failures > self.max_delay:
            return self.max_delay
        return self.base_delay * 2.0**failures

    def failures(self, key: K) -> int:
        return self._failures.get(key, 0)

    def forget(self, key: K) -> None:
        self._failures.pop(key, None)

    def __len__(self) -> int:
        return len(self._failures)


class TokenBucket:
    """``qps`` tokens a second, at most ``burst`` saved up; each retry takes one,
    waiting (going into debt) when none is left, as Go's ``rate.Limiter.Reserve``."""

    def __init__(self, qps: float = QPS, burst: int = BURST, clock: Callable[[], float] = time.monotonic) -> None:
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def reserve(self) -> float:
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps


class ControllerRateLimiter(Generic[K]):
    """The larger of the per-key backoff and the shared bucket."""

    def __init__(
        self, base_delay: float = BASE_DELAY, max_delay: float = MAX_DELAY, qps: float = QPS, burst: int = BURST
    ) -> None:
        self.items: ItemBackoff[K] = ItemBackoff(base_delay, max_delay)
        self.bucket = TokenBucket(qps, burst)

    def when(self, key: K) -> float:
        return max(self.items.when(key), self.bucket.reserve())

    def failures(self, key: K) -> int:
        return self.items.failures(key)

    def forget(self, key: K) -> None:
        self.items.forget(key)
