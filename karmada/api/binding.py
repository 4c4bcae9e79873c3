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
    """APIVersion represents the API version of the referent."""
    kind: str
    """Kind represents the Kind of the referent."""
    namespace: str | None = None
    """Namespace represents the namespace for the referent.
    For non-namespace scoped resources(e.g. 'ClusterRole')，do not need specify Namespace,
    and for namespace scoped resources, Namespace is required.
    If Namespace is not specified, means the resource is non-namespace scoped.
    """
    name: str
    """Name represents the name of the referent."""
    uid: str | None = None
    """UID of the referent."""
    resource_version: str | None = None
    """ResourceVersion represents the internal version of the referenced object, that can be used by clients to
    determine when object has changed.
    """


class NodeClaim(KubeModel):
    """Node constraints of the workload's pods, used to estimate cluster capacity."""

    hard_node_affinity: NodeSelector | None = None
    """A node selector represents the union of the results of one or more label queries over a set of
    nodes; that is, it represents the OR of the selectors represented by the node selector terms.
    Note that only PodSpec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
    is included here because it has a hard limit on pod scheduling.
    """
    node_selector: dict[str, str] | None = None
    """NodeSelector is a selector which must be true for the pod to fit on a node.
    Selector which must match a node's labels for the pod to be scheduled on that node.
    """
    tolerations: list[Toleration] | None = None
    """If specified, the pod's tolerations."""


class ReplicaRequirements(KubeModel):
    """What one replica needs: node constraints and resource requests."""

    node_claim: NodeClaim | None = None
    """NodeClaim represents the node claim HardNodeAffinity, NodeSelector and Tolerations required by each replica."""
    resource_request: ResourceList | None = None
    """ResourceRequest represents the resources required by each replica."""
    namespace: str | None = None
    """Namespace represents the resources namespaces"""
    priority_class_name: str | None = None
    """PriorityClassName represents the resources priorityClassName"""


class ComponentReplicaRequirements(KubeModel):
    """Per-replica requirements of one component of a multi-template workload."""

    node_claim: NodeClaim | None = None
    """NodeClaim represents the node claim HardNodeAffinity, NodeSelector and Tolerations required by each replica."""
    resource_request: ResourceList | None = None
    """ResourceRequest represents the resources required by each replica."""
    priority_class_name: str | None = None
    """PriorityClassName represents the resources priorityClassName"""


class Component(KubeModel):
    """One pod template of a multi-template workload (alpha in Karmada)."""

    name: Annotated[str, Field(max_length=32)]
    """Name of this component.
    It is required when the resource contains multiple components to ensure proper identification,
    and must also be unique within the same resource.
    """
    replicas: Int32
    """Replicas represents the replica number of the resource's component."""
    replica_requirements: ComponentReplicaRequirements | None = None
    """ReplicaRequirements represents the resource and scheduling requirements for each replica."""


class ComponentReplicas(KubeModel):
    """Replicas of one component assigned to a cluster."""

    name: str
    """Name of the component, matching spec.components[*].name."""
    replicas: Int32
    """Replicas of this component assigned to the cluster."""


class TargetCluster(KubeModel):
    """A scheduled cluster and its share of the replicas."""

    name: str
    """Name of target cluster."""
    replicas: Int32 | None = None
    """Replicas in target cluster"""
    components: list[ComponentReplicas] | None = None
    """Components represents the per-component replica assignment in this cluster.
    It is populated only for workloads with multiple pod templates, and only
    when the MultiplePodTemplatesScheduling feature gate is enabled.
    Each entry corresponds to an entry in spec.Components by Name.
    """


class BindingSnapshot(KubeModel):
    """The scheduling result of a binding that depends on this one (propagateDeps)."""

    namespace: str | None = None
    """Namespace represents the namespace of the Binding.
    It is required for ResourceBinding.
    If Namespace is not specified, means the referencing is ClusterResourceBinding.
    """
    name: str
    """Name represents the name of the Binding."""
    clusters: list[TargetCluster] | None = None
    """Clusters represents the scheduled result."""


class GracefulEvictionTask(KubeModel):
    """A cluster being evicted; its Work stays until the replacement is healthy."""

    from_cluster: str
    """FromCluster which cluster the eviction perform from."""
    purge_mode: PurgeMode | None = None
    """PurgeMode represents how to deal with the legacy applications on the
    cluster from which the application is migrated.
    Valid options are "Directly", "Gracefully" and "Never".
    """
    replicas: Int32 | None = None
    """Replicas indicates the number of replicas should be evicted.
    Should be ignored for resource type that doesn't have replica.
    """
    reason: Annotated[str, Pattern(CONDITION_REASON_PATTERN, REASON_FORM), Field(min_length=1, max_length=32)]
    """Reason contains a programmatic identifier indicating the reason for the eviction.
    Producers may define expected values and meanings for this field,
    and whether the values are considered a guaranteed API.
    The value should be a CamelCase string.
    This field may not be empty.
    """
    message: Annotated[str, Field(max_length=1024)] | None = None
    """Message is a human-readable message indicating details about the eviction.
    This may be an empty string.
    """
    producer: str
    """Producer indicates the controller who triggered the eviction."""
    grace_period_seconds: Int32 | None = None
    """GracePeriodSeconds is the maximum waiting duration in seconds before the item
    should be deleted. If the application on the new cluster cannot reach a Healthy state,
    Karmada will delete the item after GracePeriodSeconds is reached.
    Value must be positive integer.
    It can not co-exist with SuppressDeletion.
    """
    suppress_deletion: bool | None = None
    """SuppressDeletion represents the grace period will be persistent until
    the tools or human intervention stops it.
    It can not co-exist with GracePeriodSeconds.
    """
    preserved_label_state: dict[str, str] | None = None
    """PreservedLabelState represents the application state information collected from the original cluster,
    and it will be injected into the new cluster in form of application labels.
    """
    creation_timestamp: Time | None = None
    """CreationTimestamp is a timestamp representing the server time when this object was
    created.
    Clients should not set this value to avoid the time inconsistency issue.
    It is represented in RFC3339 form(like '2021-04-25T10:02:10Z') and is in UTC.

    Populated by the system. Read-only.
    """
    clusters_before_failover: list[str] | None = None
    """ClustersBeforeFailover records the clusters where running the application before failover."""


class BindingSuspension(Suspension):
    """Policy suspension plus ``scheduling`` (the scheduler skips the binding)."""

    scheduling: bool | None = None
    """Scheduling controls whether scheduling should be suspended, the scheduler will pause scheduling and not
    process resource binding when the value is true and resume scheduling when it's false or nil.
    This is designed for third-party systems to temporarily pause the scheduling of applications, which enabling
    manage resource allocation, prioritize critical workloads, etc.
    It is expected that third-party systems use an admission webhook to suspend scheduling at the time of
    ResourceBinding creation. Once a ResourceBinding has been scheduled, it cannot be paused afterward, as it may
    lead to ineffective suspension.
    """


class BindingSchedulePriority(KubeModel):
    """The resolved scheduling priority."""

    priority: Int32 = crd_default(0)
    """Priority specifies the scheduling priority for the binding.
    Higher values indicate a higher priority.
    If not explicitly set, the default value is 0.
    """


class WorkloadAffinityGroups(KubeModel):
    """Affinity groups as ``<labelKey>=<labelValue>`` strings."""

    affinity_group: str | None = None
    """AffinityGroup is the instantiated group name derived from affinity rules."""
    anti_affinity_group: str | None = None
    """AntiAffinityGroup is the instantiated group name derived from anti-affinity rules."""


class ResourceBindingSpec(KubeModel):
    """The template, its policy's settings, and the scheduler's result."""

    resource: ObjectReference
    """Resource represents the Kubernetes resource to be propagated."""
    propagate_deps: bool | None = None
    """PropagateDeps tells if relevant resources should be propagated automatically.
    It is inherited from PropagationPolicy or ClusterPropagationPolicy.
    default false.
    """
    replica_requirements: ReplicaRequirements | None = None
    """ReplicaRequirements represents the resource and scheduling requirements for each replica."""
    replicas: Int32 | None = None
    """Replicas represents the replica number of the referencing resource."""
    components: list[Component] | None = None
    """Components represents the requirements of multiple pod templates of the referencing resource.
    It is designed to support workloads that consist of multiple pod templates,
    such as distributed training jobs (e.g., PyTorch, TensorFlow) and big data workloads (e.g., FlinkDeployment),
    where each workload is composed of more than one pod template. It is also capable of representing
    single-component workloads, such as Deployment.

    Note: This field is intended to replace the legacy ReplicaRequirements and Replicas fields above.
    It is only populated when the MultiplePodTemplatesScheduling feature gate is enabled.
    """
    clusters: list[TargetCluster] | None = None
    """Clusters represents target member clusters where the resource to be deployed."""
    placement: Placement | None = None
    """Placement represents the rule for select clusters to propagate resources."""
    graceful_eviction_tasks: list[GracefulEvictionTask] | None = None
    """GracefulEvictionTasks holds the eviction tasks that are expected to perform
    the eviction in a graceful way.
    The intended workflow is:
    1. Once the controller(such as 'taint-manager') decided to evict the resource that
       is referenced by current ResourceBinding or ClusterResourceBinding from a target
       cluster, it removes(or scale down the replicas) the target from Clusters(.spec.Clusters)
       and builds a graceful eviction task.
    2. The scheduler may perform a re-scheduler and probably select a substitute cluster
       to take over the evicting workload(resource).
    3. The graceful eviction controller takes care of the graceful eviction tasks and
       performs the final removal after the workload(resource) is available on the substitute
       cluster or exceed the grace termination period(defaults to 10 minutes).
    """
    required_by: list[BindingSnapshot] | None = None
    """RequiredBy represents the list of Bindings that depend on the referencing resource."""
    scheduler_name: str | None = None
    """SchedulerName represents which scheduler to proceed the scheduling.
    It inherits directly from the associated PropagationPolicy(or ClusterPropagationPolicy).
    """
    failover: FailoverBehavior | None = None
    """Failover indicates how Karmada migrates applications in case of failures.
    It inherits directly from the associated PropagationPolicy(or ClusterPropagationPolicy).
    """
    conflict_resolution: ConflictResolution = crd_default("Abort")
    """ConflictResolution declares how potential conflict should be handled when
    a resource that is being propagated already exists in the target cluster.

    It defaults to "Abort" which means stop propagating to avoid unexpected
    overwrites. The "Overwrite" might be useful when migrating legacy cluster
    resources to Karmada, in which case conflict is predictable and can be
    instructed to Karmada take over the resource by overwriting.
    """
    reschedule_triggered_at: Time | None = None
    """RescheduleTriggeredAt is a timestamp representing when the referenced resource is triggered rescheduling.
    When this field is updated, it means a rescheduling is manually triggered by user, and the expected behavior
    of this action is to do a complete recalculation without referring to last scheduling results.
    It works with the status.lastScheduledTime field, and only when this timestamp is later than timestamp in
    status.lastScheduledTime will the rescheduling actually execute, otherwise, ignored.

    It is represented in RFC3339 form (like '2006-01-02T15:04:05Z') and is in UTC.
    """
    suspension: BindingSuspension | None = None
    """Suspension declares the policy for suspending different aspects of propagation.
    nil means no suspension. no default values.
    """
    preserve_resources_on_deletion: bool | None = None
    """PreserveResourcesOnDeletion controls whether resources should be preserved on the
    member clusters when the binding object is deleted.
    If set to true, resources will be preserved on the member clusters.
    Default is false, which means resources will be deleted along with the binding object.
    This setting applies to all Work objects created under this binding object.
    """
    schedule_priority: BindingSchedulePriority | None = None
    """SchedulePriority represents the scheduling priority assigned to workloads."""
    workload_affinity_groups: WorkloadAffinityGroups | None = None
    """WorkloadAffinityGroups represents instantiated grouping results from .spec.placement.workloadAffinity,
    used to keep workloads with the same affinity group co-located or those with the same
    anti-affinity group separated across clusters. Populated by controllers, the scheduler
    consumes it for decisions.
    Note: Since workloads are namespace-scoped resources, workload affinity only applies to
    ResourceBinding. Therefore, the WorkloadAffinityGroups field in ClusterResourceBinding
    will not be set and will not be consumed by the scheduler.
    """


class AggregatedStatusItem(KubeModel):
    """The status of the template's copy in one cluster."""

    cluster_name: str
    """ClusterName represents the member cluster name which the resource deployed on."""
    status: RawObject | None = None
    """Status reflects running status of current manifest."""
    applied: bool | None = None
    """Applied represents if the resource referencing by ResourceBinding or ClusterResourceBinding
    is successfully applied on the cluster.
    """
    applied_message: str | None = None
    """AppliedMessage is a human readable message indicating details about the applied status.
    This is usually holds the error message in case of apply failed.
    """
    health: ResourceHealth | None = None
    """Health represents the healthy state of the current resource.
    There maybe different rules for different resources to achieve health status.
    """


class ResourceBindingStatus(KubeModel):
    """Scheduling progress, conditions and per-cluster status."""

    scheduler_observed_generation: Int64 | None = None
    """SchedulerObservedGeneration is the generation(.metadata.generation) observed by the scheduler.
    If SchedulerObservedGeneration is less than the generation in metadata means the scheduler hasn't confirmed
    the scheduling result or hasn't done the schedule yet.
    """
    # Karmada's JSON name differs from its Go field (SchedulerObservedAffinityName).
    scheduler_observed_affinity_name: str | None = Field(default=None, alias="schedulerObservingAffinityName")
    """SchedulerObservedAffinityName is the name of affinity term that is
    the basis of current scheduling.
    """
    last_scheduled_time: Time | None = None
    """LastScheduledTime representing the latest timestamp when scheduler successfully finished a scheduling.
    It is represented in RFC3339 form (like '2006-01-02T15:04:05Z') and is in UTC.
    """
    conditions: list[Condition] | None = None
    """Conditions contain the different condition statuses."""
    aggregated_status: list[AggregatedStatusItem] | None = None
    """AggregatedStatus represents status list of the resource running in each member cluster."""


class ResourceBinding(KubeObject):
    """Binds a namespaced resource template to clusters."""

    api_version: Literal["work.karmada.io/v1alpha2"] = BINDING_GROUP_VERSION
    """APIVersion defines the versioned schema of this representation of an object.
    Servers should convert recognized schemas to the latest internal value, and
    may reject unrecognized values.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
    """
    kind: Literal["ResourceBinding"] = "ResourceBinding"
    """Kind is a string value representing the REST resource this object represents.
    Servers may infer this from the endpoint the client submits requests to.
    Cannot be updated.
    In CamelCase.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
    """
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ResourceBindingSpec
    """Spec represents the desired behavior."""
    status: ResourceBindingStatus | None = None
    """Status represents the most recently observed status of the ResourceBinding."""


class ClusterResourceBinding(KubeObject):
    """Binds a cluster-scoped resource template to clusters."""

    api_version: Literal["work.karmada.io/v1alpha2"] = BINDING_GROUP_VERSION
    """APIVersion defines the versioned schema of this representation of an object.
    Servers should convert recognized schemas to the latest internal value, and
    may reject unrecognized values.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
    """
    kind: Literal["ClusterResourceBinding"] = "ClusterResourceBinding"
    """Kind is a string value representing the REST resource this object represents.
    Servers may infer this from the endpoint the client submits requests to.
    Cannot be updated.
    In CamelCase.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
    """
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ResourceBindingSpec
    """Spec represents the desired behavior."""
    status: ResourceBindingStatus | None = None
    """Status represents the most recently observed status of the ResourceBinding."""
