"""Administrator operations on Cluster objects (``taint``, ``cordon``,
``uncordon``): read, change the taints with the pure rules of
``karmada.clusters.taints``, write back, and retry on a conflicting write."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from karmada.clusters.taints import TaintChange, apply_taint_changes, cordoned
from karmada.kube import KubeClient, KubeError
from karmada.kube.resources import CLUSTERS

Obj = dict[str, Any]


class ClusterNotFound(LookupError):
    def __init__(self, name: str) -> None:
        super().__init__(f'clusters.cluster.karmada.io "{name}" not found')


async def _change(
    client: KubeClient, name: str, compute: Callable[[Obj], list[Obj] | None], dry_run: bool, attempts: int = 5
) -> Obj | None:
    """Apply ``compute`` to the cluster's taints; the stored Cluster, or None when unchanged."""
    for attempt in range(attempts):
        cluster = await client.get_or_none(CLUSTERS, name)
        if cluster is None:
            raise ClusterNotFound(name)
        taints = compute(cluster)
        if taints is None:
            return None
        updated = copy.deepcopy(cluster)
        if taints:
            updated.setdefault("spec", {})["taints"] = taints
        else:
            updated.setdefault("spec", {}).pop("taints", None)
        if dry_run:
            return updated
        try:
            stored: Obj = await client.update(CLUSTERS, updated)
            return stored
        except KubeError as exc:
            if not exc.conflict or attempt == attempts - 1:
                raise
    return None


async def taint(
    client: KubeClient, name: str, changes: list[TaintChange], *, overwrite: bool = False, dry_run: bool = False
) -> tuple[str, Obj | None]:
    """``tainted``/``untainted``/``modified`` and the Cluster written (or that would be)."""
    operation = "unchanged"

    def compute(cluster: Obj) -> list[Obj] | None:
        nonlocal operation
        current = (cluster.get("spec") or {}).get("taints") or []
        taints, operation = apply_taint_changes(current, changes, overwrite=overwrite, owner=f"cluster {name}")
        return taints

    stored = await _change(client, name, compute, dry_run)
    return operation, stored


async def cordon(client: KubeClient, name: str, *, on: bool, dry_run: bool = False) -> bool:
    """Add (``on``) or remove the unschedulable taint; whether anything changed."""

    def compute(cluster: Obj) -> list[Obj] | None:
        return cordoned((cluster.get("spec") or {}).get("taints") or [], on)

    return await _change(client, name, compute, dry_run) is not None
