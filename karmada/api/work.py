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


class WorkSpec(KubeModel):
    """What to apply in the member cluster, and how."""

    workload: WorkloadTemplate | None = None
    suspend_dispatching: bool | None = None
    preserve_resources_on_deletion: bool | None = None


class ResourceIdentifier(KubeModel):
    """Identifies one manifest of a Work: its index and its object's coordinates."""

    ordinal: int
    group: str | None = None
    version: str
    kind: str
    resource: str
    namespace: str | None = None
    name: str


class ManifestStatus(KubeModel):
    """The reflected status and health of one applied manifest."""

    identifier: ResourceIdentifier
    status: RawObject | None = None
    health: ResourceHealth | None = None


class WorkStatus(KubeModel):
    """Applied/Dispatching conditions and the status of each manifest."""

    conditions: list[Condition] | None = None
    manifest_statuses: list[ManifestStatus] | None = None


class Work(KubeObject):
    """Manifests to apply in one member cluster."""

    api_version: Literal["work.karmada.io/v1alpha1"] = WORK_GROUP_VERSION
    kind: Literal["Work"] = "Work"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: WorkSpec
    status: WorkStatus | None = None
