"""ClusterTaintPolicy: which taints a Cluster gets from its conditions
(Karmada's cluster-taint-policy-controller, reference 1.8).

Policies apply in ``creationTimestamp`` order (name breaks ties). Within one
policy, ``addOnConditions`` are ANDed and an empty list never matches; when
they match, the policy's taints missing from the cluster (same key and effect)
are appended with ``timeAdded``; when ``removeOnConditions`` match, they are
removed. Deleting a policy removes nothing.

Safer than Karmada on one point: when *adding*, a condition whose status is
``Unknown`` matches only a rule that names ``Unknown`` with ``In``. So
``Ready NotIn [True]`` taints a cluster whose agent reported Ready=False, but
not one that merely went silent; a policy that wants the latter says
``Ready In [False, Unknown]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from karmada.api.cluster import Cluster
from karmada.api.taint_policy import ClusterTaintPolicy, MatchCondition, TaintSpec
from karmada.selectors.clusters import cluster_matches

Obj = dict[str, Any]
UNKNOWN = "Unknown"


def _matches(condition: MatchCondition, status: str, *, adding: bool) -> bool:
    if condition.operator == "In":
        return status in condition.status_values
    if condition.operator == "NotIn":
        if adding and status == UNKNOWN:
            return False
        return status not in condition.status_values
    return False  # an unsupported operator never matches (Karmada logs it)


def condition_matches(
    conditions: Sequence[Obj] | None, match_conditions: Sequence[MatchCondition] | None, *, adding: bool = False
) -> bool:
    """All ``match_conditions`` hold on the cluster's ``conditions`` (an empty list: never)."""
    if not match_conditions:
        return False
    for match in match_conditions:
        found = [c for c in conditions or [] if c.get("type") == match.condition_type]
        if not any(_matches(match, str(c.get("status", "")), adding=adding) for c in found):
            return False
    return True


def _same(taint: Obj, spec: TaintSpec) -> bool:
    return taint.get("key") == spec.key and taint.get("effect") == spec.effect


def policy_order(policy: ClusterTaintPolicy) -> tuple[str, str]:
    return (policy.metadata.creation_timestamp or "", policy.metadata.name or "")


def policy_taints(cluster: Obj, policies: Sequence[ClusterTaintPolicy], now: str) -> list[Obj] | None:
    """The cluster's taints after every policy, or None when they stay as they are."""
    current: list[Obj] = list((cluster.get("spec") or {}).get("taints") or [])
    taints = [dict(t) for t in current]
    conditions = (cluster.get("status") or {}).get("conditions") or []
    model: Cluster | None = None
    for policy in sorted(policies, key=policy_order):
        spec = policy.spec
        if spec.target_clusters is not None:
            model = model or Cluster.from_dict(cluster)
        if spec.target_clusters is not None and model is not None and not cluster_matches(model, spec.target_clusters):
            continue
        if condition_matches(conditions, spec.add_on_conditions, adding=True):
            for wanted in spec.taints:
                if not any(_same(t, wanted) for t in taints):
                    taint: Obj = {"key": wanted.key, "effect": wanted.effect, "timeAdded": now}
                    if wanted.value:
                        taint["value"] = wanted.value
                    taints.append(taint)
        if condition_matches(conditions, spec.remove_on_conditions):
            for wanted in spec.taints:
                for index, taint in enumerate(taints):
                    if _same(taint, wanted):
                        del taints[index]
                        break
    return None if taints == current else taints


def taints_message(taints: Sequence[Obj]) -> str:
    """Karmada's ``GenerateTaintsMessage``: ``cluster now has taints([{Key:k,Value:v,Effect:e},...])``."""
    if not taints:
        return "cluster now does not have taints"
    parts = []
    for taint in taints:
        value = f"Value:{taint['value']}," if taint.get("value") else ""
        parts.append(f"{{Key:{taint.get('key', '')},{value}Effect:{taint.get('effect', '')}}}")
    return f"cluster now has taints([{','.join(parts)}])"
