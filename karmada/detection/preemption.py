"""Karmada's policy preemption rules (feature gate ``PropagationPolicyPreemption``, off by default).

A policy with ``preemption: Always`` takes the templates its *named* selectors
point at from the policy that holds them when: a PropagationPolicy preempts a
PropagationPolicy of strictly lower priority and any ClusterPropagationPolicy
regardless of priority; a ClusterPropagationPolicy preempts only a
ClusterPropagationPolicy of strictly lower priority (never a PropagationPolicy).
"""

from __future__ import annotations

from karmada.matching import Claim


def may_preempt(
    preemptor_cluster_wide: bool,
    preemptor_name: str,
    preemptor_namespace: str,
    preemptor_priority: int,
    claim: Claim | None,
    claimed_priority: int | None,
) -> bool:
    """Whether the preemptor may take a template held by ``claim``.

    ``claimed_priority`` is the holding policy's priority, None when that policy
    is gone (then the normal release and re-match path applies, not preemption).
    """
    if claim is None or claimed_priority is None:
        return False
    same_kind = claim.cluster_wide == preemptor_cluster_wide and claim.name == preemptor_name
    if same_kind and (claim.cluster_wide or claim.namespace == preemptor_namespace):
        return False  # already its own
    if preemptor_cluster_wide:
        return claim.cluster_wide and preemptor_priority > claimed_priority
    if claim.cluster_wide:
        return True
    return preemptor_priority > claimed_priority


def deprioritized_preemptors(old_priority: int, new_priority: int, candidates: list[tuple[str, int, str]]) -> list[str]:
    """Keys of ``(key, priority, preemption)`` candidates to re-examine after a policy's priority fell
    from ``old_priority`` to ``new_priority``: preempting policies strictly between the two, highest first."""
    if new_priority >= old_priority:
        return []
    between = [(p, k) for k, p, mode in candidates if mode == "Always" and new_priority < p < old_priority]
    return [k for _, k in sorted(between, key=lambda item: -item[0])]
