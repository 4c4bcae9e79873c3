"""Replica assignment over the selected clusters (Karmada's ``assignment.go``).

Strategies: Duplicated (every cluster gets all replicas); static weights
(recomputed from scratch each time, deterministic); dynamic weights by
available replicas and Aggregated, both "steady": on scale up only the
delta is placed, on scale down the previous shares shrink proportionally,
and an unchanged count keeps the previous result. A reschedule request
(``rescheduleTriggeredAt`` after ``lastScheduledTime``) recomputes from scratch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from karmada.api.binding import ResourceBindingSpec, ResourceBindingStatus, TargetCluster
from karmada.api.policy import Placement
from karmada.scheduling.dispense import dispense
from karmada.scheduling.errors import UnschedulableError
from karmada.scheduling.spread import ClusterDetail
from karmada.selectors.clusters import cluster_matches

DUPLICATED = "Duplicated"
AGGREGATED = "Aggregated"
STATIC_WEIGHT = "StaticWeight"
DYNAMIC_WEIGHT = "DynamicWeight"


def strategy_of(placement: Placement) -> str:
    """Which assignment strategy a placement asks for.

    An empty ``replicaDivisionPreference`` under Divided is treated as
    Weighted, the value Karmada's webhook fills in.
    """
    rs = placement.replica_scheduling
    if rs is None or rs.replica_scheduling_type == "Duplicated":
        return DUPLICATED
    if rs.replica_division_preference == "Aggregated":
        return AGGREGATED
    if rs.weight_preference is not None and rs.weight_preference.dynamic_weight:
        return DYNAMIC_WEIGHT
    return STATIC_WEIGHT


def reschedule_required(spec: ResourceBindingSpec, status: ResourceBindingStatus) -> bool:
    """``rescheduleTriggeredAt`` is later than ``lastScheduledTime`` (both RFC 3339); never
    before the first success (Karmada's ``RescheduleRequired``)."""
    if not spec.reschedule_triggered_at or not status.last_scheduled_time:
        return False
    return datetime.fromisoformat(spec.reschedule_triggered_at) > datetime.fromisoformat(status.last_scheduled_time)


def _targets(replicas: dict[str, int]) -> list[TargetCluster]:
    return [TargetCluster(name=name, replicas=count) for name, count in replicas.items()]


def _merge(old: Sequence[TargetCluster], new: Sequence[TargetCluster]) -> list[TargetCluster]:
    """Karmada's ``MergeTargetClusters``: add replicas by name; new entries first,
    then old clusters the new result does not mention (Go leaves those in map
    order; we keep their previous order)."""
    if not old:
        return list(new)
    if not new:
        return list(old)
    previous = {c.name: c.replicas or 0 for c in old}
    merged = [TargetCluster(name=c.name, replicas=(c.replicas or 0) + previous.pop(c.name, 0)) for c in new]
    merged.extend(TargetCluster(name=c.name, replicas=c.replicas) for c in old if c.name in previous)
    return merged


@dataclass
class _State:
    candidates: Sequence[ClusterDetail]
    spec: ResourceBindingSpec
    placement: Placement
    strategy: str
    fresh: bool
    uid: str


def _static_weight(state: _State) -> list[TargetCluster]:
    rs = state.placement.replica_scheduling
    wp = rs.weight_preference if rs else None
    weights: dict[str, int] = {}
    if wp is not None and wp.static_weight_list:
        for c in state.candidates:
            weight = max(
                (rule.weight for rule in wp.static_weight_list if cluster_matches(c.cluster, rule.target_cluster)),
                default=0,
            )
            if weight > 0:
                weights[c.name] = weight
    else:
        weights = {c.name: 1 for c in state.candidates}
    if sum(weights.values()) == 0:
        weights = {c.name: 1 for c in state.candidates}
    return _targets(dispense(state.spec.replicas or 0, weights, None, state.uid))


def _divide(
    state: _State, target: int, available: list[TargetCluster], scheduled: list[TargetCluster]
) -> list[TargetCluster]:
    total = sum(c.replicas or 0 for c in available)
    if total < target:
        raise UnschedulableError(f"Clusters available replicas {total} are not enough to schedule.")
    if state.strategy == AGGREGATED:
        prior = {c.name for c in scheduled if (c.replicas or 0) > 0}
        if prior:
            available = [c for c in available if c.name in prior] + [c for c in available if c.name not in prior]
        running = 0
        for index, c in enumerate(available):
            running += c.replicas or 0
            if running >= target:
                available = available[: index + 1]
                break
    weights = {c.name: c.replicas or 0 for c in available}
    return _merge(scheduled, _targets(dispense(target, weights, None, state.uid)))


def _by_replicas_desc(clusters: list[TargetCluster]) -> list[TargetCluster]:
    # Go's sort.Sort is stable for the small lists a binding has (insertion sort up to 12)
    return sorted(clusters, key=lambda c: -(c.replicas or 0))


def _dynamic(state: _State) -> list[TargetCluster]:
    names = {c.name for c in state.candidates}
    scheduled = [c for c in state.spec.clusters or [] if c.name in names]
    assigned = sum(c.replicas or 0 for c in scheduled)
    replicas = state.spec.replicas or 0
    if state.fresh:
        previous = {c.name: c.replicas or 0 for c in scheduled}
        available = [
            TargetCluster(name=c.name, replicas=c.allocatable_replicas + previous.get(c.name, 0))
            for c in state.candidates
        ]
        return _divide(state, replicas, _by_replicas_desc(available), [])
    if assigned > replicas:
        return _divide(state, replicas, _by_replicas_desc(list(scheduled)), [])
    if assigned < replicas:
        available = [TargetCluster(name=c.name, replicas=c.allocatable_replicas) for c in state.candidates]
        return _divide(state, replicas - assigned, _by_replicas_desc(available), scheduled)
    return scheduled


def assign_replicas(
    candidates: Sequence[ClusterDetail],
    spec: ResourceBindingSpec,
    status: ResourceBindingStatus,
    placement: Placement,
) -> list[TargetCluster]:
    """Replicas per selected cluster for one tier; clusters left with 0 are dropped."""
    state = _State(
        candidates=candidates,
        spec=spec,
        placement=placement,
        strategy=strategy_of(placement),
        fresh=reschedule_required(spec, status),
        uid=spec.resource.uid or "",
    )
    if state.strategy == DUPLICATED:
        # built once (not again below): a Duplicated binding over a thousand clusters is scheduled often
        replicas = spec.replicas or 0
        return [TargetCluster(name=c.name, replicas=replicas) for c in candidates] if replicas > 0 else []
    result = _static_weight(state) if state.strategy == STATIC_WEIGHT else _dynamic(state)
    return [TargetCluster(name=c.name, replicas=c.replicas) for c in result if (c.replicas or 0) > 0]


def job_completions(
    completions: int | None, spec: ResourceBindingSpec, targets: Sequence[TargetCluster]
) -> dict[str, int] | None:
    """A Job's ``completions`` per cluster, in proportion to its assigned parallelism.

    Only for Divided placements with replicas (as Karmada's binding controller
    does); None when the Job has no completions or nothing is to be split.
    """
    placement = spec.placement or Placement()
    divided = placement.replica_scheduling is not None and strategy_of(placement) != DUPLICATED
    if completions is None or (spec.replicas or 0) <= 0 or not divided:
        return None
    weights = {t.name: t.replicas or 0 for t in targets}
    return dispense(completions, weights, None, spec.resource.uid or "")
