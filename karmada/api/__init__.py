"""Karmada's API as pydantic models, wire-compatible with Karmada.

Every kind validates the JSON the API server stores (:meth:`KubeModel.from_dict`,
errors naming the field path) and serialises back exactly what it read
(:meth:`KubeModel.to_dict`). :mod:`karmada.api.keys` and
:mod:`karmada.api.names` hold Karmada's well-known strings and naming rules;
:mod:`karmada.api.crdgen` derives the CRDs from these models.
"""

from karmada.api._base import KubeModel, KubeObject, Quantity, ResourceList, reject_unknown_fields
from karmada.api.binding import (
    AggregatedStatusItem,
    BindingSnapshot,
    ClusterResourceBinding,
    GracefulEvictionTask,
    ObjectReference,
    ReplicaRequirements,
    ResourceBinding,
    ResourceBindingSpec,
    ResourceBindingStatus,
    TargetCluster,
)
from karmada.api.cluster import Cluster, ClusterSpec, ClusterStatus
from karmada.api.core import NodeSelectorRequirement, Taint, Toleration
from karmada.api.errors import APIValidationError, FieldError
from karmada.api.interpreter import DependentObjectReference, ResourceInterpreterCustomization
from karmada.api.kinds import KINDS, KindInfo, kind_info
from karmada.api.meta import Condition, LabelSelector, ObjectMeta, OwnerReference
from karmada.api.override import ClusterOverridePolicy, OverridePolicy, Overriders, OverrideSpec
from karmada.api.parse import parse_object
from karmada.api.policy import (
    ClusterAffinity,
    ClusterPropagationPolicy,
    Placement,
    PropagationPolicy,
    PropagationSpec,
    ResourceSelector,
)
from karmada.api.taint_policy import ClusterTaintPolicy
from karmada.api.work import Work, WorkSpec, WorkStatus

__all__ = [
    "KINDS",
    "APIValidationError",
    "AggregatedStatusItem",
    "BindingSnapshot",
    "Cluster",
    "ClusterAffinity",
    "ClusterOverridePolicy",
    "ClusterPropagationPolicy",
    "ClusterResourceBinding",
    "ClusterSpec",
    "ClusterStatus",
    "ClusterTaintPolicy",
    "Condition",
    "DependentObjectReference",
    "FieldError",
    "GracefulEvictionTask",
    "KindInfo",
    "KubeModel",
    "KubeObject",
    "LabelSelector",
    "NodeSelectorRequirement",
    "ObjectMeta",
    "ObjectReference",
    "OverridePolicy",
    "OverrideSpec",
    "Overriders",
    "OwnerReference",
    "Placement",
    "PropagationPolicy",
    "PropagationSpec",
    "Quantity",
    "ReplicaRequirements",
    "ResourceBinding",
    "ResourceBindingSpec",
    "ResourceBindingStatus",
    "ResourceInterpreterCustomization",
    "ResourceList",
    "ResourceSelector",
    "Taint",
    "TargetCluster",
    "Toleration",
    "Work",
    "WorkSpec",
    "WorkStatus",
    "kind_info",
    "parse_object",
    "reject_unknown_fields",
]
