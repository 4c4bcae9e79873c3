"""kube-apiserver's validation of built-in kinds, one module per API group or kind family.

Each check returns :class:`localkube.errors.Cause` values with the field path
and message kube-apiserver uses; :func:`validate` picks the checks of a kind
and the caller turns the causes into one 422 Invalid. Metadata checks common
to every kind live in :mod:`localkube.meta`; CRDs keep theirs (structural
schemas) in :mod:`localkube.crd`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from localkube.errors import Cause
from localkube.validation import (
    certificates,
    cluster,
    configs,
    coordination,
    events,
    limits,
    networking,
    pod_update,
    pods,
    rbac,
    services,
    storage,
    workloads,
)

Obj = dict[str, Any]
Check = Callable[[Obj], list[Cause]]
UpdateCheck = Callable[[Obj, Obj], list[Cause]]

CREATE: dict[str, Check] = {
    "Pod": pods.validate_pod,
    "Deployment": workloads.validate_deployment,
    "ReplicaSet": workloads.validate_replicaset,
    "StatefulSet": workloads.validate_statefulset,
    "DaemonSet": workloads.validate_daemonset,
    "Job": workloads.validate_job,
    "CronJob": workloads.validate_cronjob,
    "Service": services.validate_service,
    "ConfigMap": configs.validate_configmap,
    "Secret": configs.validate_secret,
    "Namespace": cluster.validate_namespace,
    "Node": cluster.validate_node,
    "ServiceAccount": cluster.validate_serviceaccount,
    "PersistentVolumeClaim": storage.validate_pvc,
    "PersistentVolume": storage.validate_pv,
    "Ingress": networking.validate_ingress,
    "Lease": coordination.validate_lease,
    "Event": events.validate_event,
    "Role": rbac.validate_role,
    "ClusterRole": rbac.validate_clusterrole,
    "RoleBinding": lambda obj: rbac.validate_binding(obj, cluster=False),
    "ClusterRoleBinding": lambda obj: rbac.validate_binding(obj, cluster=True),
    "CertificateSigningRequest": certificates.validate_csr,
    "LimitRange": limits.validate_limitrange,
}


def _with_fixed_selector(check: Check) -> UpdateCheck:
    return lambda obj, old: check(obj) + workloads.selector_immutable(obj, old)


UPDATE: dict[str, UpdateCheck] = {
    "Deployment": _with_fixed_selector(workloads.validate_deployment),
    "ReplicaSet": _with_fixed_selector(workloads.validate_replicaset),
    "StatefulSet": _with_fixed_selector(workloads.validate_statefulset),
    "DaemonSet": _with_fixed_selector(workloads.validate_daemonset),
    "Job": _with_fixed_selector(workloads.validate_job),
    "Service": services.validate_service_update,
    "ConfigMap": configs.validate_configmap_update,
    "Secret": configs.validate_secret_update,
    "PersistentVolumeClaim": storage.validate_pvc_update,
    "RoleBinding": lambda obj, old: rbac.validate_binding_update(obj, old, cluster=False),
    "ClusterRoleBinding": lambda obj, old: rbac.validate_binding_update(obj, old, cluster=True),
    # spec is restored from the stored object on update; the approval and status rules are in localkube.csr
    "CertificateSigningRequest": lambda obj, old: [],
}


# updates of the resource itself only: its subresources (status, binding, ephemeralcontainers)
# change the fields these rules protect, under rules of their own
MAIN_UPDATE: dict[str, UpdateCheck] = {
    "Pod": pod_update.validate_pod_update,
}


def validate(kind: str, obj: Obj, old: Obj | None = None, subresource: str = "") -> list[Cause]:
    """The causes that make ``obj`` (a create, or an update of ``old`` through ``subresource``,
    "" for the resource itself) invalid; empty when valid."""
    if old is not None and not subresource and kind in MAIN_UPDATE:
        return MAIN_UPDATE[kind](obj, old)
    if old is not None and kind in UPDATE:
        return UPDATE[kind](obj, old)
    check = CREATE.get(kind)
    return check(obj) if check else []


__all__ = ["validate"]
