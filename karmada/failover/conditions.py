"""The binding condition ``Failover`` (our addition; Karmada only records events):
what failover did or why it held back, in words a user can act on.

- ``True``/``Evicted``: the workload left a cluster; the task and its deadline.
- ``True``/``EvictionPending``: an old copy waits for the new placement to be healthy.
- ``False``/``NoClusterFit``: eviction is due but no other cluster fits; the
  workload stays where it is.
- ``False``/``ClusterNotTainted``: a target cluster is not Ready, but without a
  NoExecute taint nothing is evicted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from karmada.clusters.conditions import find, set_condition

Obj = dict[str, Any]
CONDITION_FAILOVER = "Failover"
REASON_EVICTED = "Evicted"
REASON_EVICTION_PENDING = "EvictionPending"
REASON_EVICTION_COMPLETED = "EvictionCompleted"
REASON_NO_CLUSTER_FIT = "NoClusterFit"
REASON_CLUSTER_NOT_TAINTED = "ClusterNotTainted"


def failover_condition_changes(
    status: Obj, wanted: tuple[str, str, str] | None, now: str, *, clear_reasons: Sequence[str] = ()
) -> Obj | None:
    """``status`` with the Failover condition set to ``(status, reason, message)``, or,
    with ``wanted`` None, removed when its reason is one of ``clear_reasons``; None when
    nothing changes."""
    conditions = [dict(c) for c in status.get("conditions") or []]
    if wanted is None:
        current = find(conditions, CONDITION_FAILOVER)
        if current is None or current.get("reason") not in clear_reasons:
            return None
        return {**status, "conditions": [c for c in conditions if c.get("type") != CONDITION_FAILOVER]}
    if not set_condition(conditions, CONDITION_FAILOVER, *wanted, now):
        return None
    return {**status, "conditions": conditions}
