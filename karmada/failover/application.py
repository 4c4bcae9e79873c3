"""Application failure detection (Karmada's application-failover controller).

The controller remembers, per binding and cluster, when it first saw the
workload Unhealthy there; :func:`detect_failures` says which clusters stayed
Unhealthy beyond ``tolerationSeconds`` and when to look again. Clusters
already in an eviction task are not judged again; clusters seen Healthy or
Unknown, or no longer targeted, are forgotten.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any


def unhealthy_clusters(spec: Mapping[str, Any], statuses: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """(Unhealthy clusters not being evicted, clusters Healthy or Unknown)."""
    evicting = {t.get("fromCluster") for t in spec.get("gracefulEvictionTasks") or []}
    unhealthy, others = [], []
    for item in statuses:
        cluster, health = item.get("clusterName"), item.get("health")
        if health == "Unhealthy" and cluster not in evicting:
            unhealthy.append(str(cluster))
        if health in ("Healthy", "Unknown"):
            others.append(str(cluster))
    return unhealthy, others


def detect_failures(
    since: MutableMapping[str, datetime.datetime],
    unhealthy: Sequence[str],
    toleration_seconds: int,
    now: datetime.datetime,
) -> tuple[float, list[str]]:
    """(seconds until the next check, clusters to evict); records first sightings in ``since``."""
    wait: float | None = None
    evict: list[str] = []
    tolerance = datetime.timedelta(seconds=toleration_seconds)
    for cluster in unhealthy:
        first = since.get(cluster)
        if first is None:
            since[cluster] = now
            left = float(toleration_seconds)
        elif now >= first + tolerance:
            evict.append(cluster)
            continue
        else:
            # never 0: the caller looks again after ``wait`` seconds, and 0 means "no need"
            left = max((first + tolerance - now).total_seconds(), 0.05)
        wait = left if wait is None else min(wait, left)
    return (wait or 0.0), evict


def forget(since: MutableMapping[str, datetime.datetime], targeted: set[str], others: Sequence[str]) -> None:
    """Drop clusters no longer targeted and those seen Healthy or Unknown."""
    for cluster in list(since):
        if cluster not in targeted or cluster in others:
            del since[cluster]
