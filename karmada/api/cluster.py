"""``cluster.karmada.io/v1alpha1`` Cluster: one member cluster.

Upstream Karmada serves Cluster from its aggregated API server, not from a
CRD; we ship it as a CRD with a status subresource. The aggregated server's
defaults and checks (name rules, ``zone`` to ``zones``, ``timeAdded`` on
NoExecute taints, default resource models) belong to the cluster controller.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field

from karmada.api._base import KubeModel, KubeObject, Quantity, ResourceList
from karmada.api.core import Taint
from karmada.api.meta import Condition, ObjectMeta

CLUSTER_GROUP_VERSION: Final = "cluster.karmada.io/v1alpha1"

ClusterSyncMode = Literal["Push", "Pull"]

# Condition types and reasons (Karmada's exact strings).
CLUSTER_CONDITION_READY = "Ready"
CLUSTER_CONDITION_COMPLETE_API_ENABLEMENTS = "CompleteAPIEnablements"
REASON_CLUSTER_READY = "ClusterReady"
REASON_CLUSTER_NOT_READY = "ClusterNotReady"
REASON_CLUSTER_NOT_REACHABLE = "ClusterNotReachable"
REASON_STATUS_COLLECTION_FAILED = "StatusCollectionFailed"
REASON_CLUSTER_STATUS_UNKNOWN = "ClusterStatusUnknown"
REASON_CLUSTER_STATUS_NEVER_UPDATED = "ClusterStatusNeverUpdated"
MESSAGE_CLUSTER_READY = "cluster is healthy and ready to accept workloads"
MESSAGE_CLUSTER_NOT_READY = "cluster is reachable but health endpoint responded without ok"
MESSAGE_CLUSTER_NOT_REACHABLE = "cluster is not reachable"
MESSAGE_CLUSTER_STATUS_UNKNOWN = "Cluster status controller stopped posting cluster status."
MESSAGE_CLUSTER_STATUS_NEVER_UPDATED = "Cluster status controller never posted cluster status."
REASON_API_ENABLEMENTS_COMPLETE = "Complete"
REASON_API_ENABLEMENTS_PARTIAL = "Partial"
REASON_API_ENABLEMENTS_EMPTY = "Empty"

# Keys of the cluster credential Secret referenced by secretRef.
SECRET_TOKEN_KEY = "token"
SECRET_CA_DATA_KEY = "caBundle"


class LocalSecretReference(KubeModel):
    """A Secret on the control plane, by namespace and name."""

    namespace: str
    name: str


class ResourceModelRange(KubeModel):
    """``[min, max)`` of one resource within a grade."""

    name: str
    min: Quantity
    max: Quantity


class ResourceModel(KubeModel):
    """One grade of node sizes used to model a cluster's capacity."""

    grade: Annotated[int, Field(ge=0)]
    ranges: list[ResourceModelRange]


class ClusterSpec(KubeModel):
    """How to reach the cluster and where it is."""

    id: Annotated[str, Field(max_length=128000)] | None = None
    sync_mode: ClusterSyncMode
    api_endpoint: str | None = None
    secret_ref: LocalSecretReference | None = None
    impersonator_secret_ref: LocalSecretReference | None = None
    insecure_skip_tls_verification: bool | None = Field(default=None, alias="insecureSkipTLSVerification")
    proxy_url: str | None = Field(default=None, alias="proxyURL")
    proxy_header: dict[str, str] | None = None
    provider: str | None = None
    region: str | None = None
    zone: str | None = Field(default=None, description="Deprecated: use zones.")
    zones: list[str] | None = None
    taints: list[Taint] | None = None
    resource_models: list[ResourceModel] | None = None


class APIResource(KubeModel):
    """A resource served by the member: plural name and kind."""

    name: str
    kind: str


class APIEnablement(KubeModel):
    """The resources served under one group/version of the member."""

    group_version: str
    resources: list[APIResource] | None = None


class NodeSummary(KubeModel):
    """Node counts of the member."""

    total_num: int | None = None
    ready_num: int | None = None


class AllocatableModeling(KubeModel):
    """How many nodes fall into one resource-model grade."""

    grade: Annotated[int, Field(ge=0)]
    count: int


class ResourceSummary(KubeModel):
    """Capacity of the member: allocatable, requested by pending pods, requested by running pods."""

    allocatable: ResourceList | None = None
    allocating: ResourceList | None = None
    allocated: ResourceList | None = None
    allocatable_modelings: list[AllocatableModeling] | None = None


class ClusterStatus(KubeModel):
    """What the agent (pull) or the control plane (push) observed of the member."""

    kubernetes_version: str | None = None
    api_enablements: list[APIEnablement] | None = None
    conditions: list[Condition] | None = None
    node_summary: NodeSummary | None = None
    resource_summary: ResourceSummary | None = None
    remedy_actions: list[str] | None = None


class Cluster(KubeObject):
    """A member cluster registered with the control plane."""

    api_version: Literal["cluster.karmada.io/v1alpha1"] = CLUSTER_GROUP_VERSION
    kind: Literal["Cluster"] = "Cluster"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ClusterSpec
    status: ClusterStatus | None = None
