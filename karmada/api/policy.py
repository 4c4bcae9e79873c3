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
    kind: str
    namespace: str | None = None
    name: str | None = None
    label_selector: LabelSelector | None = None


class FieldSelector(KubeModel):
    """Cluster field selector; keys are ``provider``, ``region`` and ``zone``."""

    match_expressions: list[NodeSelectorRequirement] | None = None


class ClusterAffinity(KubeModel):
    """Which clusters are candidates: exclude, then labels, then fields, then names."""

    label_selector: LabelSelector | None = None
    field_selector: FieldSelector | None = None
    cluster_names: list[str] | None = None
    exclude: list[str] | None = None


class OverflowClusterAffinity(ClusterAffinity):
    """A named overflow tier of a clusterAffinities term."""

    affinity_name: AffinityName


class ClusterAffinityTerm(ClusterAffinity):
    """One named, ordered entry of ``placement.clusterAffinities``."""

    affinity_name: AffinityName
    overflow_affinities: list[OverflowClusterAffinity] | None = None


class SpreadConstraint(KubeModel):
    """Spread the workload over groups of clusters (by cluster, region, zone, provider or label)."""

    spread_by_field: SpreadFieldValue | None = None
    spread_by_label: str | None = None
    max_groups: int | None = None
    min_groups: int | None = None


class StaticClusterWeight(KubeModel):
    """Weight of the clusters a ClusterAffinity selects, for static weighted division."""

    target_cluster: ClusterAffinity
    weight: Annotated[Int64, Field(ge=1)]


class ClusterPreferences(KubeModel):
    """Weights for Divided/Weighted: a static list, or dynamic by available replicas."""

    static_weight_list: list[StaticClusterWeight] | None = None
    dynamic_weight: DynamicWeightFactor | None = None


class ReplicaSchedulingStrategy(KubeModel):
    """How replicas are placed: each cluster gets all (Duplicated) or a share (Divided)."""

    replica_scheduling_type: ReplicaSchedulingType = crd_default("Divided")
    replica_division_preference: ReplicaDivisionPreference | None = None
    weight_preference: ClusterPreferences | None = None


class WorkloadAffinityTerm(KubeModel):
    """Co-locate workloads sharing the value of a label."""

    group_by_label_key: str


class WorkloadAntiAffinityTerm(KubeModel):
    """Keep workloads sharing the value of a label apart."""

    group_by_label_key: str


class WorkloadAffinity(KubeModel):
    """Inter-workload affinity (alpha in Karmada)."""

    affinity: WorkloadAffinityTerm | None = None
    anti_affinity: WorkloadAntiAffinityTerm | None = None


class Placement(KubeModel):
    """Where a resource may go, and how its replicas are split."""

    cluster_affinity: ClusterAffinity | None = None
    cluster_affinities: list[ClusterAffinityTerm] | None = None
    cluster_tolerations: list[Toleration] | None = None
    spread_constraints: list[SpreadConstraint] | None = None
    replica_scheduling: ReplicaSchedulingStrategy | None = None
    workload_affinity: WorkloadAffinity | None = None


class StatePreservationRule(KubeModel):
    """Copy a value found by ``jsonPath`` into a label on the new cluster's copy."""

    alias_label_name: str
    json_path: str = Field(alias="jsonPath")


class StatePreservation(KubeModel):
    """State carried from the failed cluster to the new one."""

    rules: list[StatePreservationRule]


class DecisionConditions(KubeModel):
    """When application failover triggers."""

    toleration_seconds: Int32 = crd_default(300)


class ApplicationFailoverBehavior(KubeModel):
    """Move the application when it stays unhealthy on a cluster."""

    decision_conditions: DecisionConditions
    purge_mode: PurgeMode = crd_default("Gracefully")
    grace_period_seconds: Int32 | None = None
    state_preservation: StatePreservation | None = None


class ClusterFailoverBehavior(KubeModel):
    """What happens to the old copy when a cluster fails."""

    purge_mode: ClusterPurgeMode = crd_default("Gracefully")
    state_preservation: StatePreservation | None = None


class FailoverBehavior(KubeModel):
    """Failover settings; absent means application failover is off."""

    application: ApplicationFailoverBehavior | None = None
    cluster: ClusterFailoverBehavior | None = None


class SuspendClusters(KubeModel):
    """The clusters to which dispatching is suspended."""

    cluster_names: list[str] | None = None


class Suspension(KubeModel):
    """Stop dispatching to all clusters, or to some."""

    dispatching: bool | None = None
    dispatching_on_clusters: SuspendClusters | None = None


class SchedulePriority(KubeModel):
    """Scheduling priority taken from a Kubernetes PriorityClass."""

    priority_class_source: PriorityClassSource
    priority_class_name: str


class PropagationSpec(KubeModel):
    """What to propagate (resourceSelectors) and where (placement)."""

    resource_selectors: Annotated[list[ResourceSelector], Field(min_length=1)]
    association: bool | None = None
    propagate_deps: bool | None = None
    placement: Placement | None = None
    priority: Int32 = crd_default(0)
    preemption: PreemptionBehavior = crd_default("Never")
    dependent_overrides: list[str] | None = None
    scheduler_name: str = crd_default("default-scheduler")
    failover: FailoverBehavior | None = None
    conflict_resolution: ConflictResolution = crd_default("Abort")
    activation_preference: ActivationPreference | None = None
    suspension: Suspension | None = None
    preserve_resources_on_deletion: bool | None = None
    schedule_priority: SchedulePriority | None = None


class PropagationPolicy(KubeObject):
    """Propagates resources of its own namespace to member clusters."""

    api_version: Literal["policy.karmada.io/v1alpha1"] = POLICY_GROUP_VERSION
    kind: Literal["PropagationPolicy"] = "PropagationPolicy"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PropagationSpec


class ClusterPropagationPolicy(KubeObject):
    """Propagates resources of any namespace, and cluster-scoped resources."""

    api_version: Literal["policy.karmada.io/v1alpha1"] = POLICY_GROUP_VERSION
    kind: Literal["ClusterPropagationPolicy"] = "ClusterPropagationPolicy"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PropagationSpec
