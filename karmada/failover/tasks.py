"""When a graceful eviction task goes (Karmada's graceful-eviction-controller).

A task without ``creationTimestamp`` is stamped and kept. Otherwise:
``suppressDeletion`` true keeps it, false drops it; a task past
``creationTimestamp + (gracePeriodSeconds or the controller's timeout)`` is
dropped; a task is dropped when the binding is scheduled
(``schedulerObservedGeneration == generation``) and every cluster of
``spec.clusters`` has an aggregated status that is Healthy.

Two rules beyond Karmada: while the binding has no target cluster at all, a
timed-out task is kept, since dropping it would delete the only copy of the
workload (the scheduler found nowhere else for it); and a timed-out
``Directly`` task is kept while its cluster still holds the binding's Work
(``purging``), since dropping it would let the binding controller create the
new copy while the old one still runs (Karmada drops it).
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karmada.timestamps import format_time, parse_time

Obj = dict[str, Any]


@dataclass
class TaskAssessment:
    kept: list[Obj]
    evicted: list[str]  # clusters whose task is done (their Works become orphans)
    # clusters whose task outlived its grace period but stays because nothing else serves the workload
    held: list[str] = field(default_factory=list)
    # clusters whose Directly task outlived its grace period but stays until their Work is gone
    purging: list[str] = field(default_factory=list)


def _timeout(task: Mapping[str, Any], default: float) -> float:
    seconds = task.get("gracePeriodSeconds")
    return float(seconds) if seconds is not None else default


def _all_healthy(clusters: Sequence[Mapping[str, Any]], statuses: Sequence[Mapping[str, Any]]) -> bool:
    health = {s.get("clusterName"): s.get("health") for s in statuses}
    return all(health.get(c.get("name")) == "Healthy" for c in clusters)


def assess_tasks(
    binding: Mapping[str, Any], now: datetime.datetime, timeout: float, purging: Collection[str] = ()
) -> TaskAssessment:
    """The tasks to keep and the clusters evicted for good; ``purging``: the clusters that still
    hold a Work of the binding."""
    spec = binding.get("spec") or {}
    status = binding.get("status") or {}
    clusters = spec.get("clusters") or []
    scheduled = status.get("schedulerObservedGeneration") == (binding.get("metadata") or {}).get("generation")
    healthy = scheduled and _all_healthy(clusters, status.get("aggregatedStatus") or [])
    result = TaskAssessment([], [])
    for original in spec.get("gracefulEvictionTasks") or []:
        task = copy.deepcopy(dict(original))
        if not task.get("creationTimestamp"):
            task["creationTimestamp"] = format_time(now)
            result.kept.append(task)
            continue
        suppress = task.get("suppressDeletion")
        if suppress is not None:
            (result.kept.append(task) if suppress else result.evicted.append(task["fromCluster"]))
            continue
        expired = now > parse_time(task["creationTimestamp"]) + datetime.timedelta(seconds=_timeout(task, timeout))
        if expired and not clusters:
            result.kept.append(task)
            result.held.append(task["fromCluster"])
            continue
        if expired and task.get("purgeMode") == "Directly" and task["fromCluster"] in purging:
            result.kept.append(task)
            result.purging.append(task["fromCluster"])
            continue
        if expired or healthy:
            result.evicted.append(task["fromCluster"])
            continue
        result.kept.append(task)
    return result


def next_retry(tasks: Sequence[Mapping[str, Any]], timeout: float, now: datetime.datetime) -> float:
    """Seconds until the earliest task times out (0: none to wait for)."""
    waits = [
        (parse_time(t["creationTimestamp"]) + datetime.timedelta(seconds=_timeout(t, timeout)) - now).total_seconds()
        for t in tasks
        if t.get("suppressDeletion") is None and t.get("creationTimestamp")
    ]
    return max(0.0, min(waits)) if waits else 0.0


def deadline(task: Mapping[str, Any], timeout: float) -> datetime.datetime | None:
    """When the task times out, once stamped (never with ``suppressDeletion``)."""
    if task.get("suppressDeletion") is not None or not task.get("creationTimestamp"):
        return None
    return parse_time(task["creationTimestamp"]) + datetime.timedelta(seconds=_timeout(task, timeout))
