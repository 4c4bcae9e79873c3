"""Karmada's API as pydantic models, wire-compatible with Karmada.

Every kind validates the JSON the API server stores (:meth:`KubeModel.from_dict`,
errors naming the field path) and serialises back exactly what it read
(:meth:`KubeModel.to_dict`). :mod:`karmada.api.keys` and
:mod:`karmada.api.names` hold Karmada's well-known strings and naming rules;
:mod:`karmada.api.crdgen` derives the CRDs from these models.
"""

# Submodules load on first use: programs that need only keys.py or names.py
# (the agent) do not pay for pydantic and every model.
from typing import TYPE_CHECKING

from karmada.lazy_exports import lazy_exports

if TYPE_CHECKING:
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

_LAZY = {
    "KubeModel": "karmada.api._base",
    "KubeObject": "karmada.api._base",
    "Quantity": "karmada.api._base",
    "ResourceList": "karmada.api._base",
    "reject_unknown_fields": "karmada.api._base",
    "AggregatedStatusItem": "karmada.api.binding",
    "BindingSnapshot": "karmada.api.binding",
    "ClusterResourceBinding": "karmada.api.binding",
    "GracefulEvictionTask": "karmada.api.binding",
    "ObjectReference": "karmada.api.binding",
    "ReplicaRequirements": "karmada.api.binding",
    "ResourceBinding": "karmada.api.binding",
    "ResourceBindingSpec": "karmada.api.binding",
    "ResourceBindingStatus": "karmada.api.binding",
    "TargetCluster": "karmada.api.binding",
    "Cluster": "karmada.api.cluster",
    "ClusterSpec": "karmada.api.cluster",
    "ClusterStatus": "karmada.api.cluster",
    "NodeSelectorRequirement": "karmada.api.core",
    "Taint": "karmada.api.core",
    "Toleration": "karmada.api.core",
    "APIValidationError": "karmada.api.errors",
    "FieldError": "karmada.api.errors",
    "DependentObjectReference": "karmada.api.interpreter",
    "ResourceInterpreterCustomization": "karmada.api.interpreter",
    "KINDS": "karmada.api.kinds",
    "KindInfo": "karmada.api.kinds",
    "kind_info": "karmada.api.kinds",
    "Condition": "karmada.api.meta",
    "LabelSelector": "karmada.api.meta",
    "ObjectMeta": "karmada.api.meta",
    "OwnerReference": "karmada.api.meta",
    "ClusterOverridePolicy": "karmada.api.override",
    "OverridePolicy": "karmada.api.override",
    "Overriders": "karmada.api.override",
    "OverrideSpec": "karmada.api.override",
    "parse_object": "karmada.api.parse",
    "ClusterAffinity": "karmada.api.policy",
    "ClusterPropagationPolicy": "karmada.api.policy",
    "Placement": "karmada.api.policy",
    "PropagationPolicy": "karmada.api.policy",
    "PropagationSpec": "karmada.api.policy",
    "ResourceSelector": "karmada.api.policy",
    "ClusterTaintPolicy": "karmada.api.taint_policy",
    "Work": "karmada.api.work",
    "WorkSpec": "karmada.api.work",
    "WorkStatus": "karmada.api.work",
}


__getattr__ = lazy_exports(__name__, _LAZY)


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
