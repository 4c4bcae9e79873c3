"""The general replica estimator: how many more replicas a cluster can take.

It reads the cluster's ``status.resourceSummary`` as Karmada's always-on
``general-estimator`` does: the pod budget is allocatable − allocated −
allocating pods; each requested resource bounds the count by
``available / request`` (CPU in milli-units, others in whole units rounded
up). Node constraints are not considered (that needs a per-node estimator).
"""

from __future__ import annotations

from karmada import quantity
from karmada.api.binding import ReplicaRequirements
from karmada.api.cluster import Cluster

MAX_INT32 = 2**31 - 1


def _amount(resources: dict[str, int | str] | None, name: str) -> quantity.Fraction | None:
    if not resources or name not in resources:
        return None
    return quantity.parse(resources[name])


def max_available_replicas(cluster: Cluster, requirements: ReplicaRequirements | None) -> int:
    """Replicas of one pod shape the cluster can still hold (0 without a resource summary)."""
    summary = cluster.status.resource_summary if cluster.status else None
    if summary is None:
        return 0
    pods = 0
    for part, sign in ((summary.allocatable, 1), (summary.allocated, -1), (summary.allocating, -1)):
        amount = _amount(part, "pods")
        if amount is not None:
            pods += sign * quantity.value(amount)
    if pods <= 0:
        return 0
    best = pods
    if requirements is None:
        return min(best, MAX_INT32)
    for name, requested in (requirements.resource_request or {}).items():
        wanted = quantity.parse(requested)
        if quantity.value(wanted) <= 0:
            continue
        allocatable = _amount(summary.allocatable, name)
        if allocatable is None:
            return 0
        available = allocatable
        for part in (summary.allocated, summary.allocating):
            used = _amount(part, name)
            if used is not None:
                available -= used
        if quantity.value(available) <= 0:
            return 0
        if name == "cpu":
            fits = quantity.milli_value(available) // quantity.milli_value(wanted)
        else:
            fits = quantity.value(available) // quantity.value(wanted)
        best = min(best, fits)
    return min(best, MAX_INT32)
