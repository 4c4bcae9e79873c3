"""``work.karmada.io/v1alpha1`` Work: the manifests bound for one member cluster.

A Work lives in the cluster's execution namespace ``karmada-es-<cluster>``.
Manifests are complete objects kept verbatim, unknown fields included.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from karmada.api._base import KubeModel, KubeObject, RawObject
from karmada.api.meta import Condition, ObjectMeta

WORK_GROUP_VERSION: Final = "work.karmada.io/v1alpha1"

ResourceHealth = Literal["Healthy", "Unhealthy", "Unknown"]

# Work condition types and reasons (Karmada's exact strings).
WORK_APPLIED = "Applied"
WORK_PROGRESSING = "Progressing"
WORK_AVAILABLE = "Available"
WORK_DEGRADED = "Degraded"
WORK_DISPATCHING = "Dispatching"
REASON_APPLIED_SUCCESSFUL = "AppliedSuccessful"
REASON_APPLIED_FAILED = "AppliedFailed"
REASON_DISPATCHING = "Dispatching"
REASON_SUSPEND_DISPATCHING = "SuspendDispatching"


class WorkloadTemplate(KubeModel):
    """The manifests of a Work (Karmada writes exactly one)."""

    manifests: list[RawObject] | None = None
    """Manifests represents a list of Kubernetes resources to be deployed on the managed cluster."""


class WorkSpec(KubeModel):
    """What to apply in the member cluster, and how."""

    workload: WorkloadTemplate | None = None
    """Workload represents the manifest workload to be deployed on managed cluster."""
    suspend_dispatching: bool | None = None
    """SuspendDispatching controls whether dispatching should
    be suspended, nil means not suspend.
    Note: true means stop propagating to the corresponding member cluster, and
    does not prevent status collection.
    """
    preserve_resources_on_deletion: bool | None = None
    """PreserveResourcesOnDeletion controls whether resources should be preserved on the
    member cluster when the Work object is deleted.
    If set to true, resources will be preserved on the member cluster.
    Default is false, which means resources will be deleted along with the Work object.
    """


class ResourceIdentifier(KubeModel):
    """Identifies one manifest of a Work: its index and its object's coordinates."""

    ordinal: int
    """Ordinal represents an index in manifests list, so the condition can still be linked
    to a manifest even though manifest cannot be parsed successfully.
    """
    group: str | None = None
    """Group is the group of the resource."""
    version: str
    """Version is the version of the resource."""
    kind: str
    """Kind is the kind of the resource."""
    resource: str
    """Resource is the resource type of the resource"""
    namespace: str | None = None
    """Namespace is the namespace of the resource, the resource is cluster scoped if the value
    is empty
    """
    name: str
    """Name is the name of the resource"""


class ManifestStatus(KubeModel):
    """The reflected status and health of one applied manifest."""

    identifier: ResourceIdentifier
    """Identifier represents the identity of a resource linking to manifests in spec."""
    status: RawObject | None = None
    """Status reflects running status of current manifest."""
    health: ResourceHealth | None = None
    """Health represents the healthy state of the current resource.
    There maybe different rules for different resources to achieve health status.
    """


class WorkStatus(KubeModel):
    """Applied/Dispatching conditions and the status of each manifest."""

    conditions: list[Condition] | None = None
    """Conditions contain the different condition statuses for this work.
    Valid condition types are:
    1. Applied represents workload in Work is applied successfully on a managed cluster.
    2. Progressing represents workload in Work is being applied on a managed cluster.
    3. Available represents workload in Work exists on the managed cluster.
    4. Degraded represents the current state of workload does not match the desired
    state for a certain period.
    """
    manifest_statuses: list[ManifestStatus] | None = None
    """ManifestStatuses contains running status of manifests in spec."""


class Work(KubeObject):
    """Manifests to apply in one member cluster."""

    api_version: Literal["work.karmada.io/v1alpha1"] = WORK_GROUP_VERSION
    """APIVersion defines the versioned schema of this representation of an object.
    Servers should convert recognized schemas to the latest internal value, and
    may reject unrecognized values.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
    """
    kind: Literal["Work"] = "Work"
    """Kind is a string value representing the REST resource this object represents.
    Servers may infer this from the endpoint the client submits requests to.
    Cannot be updated.
    In CamelCase.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
    """
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: WorkSpec
    """Spec represents the desired behavior of Work."""
    status: WorkStatus | None = None
    """Status represents the status of PropagationStatus."""
