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
    """ConditionType specifies the ClusterStatus condition type."""
    operator: str
    """Operator represents a relationship to a set of values.
    Valid operators are In, NotIn.
    """
    status_values: list[str]
    """StatusValues is an array of metav1.ConditionStatus values.
    The item specifies the ClusterStatus condition status.
    """


class TaintSpec(KubeModel):
    """A taint the policy adds or removes."""

    key: str
    """Key represents the taint key to be applied to a cluster."""
    effect: str
    """Effect represents the taint effect to be applied to a cluster."""
    value: str | None = None
    """Value represents the taint value corresponding to the taint key."""


class ClusterTaintPolicySpec(KubeModel):
    """When (conditions) which taints are added to or removed from which clusters."""

    target_clusters: ClusterAffinity | None = None
    """TargetClusters specifies the clusters that ClusterTaintPolicy needs
    to pay attention to.
    For clusters that no longer match the TargetClusters, the taints
    will be kept unchanged.
    If targetClusters is not set, any cluster can be selected.
    """
    add_on_conditions: list[MatchCondition] | None = None
    """AddOnConditions defines the conditions to match for triggering
    the controller to add taints on the cluster object.
    The match conditions are ANDed.
    If AddOnConditions is empty, no taints will be added.
    """
    remove_on_conditions: list[MatchCondition] | None = None
    """RemoveOnConditions defines the conditions to match for triggering
    the controller to remove taints from the cluster object.
    The match conditions are ANDed.
    If RemoveOnConditions is empty, no taints will be removed.
    """
    taints: Annotated[list[TaintSpec], Field(min_length=1)]
    """Taints specifies the taints that need to be added or removed on
    the cluster object which match with TargetClusters.
    If the Taints is modified, the system will process the taints based on
    the latest value of Taints during the next condition-triggered execution,
    regardless of whether the taint has been added or removed.
    """


class ClusterTaintPolicy(KubeObject):
    """Adds taints to clusters whose conditions match, and removes them again."""

    api_version: Literal["policy.karmada.io/v1alpha1"] = POLICY_GROUP_VERSION
    """APIVersion defines the versioned schema of this representation of an object.
    Servers should convert recognized schemas to the latest internal value, and
    may reject unrecognized values.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
    """
    kind: Literal["ClusterTaintPolicy"] = "ClusterTaintPolicy"
    """Kind is a string value representing the REST resource this object represents.
    Servers may infer this from the endpoint the client submits requests to.
    Cannot be updated.
    In CamelCase.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
    """
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ClusterTaintPolicySpec
    """Spec represents the desired behavior of ClusterTaintPolicy."""
