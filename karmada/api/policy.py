"""``policy.karmada.io/v1alpha1``: PropagationPolicy and ClusterPropagationPolicy.

Field names, enums and schema defaults follow Karmada's
``pkg/apis/policy/v1alpha1/propagation_types.go`` and the CRDs generated from it.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field

from karmada.api._base import Int32, Int64, KubeModel, KubeObject, crd_default
from karmada.api.core import NodeSelectorRequirement, Toleration
from karmada.api.meta import LabelSelector, ObjectMeta

POLICY_GROUP_VERSION: Final = "policy.karmada.io/v1alpha1"

PurgeMode = Literal["Directly", "Gracefully", "Never"]
ClusterPurgeMode = Literal["Directly", "Gracefully"]
ReplicaSchedulingType = Literal["Duplicated", "Divided"]
ReplicaDivisionPreference = Literal["Aggregated", "Weighted"]
DynamicWeightFactor = Literal["AvailableReplicas"]
SpreadFieldValue = Literal["cluster", "region", "zone", "provider"]
PreemptionBehavior = Literal["Always", "Never"]
ConflictResolution = Literal["Abort", "Overwrite"]
ActivationPreference = Literal["Lazy"]
PriorityClassSource = Literal["KubePriorityClass"]

AffinityName = Annotated[str, Field(min_length=1, max_length=32)]


class ResourceSelector(KubeModel):
    """Selects resource templates: by name, else by labelSelector, else all of the kind."""

    api_version: str
    """APIVersion represents the API version of the target resources."""
    kind: str
    """Kind represents the Kind of the target resources."""
    namespace: str | None = None
    """Namespace of the target resource.
    Default is empty, which means inherit from the parent object scope.
    """
    name: str | None = None
    """Name of the target resource.
    Default is empty, which means selecting all resources.
    """
    label_selector: LabelSelector | None = None
    """A label query over a set of resources.
    If name is not empty, labelSelector will be ignored.
    """


class FieldSelector(KubeModel):
    """Cluster field selector; keys are ``provider``, ``region`` and ``zone``."""

    match_expressions: list[NodeSelectorRequirement] | None = None
    """A list of field selector requirements."""


class ClusterAffinity(KubeModel):
    """Which clusters are candidates: exclude, then labels, then fields, then names."""

    label_selector: LabelSelector | None = None
    """LabelSelector is a filter to select member clusters by labels.
    If non-nil and non-empty, only the clusters match this filter will be selected.
    """
    field_selector: FieldSelector | None = None
    """FieldSelector is a filter to select member clusters by fields.
    The key(field) of the match expression should be 'provider', 'region', or 'zone',
    and the operator of the match expression should be 'In' or 'NotIn'.
    If non-nil and non-empty, only the clusters match this filter will be selected.
    """
    cluster_names: list[str] | None = None
    """ClusterNames is the list of clusters to be selected."""
    exclude: list[str] | None = None
    """ExcludedClusters is the list of clusters to be ignored."""


class OverflowClusterAffinity(ClusterAffinity):
    """A named overflow tier of a clusterAffinities term."""

    affinity_name: AffinityName
    """AffinityName is the name of the cluster group."""


class ClusterAffinityTerm(ClusterAffinity):
    """One named, ordered entry of ``placement.clusterAffinities``."""

    affinity_name: AffinityName
    """AffinityName is the name of the cluster group."""
    overflow_affinities: list[OverflowClusterAffinity] | None = None
    """OverflowAffinities defines additional cluster groups that the scheduler
    can progressively include when the primary group (defined by the inline
    ClusterAffinity) has insufficient resources. Groups are expanded in order
    and contracted in reverse during scale-down.
    Can only be used together with the inline ClusterAffinity (the inline
    ClusterAffinity serves as the primary/preferred group).
    If a cluster appears in multiple OverflowClusterAffinity entries, it is
    scheduled according to the first entry in which it appears; subsequent
    occurrences of the same cluster are ignored.
    """


class SpreadConstraint(KubeModel):
    """Spread the workload over groups of clusters (by cluster, region, zone, provider or label)."""

    spread_by_field: SpreadFieldValue | None = None
    """SpreadByField represents the fields on Karmada cluster API used for
    dynamically grouping member clusters into different groups.
    Resources will be spread among different cluster groups.
    Available fields for spreading are: cluster, region, zone, and provider.
    SpreadByField should not co-exist with SpreadByLabel.
    If both SpreadByField and SpreadByLabel are empty, SpreadByField will be set to "cluster" by system.
    """
    spread_by_label: str | None = None
    """SpreadByLabel represents the label key used for
    grouping member clusters into different groups.
    Resources will be spread among different cluster groups.
    SpreadByLabel should not co-exist with SpreadByField.
    """
    max_groups: int | None = None
    """MaxGroups restricts the maximum number of cluster groups to be selected."""
    min_groups: int | None = None
    """MinGroups restricts the minimum number of cluster groups to be selected.
    Defaults to 1.
    """


class StaticClusterWeight(KubeModel):
    """Weight of the clusters a ClusterAffinity selects, for static weighted division."""

    target_cluster: ClusterAffinity
    """TargetCluster describes the filter to select clusters."""
    weight: Annotated[Int64, Field(ge=1)]
    """Weight expressing the preference to the cluster(s) specified by 'TargetCluster'."""


class ClusterPreferences(KubeModel):
    """Weights for Divided/Weighted: a static list, or dynamic by available replicas."""

    static_weight_list: list[StaticClusterWeight] | None = None
    """StaticWeightList defines the static cluster weight."""
    dynamic_weight: DynamicWeightFactor | None = None
    """DynamicWeight specifies the factor to generates dynamic weight list.
    If specified, StaticWeightList will be ignored.
    """


class ReplicaSchedulingStrategy(KubeModel):
    """How replicas are placed: each cluster gets all (Duplicated) or a share (Divided)."""

    replica_scheduling_type: ReplicaSchedulingType = crd_default("Divided")
    """ReplicaSchedulingType determines how the replicas is scheduled when karmada propagating
    a resource. Valid options are Duplicated and Divided.
    "Duplicated" duplicates the same replicas to each candidate member cluster from resource.
    "Divided" divides replicas into parts according to number of valid candidate member
    clusters, and exact replicas for each cluster are determined by ReplicaDivisionPreference.
    """
    replica_division_preference: ReplicaDivisionPreference | None = None
    """ReplicaDivisionPreference determines how the replicas is divided
    when ReplicaSchedulingType is "Divided". Valid options are Aggregated and Weighted.
    "Aggregated" divides replicas into clusters as few as possible,
    while respecting clusters' resource availabilities during the division.
    "Weighted" divides replicas by weight according to WeightPreference.
    """
    weight_preference: ClusterPreferences | None = None
    """WeightPreference describes weight for each cluster or for each group of cluster
    If ReplicaDivisionPreference is set to "Weighted", and WeightPreference is not set, scheduler will weight all
    clusters the same.
    """


class WorkloadAffinityTerm(KubeModel):
    """Co-locate workloads sharing the value of a label."""

    group_by_label_key: str
    """GroupByLabelKey declares the label key on the workload resource template that
    determines the affinity group. Workloads with the same label value under
    this key belong to the same affinity group.

    The scheduler maintains a global index of affinity groups in memory for
    efficient lookup. Each affinity group is identified by a serialized
    key-value pair and contains all workload resource templates that belong
    to the group.

    Note: Affinity groups are scoped to the namespace. Workloads that use the
    same affinity label but reside in different namespaces are not treated
    as part of the same group.

    The key must be a valid Kubernetes label key.

    Example: If GroupByLabelKey is "app.group", workloads with the label
    "app.group=frontend" will form one affinity group, while those with
    "app.group=backend" will form another.
    """


class WorkloadAntiAffinityTerm(KubeModel):
    """Keep workloads sharing the value of a label apart."""

    group_by_label_key: str
    """GroupByLabelKey declares the label key on the workload resource template that
    determines the anti-affinity group. Workloads with the same label value under
    this key belong to the same anti-affinity group and will be separated.

    The scheduler maintains a global index of affinity groups in memory for
    efficient lookup. Each affinity group is identified by a serialized
    key-value pair and contains all workload resource templates that belong
    to the group.

    Note: Affinity groups are scoped to the namespace. Workloads that use the
    same anti-affinity label but reside in different namespaces are not treated
    as part of the same group.

    The key must be a valid Kubernetes label key.

    Example: If GroupByLabelKey is "app.group", workloads with the label
    "app.group=frontend" will avoid clusters where other
    "app.group=frontend" workloads already exist.
    """


class WorkloadAffinity(KubeModel):
    """Inter-workload affinity (alpha in Karmada)."""

    affinity: WorkloadAffinityTerm | None = None
    """Affinity represents inter-workload affinity scheduling rules.
    These are hard requirements: workloads will only be scheduled to clusters
    that satisfy the affinity term if it is specified.

    For the first workload of an affinity group (when no workloads with a
    matching label value exist in the system), the scheduler will not block
    scheduling. This allows bootstrapping new workload groups without
    encountering scheduling deadlocks, providing a better user experience.
    """
    anti_affinity: WorkloadAntiAffinityTerm | None = None
    """AntiAffinity represents inter-workload anti-affinity scheduling rules.
    These are hard requirements: workloads will be scheduled to avoid clusters
    where matching workloads are already scheduled.
    """


class Placement(KubeModel):
    """Where a resource may go, and how its replicas are split."""

    cluster_affinity: ClusterAffinity | None = None
    """ClusterAffinity represents scheduling restrictions to a certain set of clusters.
    Note:
      1. ClusterAffinity can not co-exist with ClusterAffinities.
      2. If both ClusterAffinity and ClusterAffinities are not set, any cluster
         can be scheduling candidates.
    """
    cluster_affinities: list[ClusterAffinityTerm] | None = None
    """ClusterAffinities represents scheduling restrictions to multiple cluster
    groups that indicated by ClusterAffinityTerm.

    The scheduler will evaluate these groups one by one in the order they
    appear in the spec, the group that does not satisfy scheduling restrictions
    will be ignored which means all clusters in this group will not be selected
    unless it also belongs to the next group(a cluster could belong to multiple
    groups).

    If none of the groups satisfy the scheduling restrictions, then scheduling
    fails, which means no cluster will be selected.

    Note:
      1. ClusterAffinities can not co-exist with ClusterAffinity.
      2. If both ClusterAffinity and ClusterAffinities are not set, any cluster
         can be scheduling candidates.

    Potential use case 1:
    The private clusters in the local data center could be the main group, and
    the managed clusters provided by cluster providers could be the secondary
    group. So that the Karmada scheduler would prefer to schedule workloads
    to the main group and the second group will only be considered in case of
    the main group does not satisfy restrictions(like, lack of resources).

    Potential use case 2:
    For the disaster recovery scenario, the clusters could be organized to
    primary and backup groups, the workloads would be scheduled to primary
    clusters firstly, and when primary cluster fails(like data center power off),
    Karmada scheduler could migrate workloads to the backup clusters.
    """
    cluster_tolerations: list[Toleration] | None = None
    """ClusterTolerations represents the tolerations."""
    spread_constraints: list[SpreadConstraint] | None = None
    """SpreadConstraints represents a list of the scheduling constraints."""
    replica_scheduling: ReplicaSchedulingStrategy | None = None
    """ReplicaScheduling represents the scheduling policy on dealing with the number of replicas
    when propagating resources that have replicas in spec (e.g. deployments, statefulsets) to member clusters.
    """
    workload_affinity: WorkloadAffinity | None = None
    """WorkloadAffinity represents inter-workload affinity and anti-affinity
    scheduling policies.
    """


class StatePreservationRule(KubeModel):
    """Copy a value found by ``jsonPath`` into a label on the new cluster's copy."""

    alias_label_name: str
    """AliasLabelName is the name that will be used as a label key when the preserved
    data is passed to the new cluster. This facilitates the injection of the
    preserved state back into the application resources during recovery.
    """
    json_path: str = Field(alias="jsonPath")
    """JSONPath is the JSONPath template used to identify the state data
    to be preserved from the original resource configuration.
    The JSONPath syntax follows the Kubernetes specification:
    https://kubernetes.io/docs/reference/kubectl/jsonpath/

    Note: The JSONPath expression will start searching from the "status" field of
    the API resource object by default. For example, to extract the "availableReplicas"
    from a Deployment, the JSONPath expression should be "{.availableReplicas}", not
    "{.status.availableReplicas}".
    """


class StatePreservation(KubeModel):
    """State carried from the failed cluster to the new one."""

    rules: list[StatePreservationRule]
    """Rules contains a list of StatePreservationRule configurations.
    Each rule specifies a JSONPath expression targeting specific pieces of
    state data to be preserved during failover events. An AliasLabelName is associated
    with each rule, serving as a label key when the preserved data is passed
    to the new cluster.
    """


class DecisionConditions(KubeModel):
    """When application failover triggers."""

    toleration_seconds: Int32 = crd_default(300)
    """TolerationSeconds represents the period of time Karmada should wait
    after reaching the desired state before performing failover process.

    Defaults to 300s if not specified.
    Set it to 0 to perform failover immediately.
    """


class ApplicationFailoverBehavior(KubeModel):
    """Move the application when it stays unhealthy on a cluster."""

    decision_conditions: DecisionConditions
    """DecisionConditions indicates the decision conditions of performing the failover process.
    Only when all conditions are met can the failover process be performed.
    Currently, DecisionConditions includes several conditions:
    - TolerationSeconds (optional)
    """
    purge_mode: PurgeMode = crd_default("Gracefully")
    """PurgeMode represents how to deal with the legacy applications on the
    cluster from which the application is migrated.
    Valid options are "Directly", "Gracefully", "Never".
    Defaults to "Gracefully".
    """
    grace_period_seconds: Int32 | None = None
    """GracePeriodSeconds is the maximum waiting duration in seconds before
    application on the migrated cluster should be deleted.
    Required only when PurgeMode is "Gracefully" and defaults to 600s.
    If the application on the new cluster cannot reach a Healthy state,
    Karmada will delete the application after GracePeriodSeconds is reached.
    Value must be positive integer.
    """
    state_preservation: StatePreservation | None = None
    """StatePreservation defines the policy for preserving and restoring state data
    during failover events for stateful applications.

    When an application fails over from one cluster to another, this policy enables
    the extraction of critical data from the original resource configuration.
    Upon successful migration, the extracted data is then re-injected into the new
    resource, ensuring that the application can resume operation with its previous
    state intact.
    This is particularly useful for stateful applications where maintaining data
    consistency across failover events is crucial.
    If not specified, means no state data will be preserved.

    Note: This requires the StatefulFailoverInjection feature gate to be enabled,
    which is alpha.
    """


class ClusterFailoverBehavior(KubeModel):
    """What happens to the old copy when a cluster fails."""

    purge_mode: ClusterPurgeMode = crd_default("Gracefully")
    """PurgeMode represents how to deal with the legacy applications on the
    cluster from which the application is migrated.
    Valid options are "Directly", "Gracefully".
    Defaults to "Gracefully".
    """
    state_preservation: StatePreservation | None = None
    """StatePreservation defines the policy for preserving and restoring state data
    during failover events for stateful applications.

    When an application fails over from one cluster to another, this policy enables
    the extraction of critical data from the original resource configuration.
    Upon successful migration, the extracted data is then re-injected into the new
    resource, ensuring that the application can resume operation with its previous
    state intact.
    This is particularly useful for stateful applications where maintaining data
    consistency across failover events is crucial.
    If not specified, means no state data will be preserved.

    Note: This requires the StatefulFailoverInjection feature gate to be enabled,
    which is alpha.
    """


class FailoverBehavior(KubeModel):
    """Failover settings; absent means application failover is off."""

    application: ApplicationFailoverBehavior | None = None
    """Application indicates failover behaviors in case of application failure.
    If this value is nil, failover is disabled.
    If set, the PropagateDeps should be true so that the dependencies could
    be migrated along with the application.
    """
    cluster: ClusterFailoverBehavior | None = None
    """Cluster indicates failover behaviors in case of cluster failure.
    If this value is nil, the failover behavior in case of cluster failure
    will be controlled by the controller's no-execute-taint-eviction-purge-mode
    parameter.
    If set, the failover behavior in case of cluster failure will be defined
    by this value.
    """


class SuspendClusters(KubeModel):
    """The clusters to which dispatching is suspended."""

    cluster_names: list[str] | None = None
    """ClusterNames is the list of clusters to be selected."""


class Suspension(KubeModel):
    """Stop dispatching to all clusters, or to some."""

    dispatching: bool | None = None
    """Dispatching controls whether dispatching should be suspended.
    nil means not suspend, no default value, only accepts 'true'.
    Note: true means stop propagating to all clusters. Can not co-exist
    with DispatchingOnClusters which is used to suspend particular clusters.
    """
    dispatching_on_clusters: SuspendClusters | None = None
    """DispatchingOnClusters declares a list of clusters to which the dispatching
    should be suspended.
    Note: Can not co-exist with Dispatching which is used to suspend all.
    """


class SchedulePriority(KubeModel):
    """Scheduling priority taken from a Kubernetes PriorityClass."""

    priority_class_source: PriorityClassSource
    """PriorityClassSource specifies where Karmada should look for the PriorityClass definition.
    Available options:
    - KubePriorityClass: Uses Kubernetes PriorityClass (scheduling.k8s.io/v1)
    - PodPriorityClass: Uses PriorityClassName from PodTemplate: PodSpec.PriorityClassName (not yet implemented)
    - FederatedPriorityClass: Uses Karmada FederatedPriorityClass (not yet implemented)
    """
    priority_class_name: str
    """PriorityClassName specifies which PriorityClass to use. Its behavior depends on PriorityClassSource:

    Behavior of PriorityClassName:

    For KubePriorityClass:
    - When specified: Uses the named Kubernetes PriorityClass.

    For PodPriorityClass:
    - Uses PriorityClassName from the PodTemplate.
    - Not yet implemented.

    For FederatedPriorityClass:
    - Not yet implemented.
    """


class PropagationSpec(KubeModel):
    """What to propagate (resourceSelectors) and where (placement)."""

    resource_selectors: Annotated[list[ResourceSelector], Field(min_length=1)]
    """ResourceSelectors used to select resources.
    Nil or empty selector is not allowed and doesn't mean match all kinds
    of resources for security concerns that sensitive resources(like Secret)
    might be accidentally propagated.
    """
    association: bool | None = None
    """Association tells if relevant resources should be selected automatically.
    e.g. a ConfigMap referred by a Deployment.
    default false.
    Deprecated: in favor of PropagateDeps.
    """
    propagate_deps: bool | None = None
    """PropagateDeps tells if relevant resources should be propagated automatically.
    Take 'Deployment' which referencing 'ConfigMap' and 'Secret' as an example, when 'propagateDeps' is 'true',
    the referencing resources could be omitted(for saving config effort) from 'resourceSelectors' as they will be
    propagated along with the Deployment. In addition to the propagating process, the referencing resources will be
    migrated along with the Deployment in the fail-over scenario.

    Defaults to false.
    """
    placement: Placement | None = None
    """Placement represents the rule for select clusters to propagate resources."""
    priority: Int32 = crd_default(0)
    """Priority indicates the importance of a policy(PropagationPolicy or ClusterPropagationPolicy).
    A policy will be applied for the matched resource templates if there is
    no other policies with higher priority at the point of the resource
    template be processed.
    Once a resource template has been claimed by a policy, by default it will
    not be preempted by following policies even with a higher priority.
    See Preemption for more details.

    In case of two policies have the same priority, the one with a more precise
    matching rules in ResourceSelectors wins:
    - matching by name(resourceSelector.name) has higher priority than
      by selector(resourceSelector.labelSelector)
    - matching by selector(resourceSelector.labelSelector) has higher priority
      than by APIVersion(resourceSelector.apiVersion) and Kind(resourceSelector.kind).
    If there is still no winner at this point, the one with the lower alphabetic
    order wins, e.g. policy 'bar' has higher priority than 'foo'.

    The higher the value, the higher the priority. Defaults to zero.
    """
    preemption: PreemptionBehavior = crd_default("Never")
    """Preemption declares the behaviors for preempting.
    Valid options are "Always" and "Never".
    """
    dependent_overrides: list[str] | None = None
    """DependentOverrides represents the list of overrides(OverridePolicy)
    which must present before the current PropagationPolicy takes effect.

    It used to explicitly specify overrides which current PropagationPolicy rely on.
    A typical scenario is the users create OverridePolicy(ies) and resources at the same time,
    they want to ensure the new-created policies would be adopted.

    Note: For the overrides, OverridePolicy(ies) in current namespace and ClusterOverridePolicy(ies),
    which not present in this list will still be applied if they matches the resources.
    """
    scheduler_name: str = crd_default("default-scheduler")
    """SchedulerName represents which scheduler to proceed the scheduling.
    If specified, the policy will be dispatched by specified scheduler.
    If not specified, the policy will be dispatched by default scheduler.
    """
    failover: FailoverBehavior | None = None
    """Failover indicates how Karmada migrates applications in case of failures.
    If this value is nil, failover is disabled.
    """
    conflict_resolution: ConflictResolution = crd_default("Abort")
    """ConflictResolution declares how potential conflict should be handled when
    a resource that is being propagated already exists in the target cluster.

    It defaults to "Abort" which means stop propagating to avoid unexpected
    overwrites. The "Overwrite" might be useful when migrating legacy cluster
    resources to Karmada, in which case conflict is predictable and can be
    instructed to Karmada take over the resource by overwriting.
    """
    activation_preference: ActivationPreference | None = None
    """ActivationPreference indicates how the referencing resource template will
    be propagated, in case of policy changes.

    If empty, the resource template will respond to policy changes
    immediately, in other words, any policy changes will drive the resource
    template to be propagated immediately as per the current propagation rules.

    If the value is 'Lazy' means the policy changes will not take effect for now
    but defer to the resource template changes, in other words, the resource
    template will not be propagated as per the current propagation rules until
    there is an update on it.
    This is an experimental feature that might help in a scenario where a policy
    manages huge amount of resource templates, changes to a policy typically
    affect numerous applications simultaneously. A minor misconfiguration
    could lead to widespread failures. With this feature, the change can be
    gradually rolled out through iterative modifications of resource templates.
    """
    suspension: Suspension | None = None
    """Suspension declares the policy for suspending different aspects of propagation.
    nil means no suspension. no default values.
    """
    preserve_resources_on_deletion: bool | None = None
    """PreserveResourcesOnDeletion controls whether resources should be preserved on the
    member clusters when the resource template is deleted.
    If set to true, resources will be preserved on the member clusters.
    Default is false, which means resources will be deleted along with the resource template.

    This setting is particularly useful during workload migration scenarios to ensure
    that rollback can occur quickly without affecting the workloads running on the
    member clusters.

    Additionally, this setting applies uniformly across all member clusters and will not
    selectively control preservation on only some clusters.

    Note: This setting does not apply to the deletion of the policy itself.
    When the policy is deleted, the resource templates and their corresponding
    propagated resources in member clusters will remain unchanged unless explicitly deleted.
    """
    schedule_priority: SchedulePriority | None = None
    """SchedulePriority defines how Karmada should resolve the priority and preemption policy
    for workload scheduling.

    This setting is useful for controlling the scheduling behavior of offline workloads.
    By setting a higher or lower priority, users can control which workloads are scheduled first.
    Additionally, it allows specifying a preemption policy where higher-priority workloads can
    preempt lower-priority ones in scenarios of resource contention.

    Note: This feature is currently in the beta stage. The priority-based scheduling functionality is
    controlled by the PriorityBasedScheduling feature gate, and preemption is controlled by the
    PriorityBasedPreemptiveScheduling feature gate. Currently, only priority-based scheduling is
    supported. Preemption functionality is not yet available and will be introduced in future
    releases as the feature matures.
    """


class PropagationPolicy(KubeObject):
    """Propagates resources of its own namespace to member clusters."""

    api_version: Literal["policy.karmada.io/v1alpha1"] = POLICY_GROUP_VERSION
    """APIVersion defines the versioned schema of this representation of an object.
    Servers should convert recognized schemas to the latest internal value, and
    may reject unrecognized values.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
    """
    kind: Literal["PropagationPolicy"] = "PropagationPolicy"
    """Kind is a string value representing the REST resource this object represents.
    Servers may infer this from the endpoint the client submits requests to.
    Cannot be updated.
    In CamelCase.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
    """
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PropagationSpec
    """Spec represents the desired behavior of PropagationPolicy."""


class ClusterPropagationPolicy(KubeObject):
    """Propagates resources of any namespace, and cluster-scoped resources."""

    api_version: Literal["policy.karmada.io/v1alpha1"] = POLICY_GROUP_VERSION
    """APIVersion defines the versioned schema of this representation of an object.
    Servers should convert recognized schemas to the latest internal value, and
    may reject unrecognized values.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
    """
    kind: Literal["ClusterPropagationPolicy"] = "ClusterPropagationPolicy"
    """Kind is a string value representing the REST resource this object represents.
    Servers may infer this from the endpoint the client submits requests to.
    Cannot be updated.
    In CamelCase.
    More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
    """
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PropagationSpec
    """Spec represents the desired behavior of ClusterPropagationPolicy."""
