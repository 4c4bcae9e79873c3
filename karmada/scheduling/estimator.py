"""The general replica estimator: how many more replicas a cluster can take.

It reads the cluster's ``status.resourceSummary`` as Karmada's always-on
``general-estimator`` does: the pod budget is allocatable − allocated −
allocating pods; each requested resource bounds the count by
``available / request`` (CPU in milli-units, others in whole units rounded
up). Node constraints are not considered (that needs a per-node estimator).
"""

from __future__ import annotations

import functools

from karmada import quantity
from karmada.api.binding import ReplicaRequirements
from karmada.api.cluster import Cluster
from karmada.scheduling.snapshot import ClusterSnapshot

MAX_INT32 = 2**31 - 1
_MILLI = quantity.NANO // 1000

# a decision estimates every cluster for the same few request strings: parse each once
_nano_value = functools.lru_cache(maxsize=1024, typed=True)(quantity.nano_value)


def general_estimate(snapshot: ClusterSnapshot, requirements: ReplicaRequirements | None) -> int:
    """Replicas of one pod shape the cluster can still hold (0 without a resource summary)."""
    free = snapshot.free
    if free is None:
        return 0
    pods = quantity.ceil_div(free.get("pods", 0), quantity.NANO)
    if pods <= 0:
        return 0
    best = pods
    for name, requested in ((requirements.resource_request if requirements else None) or {}).items():
        wanted = _nano_value(requested)
        if wanted <= 0:
            continue
        if name not in free:
            return 0
        available = free[name]
        if available <= 0:
            return 0
        # CPU compares milli-units, everything else whole units, both rounded up (Go's MilliValue/Value)
        unit = _MILLI if name == "cpu" else quantity.NANO
        best = min(best, quantity.ceil_div(available, unit) // quantity.ceil_div(wanted, unit))
    return min(best, MAX_INT32)


def max_available_replicas(cluster: Cluster, requirements: ReplicaRequirements | None) -> int:
    """:func:`general_estimate` for a Cluster without a prepared snapshot."""
    return general_estimate(ClusterSnapshot.of(cluster), requirements)
