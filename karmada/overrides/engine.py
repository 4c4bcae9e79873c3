"""Which override rules apply to a manifest bound for a cluster, and the result.

Order (Karmada's override manager): every matching ClusterOverridePolicy,
then, for namespaced manifests, every matching OverridePolicy of the
manifest's namespace. Within each kind, policies go by implicit priority
ascending (selector-less or match-all < labelSelector < name), then by name,
so the most specific policy is applied last and wins. Each policy contributes
its rules whose ``targetCluster`` is empty or matches the cluster, in order;
within a rule the overriders apply in the fixed order image, command, args,
labels, annotations, field, plaintext. Any failure stops the manifest for
that cluster with an error naming the policy, the rule and the path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karmada.api.cluster import Cluster
from karmada.api.keys import APPLIED_CLUSTER_OVERRIDES_ANNOTATION, APPLIED_OVERRIDES_ANNOTATION
from karmada.api.override import ClusterOverridePolicy, OverridePolicy, Overriders
from karmada.json_copy import copy_json
from karmada.overrides.overriders import (
    OverriderError,
    apply_command_args,
    apply_field,
    apply_image,
    apply_labels_annotations,
    apply_plaintext,
)
from karmada.selectors.clusters import cluster_matches
from karmada.selectors.resources import ImplicitPriority, selectors_priority

AnyOverridePolicy = OverridePolicy | ClusterOverridePolicy


class OverrideError(ValueError):
    """An override rule failed; names the policy, the rule and the overrider."""

    def __init__(self, policy: str, rule: int, overrider: str, message: str) -> None:
        self.policy = policy
        self.rule = rule
        self.overrider = overrider
        super().__init__(f"{policy}: overrideRules[{rule}].overriders.{overrider}: {message}")


@dataclass(frozen=True)
class AppliedRule:
    """One rule that applied: its policy and overriders."""

    policy: AnyOverridePolicy
    rule_index: int
    overriders: Overriders

    @property
    def policy_name(self) -> str:
        """The policy's name."""
        return self.policy.metadata.name or ""


@dataclass
class OverrideResult:
    """The overridden manifest and the rules applied, cluster-wide first."""

    manifest: dict[str, Any]
    cluster_rules: list[AppliedRule] = field(default_factory=list)
    namespaced_rules: list[AppliedRule] = field(default_factory=list)

    def annotations(self) -> dict[str, str]:
        """``policy.karmada.io/applied-(cluster-)overrides`` for the Work (absent when none applied)."""
        result: dict[str, str] = {}
        for key, rules in (
            (APPLIED_CLUSTER_OVERRIDES_ANNOTATION, self.cluster_rules),
            (APPLIED_OVERRIDES_ANNOTATION, self.namespaced_rules),
        ):
            if rules:
                items = sorted(rules, key=lambda r: r.policy_name)
                result[key] = json.dumps(
                    [{"policyName": r.policy_name, "overriders": r.overriders.to_dict()} for r in items],
                    separators=(",", ":"),
                )
        return result


def _implicit_priority(policy: AnyOverridePolicy, manifest: Mapping[str, Any]) -> ImplicitPriority:
    selectors = policy.spec.resource_selectors or []
    if not selectors:
        return ImplicitPriority.MATCH_ALL
    return selectors_priority(manifest, selectors)


def matching_rules(
    manifest: Mapping[str, Any], policies: Sequence[AnyOverridePolicy], cluster: Cluster
) -> list[AppliedRule]:
    """The rules of ``policies`` that apply to ``manifest`` in ``cluster``, in application order."""
    ranked = [
        (priority, p.metadata.name or "", p)
        for p in policies
        if (priority := _implicit_priority(p, manifest)) > ImplicitPriority.MISMATCH
    ]
    ranked.sort(key=lambda item: (item[0], item[1]))
    rules: list[AppliedRule] = []
    for _, _, policy in ranked:
        spec = policy.spec
        if spec.override_rules:
            candidates = [(i, r.target_cluster, r.overriders) for i, r in enumerate(spec.override_rules)]
        else:
            candidates = [(0, spec.target_cluster, spec.overriders or Overriders())]
        for index, target, overriders in candidates:
            if target is None or cluster_matches(cluster, target):
                rules.append(AppliedRule(policy, index, overriders))
    return rules


def _policy_label(policy: AnyOverridePolicy) -> str:
    if isinstance(policy, OverridePolicy):
        return f"OverridePolicy {policy.metadata.namespace}/{policy.metadata.name}"
    return f"ClusterOverridePolicy {policy.metadata.name}"


def apply_rule(manifest: dict[str, Any], rule: AppliedRule) -> dict[str, Any]:
    """Apply one rule's overriders in Karmada's fixed order."""
    o = rule.overriders
    steps: list[tuple[str, Sequence[Any], Any]] = [
        ("imageOverrider", o.image_overrider or [], apply_image),
        ("commandOverrider", o.command_overrider or [], lambda m, x: apply_command_args(m, x, "command")),
        ("argsOverrider", o.args_overrider or [], lambda m, x: apply_command_args(m, x, "args")),
        ("labelsOverrider", o.labels_overrider or [], lambda m, x: apply_labels_annotations(m, x, "labels")),
        (
            "annotationsOverrider",
            o.annotations_overrider or [],
            lambda m, x: apply_labels_annotations(m, x, "annotations"),
        ),
        ("fieldOverrider", o.field_overrider or [], apply_field),
    ]
    for name, items, apply in steps:
        for index, item in enumerate(items):
            try:
                manifest = apply(manifest, item)
            except OverriderError as exc:
                raise OverrideError(_policy_label(rule.policy), rule.rule_index, f"{name}[{index}]", str(exc)) from None
    if o.plaintext:
        try:
            manifest = apply_plaintext(manifest, o.plaintext)
        except OverriderError as exc:
            raise OverrideError(_policy_label(rule.policy), rule.rule_index, "plaintext", str(exc)) from None
    return manifest


def apply_overrides(
    manifest: Mapping[str, Any],
    cluster: Cluster,
    cluster_override_policies: Sequence[ClusterOverridePolicy],
    override_policies: Sequence[OverridePolicy],
) -> OverrideResult:
    """Override a manifest for one cluster; the input is not modified.

    ``override_policies`` may hold any namespace's policies; only those of
    the manifest's namespace apply, and none to cluster-scoped manifests.
    """
    result = OverrideResult(copy_json(dict(manifest)))
    for rule in matching_rules(result.manifest, cluster_override_policies, cluster):
        result.manifest = apply_rule(result.manifest, rule)
        result.cluster_rules.append(rule)
    namespace = (result.manifest.get("metadata") or {}).get("namespace")
    if namespace:
        local = [p for p in override_policies if p.metadata.namespace == namespace]
        for rule in matching_rules(result.manifest, local, cluster):
            result.manifest = apply_rule(result.manifest, rule)
            result.namespaced_rules.append(rule)
    return result
