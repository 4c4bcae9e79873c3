"""``policy.karmada.io/v1alpha1``: OverridePolicy and ClusterOverridePolicy.

Follows Karmada's ``pkg/apis/policy/v1alpha1/override_types.go``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from karmada.api._base import KubeModel, KubeObject, RawJSON
from karmada.api.meta import ObjectMeta
from karmada.api.policy import POLICY_GROUP_VERSION, ClusterAffinity, ResourceSelector

OverriderOperator = Literal["add", "remove", "replace"]
ListOperator = Literal["add", "remove"]
ImageComponent = Literal["Registry", "Repository", "Tag"]


class PlaintextOverrider(KubeModel):
    """An RFC 6902 JSON patch operation on the manifest."""

    path: str
    operator: OverriderOperator
    value: RawJSON | None = None


class ImagePredicate(KubeModel):
    """Which image to change: a JSON-pointer-like path to one ``image`` field."""

    path: str


class ImageOverrider(KubeModel):
    """Change one component (Registry, Repository or Tag) of container images."""

    predicate: ImagePredicate | None = None
    component: ImageComponent
    operator: OverriderOperator
    value: str | None = None


class CommandArgsOverrider(KubeModel):
    """Append to, or remove from, a container's command or args."""

    container_name: str
    operator: ListOperator
    value: list[str] | None = None


class LabelAnnotationOverrider(KubeModel):
    """Add, remove or replace labels or annotations."""

    operator: OverriderOperator
    value: dict[str, str]


class JSONPatchOperation(KubeModel):
    """A JSON patch applied inside a JSON or YAML document held in a string field."""

    sub_path: str
    operator: OverriderOperator
    value: RawJSON | None = None


class FieldOverrider(KubeModel):
    """Patch a JSON or YAML document stored in a string field (e.g. ConfigMap data)."""

    field_path: str
    json_: list[JSONPatchOperation] | None = Field(default=None, alias="json")
    yaml: list[JSONPatchOperation] | None = None


class Overriders(KubeModel):
    """Every overrider; within one rule they apply in Karmada's fixed order."""

    plaintext: list[PlaintextOverrider] | None = None
    image_overrider: list[ImageOverrider] | None = None
    command_overrider: list[CommandArgsOverrider] | None = None
    args_overrider: list[CommandArgsOverrider] | None = None
    labels_overrider: list[LabelAnnotationOverrider] | None = None
    annotations_overrider: list[LabelAnnotationOverrider] | None = None
    field_overrider: list[FieldOverrider] | None = None


class RuleWithCluster(KubeModel):
    """Overriders applied to the clusters ``targetCluster`` selects (all when absent)."""

    target_cluster: ClusterAffinity | None = None
    overriders: Overriders


class OverrideSpec(KubeModel):
    """Which resources (empty = all) get which per-cluster changes."""

    resource_selectors: list[ResourceSelector] | None = None
    override_rules: list[RuleWithCluster] | None = None
    target_cluster: ClusterAffinity | None = Field(default=None, description="Deprecated: use overrideRules.")
    overriders: Overriders | None = Field(default=None, description="Deprecated: use overrideRules.")


class OverridePolicy(KubeObject):
    """Per-cluster changes to resources of its own namespace."""

    api_version: Literal["policy.karmada.io/v1alpha1"] = POLICY_GROUP_VERSION
    kind: Literal["OverridePolicy"] = "OverridePolicy"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: OverrideSpec


class ClusterOverridePolicy(KubeObject):
    """Per-cluster changes to resources of any namespace, and cluster-scoped ones."""

    api_version: Literal["policy.karmada.io/v1alpha1"] = POLICY_GROUP_VERSION
    kind: Literal["ClusterOverridePolicy"] = "ClusterOverridePolicy"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: OverrideSpec
