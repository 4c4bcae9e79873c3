"""Fields a manifest must not carry into a member cluster (Karmada's ``prune``).

The control plane's API server fills in identity, bookkeeping and status;
copied into a member they would be rejected (``resourceVersion``, ``uid``) or
fight the member's own controllers (a Service's ``clusterIP``, a Job's
generated selector, a service-account token). The binding controller prunes
every manifest it writes, so a Work written twice from the same template is
byte-for-byte the same (Karmada's webhook does the same on every Work write).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from karmada.json_copy import copy_json

Obj = dict[str, Any]

# what the API server sets on every object
_SERVER_METADATA = (
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "managedFields",
    "resourceVersion",
    "selfLink",
    "uid",
    "ownerReferences",
    "finalizers",
)
DEPLOYMENT_REVISION_ANNOTATIONS = ("deployment.kubernetes.io/revision", "deployment.kubernetes.io/revision-history")
JOB_SELECTOR_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")
JOB_TEMPLATE_LABELS = (
    "controller-uid",
    "job-name",
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
)
SERVICE_ACCOUNT_UID_ANNOTATION = "kubernetes.io/service-account.uid"
SERVICE_ACCOUNT_TOKEN_TYPE = "kubernetes.io/service-account-token"
PVC_SELECTED_NODE_ANNOTATION = "volume.kubernetes.io/selected-node"


def _map(obj: Mapping[str, Any], *path: str) -> dict[str, Any] | None:
    node: Any = obj
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node if isinstance(node, dict) else None


def _drop_keys(obj: Obj, keys: tuple[str, ...], *path: str) -> None:
    found = _map(obj, *path)
    if found is None:
        return
    for key in keys:
        found.pop(key, None)


def _deployment(obj: Obj) -> None:
    _drop_keys(obj, DEPLOYMENT_REVISION_ANNOTATIONS, "metadata", "annotations")


def _job(obj: Obj) -> None:
    # a Job's selector is generated from its uid unless the user chose it (manualSelector)
    if _map(obj, "spec") is not None and obj["spec"].get("manualSelector") is True:
        return
    _drop_keys(obj, JOB_SELECTOR_LABELS, "spec", "selector", "matchLabels")
    _drop_keys(obj, JOB_TEMPLATE_LABELS, "spec", "template", "metadata", "labels")


def _service_account(obj: Obj) -> None:
    secrets = obj.get("secrets")
    if not isinstance(secrets, list) or not secrets:
        return
    prefix = f"{(obj.get('metadata') or {}).get('name', '')}-token-"
    # every generated token secret goes (Karmada's loop skips the one after each removal)
    obj["secrets"] = [s for s in secrets if not (isinstance(s, dict) and str(s.get("name", "")).startswith(prefix))]


def _service(obj: Obj) -> None:
    spec = _map(obj, "spec")
    if spec is not None and "clusterIP" in spec and spec["clusterIP"] != "None":
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)


def _secret(obj: Obj) -> None:
    if obj.get("type") == SERVICE_ACCOUNT_TOKEN_TYPE:
        _drop_keys(obj, (SERVICE_ACCOUNT_UID_ANNOTATION,), "metadata", "annotations")
        obj["data"] = None  # the member's token controller fills it


def _persistent_volume_claim(obj: Obj) -> None:
    annotations = _map(obj, "metadata", "annotations")
    if annotations is not None and annotations.get(PVC_SELECTED_NODE_ANNOTATION):
        annotations.pop(PVC_SELECTED_NODE_ANNOTATION)


_KIND_PRUNERS: dict[str, Callable[[Obj], None]] = {
    "Deployment": _deployment,
    "Job": _job,
    "Secret": _secret,
    "ServiceAccount": _service_account,
    "Service": _service,
    "PersistentVolumeClaim": _persistent_volume_claim,
}


def remove_job_ttl(obj: Obj) -> None:
    """Drop a Job's ``ttlSecondsAfterFinished``: the member would delete the finished Job
    and the control plane would create it again."""
    if obj.get("kind") == "Job" and isinstance(obj.get("spec"), dict):
        obj["spec"].pop("ttlSecondsAfterFinished", None)


def prune(manifest: Mapping[str, Any], *, job_ttl: bool = True) -> Obj:
    """A copy of ``manifest`` without server-set metadata, status and the kind's
    member-specific fields (by kind only, as Karmada matches them); ``job_ttl``
    also drops a Job's ``ttlSecondsAfterFinished`` (the binding controller does)."""
    obj = copy_json(dict(manifest))
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        for key in _SERVER_METADATA:
            metadata.pop(key, None)
    obj.pop("status", None)
    pruner = _KIND_PRUNERS.get(str(obj.get("kind", "")))
    if pruner is not None:
        pruner(obj)
    if job_ttl:
        remove_job_ttl(obj)
    return obj
