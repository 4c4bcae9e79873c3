"""Cluster selection under spread constraints (Karmada's ``spreadconstraint`` package).

Candidates are ordered by overflow tier, then score, then available replicas,
then name. Without constraints (or for static-weight division) every candidate
is selected; a ``cluster`` constraint takes the best ``maxGroups`` clusters,
swapping in clusters with more capacity when the replicas would not fit; a
``region`` constraint picks the best set of regions first (a depth-first
search over region groups, as Karmada does), then one cluster per region, then
fills up to the cluster ``maxGroups``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from karmada.api.binding import ResourceBindingSpec
from karmada.api.cluster import Cluster
from karmada.api.policy import Placement, SpreadConstraint
from karmada.scheduling.errors import ScheduleError

WEIGHT_UNIT = 1000
INVALID_REPLICAS = -1


class SpreadError(ScheduleError):
    """No selection satisfies the spread constraints (a ``SchedulerError`` in Karmada)."""


@dataclass(slots=True)
class ClusterDetail:
    """A feasible cluster as the selection and assignment steps see it."""

    name: str
    score: int
    cluster: Cluster
    overflow_order: int = 0
    # what the estimator says the cluster can still take
    allocatable_replicas: int = 0
    # allocatable plus what the binding already has there
    available_replicas: int = 0


def sort_clusters(clusters: list[ClusterDetail], by_available: bool = True) -> None:
    """Karmada's order: overflow tier asc, score desc, available desc, name asc."""
    clusters.sort(key=lambda c: (c.overflow_order, -c.score, -c.available_replicas if by_available else 0, c.name))


@dataclass
class _Group:
    name: str
    clusters: list[ClusterDetail] = field(default_factory=list)
    score: int = 0


def _is_duplicated(placement: Placement) -> bool:
    rs = placement.replica_scheduling
    return rs is None or rs.replica_scheduling_type == "Duplicated"


def _group_score(
    clusters: list[ClusterDetail], spec: ResourceBindingSpec, placement: Placement, min_groups: int
) -> int:
    replicas = spec.replicas or 0
    if _is_duplicated(placement):
        valid = [c for c in clusters if c.available_replicas >= replicas]
        if not valid:
            return 0
        return len(valid) * WEIGHT_UNIT + sum(c.score for c in valid) // len(valid)
    target = math.ceil(replicas / min_groups) if min_groups else 0
    cluster_min = 0
    for sc in placement.spread_constraints or []:
        if sc.spread_by_field == "cluster":
            cluster_min = sc.min_groups or 0
    cluster_min = max(cluster_min, min_groups)
    available = score_sum = count = 0
    for c in clusters:
        available += c.available_replicas
        score_sum += c.score
        count += 1
        if count >= cluster_min and available >= target:
            break
    if available < target:
        return available * WEIGHT_UNIT + score_sum // len(clusters)
    return target * WEIGHT_UNIT + score_sum // count


def ignores_spread_constraints(placement: Placement) -> bool:
    """Divided+Weighted with a static list (or no weight preference) ignores spread constraints."""
    rs = placement.replica_scheduling
    if rs is None or rs.replica_scheduling_type != "Divided" or rs.replica_division_preference != "Weighted":
        return False
    wp = rs.weight_preference
    return wp is None or (bool(wp.static_weight_list) and not wp.dynamic_weight)


def _constraint(placement: Placement, by: str) -> SpreadConstraint | None:
    found = None
    for sc in placement.spread_constraints or []:
        if sc.spread_by_field == by:
            found = sc
    return found


def select_best_clusters(
    placement: Placement, spec: ResourceBindingSpec, clusters: Sequence[ClusterDetail]
) -> list[ClusterDetail]:
    """The clusters that will receive the binding, best first."""
    ordered = list(clusters)
    sort_clusters(ordered)
    constraints = placement.spread_constraints or []
    if not constraints or ignores_spread_constraints(placement):
        return ordered
    need = INVALID_REPLICAS if _is_duplicated(placement) else (spec.replicas or 0)
    region = _constraint(placement, "region")
    by_cluster = _constraint(placement, "cluster")
    if region is not None:
        return _select_by_region(placement, spec, ordered, region, by_cluster or SpreadConstraint())
    if by_cluster is not None:
        return _select_by_cluster(ordered, by_cluster, need)
    raise SpreadError("just support cluster and region spread constraint")


def _select_by_cluster(ordered: list[ClusterDetail], constraint: SpreadConstraint, need: int) -> list[ClusterDetail]:
    if len(ordered) < (constraint.min_groups or 0):
        raise SpreadError("the number of feasible clusters is less than spreadConstraint.MinGroups")
    count = min(len(ordered), constraint.max_groups or 0)
    if need == INVALID_REPLICAS:
        return ordered[:count]
    chosen, rest = ordered[:count], ordered[count:]
    slot = len(chosen) - 1
    while sum(c.available_replicas for c in chosen) < need and slot >= 0:
        best, best_index = chosen[slot].available_replicas, -1
        for index, candidate in enumerate(rest):
            if candidate.available_replicas > best:
                best, best_index = candidate.available_replicas, index
        if best_index >= 0:
            chosen[slot], rest[best_index] = rest[best_index], chosen[slot]
        slot -= 1
    if sum(c.available_replicas for c in chosen) < need or not chosen:
        raise SpreadError(f"no enough resource when selecting {count} clusters")
    return chosen


def _select_by_region(
    placement: Placement,
    spec: ResourceBindingSpec,
    ordered: list[ClusterDetail],
    region: SpreadConstraint,
    by_cluster: SpreadConstraint,
) -> list[ClusterDetail]:
    regions: dict[str, _Group] = {}
    for detail in ordered:
        name = detail.cluster.spec.region
        if name:
            regions.setdefault(name, _Group(name)).clusters.append(detail)
    for group in regions.values():
        group.score = _group_score(group.clusters, spec, placement, region.min_groups or 0)
    if len(regions) < (region.min_groups or 0):
        raise SpreadError("the number of feasible region is less than spreadConstraint.MinGroups")
    picked = _select_groups(
        list(regions.values()), region.min_groups or 0, region.max_groups or 0, by_cluster.min_groups or 0
    )
    if not picked:
        raise SpreadError("the number of clusters is less than the cluster spreadConstraint.MinGroups")
    selected = [g.clusters[0] for g in picked]
    candidates = [c for g in picked for c in g.clusters[1:]]
    need = min(len(candidates) + len(selected), by_cluster.max_groups or 0)
    rest = need - len(selected)
    if rest > 0:
        sort_clusters(candidates)
        selected.extend(candidates[:rest])
    return selected


@dataclass
class _Path:
    id: int
    groups: list[_Group]
    weight: int
    value: int


def _select_groups(groups: list[_Group], minimum: int, maximum: int, target: int) -> list[_Group]:
    """Karmada's region search: feasible sets of groups, best by total weight, then size."""
    if not groups:
        return []
    groups = sorted(groups, key=lambda g: (len(g.clusters), -g.score, g.name))
    paths: list[_Path] = []
    stack: list[_Group] = []
    counter = 0

    def dfs(total: int, begin: int) -> None:
        nonlocal counter
        if total >= target and minimum <= len(stack) <= maximum:
            counter += 1
            chosen = sorted(stack, key=lambda g: (-g.score, g.name))
            paths.append(_Path(counter, chosen, sum(g.score for g in chosen), sum(len(g.clusters) for g in chosen)))
            return
        if len(stack) >= maximum:
            return
        for i in range(begin, len(groups)):
            total += len(groups[i].clusters)
            stack.append(groups[i])
            dfs(total, i + 1)
            if len(groups) == minimum:
                break
            total -= len(groups[i].clusters)
            stack.pop()

    dfs(0, 0)
    if not paths:
        return []
    if len(paths) == 1:
        return paths[0].groups
    paths.sort(key=lambda p: (-p.weight, -p.value, p.id))
    final = paths[0]
    for other in paths[1:]:
        # Karmada prefers a shorter feasible path that is a prefix of the best one
        if len(other.groups) < len(final.groups) and all(
            final.groups[i].name == g.name for i, g in enumerate(other.groups)
        ):
            final = other
    return final.groups
