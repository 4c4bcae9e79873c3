"""Scheduler filters: each says why a cluster cannot take a binding, or None.

They mirror Karmada's in-tree filter plugins. Karmada runs them in map order
and stops at the first failure; we run all of them in a fixed order and keep
every reason, so "why was this cluster not chosen" has a complete answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from karmada.api.binding import ResourceBindingSpec, ResourceBindingStatus
from karmada.api.policy import ClusterAffinity, FieldSelector, Placement
from karmada.scheduling.snapshot import ClusterSnapshot
from karmada.selectors.clusters import (
    PROVIDER_FIELD,
    REGION_FIELD,
    ZONE_FIELD,
    ClusterMatcher,
    cluster_matches,
    cluster_zones,
    compile_cluster_affinity,
)
from karmada.selectors.labels import requirement_matches
from karmada.selectors.tolerations import describe_taint, find_untolerated_taint


@dataclass(frozen=True)
class FilterContext:
    """What every filter may read."""

    spec: ResourceBindingSpec
    status: ResourceBindingStatus
    placement: Placement

    @cached_property
    def scheduled(self) -> set[str]:
        """Clusters of the current result."""
        return {c.name for c in self.spec.clusters or []}

    @cached_property
    def affinities(self) -> list[ClusterAffinity] | None:
        """See :func:`observed_affinities`."""
        return observed_affinities(self)

    @cached_property
    def affinity_matchers(self) -> list[ClusterMatcher] | None:
        """The affinities, compiled once per decision."""
        return None if self.affinities is None else [compile_cluster_affinity(a) for a in self.affinities]

    @cached_property
    def affinity_terms(self) -> list[tuple[ClusterAffinity, str]]:
        """The affinities with the names their misses are reported under."""
        return [(a, _term_name(a)) for a in self.affinities or []]

    @cached_property
    def gvk(self) -> tuple[str, str]:
        """The template's apiVersion and kind."""
        return (self.spec.resource.api_version, self.spec.resource.kind)


def is_workload(spec: ResourceBindingSpec) -> bool:
    """Karmada's ``IsWorkload``: replicas, replica requirements or components."""
    return bool((spec.replicas or 0) > 0 or spec.replica_requirements is not None or spec.components)


def api_enablement(ctx: FilterContext, snap: ClusterSnapshot) -> str | None:
    """The cluster must serve the template's group/version and kind (unless already scheduled)."""
    if snap.name in ctx.scheduled:
        return None
    if ctx.gvk in snap.api_kinds:
        return None
    return "cluster(s) did not have the API resource"


def taint_toleration(ctx: FilterContext, snap: ClusterSnapshot) -> str | None:
    """No untolerated NoSchedule/NoExecute taint (unless already scheduled)."""
    if not snap.taints or snap.name in ctx.scheduled:
        return None
    taint = find_untolerated_taint(snap.taints, ctx.placement.cluster_tolerations or [], ("NoSchedule", "NoExecute"))
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


def cluster_affinity(ctx: FilterContext, snap: ClusterSnapshot) -> str | None:
    """The cluster must match the placement's (observed) cluster affinity."""
    matchers = ctx.affinity_matchers
    if matchers is None or any(matches(snap.cluster) for matches in matchers):
        return None
    return "cluster(s) did not match the placement cluster affinity constraint"


def spread_constraint(ctx: FilterContext, snap: ClusterSnapshot) -> str | None:
    """A provider/region/zone spread constraint needs the cluster to have that field."""
    for constraint in ctx.placement.spread_constraints or []:
        field = constraint.spread_by_field
        if field == "provider" and not snap.provider:
            return "cluster(s) did not have provider property"
        if field == "region" and not snap.region:
            return "cluster(s) did not have region property"
        if field == "zone" and not snap.zones:
            return "cluster(s) did not have zones property"
    return None


def cluster_eviction(ctx: FilterContext, snap: ClusterSnapshot) -> str | None:
    """A cluster the binding is being evicted from takes nothing new."""
    if any(t.from_cluster == snap.name for t in ctx.spec.graceful_eviction_tasks or []):
        return "cluster(s) is in the process of eviction"
    return None


Filter = Callable[[FilterContext, ClusterSnapshot], str | None]

FILTERS: tuple[tuple[str, Filter], ...] = (
    ("APIEnablement", api_enablement),
    ("TaintToleration", taint_toleration),
    ("ClusterAffinity", cluster_affinity),
    ("SpreadConstraint", spread_constraint),
    ("ClusterEviction", cluster_eviction),
)


def active_filters(ctx: FilterContext) -> tuple[tuple[str, Filter], ...]:
    """The filters that can fail for this binding (the others always pass), so a
    decision over many clusters runs only what matters."""
    skip = set()
    if ctx.affinities is None:
        skip.add("ClusterAffinity")
    if not any(c.spread_by_field in ("provider", "region", "zone") for c in ctx.placement.spread_constraints or []):
        skip.add("SpreadConstraint")
    if not ctx.spec.graceful_eviction_tasks:
        skip.add("ClusterEviction")
    return tuple((name, check) for name, check in FILTERS if name not in skip)


def run_filters(
    ctx: FilterContext, snap: ClusterSnapshot, filters: tuple[tuple[str, Filter], ...] = FILTERS
) -> list[tuple[str, str]]:
    """``(plugin, reason)`` for every filter the cluster fails; empty when it fits."""
    return [(name, reason) for name, check in filters if (reason := check(ctx, snap)) is not None]


def _term_name(affinity: ClusterAffinity) -> str:
    # a plain ClusterAffinity has no affinityName: looking it up on the model is the slow
    # path (an AttributeError), so it is done once per affinity, not once per cluster
    return getattr(affinity, "affinity_name", None) or "clusterAffinity"


def _affinity_miss(snap: ClusterSnapshot, affinity: ClusterAffinity, term: str) -> dict[str, Any] | None:
    """The first part of one affinity (named ``term``) the cluster fails, in Karmada's match
    order (exclude, labels, fields, names); None when the cluster matches it."""
    cluster = snap.cluster
    name = cluster.metadata.name or ""
    if name in (affinity.exclude or []):
        return {"term": term, "field": "exclude", "requirement": f"exclude {name}"}
    labels = cluster.metadata.labels or {}
    selector = affinity.label_selector
    if selector is not None:
        for key, wanted in sorted((selector.match_labels or {}).items()):
            if labels.get(key) != wanted:
                return _miss(term, "labelSelector", f"{key}={wanted}", key, labels)
        for expression in selector.match_expressions or []:
            key, op, values = expression.key, expression.operator, expression.values or []
            if op not in ("In", "NotIn", "Exists", "DoesNotExist") or not requirement_matches(key, op, values, labels):
                return _miss(term, "labelSelector", _requirement(key, op, values), key, labels)
    if affinity.field_selector is not None:
        spec = cluster.spec
        fields = {k: v for k, v in ((PROVIDER_FIELD, spec.provider), (REGION_FIELD, spec.region)) if v}
        zones = cluster_zones(cluster)
        if zones:
            fields[ZONE_FIELD] = ",".join(zones)
        for req in affinity.field_selector.match_expressions or []:
            values = req.values or []
            if req.key == ZONE_FIELD:
                ok = cluster_matches(
                    cluster,
                    ClusterAffinity(field_selector=FieldSelector(match_expressions=[req])),
                )
            else:
                ok = requirement_matches(req.key, req.operator, values, fields)
            if not ok:
                return _miss(term, "fieldSelector", _requirement(req.key, req.operator, values), req.key, fields)
    names = affinity.cluster_names or []
    if names and name not in names:
        return {"term": term, "field": "clusterNames", "requirement": f"clusterNames [{','.join(names)}]"}
    return None


def _requirement(key: str, operator: str, values: list[str]) -> str:
    return f"{key} {operator} [{','.join(values)}]" if values else f"{key} {operator}"


def _miss(term: str, field: str, requirement: str, key: str, have: Mapping[str, str]) -> dict[str, Any]:
    miss: dict[str, Any] = {"term": term, "field": field, "requirement": requirement, "key": key}
    if key in have:
        miss["value"] = have[key]
    return miss


def affinity_misses(ctx: FilterContext, snap: ClusterSnapshot) -> list[dict[str, Any]]:
    """For a cluster the ClusterAffinity filter rejected: per observed affinity (the term and
    its overflow tiers), the requirement it fails and the cluster's value of that key (absent
    when the cluster lacks it), so "why not here" names the label that differs."""
    found: list[dict[str, Any]] = []
    for affinity, term in ctx.affinity_terms:
        miss = _affinity_miss(snap, affinity, term)
        if miss is not None:
            found.append(miss)
    return found
