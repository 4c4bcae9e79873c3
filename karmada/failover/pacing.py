"""The taint manager's eviction pacing, as Karmada's eviction workers pace
(``pkg/controllers/cluster/eviction_worker.go`` and ``dynamic_rate_limiter.go``).

Karmada keeps one eviction queue per binding kind (ResourceBinding,
ClusterResourceBinding), each drained by ``ConcurrentReconciles`` (3)
workers; after every item a worker waits ``1/--resource-eviction-rate``
seconds (1800 s when the rate is 0) before taking the next. So each kind
evicts at most ``3 * rate`` bindings a second, in bursts of up to 3.

:class:`EvictionPacer` is one such queue's workers as lanes: a claim takes
the lane free the earliest and keeps it busy for one interval. Plain
bookkeeping with the time passed in, so it is tested as a table.
"""

from __future__ import annotations

WORKERS = 3  # Karmada's ConcurrentReconciles for the taint manager
MAX_EVICTION_DELAY = 1800.0  # Karmada's maxEvictionDelay, used when the rate is 0


def eviction_interval(rate: float) -> float:
    """Seconds a worker waits after an eviction (Karmada's DynamicRateLimiter.When)."""
    return 1.0 / rate if rate > 0 else MAX_EVICTION_DELAY


class EvictionPacer:
    """``workers`` lanes, each busy for ``1/rate`` seconds after an eviction it made."""

    def __init__(self, rate: float, workers: int = WORKERS) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.interval = eviction_interval(rate)
        self._free_at = [float("-inf")] * workers

    def claim(self, now: float) -> float:
        """0 when a lane is free (it is then taken until ``now + interval``), else the
        seconds until the first lane frees."""
        lane = min(range(len(self._free_at)), key=self._free_at.__getitem__)
        if self._free_at[lane] > now:
            return self._free_at[lane] - now
        self._free_at[lane] = now + self.interval
        return 0.0
