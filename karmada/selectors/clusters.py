"""Whether a Cluster matches a ClusterAffinity (Karmada's ``util.ClusterMatches``).

Order: ``exclude`` rejects, then the label selector, then the field selector
(``provider``/``region`` as labels; ``zone`` against the cluster's zones), then
``clusterNames`` (empty means any).
"""

from __future__ import annotations

from collections.abc import Callable

from karmada.api.cluster import Cluster
from karmada.api.policy import ClusterAffinity
from karmada.selectors.labels import label_selector_matches, requirement_matches

ZONE_FIELD = "zone"
PROVIDER_FIELD = "provider"
REGION_FIELD = "region"


def cluster_zones(cluster: Cluster) -> list[str]:
    """The cluster's zones; the deprecated ``zone`` stands in when ``zones`` is empty."""
    if cluster.spec.zones:
        return list(cluster.spec.zones)
    return [cluster.spec.zone] if cluster.spec.zone else []


def _zones_match(operator: str, values: list[str], zones: list[str]) -> bool:
    if operator == "In":
        return any(zone in values for zone in zones)
    if operator == "NotIn":
        return not any(zone in values for zone in zones)
    if operator == "Exists":
        return bool(zones)
    if operator == "DoesNotExist":
        return not zones
    return False


def cluster_matches(cluster: Cluster, affinity: ClusterAffinity) -> bool:
    """Karmada's cluster-affinity match."""
    name = cluster.metadata.name or ""
    if name in (affinity.exclude or []):
        return False
    if affinity.label_selector is not None and not label_selector_matches(
        affinity.label_selector, cluster.metadata.labels
    ):
        return False
    if affinity.field_selector is not None:
        fields: dict[str, str] = {}
        if cluster.spec.provider:
            fields[PROVIDER_FIELD] = cluster.spec.provider
        if cluster.spec.region:
            fields[REGION_FIELD] = cluster.spec.region
        for term in affinity.field_selector.match_expressions or []:
            values = term.values or []
            if term.key == ZONE_FIELD:
                if not _zones_match(term.operator, values, cluster_zones(cluster)):
                    return False
            elif not requirement_matches(term.key, term.operator, values, fields):
                return False
    names = affinity.cluster_names or []
    return not names or name in names


ClusterMatcher = Callable[[Cluster], bool]


def compile_cluster_affinity(affinity: ClusterAffinity) -> ClusterMatcher:
    """:func:`cluster_matches` prepared once for one affinity, for matching many clusters."""
    exclude = frozenset(affinity.exclude or ())
    names = frozenset(affinity.cluster_names or ())
    selector = affinity.label_selector
    field_terms = (
        [(term.key, term.operator, term.values or []) for term in (affinity.field_selector.match_expressions or [])]
        if affinity.field_selector is not None
        else []
    )

    def matches(cluster: Cluster) -> bool:
        name = cluster.metadata.name or ""
        if name in exclude:
            return False
        if names and name not in names:
            return False
        if selector is not None and not label_selector_matches(selector, cluster.metadata.labels):
            return False
        if field_terms:
            spec = cluster.spec
            fields = {k: v for k, v in ((PROVIDER_FIELD, spec.provider), (REGION_FIELD, spec.region)) if v}
            for key, operator, values in field_terms:
                if key == ZONE_FIELD:
                    if not _zones_match(operator, values, cluster_zones(cluster)):
                        return False
                elif not requirement_matches(key, operator, values, fields):
                    return False
        return True

    return matches
