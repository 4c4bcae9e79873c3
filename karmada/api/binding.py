"""``work.karmada.io/v1alpha2``: ResourceBinding and ClusterResourceBinding.

A binding ties one resource template to its policy's placement and holds the
scheduler's result (``spec.clusters``) and the aggregated member status.
Only ``v1alpha2`` (Karmada's storage version) is served; Karmada's
``v1alpha1`` needs a conversion webhook and no user writes bindings by hand.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field

from karmada.api._base import (
    Int32,
    Int64,
    KubeModel,
    KubeObject,
    Pattern,
    RawObject,
    ResourceList,
    Time,
    crd_default,
)
from karmada.api.core import NodeSelector, Toleration
from karmada.api.meta import CONDITION_REASON_PATTERN, REASON_FORM, Condition, ObjectMeta
from karmada.api.policy import ConflictResolution, FailoverBehavior, Placement, PurgeMode, Suspension
from karmada.api.work import ResourceHealth

BINDING_GROUP_VERSION: Final = "work.karmada.io/v1alpha2"

# Binding condition types and reasons (Karmada's exact strings).
CONDITION_SCHEDULED = "Scheduled"
CONDITION_FULLY_APPLIED = "FullyApplied"
REASON_BINDING_SCHEDULED = "Success"
REASON_SCHEDULER_ERROR = "SchedulerError"
REASON_NO_CLUSTER_FIT = "NoClusterFit"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_QUOTA_EXCEEDED = "QuotaExceeded"
REASON_FULLY_APPLIED_SUCCESS = "FullyAppliedSuccess"
REASON_FULLY_APPLIED_FAILED = "FullyAppliedFailed"
MESSAGE_BINDING_SCHEDULED = "Binding has been scheduled successfully."
MESSAGE_FULLY_APPLIED = "All works have been successfully applied"

EVICTION_REASON_TAINT_UNTOLERATED = "TaintUntolerated"
EVICTION_REASON_APPLICATION_FAILURE = "ApplicationFailure"
EVICTION_PRODUCER_TAINT_MANAGER = "TaintManager"


class ObjectReference(KubeModel):
    """The resource template a binding is for."""

    api_version: str
    kind: str
    namespace: str | None = None
    name: str
    uid: str | None = None
    resource_version: str | None = None


class NodeClaim(KubeModel):
    """Node constraints of the workload's pods, used to estimate cluster capacity."""

    hard_node_affinity: NodeSelector | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[Toleration] | None = None


class ReplicaRequirements(KubeModel):
    """What one replica needs: node constraints and resource requests."""

    node_claim: NodeClaim | None = None
    resource_request: ResourceList | None = None
    namespace: str | None = None
    priority_class_name: str | None = None


class ComponentReplicaRequirements(KubeModel):
    """Per-replica requirements of one component of a multi-template workload."""

    node_claim: NodeClaim | None = None
    resource_request: ResourceList | None = None
    priority_class_name: str | None = None


class Component(KubeModel):
    """One pod template of a multi-template workload (alpha in Karmada)."""

    name: Annotated[str, Field(max_length=32)]
    replicas: Int32
    replica_requirements: ComponentReplicaRequirements | None = None


class ComponentReplicas(KubeModel):
    """Replicas of one component assigned to a cluster."""

    name: str
    replicas: Int32


class TargetCluster(KubeModel):
    """A scheduled cluster and its share of the replicas."""

    name: str
    replicas: Int32 | None = None
    components: list[ComponentReplicas] | None = None


class BindingSnapshot(KubeModel):
    """The scheduling result of a binding that depends on this one (propagateDeps)."""

    namespace: str | None = None
    name: str
    clusters: list[TargetCluster] | None = None


class GracefulEvictionTask(KubeModel):
    """A cluster being evicted; its Work stays until the replacement is healthy."""

    from_cluster: str
    purge_mode: PurgeMode | None = None
    replicas: Int32 | None = None
    reason: Annotated[str, Pattern(CONDITION_REASON_PATTERN, REASON_FORM), Field(min_length=1, max_length=32)]
    message: Annotated[str, Field(max_length=1024)] | None = None
    producer: str
    grace_period_seconds: Int32 | None = None
    suppress_deletion: bool | None = None
    preserved_label_state: dict[str, str] | None = None
    creation_timestamp: Time | None = None
    clusters_before_failover: list[str] | None = None


class BindingSuspension(Suspension):
    """Policy suspension plus ``scheduling`` (the scheduler skips the binding)."""

    scheduling: bool | None = None


class BindingSchedulePriority(KubeModel):
    """The resolved scheduling priority."""

    priority: Int32 = crd_default(0)


class WorkloadAffinityGroups(KubeModel):
    """Affinity groups as ``<labelKey>=<labelValue>`` strings."""

    affinity_group: str | None = None
    anti_affinity_group: str | None = None


class ResourceBindingSpec(KubeModel):
    """The template, its policy's settings, and the scheduler's result."""

    resource: ObjectReference
    propagate_deps: bool | None = None
    replica_requirements: ReplicaRequirements | None = None
    replicas: Int32 | None = None
    components: list[Component] | None = None
    clusters: list[TargetCluster] | None = None
    placement: Placement | None = None
    graceful_eviction_tasks: list[GracefulEvictionTask] | None = None
    required_by: list[BindingSnapshot] | None = None
    scheduler_name: str | None = None
    failover: FailoverBehavior | None = None
    conflict_resolution: ConflictResolution = crd_default("Abort")
    reschedule_triggered_at: Time | None = None
    suspension: BindingSuspension | None = None
    preserve_resources_on_deletion: bool | None = None
    schedule_priority: BindingSchedulePriority | None = None
    workload_affinity_groups: WorkloadAffinityGroups | None = None


class AggregatedStatusItem(KubeModel):
    """The status of the template's copy in one cluster."""

    cluster_name: str
    status: RawObject | None = None
    applied: bool | None = None
    applied_message: str | None = None
    health: ResourceHealth | None = None


class ResourceBindingStatus(KubeModel):
    """Scheduling progress, conditions and per-cluster status."""

    scheduler_observed_generation: Int64 | None = None
    # Karmada's JSON name differs from its Go field (SchedulerObservedAffinityName).
    scheduler_observed_affinity_name: str | None = Field(default=None, alias="schedulerObservingAffinityName")
    last_scheduled_time: Time | None = None
    conditions: list[Condition] | None = None
    aggregated_status: list[AggregatedStatusItem] | None = None


class ResourceBinding(KubeObject):
    """Binds a namespaced resource template to clusters."""

    api_version: Literal["work.karmada.io/v1alpha2"] = BINDING_GROUP_VERSION
    kind: Literal["ResourceBinding"] = "ResourceBinding"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ResourceBindingSpec
    status: ResourceBindingStatus | None = None


class ClusterResourceBinding(KubeObject):
    """Binds a cluster-scoped resource template to clusters."""

    api_version: Literal["work.karmada.io/v1alpha2"] = BINDING_GROUP_VERSION
    kind: Literal["ClusterResourceBinding"] = "ClusterResourceBinding"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ResourceBindingSpec
    status: ResourceBindingStatus | None = None
