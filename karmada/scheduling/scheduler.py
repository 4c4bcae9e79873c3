"""The scheduling decision: ``(binding spec, status, clusters) -> placement``.

A pure function of its inputs (no I/O, no clock, no randomness), so the
scheduler controller only reads caches and writes the result. Steps, as in
Karmada's generic scheduler: drop clusters being deleted; filter; score
(ClusterLocality: 100 for clusters already in the result); estimate what each
cluster can still hold; select under spread constraints; assign replicas (by
overflow tier when the observed ``clusterAffinities`` term has overflow
affinities). With ``clusterAffinities`` the terms are tried in order from the
observed one (from the first on a reschedule request) until one schedules.

Every cluster gets a :class:`ClusterDecision` saying why it was filtered, or
its score, capacity and replicas, so "why did it go there" can be answered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from karmada.api.binding import (
    ReplicaRequirements,
    ResourceBindingSpec,
    ResourceBindingStatus,
    TargetCluster,
)
from karmada.api.cluster import Cluster
from karmada.api.policy import Placement
from karmada.scheduling.assignment import STATIC_WEIGHT, assign_replicas, reschedule_required, strategy_of
from karmada.scheduling.errors import FitError, ScheduleError, UnschedulableError
from karmada.scheduling.estimator import MAX_INT32, general_estimate
from karmada.scheduling.filters import FilterContext, active_filters, affinity_misses, run_filters
from karmada.scheduling.snapshot import ClusterSnapshot
from karmada.scheduling.spread import ClusterDetail, select_best_clusters
from karmada.selectors.clusters import cluster_matches

MAX_CLUSTER_SCORE = 100
MIN_CLUSTER_SCORE = 0
NOT_AN_OVERFLOW_TIER = 1000

Estimator = Callable[[ClusterSnapshot, ReplicaRequirements | None], int | None]
"""Replicas a cluster can still hold, or None when the estimator cannot tell."""

GENERAL_ESTIMATOR: Estimator = general_estimate


@dataclass
class ClusterDecision:
    """What the scheduler concluded about one cluster."""

    name: str
    filtered: list[tuple[str, str]] = field(default_factory=list)  # (plugin, reason)
    score: int | None = None
    allocatable_replicas: int | None = None
    available_replicas: int | None = None
    overflow_order: int | None = None
    selected: bool = False
    replicas: int | None = None
    weight: int | None = None  # static weighted division: the cluster's weight
    affinity_misses: list[dict[str, Any]] = field(default_factory=list)  # see filters.affinity_misses

    @property
    def feasible(self) -> bool:
        """Passed every filter."""
        return not self.filtered and self.score is not None


@dataclass
class ScheduleResult:
    """The new ``spec.clusters``, the observed affinity term, and a decision per cluster."""

    clusters: list[TargetCluster]
    affinity_name: str | None
    decisions: dict[str, ClusterDecision]
    # clusterAffinities terms tried before the one that scheduled: (index, error)
    term_failures: list[tuple[int, ScheduleError]] = field(default_factory=list)


class ScheduleFailure(ScheduleError):
    """A failed attempt, with the error Karmada would report and the per-cluster decisions."""

    def __init__(self, error: ScheduleError, decisions: dict[str, ClusterDecision], affinity_name: str | None):
        self.error = error
        self.decisions = decisions
        self.affinity_name = affinity_name
        self.term_failures: list[tuple[int, ScheduleError]] = []  # clusterAffinities: every term's error
        self.reason = error.reason
        super().__init__(str(error))


def _overflow_order(cluster: Cluster, placement: Placement, observed: str | None) -> int:
    if placement.cluster_affinity is not None or not placement.cluster_affinities:
        return 0
    for term in placement.cluster_affinities:
        if term.affinity_name == (observed or ""):
            if cluster_matches(cluster, term):
                return 0
            for index, overflow in enumerate(term.overflow_affinities or []):
                if cluster_matches(cluster, overflow):
                    return index + 1
            return NOT_AN_OVERFLOW_TIER
    return NOT_AN_OVERFLOW_TIER


def _static_weight(cluster: Cluster, placement: Placement) -> int | None:
    # the weight assignment divides by (largest matching rule, 0 when none), kept for explanations
    rs = placement.replica_scheduling
    wp = rs.weight_preference if rs is not None else None
    if strategy_of(placement) != STATIC_WEIGHT or wp is None or not wp.static_weight_list:
        return None
    return max((r.weight for r in wp.static_weight_list if cluster_matches(cluster, r.target_cluster)), default=0)


def _has_static_weights(placement: Placement) -> bool:
    """Whether :func:`_static_weight` can give anything but None for this placement."""
    rs = placement.replica_scheduling
    wp = rs.weight_preference if rs is not None else None
    return strategy_of(placement) == STATIC_WEIGHT and wp is not None and bool(wp.static_weight_list)


def _overflow_enabled(placement: Placement, observed: str | None) -> bool:
    if placement.cluster_affinity is not None or placement.cluster_affinities is None or not observed:
        return False
    return any(
        term.affinity_name == observed and term.overflow_affinities is not None for term in placement.cluster_affinities
    )


def _estimate(
    clusters: Sequence[ClusterSnapshot], spec: ResourceBindingSpec, estimators: Sequence[Estimator]
) -> list[int]:
    if (spec.replicas or 0) == 0 and not spec.components:
        return [MAX_INT32] * len(clusters)
    results: list[int] = []
    for cluster in clusters:
        best = MAX_INT32
        for estimator in estimators:
            estimate = estimator(cluster, spec.replica_requirements)
            if estimate is not None and estimate < best:
                best = estimate
        results.append(spec.replicas or 0 if best == MAX_INT32 else best)
    return results


def _schedule_once(
    *,
    spec: ResourceBindingSpec,
    status: ResourceBindingStatus,
    placement: Placement,
    clusters: Sequence[ClusterSnapshot],
    estimators: Sequence[Estimator],
    enable_empty_workload_propagation: bool,
) -> tuple[list[TargetCluster], dict[str, ClusterDecision]]:
    decisions: dict[str, ClusterDecision] = {}
    ctx = FilterContext(spec=spec, status=status, placement=placement)
    feasible: list[ClusterSnapshot] = []
    filters = active_filters(ctx)
    for snap in clusters:
        decision = decisions[snap.name] = ClusterDecision(snap.name)
        if snap.deleting:
            decision.filtered.append(("ClusterDeletion", "cluster(s) is being deleted"))
            continue
        decision.filtered = run_filters(ctx, snap, filters)
        if not decision.filtered:
            feasible.append(snap)
        elif any(plugin == "ClusterAffinity" for plugin, _ in decision.filtered):
            decision.affinity_misses = affinity_misses(ctx, snap)
    if not feasible:
        # Karmada's filters stop at a cluster's first failure, so its message counts one
        # reason per cluster; the decisions keep all of them
        reasons = {n: [d.filtered[0][1]] for n, d in decisions.items() if d.filtered}
        raise ScheduleFailure(FitError(len(clusters), reasons), decisions, status.scheduler_observed_affinity_name)

    previous = {c.name: c.replicas or 0 for c in spec.clusters or []}
    details: list[ClusterDetail] = []
    # decided once per run, not per cluster: most placements have neither
    weighted = _has_static_weights(placement)
    tiered = placement.cluster_affinity is None and bool(placement.cluster_affinities)
    for snap, allocatable in zip(feasible, _estimate(feasible, spec, estimators), strict=True):
        name = snap.name
        score = MAX_CLUSTER_SCORE if previous and name in previous else MIN_CLUSTER_SCORE
        detail = ClusterDetail(
            name=name,
            score=score,
            cluster=snap.cluster,
            overflow_order=_overflow_order(snap.cluster, placement, status.scheduler_observed_affinity_name)
            if tiered
            else 0,
            allocatable_replicas=allocatable,
            available_replicas=allocatable + previous.get(name, 0),
        )
        details.append(detail)
        decision = decisions[name]
        decision.score = score
        decision.allocatable_replicas = allocatable
        decision.available_replicas = detail.available_replicas
        decision.overflow_order = detail.overflow_order
        decision.weight = _static_weight(snap.cluster, placement) if weighted else None

    try:
        selected = select_best_clusters(placement, spec, details)
        result = _assign(selected, spec, status, placement)
    except ScheduleError as error:
        raise ScheduleFailure(error, decisions, status.scheduler_observed_affinity_name) from None
    if enable_empty_workload_propagation:
        present = {c.name for c in result}
        result.extend(TargetCluster(name=c.name, replicas=0) for c in selected if c.name not in present)
    for detail in selected:
        decisions[detail.name].selected = True
    for target in result:
        decisions[target.name].replicas = target.replicas
    return result, decisions


def _assign(
    selected: list[ClusterDetail],
    spec: ResourceBindingSpec,
    status: ResourceBindingStatus,
    placement: Placement,
) -> list[TargetCluster]:
    if not selected:
        raise ScheduleError("no clusters available to schedule")
    if not ((spec.replicas or 0) > 0 or spec.replica_requirements is not None) or len(spec.components or []) > 1:
        return [TargetCluster(name=c.name) for c in selected]
    if not _overflow_enabled(placement, status.scheduler_observed_affinity_name):
        return assign_replicas(selected, spec, status, placement)
    tiers: dict[int, list[ClusterDetail]] = {}
    for detail in selected:
        tiers.setdefault(detail.overflow_order, []).append(detail)
    result: list[TargetCluster] = []
    remaining = spec.replicas or 0
    for order in sorted(tiers):
        tier = tiers[order]
        share = min(remaining, sum(c.available_replicas for c in tier))
        tier_spec = spec.model_copy(update={"replicas": share})
        result.extend(assign_replicas(tier, tier_spec, status, placement))
        remaining -= share
        if remaining <= 0:
            break
    if remaining > 0:
        raise UnschedulableError("Clusters available replicas are not enough to schedule.")
    return result


def schedule(
    spec: ResourceBindingSpec,
    status: ResourceBindingStatus | None,
    clusters: Sequence[Cluster | ClusterSnapshot],
    *,
    estimators: Sequence[Estimator] = (GENERAL_ESTIMATOR,),
    enable_empty_workload_propagation: bool = False,
) -> ScheduleResult:
    """Schedule one binding; raises :class:`ScheduleFailure` (wrapping a classified error).

    ``clusters`` may be prepared :class:`ClusterSnapshot` objects (what the
    scheduler controller keeps) or plain Clusters, snapshotted here.
    """
    status = status or ResourceBindingStatus()
    placement = spec.placement or Placement()
    snapshots = [c if isinstance(c, ClusterSnapshot) else ClusterSnapshot.of(c) for c in clusters]
    ordered = sorted(snapshots, key=lambda c: c.name)
    terms = placement.cluster_affinities or []
    if placement.cluster_affinity is not None or not terms:
        result, decisions = _schedule_once(
            spec=spec,
            status=status,
            placement=placement,
            clusters=ordered,
            estimators=estimators,
            enable_empty_workload_propagation=enable_empty_workload_propagation,
        )
        return ScheduleResult(result, status.scheduler_observed_affinity_name, decisions)

    names = [t.affinity_name for t in terms]
    observed = status.scheduler_observed_affinity_name
    index = names.index(observed) if observed in names else 0
    if reschedule_required(spec, status):
        index = 0
    first: ScheduleFailure | None = None
    failures: list[tuple[int, ScheduleError]] = []
    while index < len(terms):
        attempt = status.model_copy(update={"scheduler_observed_affinity_name": names[index]})
        try:
            result, decisions = _schedule_once(
                spec=spec,
                status=attempt,
                placement=placement,
                clusters=ordered,
                estimators=estimators,
                enable_empty_workload_propagation=enable_empty_workload_propagation,
            )
        except ScheduleFailure as failure:
            first = first or failure
            failures.append((index, failure.error))
            index += 1
            continue
        return ScheduleResult(result, names[index], decisions, failures)
    assert first is not None
    # every term failed: Karmada keeps the previously observed term and reports the first error
    final = ScheduleFailure(first.error, first.decisions, observed)
    final.term_failures = failures
    raise final
