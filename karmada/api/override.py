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
    """Path indicates the path of target field"""
    operator: OverriderOperator
    """Operator indicates the operation on target field.
    Available operators are: add, replace and remove.
    """
    value: RawJSON | None = None
    """Value to be applied to target field.
    Must be empty when operator is Remove.
    """


class ImagePredicate(KubeModel):
    """Which image to change: a JSON-pointer-like path to one ``image`` field."""

    path: str
    """Path indicates the path of target field"""


class ImageOverrider(KubeModel):
    """Change one component (Registry, Repository or Tag) of container images."""

    predicate: ImagePredicate | None = None
    """Predicate filters images before applying the rule.

    Defaults to nil, in that case, the system will automatically detect image fields if the resource type is
    Pod, ReplicaSet, Deployment, StatefulSet, DaemonSet or Job by following rule:
      - Pod: /spec/containers/<N>/image
      - ReplicaSet: /spec/template/spec/containers/<N>/image
      - Deployment: /spec/template/spec/containers/<N>/image
      - DaemonSet: /spec/template/spec/containers/<N>/image
      - StatefulSet: /spec/template/spec/containers/<N>/image
      - Job: /spec/template/spec/containers/<N>/image
    In addition, all images will be processed if the resource object has more than one container.

    If not nil, only images matches the filters will be processed.
    """
    component: ImageComponent
    """Component is part of image name.
    Basically we presume an image can be made of '[registry/]repository[:tag]'.
    The registry could be:
    - registry.k8s.io
    - fictional.registry.example:10443
    The repository could be:
    - kube-apiserver
    - fictional/nginx
    The tag cloud be:
    - latest
    - v1.19.1
    - @sha256:dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9c
    """
    operator: OverriderOperator
    """Operator represents the operator which will apply on the image."""
    value: str | None = None
    """Value to be applied to image.
    Must not be empty when operator is 'add' or 'replace'.
    Defaults to empty and ignored when operator is 'remove'.
    """


class CommandArgsOverrider(KubeModel):
    """Append to, or remove from, a container's command or args."""

    container_name: str
    """The name of container"""
    operator: ListOperator
    """Operator represents the operator which will apply on the command/args."""
    value: list[str] | None = None
    """Value to be applied to command/args.
    Items in Value which will be appended after command/args when Operator is 'add'.
    Items in Value which match in command/args will be deleted when Operator is 'remove'.
    If Value is empty, then the command/args will remain the same.
    """


class LabelAnnotationOverrider(KubeModel):
    """Add, remove or replace labels or annotations."""

    operator: OverriderOperator
    """Operator represents the operator which will apply on the workload."""
    value: dict[str, str]
    """Value to be applied to annotations/labels of workload.
    Items in Value which will be appended after annotations/labels when Operator is 'add'.
    Items in Value which match in annotations/labels will be deleted when Operator is 'remove'.
    Items in Value which match in annotations/labels will be replaced when Operator is 'replace'.
    """


class JSONPatchOperation(KubeModel):
    """A JSON patch applied inside a JSON or YAML document held in a string field."""

    sub_path: str
    """SubPath specifies the relative location within the initial FieldPath where the operation should take place.
    The path uses RFC 6901 for navigating into nested structures.
    """
    operator: OverriderOperator
    """Operator indicates the operation on target field.
    Available operators are: "add", "remove", and "replace".
    """
    value: RawJSON | None = None
    """Value is the new value to set for the specified field if the operation is "add" or "replace".
    For "remove" operation, this field is ignored.
    """


class FieldOverrider(KubeModel):
    """Patch a JSON or YAML document stored in a string field (e.g. ConfigMap data)."""

    field_path: str
    """FieldPath specifies the initial location in the instance document where the operation should take place.
    The path uses RFC 6901 for navigating into nested structures. For example, the path "/data/db-config.yaml"
    specifies the configuration data key named "db-config.yaml" in a ConfigMap: "/data/db-config.yaml".
    """
    json_: list[JSONPatchOperation] | None = Field(default=None, alias="json")
    """JSON represents the operations performed on the JSON document specified by the FieldPath."""
    yaml: list[JSONPatchOperation] | None = None
    """YAML represents the operations performed on the YAML document specified by the FieldPath."""


class Overriders(KubeModel):
    """Every overrider; within one rule they apply in Karmada's fixed order."""

    plaintext: list[PlaintextOverrider] | None = None
    """Plaintext represents override rules defined with plaintext overriders."""
    image_overrider: list[ImageOverrider] | None = None
    """ImageOverrider represents the rules dedicated to handling image overrides."""
    command_overrider: list[CommandArgsOverrider] | None = None
    """CommandOverrider represents the rules dedicated to handling container command"""
    args_overrider: list[CommandArgsOverrider] | None = None
    """ArgsOverrider represents the rules dedicated to handling container args"""
    labels_overrider: list[LabelAnnotationOverrider] | None = None
    """LabelsOverrider represents the rules dedicated to handling workload labels"""
    annotations_overrider: list[LabelAnnotationOverrider] | None = None
    """AnnotationsOverrider represents the rules dedicated to handling workload annotations"""
    field_overrider: list[FieldOverrider] | None = None
    """FieldOverrider represents the rules dedicated to modifying a specific field in any Kubernetes resource.
    This allows changing a single field within the resource with multiple operations.
    It is designed to handle structured field values such as those found in ConfigMaps or Secrets.
    The current implementation supports JSON and YAML formats, but can easily be extended to support XML in the future.
    """


class RuleWithCluster(KubeModel):
    """Overriders applied to the clusters ``targetCluster`` selects (all when absent)."""

    target_cluster: ClusterAffinity | None = None
    """TargetCluster defines restrictions on this override policy
    that only applies to resources propagated to the matching clusters.
    nil means matching all clusters.
    """
    overriders: Overriders
    """Overriders represents the override rules that would apply on resources"""


class OverrideSpec(KubeModel):
    """Which resources (empty = all) get which per-cluster changes."""

    resource_selectors: list[ResourceSelector] | None = None
    """ResourceSelectors restricts resource types that this override policy applies to.
    nil means matching all resources.
    """
    override_rules: list[RuleWithCluster] | None = None
    """OverrideRules defines a collection of override rules on target clusters."""
    target_cluster: ClusterAffinity | None = Field(default=None, description="Deprecated: use overrideRules.")
    """TargetCluster defines restrictions on this override policy
    that only applies to resources propagated to the matching clusters.
    nil means matching all clusters.

    Deprecated: This filed is deprecated in v1.0 and please use the OverrideRules instead.
    """
    overriders: Overriders | None = Field(default=None, description="Deprecated: use overrideRules.")
    """Overriders represents the override rules that would apply on resources

    Deprecated: This filed is deprecated in v1.0 and please use the OverrideRules instead.
    """


class OverridePolicy(KubeObject):
    """Per-cluster changes to resources of its own namespace."""

    api_version: Literal["policy.karmada.io/v1alpha1"] = POLICY_GROUP_VERSION
    """APIVersion defines the versioned schema of this representation of an object.
    Servers should convert recognized schemas to the latest internal value, and
    may reject unrecognized values.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
    """
    kind: Literal["OverridePolicy"] = "OverridePolicy"
    """Kind is a string value representing the REST resource this object represents.
    Servers may infer this from the endpoint the client submits requests to.
    Cannot be updated.
    In CamelCase.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
    """
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: OverrideSpec
    """Spec represents the desired behavior of OverridePolicy."""


class ClusterOverridePolicy(KubeObject):
    """Per-cluster changes to resources of any namespace, and cluster-scoped ones."""

    api_version: Literal["policy.karmada.io/v1alpha1"] = POLICY_GROUP_VERSION
    """APIVersion defines the versioned schema of this representation of an object.
    Servers should convert recognized schemas to the latest internal value, and
    may reject unrecognized values.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
    """
    kind: Literal["ClusterOverridePolicy"] = "ClusterOverridePolicy"
    """Kind is a string value representing the REST resource this object represents.
    Servers may infer this from the endpoint the client submits requests to.
    Cannot be updated.
    In CamelCase.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
    """
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: OverrideSpec
    """Spec represents the desired behavior of ClusterOverridePolicy."""
