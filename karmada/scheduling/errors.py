"""Scheduling failures, classified as Karmada classifies them.

The class decides what the scheduler controller does with the binding:
``FitError`` (no cluster passed the filters) empties ``spec.clusters`` and is
not retried until something changes; ``UnschedulableError`` (not enough
capacity) keeps the previous result and retries with backoff; any other
``ScheduleError`` is reported as ``SchedulerError``.
"""

from __future__ import annotations

from collections import Counter


class ScheduleError(Exception):
    """Scheduling failed; ``reason`` is the binding's ``Scheduled`` condition reason."""

    reason = "SchedulerError"


class FitError(ScheduleError):
    """No cluster passed the filters."""

    reason = "NoClusterFit"

    def __init__(self, total_clusters: int, reasons: dict[str, list[str]]) -> None:
        self.total_clusters = total_clusters
        self.reasons = reasons
        super().__init__(fit_error_message(total_clusters, reasons))


class UnschedulableError(ScheduleError):
    """The feasible clusters cannot hold the requested replicas."""

    reason = "Unschedulable"


def fit_error_message(total_clusters: int, reasons: dict[str, list[str]]) -> str:
    """Karmada's message: ``0/3 clusters are available: 1 <reason>, 2 <reason>.``"""
    if total_clusters == 0 or not reasons:
        return f"0/{total_clusters} clusters are available: no cluster exists."
    histogram = Counter(reason for cluster_reasons in reasons.values() for reason in cluster_reasons)
    parts = sorted(f"{count} {reason}" for reason, count in histogram.items())
    return f"0/{total_clusters} clusters are available: {', '.join(parts)}."
