"""Scheduler filters: each says why a cluster cannot take a binding, or None.

They mirror Karmada's in-tree filter plugins. Karmada runs them in map order
and stops at the first failure; we run all of them in a fixed order and keep
every reason, so "why was this cluster not chosen" has a complete answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from karmada.api.binding import ResourceBindingSpec, ResourceBindingStatus
from karmada.api.cluster import Cluster
from karmada.api.policy import ClusterAffinity, Placement
from karmada.selectors.clusters import cluster_matches, cluster_zones
from karmada.selectors.tolerations import describe_taint, find_untolerated_taint


@dataclass(frozen=True)
class FilterContext:
    """What every filter may read."""

    spec: ResourceBindingSpec
    status: ResourceBindingStatus
    placement: Placement

    @property
    def scheduled(self) -> set[str]:
        """Clusters of the current result."""
        return {c.name for c in self.spec.clusters or []}


def is_workload(spec: ResourceBindingSpec) -> bool:
    """Karmada's ``IsWorkload``: replicas, replica requirements or components."""
    return bool((spec.replicas or 0) > 0 or spec.replica_requirements is not None or spec.components)


def api_enablement(ctx: FilterContext, cluster: Cluster) -> str | None:
    """The cluster must serve the template's group/version and kind (unless already scheduled)."""
    if cluster.metadata.name in ctx.scheduled:
        return None
    resource = ctx.spec.resource
    status = cluster.status
    for enablement in (status.api_enablements if status else None) or []:
        if enablement.group_version != resource.api_version:
            continue
        if any(r.kind == resource.kind for r in enablement.resources or []):
            return None
    return "cluster(s) did not have the API resource"


def taint_toleration(ctx: FilterContext, cluster: Cluster) -> str | None:
    """No untolerated NoSchedule/NoExecute taint (unless already scheduled)."""
    if cluster.metadata.name in ctx.scheduled:
        return None
    taint = find_untolerated_taint(
        cluster.spec.taints or [], ctx.placement.cluster_tolerations or [], ("NoSchedule", "NoExecute")
    )
    if taint is None:
        return None
    return f"cluster(s) had untolerated taint {{{describe_taint(taint)}}}"


def observed_affinities(ctx: FilterContext) -> list[ClusterAffinity] | None:
    """The affinities a cluster may match: clusterAffinity, or the observed clusterAffinities
    term plus (for workloads) its overflow tiers; None means any cluster."""
    placement = ctx.placement
    if placement.cluster_affinity is not None:
        return [placement.cluster_affinity]
    for term in placement.cluster_affinities or []:
        if term.affinity_name != (ctx.status.scheduler_observed_affinity_name or ""):
            continue
        found: list[ClusterAffinity] = [term]
        if is_workload(ctx.spec):
            found.extend(term.overflow_affinities or [])
        return found
    return None


def cluster_affinity(ctx: FilterContext, cluster: Cluster) -> str | None:
    """The cluster must match the placement's (observed) cluster affinity."""
    affinities = observed_affinities(ctx)
    if affinities is None or any(cluster_matches(cluster, a) for a in affinities):
        return None
    return "cluster(s) did not match the placement cluster affinity constraint"


def spread_constraint(ctx: FilterContext, cluster: Cluster) -> str | None:
    """A provider/region/zone spread constraint needs the cluster to have that field."""
    for constraint in ctx.placement.spread_constraints or []:
        field = constraint.spread_by_field
        if field == "provider" and not cluster.spec.provider:
            return "cluster(s) did not have provider property"
        if field == "region" and not cluster.spec.region:
            return "cluster(s) did not have region property"
        if field == "zone" and not cluster_zones(cluster):
            return "cluster(s) did not have zones property"
    return None


def cluster_eviction(ctx: FilterContext, cluster: Cluster) -> str | None:
    """A cluster the binding is being evicted from takes nothing new."""
    if any(t.from_cluster == cluster.metadata.name for t in ctx.spec.graceful_eviction_tasks or []):
        return "cluster(s) is in the process of eviction"
    return None


Filter = Callable[[FilterContext, Cluster], str | None]

FILTERS: tuple[tuple[str, Filter], ...] = (
    ("APIEnablement", api_enablement),
    ("TaintToleration", taint_toleration),
    ("ClusterAffinity", cluster_affinity),
    ("SpreadConstraint", spread_constraint),
    ("ClusterEviction", cluster_eviction),
)


def run_filters(ctx: FilterContext, cluster: Cluster) -> list[tuple[str, str]]:
    """``(plugin, reason)`` for every filter the cluster fails; empty when it fits."""
    failures: list[tuple[str, str]] = []
    for name, check in FILTERS:
        reason = check(ctx, cluster)
        if reason is not None:
            failures.append((name, reason))
    return failures
