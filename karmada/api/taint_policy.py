"""``policy.karmada.io/v1alpha1`` ClusterTaintPolicy: taints from cluster conditions."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from karmada.api._base import KubeModel, KubeObject
from karmada.api.meta import ObjectMeta
from karmada.api.policy import POLICY_GROUP_VERSION, ClusterAffinity


class MatchCondition(KubeModel):
    """A cluster condition test: ``conditionType`` status In/NotIn ``statusValues``."""

    condition_type: str
    operator: str
    status_values: list[str]


class TaintSpec(KubeModel):
    """A taint the policy adds or removes."""

    key: str
    effect: str
    value: str | None = None


class ClusterTaintPolicySpec(KubeModel):
    """When (conditions) which taints are added to or removed from which clusters."""

    target_clusters: ClusterAffinity | None = None
    add_on_conditions: list[MatchCondition] | None = None
    remove_on_conditions: list[MatchCondition] | None = None
    taints: Annotated[list[TaintSpec], Field(min_length=1)]


class ClusterTaintPolicy(KubeObject):
    """Adds taints to clusters whose conditions match, and removes them again."""

    api_version: Literal["policy.karmada.io/v1alpha1"] = POLICY_GROUP_VERSION
    kind: Literal["ClusterTaintPolicy"] = "ClusterTaintPolicy"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ClusterTaintPolicySpec
