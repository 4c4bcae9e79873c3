"""Which (Cluster)PropagationPolicy claims a resource template (Karmada's detector).

A namespaced template is matched against the PropagationPolicies of its
namespace first; ClusterPropagationPolicies are consulted only when none
matches (cluster-scoped templates only ever see CPPs). Policies being deleted
are skipped. The winner has the highest ``spec.priority``; then the most
specific selector (name > labelSelector > match-all); then the smallest name.

Once claimed, a template stays with its policy (no re-matching, even when a
better policy appears) unless preemption moves it; :func:`claim_of` reads the
claim a template carries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karmada.api.keys import (
    CLUSTER_PROPAGATION_POLICY_ANNOTATION,
    CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    PROPAGATION_POLICY_NAME_ANNOTATION,
    PROPAGATION_POLICY_NAMESPACE_ANNOTATION,
    PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    RESOURCE_TEMPLATE_CLAIMED_BY_LABEL,
)
from karmada.api.policy import ClusterPropagationPolicy, PropagationPolicy
from karmada.selectors.resources import ImplicitPriority, selectors_priority

Policy = PropagationPolicy | ClusterPropagationPolicy


@dataclass(frozen=True)
class Candidate:
    """A policy that matches the template, with the priorities that rank it."""

    policy: Policy
    explicit_priority: int
    implicit_priority: ImplicitPriority

    @property
    def key(self) -> str:
        """``PropagationPolicy ns/name`` or ``ClusterPropagationPolicy name``."""
        meta = self.policy.metadata
        if isinstance(self.policy, PropagationPolicy):
            return f"PropagationPolicy {meta.namespace}/{meta.name}"
        return f"ClusterPropagationPolicy {meta.name}"


@dataclass(frozen=True)
class PolicyMatch:
    """The winning policy and why it won over the other candidates."""

    winner: Candidate
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def reason(self) -> str:
        """A sentence a user can read."""
        others = [c for c in self.candidates if c is not self.winner]
        why = f"{self.winner.key} matches by {self.winner.implicit_priority.name.lower().replace('_', ' ')}"
        why += f" with priority {self.winner.explicit_priority}"
        if others:
            why += "; it beats " + ", ".join(c.key for c in others)
        return why


def _rank(policies: Sequence[Policy], template: Mapping[str, Any]) -> list[Candidate]:
    found: list[Candidate] = []
    for policy in policies:
        if policy.metadata.deletion_timestamp:
            continue
        implicit = selectors_priority(template, policy.spec.resource_selectors)
        if implicit > ImplicitPriority.MISMATCH:
            found.append(Candidate(policy, policy.spec.priority, implicit))
    # highest explicit priority, then highest implicit priority, then smallest name
    found.sort(key=lambda c: (-c.explicit_priority, -c.implicit_priority, c.policy.metadata.name or ""))
    return found


def match_policy(
    template: Mapping[str, Any],
    propagation_policies: Sequence[PropagationPolicy],
    cluster_propagation_policies: Sequence[ClusterPropagationPolicy],
) -> PolicyMatch | None:
    """The policy Karmada would pick for an unclaimed template, or None.

    ``propagation_policies`` may hold policies of any namespace; only those in
    the template's namespace are considered.
    """
    namespace = (template.get("metadata") or {}).get("namespace") or ""
    if namespace:
        local = [p for p in propagation_policies if p.metadata.namespace == namespace]
        ranked = _rank(local, template)
        if ranked:
            return PolicyMatch(ranked[0], ranked)
    ranked = _rank(cluster_propagation_policies, template)
    if ranked:
        return PolicyMatch(ranked[0], ranked)
    return None


@dataclass(frozen=True)
class Claim:
    """The policy a template is claimed by, from its labels and annotations."""

    cluster_wide: bool
    name: str
    namespace: str
    permanent_id: str


def claim_of(template: Mapping[str, Any]) -> Claim | None:
    """A template's claim: both the id label and the name annotation(s) must be present.

    A PropagationPolicy claim wins over leftover ClusterPropagationPolicy
    metadata, as in Karmada's detector.
    """
    metadata = template.get("metadata") or {}
    labels: Mapping[str, str] = metadata.get("labels") or {}
    annotations: Mapping[str, str] = metadata.get("annotations") or {}
    pp_id = labels.get(PROPAGATION_POLICY_PERMANENT_ID_LABEL)
    pp_ns = annotations.get(PROPAGATION_POLICY_NAMESPACE_ANNOTATION)
    pp_name = annotations.get(PROPAGATION_POLICY_NAME_ANNOTATION)
    if pp_id and pp_ns and pp_name:
        return Claim(False, pp_name, pp_ns, pp_id)
    cpp_id = labels.get(CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL)
    cpp_name = annotations.get(CLUSTER_PROPAGATION_POLICY_ANNOTATION)
    if cpp_id and cpp_name:
        return Claim(True, cpp_name, "", cpp_id)
    return None


def claimed_by_other_feature(template: Mapping[str, Any]) -> bool:
    """Templates taken over by another Karmada feature (e.g. MultiClusterService) are ignored."""
    labels = (template.get("metadata") or {}).get("labels") or {}
    return RESOURCE_TEMPLATE_CLAIMED_BY_LABEL in labels
