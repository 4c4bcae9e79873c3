"""What the scheduler needs of a Cluster, computed once per cluster version.

Bindings are scheduled far more often than clusters change, so the scheduler
controller keeps one :class:`ClusterSnapshot` per Cluster (rebuilt when the
Cluster changes) and every decision reads the precomputed API set and free
capacity instead of re-parsing quantity strings.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from karmada import quantity
from karmada.api.cluster import Cluster
from karmada.selectors.clusters import cluster_zones


def _nano(resources: dict[str, int | str] | None, name: str) -> int:
    if not resources or name not in resources:
        return 0
    return quantity.nano_value(resources[name])


@dataclass(frozen=True, eq=False)
class ClusterSnapshot:
    """A Cluster with its API enablements and free capacity precomputed."""

    cluster: Cluster
    name: str
    deleting: bool
    api_kinds: frozenset[tuple[str, str]]
    # allocatable − allocated − allocating per resource, in nano-units; None without a resource summary
    free: dict[str, int] | None
    # what the filters read of every cluster for every binding, read off the model once
    taints: list[Any] | None = None
    provider: str | None = None
    region: str | None = None
    zones: tuple[str, ...] = ()

    @classmethod
    def of(cls, cluster: Cluster) -> ClusterSnapshot:
        """Snapshot one Cluster."""
        status = cluster.status
        kinds = frozenset(
            (enablement.group_version, resource.kind)
            for enablement in (status.api_enablements if status else None) or []
            for resource in enablement.resources or []
        )
        summary = status.resource_summary if status else None
        free: dict[str, int] | None = None
        if summary is not None:
            used = (summary.allocated, summary.allocating)
            free = {
                name: _nano(summary.allocatable, name) - sum(_nano(part, name) for part in used)
                for name in (summary.allocatable or {})
            }
            if "pods" not in free:
                free["pods"] = -sum(_nano(part, "pods") for part in used)
        spec = cluster.spec
        return cls(
            cluster=cluster,
            name=cluster.metadata.name or "",
            deleting=bool(cluster.metadata.deletion_timestamp),
            api_kinds=kinds,
            free=free,
            taints=spec.taints or None,
            provider=spec.provider,
            region=spec.region,
            zones=tuple(cluster_zones(cluster)),
        )

    def without_api_enablements(self) -> ClusterSnapshot:
        """This snapshot holding its Cluster without ``status.apiEnablements``, which only
        :meth:`of` reads (into ``api_kinds``): the enablements are most of a Cluster model's
        memory (44 of 72 KiB for a member serving 58 resources), and the scheduler controller
        keeps a snapshot of every cluster."""
        status = self.cluster.status
        if status is None or status.api_enablements is None:
            return self
        lean = self.cluster.model_copy(update={"status": status.model_copy(update={"api_enablements": None})})
        return dataclasses.replace(self, cluster=lean)
