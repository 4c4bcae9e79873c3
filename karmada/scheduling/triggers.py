"""When the scheduler acts on a binding: Karmada's queue filters and dequeue checks.

Pure functions over the binding's JSON (as the watch cache holds it) and the
typed spec/status, so the scheduler controller stays a thin shell and every
rule here has a table test. The rules are Karmada's
(``pkg/scheduler/event_handler.go``, ``scheduler.go``, ``helper.go``):

* a binding is the scheduler's when it carries a (Cluster)PropagationPolicy
  permanent-id label or ``binding.karmada.io/managed-by``, names this
  scheduler (empty means ``default-scheduler``) and is not suspended;
* it is queued on add and on updates that change ``metadata.generation``;
  a Cluster update queues it when the cluster starts deleting or changes its
  labels or generation (any spec change) and matches the binding's affinity;
* on dequeue it is scheduled for the first of :func:`schedule_reason`'s
  reasons that holds, otherwise only ``schedulerObservedGeneration`` is
  brought up to date.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Final

from karmada.api.binding import ResourceBindingSpec, ResourceBindingStatus
from karmada.api.keys import (
    BINDING_MANAGED_BY_LABEL,
    CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    DEFAULT_SCHEDULER_NAME,
    PROPAGATION_POLICY_PERMANENT_ID_LABEL,
)
from karmada.api.policy import ClusterAffinity, Placement
from karmada.scheduling.filters import is_workload

Obj = dict[str, Any]

# Why a binding is scheduled (the log line names it; Karmada logs the same cases).
PLACEMENT_CHANGED: Final = "placement changed"
REPLICAS_CHANGED: Final = "replicas scaled down or scaled up"
RESCHEDULE_TRIGGERED: Final = "explicitly triggered reschedule"
ALWAYS_SCHEDULED: Final = "scheduling type is duplicated"
TARGET_CLUSTER_DELETING: Final = "some scheduled clusters are deleted"


def _labels(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def claimed(obj: Obj) -> bool:
    """Created for a policy or by another Karmada feature (else nobody asked to schedule it)."""
    labels = _labels(obj)
    return bool(
        labels.get(PROPAGATION_POLICY_PERMANENT_ID_LABEL)
        or labels.get(CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL)
        or labels.get(BINDING_MANAGED_BY_LABEL)
    )


def scheduler_name_of(spec: Obj) -> str:
    """The binding's scheduler; empty means the default one."""
    return spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME


def scheduling_suspended(spec: Obj) -> bool:
    return bool((spec.get("suspension") or {}).get("scheduling"))


def ours(obj: Obj, scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> bool:
    """Karmada's binding event filter: claimed, for this scheduler, not suspended."""
    spec = obj.get("spec") or {}
    return claimed(obj) and scheduler_name_of(spec) == scheduler_name and not scheduling_suspended(spec)


def generation(obj: Obj) -> int:
    return int((obj.get("metadata") or {}).get("generation") or 0)


def binding_event_needs_schedule(kind: str, obj: Obj, old: Obj | None) -> bool:
    """Add, or an update that changed the spec (generation); status-only writes do not count.
    A resync replays the same object (old is obj): nothing changed, nothing to do."""
    if kind == "ADDED":
        return True
    if kind != "MODIFIED" or old is None:
        return False
    return generation(obj) != generation(old)


def cluster_event_needs_requeue(kind: str, obj: Obj, old: Obj | None) -> bool:
    """A Cluster update that may change where bindings go: deletion started, labels changed,
    or the generation moved (taints, provider, region, zones...). Adds and deletes do not
    requeue (Karmada's behaviour: a new cluster is picked up when its spec first changes)."""
    if kind != "MODIFIED" or old is None:
        return False
    new_meta, old_meta = obj.get("metadata") or {}, old.get("metadata") or {}
    if new_meta.get("deletionTimestamp") and not old_meta.get("deletionTimestamp"):
        return True
    if (new_meta.get("labels") or {}) != (old_meta.get("labels") or {}):
        return True
    return generation(obj) != generation(old)


def affinity_index(placement: Placement, observed: str | None) -> int:
    """Index of the observed ``clusterAffinities`` term (0 when unknown)."""
    if not observed:
        return 0
    for index, term in enumerate(placement.cluster_affinities or []):
        if term.affinity_name == observed:
            return index
    return 0


class AnyCluster:
    """Marker: every cluster change concerns the binding."""


ANY_CLUSTER: Final = AnyCluster()


def affinity_for_cluster_events(
    placement: Placement | None, status: ResourceBindingStatus, binding_generation: int
) -> ClusterAffinity | AnyCluster:
    """The affinity a changed cluster must match for the binding to be requeued.

    No affinity means any cluster. With ``clusterAffinities`` it is the observed
    term; a binding whose scheduling result is not yet observed (generation ahead
    of ``schedulerObservedGeneration``) is requeued by any cluster change, so the
    event cannot be lost while the binding waits in the queue.
    """
    placement = placement or Placement()
    if placement.cluster_affinities is not None:
        if (status.scheduler_observed_generation or 0) != binding_generation or not placement.cluster_affinities:
            return ANY_CLUSTER
        return placement.cluster_affinities[affinity_index(placement, status.scheduler_observed_affinity_name)]
    return placement.cluster_affinity if placement.cluster_affinity is not None else ANY_CLUSTER


def index_inputs(obj: Obj) -> tuple[Any, ...]:
    """What :func:`affinity_for_cluster_events` depends on, to skip re-indexing on other changes
    (the bindingStatus controller's writes, most of all)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return (
        spec.get("placement"),
        generation(obj),
        status.get("schedulerObservedGeneration"),
        status.get("schedulerObservingAffinityName"),
    )


def _normal(value: Any) -> Any:
    """JSON with Go's omitempty collapse of empty lists, maps and nulls, for comparison."""
    if isinstance(value, dict):
        items = {k: _normal(v) for k, v in value.items()}
        return {k: v for k, v in items.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def placement_json(placement: Obj | None) -> str:
    """The ``policy.karmada.io/applied-placement`` value for a placement: compact JSON."""
    return json.dumps(_normal(placement or {}), separators=(",", ":"), ensure_ascii=False)


def _term(terms: Any, name: str) -> Any:
    for term in terms or []:
        if isinstance(term, dict) and (term.get("affinityName") or "") == name:
            return term
    return None


def placement_changed(placement: Obj | None, applied: str | None, observed_affinity: str | None) -> bool:
    """The placement differs from the one last scheduled (Karmada's ``placementChanged``).

    A missing annotation is a change; one that does not parse is not (Karmada logs and
    moves on). Outside ``clusterAffinities`` any difference counts; inside it only the
    term the scheduler is observing is compared, so adding or editing a backup term does
    not move a binding that is happy on the primary.
    """
    if not applied:
        return True
    try:
        previous = json.loads(applied)
    except ValueError:
        return False
    if not isinstance(previous, dict):
        return False
    current, previous = _normal(placement or {}), _normal(previous)
    if current == previous:
        return False
    for field in ("clusterAffinity", "clusterTolerations", "spreadConstraints", "replicaScheduling"):
        if current.get(field) != previous.get(field):
            return True
    if not observed_affinity:
        return True
    now, then = (
        _term(current.get("clusterAffinities"), observed_affinity),
        _term(previous.get("clusterAffinities"), observed_affinity),
    )
    return now is None or then is None or now != then


def replicas_changed(spec: ResourceBindingSpec) -> bool:
    """Karmada's ``IsBindingReplicasChanged``; only with a ``replicaScheduling`` strategy."""
    placement = spec.placement or Placement()
    strategy = placement.replica_scheduling
    if strategy is None:
        return False
    replicas = spec.replicas or 0
    clusters = spec.clusters or []
    if strategy.replica_scheduling_type == "Duplicated":
        return any((c.replicas or 0) != replicas for c in clusters)
    if strategy.replica_scheduling_type == "Divided":
        return sum(c.replicas or 0 for c in clusters) != replicas
    return False


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def reschedule_requested(spec: ResourceBindingSpec, status: ResourceBindingStatus) -> bool:
    """``rescheduleTriggeredAt`` after ``lastScheduledTime``; never before a first success
    (Karmada: that first schedule is still to come and will take the request into account)."""
    if not spec.reschedule_triggered_at or not status.last_scheduled_time:
        return False
    return _time(spec.reschedule_triggered_at) > _time(status.last_scheduled_time)


def always_scheduled(spec: ResourceBindingSpec) -> bool:
    """Non-workloads and Duplicated workloads are scheduled on every dequeue."""
    placement = spec.placement or Placement()
    duplicated = placement.replica_scheduling is None or placement.replica_scheduling.replica_scheduling_type == (
        "Duplicated"
    )
    return not is_workload(spec) or duplicated


def schedule_reason(
    placement: Obj | None,
    applied_placement: str | None,
    spec: ResourceBindingSpec,
    status: ResourceBindingStatus,
    deleting_clusters: set[str] | frozenset[str],
) -> str | None:
    """Why the binding must be scheduled now (checked in Karmada's order), or None."""
    if placement_changed(placement, applied_placement, status.scheduler_observed_affinity_name):
        return PLACEMENT_CHANGED
    if replicas_changed(spec):
        return REPLICAS_CHANGED
    if reschedule_requested(spec, status):
        return RESCHEDULE_TRIGGERED
    if always_scheduled(spec):
        return ALWAYS_SCHEDULED
    if any(c.name in deleting_clusters for c in spec.clusters or []):
        return TARGET_CLUSTER_DELETING
    return None


def parse_binding(obj: Obj) -> tuple[ResourceBindingSpec, ResourceBindingStatus]:
    """The typed spec and status of a binding; raises ``karmada.api.errors.APIValidationError``."""
    spec = ResourceBindingSpec.from_dict(obj.get("spec") or {}, path="spec")
    status = ResourceBindingStatus.from_dict(obj.get("status") or {}, path="status")
    return spec, status


__all__ = [
    "ALWAYS_SCHEDULED",
    "ANY_CLUSTER",
    "PLACEMENT_CHANGED",
    "REPLICAS_CHANGED",
    "RESCHEDULE_TRIGGERED",
    "TARGET_CLUSTER_DELETING",
    "AnyCluster",
    "affinity_for_cluster_events",
    "affinity_index",
    "always_scheduled",
    "binding_event_needs_schedule",
    "claimed",
    "cluster_event_needs_requeue",
    "generation",
    "index_inputs",
    "ours",
    "parse_binding",
    "placement_changed",
    "placement_json",
    "replicas_changed",
    "reschedule_requested",
    "schedule_reason",
]
