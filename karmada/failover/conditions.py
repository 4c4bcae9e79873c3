"""Two binding conditions (our addition; Karmada only records events), in
words a user can act on. Each has one writer, so controllers never fight.

``Failover`` (taint manager, application failover controller): what eviction
did or why it held back.

- ``True``/``Evicted``: the workload left a cluster, why, and the purge mode.
- ``False``/``NoClusterFit``: a NoExecute taint asks for eviction but no other
  cluster fits; the workload stays where it is.
- ``False``/``UnhealthyNoClusterFit``: the same for an application unhealthy
  beyond its toleration.
- ``False``/``ClusterNotTainted``: a target cluster is not Ready, but without a
  NoExecute taint nothing is evicted.

``GracefulEviction`` (graceful eviction controller): the old copies.

- ``True``/``EvictionPending``: which tasks wait, for what, and until when.
- ``True``/``EvictionCompleted``: the last task went; where the workload runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from karmada.clusters.conditions import find, set_condition

Obj = dict[str, Any]
CONDITION_FAILOVER = "Failover"
CONDITION_GRACEFUL_EVICTION = "GracefulEviction"
REASON_EVICTED = "Evicted"
REASON_EVICTION_PENDING = "EvictionPending"
REASON_EVICTION_COMPLETED = "EvictionCompleted"
REASON_NO_CLUSTER_FIT = "NoClusterFit"
REASON_UNHEALTHY_NO_CLUSTER_FIT = "UnhealthyNoClusterFit"
REASON_CLUSTER_NOT_TAINTED = "ClusterNotTainted"
# the holds each writer clears once their situation is gone (the taint removed or
# tolerated, the cluster Ready or no longer targeted, the move done, the binding
# no longer judged); a writer never clears the other's hold nor an ``Evicted`` record
TAINT_MANAGER_HOLDS = (REASON_NO_CLUSTER_FIT, REASON_CLUSTER_NOT_TAINTED)
APPLICATION_FAILOVER_HOLDS = (REASON_UNHEALTHY_NO_CLUSTER_FIT,)


def failover_condition_changes(
    status: Obj,
    wanted: tuple[str, str, str] | None,
    now: str,
    *,
    clear_reasons: Sequence[str] = (),
    kind: str = CONDITION_FAILOVER,
) -> Obj | None:
    """``status`` with the condition ``kind`` set to ``(status, reason, message)``, or,
    with ``wanted`` None, removed when its reason is one of ``clear_reasons``; None when
    nothing changes."""
    conditions = [dict(c) for c in status.get("conditions") or []]
    if wanted is None:
        current = find(conditions, kind)
        if current is None or current.get("reason") not in clear_reasons:
            return None
        return {**status, "conditions": [c for c in conditions if c.get("type") != kind]}
    if not set_condition(conditions, kind, *wanted, now):
        return None
    return {**status, "conditions": conditions}
