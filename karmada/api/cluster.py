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
    """Namespace is the namespace for the resource being referenced."""
    name: str
    """Name is the name of the resource being referenced."""


class ResourceModelRange(KubeModel):
    """``[min, max)`` of one resource within a grade."""

    name: str
    """Name is the name for the resource that you want to categorize."""
    min: Quantity
    """Min is the minimum amount of this resource represented by resource name.
    Note: The Min value of first grade(usually 0) always acts as zero.
    E.g. [1,2) equal to [0,2).
    """
    max: Quantity
    """Max is the maximum amount of this resource represented by resource name.
    Special Instructions, for the last ResourceModelRange, which no matter what Max value you pass,
    the meaning is infinite. Because for the last item,
    any ResourceModelRange's quota larger than Min will be classified to the last one.
    Of course, the value of the Max field is always greater than the value of the Min field.
    It should be true in any case.
    """


class ResourceModel(KubeModel):
    """One grade of node sizes used to model a cluster's capacity."""

    grade: Annotated[int, Field(ge=0)]
    """Grade is the index for the resource modeling."""
    ranges: list[ResourceModelRange]
    """Ranges describes the resource quota ranges."""


class ClusterSpec(KubeModel):
    """How to reach the cluster and where it is."""

    id: Annotated[str, Field(max_length=128000)] | None = None
    """ID is the unique identifier for the cluster.
    It is different from the object uid(.metadata.uid) and is typically collected automatically
    from each member cluster during the process of registration.

    The value is collected in order:
    1. If the registering cluster enabled ClusterProperty API and defined the cluster ID by
      creating a ClusterProperty object with name 'cluster.clusterset.k8s.io', Karmada would
      take the defined value in the ClusterProperty object.
      See https://github.com/kubernetes-sigs/about-api for more details about ClusterProperty API.
    2. Take the uid of 'kube-system' namespace on the registering cluster.

    Please don't update this value unless you know what you are doing, because
    it will/may be used to :
    - uniquely identify the clusters within the Karmada system.
    - compose the DNS name of multi-cluster services.
    """
    sync_mode: ClusterSyncMode
    """SyncMode describes how a cluster syncs resources from karmada control plane."""
    api_endpoint: str | None = None
    """The API endpoint of the member cluster. This can be a hostname,
    hostname:port, IP or IP:port.
    """
    secret_ref: LocalSecretReference | None = None
    """SecretRef represents the secret that contains mandatory credentials to access the member cluster.
    The secret should hold credentials as follows:
    - secret.data.token
    - secret.data.caBundle
    """
    impersonator_secret_ref: LocalSecretReference | None = None
    """ImpersonatorSecretRef represents the secret that contains the token of impersonator.
    The secret should hold credentials as follows:
    - secret.data.token
    """
    insecure_skip_tls_verification: bool | None = Field(default=None, alias="insecureSkipTLSVerification")
    """InsecureSkipTLSVerification indicates that the karmada control plane should not confirm the validity of the
    serving
    certificate of the cluster it is connecting to. This will make the HTTPS connection between the karmada control
    plane and the member cluster insecure.
    Defaults to false.
    """
    proxy_url: str | None = Field(default=None, alias="proxyURL")
    """ProxyURL is the proxy URL for the cluster.
    If not empty, the karmada control plane will use this proxy to talk to the cluster.
    For more details please refer to: https://github.com/kubernetes/client-go/issues/351
    """
    proxy_header: dict[str, str] | None = None
    """ProxyHeader is the HTTP header required by proxy server.
    The key in the key-value pair is HTTP header key and the value is the associated header payloads.
    For the header with multiple values, the values should be separated by comma(e.g. 'k1': 'v1,v2,v3').
    """
    provider: str | None = None
    """Provider represents the cloud provider name of the member cluster."""
    region: str | None = None
    """Region represents the region in which the member cluster is located."""
    zone: str | None = Field(default=None, description="Deprecated: use zones.")
    """Zone represents the zone in which the member cluster is located.
    Deprecated: This field was never been used by Karmada, and it will not be
    removed from v1alpha1 for backward compatibility, use Zones instead.
    """
    zones: list[str] | None = None
    """Zones represents the failure zones(also called availability zones) of the
    member cluster. The zones are presented as a slice to support the case
    that cluster runs across multiple failure zones.
    Refer https://kubernetes.io/docs/setup/best-practices/multiple-zones/ for
    more details about running Kubernetes in multiple zones.
    """
    taints: list[Taint] | None = None
    """Taints are attached to the member cluster.
    Taints on the cluster have the "effect" on
    any resource that does not tolerate the Taint.
    """
    resource_models: list[ResourceModel] | None = None
    """ResourceModels is the list of resource modeling in this cluster. Each modeling quota can be customized by the
    user.
    Modeling name must be one of the following: cpu, memory, storage, ephemeral-storage.
    If the user does not define the modeling name and modeling quota, it will be the default model.
    The default model grade from 0 to 8.
    When grade = 0 or grade = 1, the default model's cpu quota and memory quota is a fix value.
    When grade greater than or equal to 2, each default model's cpu quota is [2^(grade-1), 2^grade), 2 <= grade <= 7
    Each default model's memory quota is [2^(grade + 2), 2^(grade + 3)), 2 <= grade <= 7
    E.g. grade 0 likes this:
    - grade: 0
      ranges:
      - name: "cpu"
        min: 0 C
        max: 1 C
      - name: "memory"
        min: 0 GB
        max: 4 GB

    - grade: 1
      ranges:
      - name: "cpu"
        min: 1 C
        max: 2 C
      - name: "memory"
        min: 4 GB
        max: 16 GB

    - grade: 2
      ranges:
      - name: "cpu"
        min: 2 C
        max: 4 C
      - name: "memory"
        min: 16 GB
        max: 32 GB

    - grade: 7
      range:
      - name: "cpu"
        min: 64 C
        max: 128 C
      - name: "memory"
        min: 512 GB
        max: 1024 GB

    grade 8, the last one likes below. No matter what Max value you pass,
    the meaning of Max value in this grade is infinite. You can pass any number greater than Min value.
    - grade: 8
      range:
      - name: "cpu"
        min: 128 C
        max: MAXINT
      - name: "memory"
        min: 1024 GB
        max: MAXINT
    """


class APIResource(KubeModel):
    """A resource served by the member: plural name and kind."""

    name: str
    """Name is the plural name of the resource."""
    kind: str
    """Kind is the kind for the resource (e.g. 'Deployment' is the kind for resource 'deployments')"""


class APIEnablement(KubeModel):
    """The resources served under one group/version of the member."""

    group_version: str
    """GroupVersion is the group and version this APIEnablement is for."""
    resources: list[APIResource] | None = None
    """Resources is a list of APIResource."""


class NodeSummary(KubeModel):
    """Node counts of the member."""

    total_num: int | None = None
    """TotalNum is the total number of nodes in the cluster."""
    ready_num: int | None = None
    """ReadyNum is the number of ready nodes in the cluster."""


class AllocatableModeling(KubeModel):
    """How many nodes fall into one resource-model grade."""

    grade: Annotated[int, Field(ge=0)]
    """Grade is the index of ResourceModel."""
    count: int
    """Count is the number of nodes that own the resources delineated by this modeling."""


class ResourceSummary(KubeModel):
    """Capacity of the member: allocatable, requested by pending pods, requested by running pods."""

    allocatable: ResourceList | None = None
    """Allocatable represents the resources of a cluster that are available for scheduling.
    Total amount of allocatable resources on all nodes.
    """
    allocating: ResourceList | None = None
    """Allocating represents the resources of a cluster that are pending for scheduling.
    Total amount of required resources of all Pods that are waiting for scheduling.
    """
    allocated: ResourceList | None = None
    """Allocated represents the resources of a cluster that have been scheduled.
    Total amount of required resources of all Pods that have been scheduled to nodes.
    """
    allocatable_modelings: list[AllocatableModeling] | None = None
    """AllocatableModelings represents the statistical resource modeling."""


class ClusterStatus(KubeModel):
    """What the agent (pull) or the control plane (push) observed of the member."""

    kubernetes_version: str | None = None
    """KubernetesVersion represents version of the member cluster."""
    api_enablements: list[APIEnablement] | None = None
    """APIEnablements represents the list of APIs installed on the member cluster."""
    conditions: list[Condition] | None = None
    """Conditions is an array of current cluster conditions."""
    node_summary: NodeSummary | None = None
    """NodeSummary represents the summary of nodes status in the member cluster."""
    resource_summary: ResourceSummary | None = None
    """ResourceSummary represents the summary of resources in the member cluster."""
    remedy_actions: list[str] | None = None
    """RemedyActions represents the remedy actions that needs to be performed
    on the cluster.
    """


class Cluster(KubeObject):
    """A member cluster registered with the control plane."""

    api_version: Literal["cluster.karmada.io/v1alpha1"] = CLUSTER_GROUP_VERSION
    kind: Literal["Cluster"] = "Cluster"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ClusterSpec
    """Spec represents the specification of the desired behavior of member cluster."""
    status: ClusterStatus | None = None
    """Status represents the status of member cluster."""
