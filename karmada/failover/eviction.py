"""Evicting a binding from a cluster (Karmada's taint manager rules and
``GracefulEvictCluster``), plus the check Karmada lacks: that some other
cluster will take the workload.

Timing (``eviction_delay``): every NoExecute taint of the cluster must be
tolerated by the binding's applied placement (for each taint, the first
toleration that tolerates it is the one used), else eviction is due now. With
all tolerated, each used toleration with ``tolerationSeconds`` fires at the
tolerated taint's ``timeAdded`` plus those seconds; the earliest fires first;
tolerations without seconds tolerate forever.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from karmada.api.binding import ResourceBindingSpec, ResourceBindingStatus
from karmada.api.cluster import Cluster
from karmada.api.core import Taint, Toleration
from karmada.api.policy import FailoverBehavior
from karmada.scheduling import ScheduleFailure, schedule
from karmada.selectors.tolerations import tolerates
from karmada.timestamps import parse_time

Obj = dict[str, Any]
GRACEFULLY = "Gracefully"
DIRECTLY = "Directly"
NEVER = "Never"


def no_execute_taints(cluster: Mapping[str, Any]) -> list[Taint]:
    return [
        Taint.from_dict(t, path="spec.taints")
        for t in (cluster.get("spec") or {}).get("taints") or []
        if isinstance(t, dict) and t.get("effect") == "NoExecute"
    ]


def matching_tolerations(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> list[Toleration] | None:
    """The toleration used for each taint, or None when some taint is not tolerated."""
    used: list[Toleration] = []
    for taint in taints:
        first = next((t for t in tolerations if tolerates(t, taint)), None)
        if first is None:
            return None
        used.append(first)
    return used


def eviction_delay(taints: Sequence[Taint], tolerations: Sequence[Toleration], now: datetime.datetime) -> float | None:
    """Seconds until the binding must leave (0: now), or None: tolerated for ever."""
    if not taints:
        return None
    used = matching_tolerations(taints, tolerations)
    if used is None or not used:
        return 0.0
    triggers: list[datetime.datetime] = []
    for toleration in used:
        if toleration.toleration_seconds is None:
            continue
        for taint in taints:
            if taint.time_added is None or not tolerates(toleration, taint):
                continue
            triggers.append(parse_time(taint.time_added) + datetime.timedelta(seconds=toleration.toleration_seconds))
    if not triggers:
        return None
    return max(0.0, (min(triggers) - now).total_seconds())


def purge_mode_for_cluster_failover(failover: FailoverBehavior | None, default: str) -> str:
    """The policy's ``failover.cluster.purgeMode`` (empty: Gracefully), else the controller's
    ``--no-execute-taint-eviction-purge-mode`` (anything but Directly: Gracefully)."""
    if failover is not None and failover.cluster is not None:
        return failover.cluster.purge_mode or GRACEFULLY
    return DIRECTLY if default == DIRECTLY else GRACEFULLY


@dataclass(frozen=True)
class EvictionTask:
    """What one eviction records (``TaskOptions``)."""

    purge_mode: str
    reason: str
    producer: str
    message: str | None = None
    grace_period_seconds: int | None = None
    suppress_deletion: bool | None = None
    preserved_label_state: Mapping[str, str] | None = None
    clusters_before_failover: Sequence[str] | None = None


def evict_cluster(spec: Mapping[str, Any], cluster: str, task: EvictionTask) -> Obj | None:
    """The binding spec without ``cluster`` in ``clusters`` and with its eviction task
    (none added when one for the cluster exists), or None when it does not target ``cluster``."""
    clusters = list(spec.get("clusters") or [])
    index = next((i for i, c in enumerate(clusters) if c.get("name") == cluster), None)
    if index is None:
        return None
    updated: Obj = copy.deepcopy(dict(spec))
    evicted = clusters.pop(index)
    updated["clusters"] = copy.deepcopy(clusters)
    tasks = updated.setdefault("gracefulEvictionTasks", [])
    if any(t.get("fromCluster") == cluster for t in tasks):
        return updated
    entry: Obj = {"fromCluster": cluster, "purgeMode": task.purge_mode}
    if int(evicted.get("replicas") or 0) > 0:
        entry["replicas"] = int(evicted["replicas"])
    entry["reason"] = task.reason
    if task.message:
        entry["message"] = task.message
    entry["producer"] = task.producer
    if task.grace_period_seconds is not None:
        entry["gracePeriodSeconds"] = task.grace_period_seconds
    if task.suppress_deletion is not None:
        entry["suppressDeletion"] = task.suppress_deletion
    if task.preserved_label_state:
        entry["preservedLabelState"] = dict(task.preserved_label_state)
    if task.clusters_before_failover:
        entry["clustersBeforeFailover"] = list(task.clusters_before_failover)
    tasks.append(entry)
    return updated


def replacement_problem(
    spec: Mapping[str, Any], status: Mapping[str, Any] | None, clusters: Sequence[Mapping[str, Any]]
) -> str | None:
    """Why no cluster would take the workload once ``spec`` (an eviction applied) is
    scheduled, or None when one would. Karmada evicts anyway and leaves an empty target
    list (karmada-io/karmada#7455); we keep the workload where it is instead."""
    remaining = [c.get("name") for c in spec.get("clusters") or []]
    if remaining:
        return None  # other clusters still serve it (Divided, or several Duplicated copies)
    models = [Cluster.from_dict(c) for c in clusters if not (c.get("metadata") or {}).get("deletionTimestamp")]
    try:
        result = schedule(
            ResourceBindingSpec.from_dict(spec, path="spec"),
            ResourceBindingStatus.from_dict(status or {}, path="status"),
            models,
        )
    except ScheduleFailure as failure:
        return str(failure.error)
    if not result.clusters:
        return "no cluster fits"
    return None
