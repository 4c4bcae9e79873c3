"""Everything one agent may touch on the control plane, as objects the control
plane creates when it approves that cluster's first CSR (and removes with
the Cluster). Names follow Karmada's ``system:karmada:<cluster>:agent*``;
the rules are narrower than Karmada's: every grant is limited to the
cluster's own Cluster, heartbeat Lease and execution namespace.

:func:`access_drift` says whether a stored object still is what
:func:`agent_rbac` wants, in the fields the control plane owns, so that the
control plane can compare its caches and write nothing when nothing differs.
"""

from __future__ import annotations

from typing import Any

from karmada.api.keys import NAMESPACE_KARMADA_CLUSTER, SYSTEM_LABEL, SYSTEM_LABEL_VALUE
from karmada.api.names import execution_space
from karmada.registration.identity import CLUSTER_LABEL, REGISTERED_BY_ANNOTATION, agent_user, rotation_csr_name

Obj = dict[str, Any]
RBAC = "rbac.authorization.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"
MISSING, CHANGED, ROLE_REF_CHANGED = "missing", "changed", "roleRef changed"
LEASE_DURATION_SECONDS = 40


def _labels(cluster: str) -> dict[str, str]:
    return {SYSTEM_LABEL: SYSTEM_LABEL_VALUE, CLUSTER_LABEL: cluster}


def _subjects(cluster: str) -> list[Obj]:
    return [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": agent_user(cluster)}]


def _role(kind: str, name: str, namespace: str | None, cluster: str, rules: list[Obj]) -> list[Obj]:
    meta: Obj = {"name": name, "labels": _labels(cluster)}
    if namespace:
        meta["namespace"] = namespace
    role = {"apiVersion": RBAC, "kind": kind, "metadata": meta, "rules": rules}
    binding = {
        "apiVersion": RBAC,
        "kind": f"{kind}Binding",
        "metadata": dict(meta),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name},
        "subjects": _subjects(cluster),
    }
    return [role, binding]


def agent_rbac(cluster: str) -> list[Obj]:
    """The execution namespace and the roles and bindings of one agent."""
    space = execution_space(cluster)
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": space, "labels": _labels(cluster)}}
    cluster_rules = [
        {
            "apiGroups": ["cluster.karmada.io"],
            "resources": ["clusters"],
            "resourceNames": [cluster],
            "verbs": ["get", "list", "watch", "update", "patch", "delete"],
        },
        {
            "apiGroups": ["cluster.karmada.io"],
            "resources": ["clusters/status"],
            "resourceNames": [cluster],
            "verbs": ["get", "update", "patch"],
        },
        {"apiGroups": [""], "resources": ["namespaces"], "resourceNames": [space], "verbs": ["get"]},
        {
            "apiGroups": ["config.karmada.io"],
            "resources": ["resourceinterpretercustomizations", "resourceinterpreterwebhookconfigurations"],
            "verbs": ["get", "list", "watch"],
        },
        # certificate rotation: create (RBAC cannot limit a create by name), then read and replace only
        # its own request, which has a fixed name; no list or watch, which would show every cluster's
        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"], "verbs": ["create"]},
        {
            "apiGroups": ["certificates.k8s.io"],
            "resources": ["certificatesigningrequests"],
            "resourceNames": [rotation_csr_name(cluster)],
            "verbs": ["get", "delete"],
        },
    ]
    lease_rules = [
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": [cluster],
            "verbs": ["get", "list", "watch", "update", "patch"],
        }
    ]
    work_rules = [
        {"apiGroups": ["work.karmada.io"], "resources": ["works"], "verbs": ["*"]},
        {"apiGroups": ["work.karmada.io"], "resources": ["works/status"], "verbs": ["get", "update", "patch"]},
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "verbs": ["get", "list", "watch", "create", "update", "patch"],
        },
        {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]},
    ]
    prefix = f"system:karmada:{cluster}:agent"
    return [
        namespace,
        *_role("ClusterRole", prefix, None, cluster, cluster_rules),
        *_role("Role", f"{prefix}-lease", NAMESPACE_KARMADA_CLUSTER, cluster, lease_rules),
        *_role("Role", f"{prefix}-work", space, cluster, work_rules),
    ]


def access_drift(desired: Obj, stored: Obj | None) -> str | None:
    """How ``stored`` falls short of ``desired`` (one of :func:`agent_rbac`'s objects):
    None when it does not, :data:`MISSING`, :data:`CHANGED` (a label, the rules or the
    subjects), or :data:`ROLE_REF_CHANGED` (a binding to another role: the API refuses
    to change a roleRef, so the binding must be deleted and created again).

    Only what the control plane sets counts: labels others add, annotations and
    fields the server fills in do not."""
    if stored is None:
        return MISSING
    if desired.get("roleRef") is not None and _ref(desired.get("roleRef")) != _ref(stored.get("roleRef")):
        return ROLE_REF_CHANGED
    labels = (stored.get("metadata") or {}).get("labels") or {}
    if any(labels.get(key) != value for key, value in desired["metadata"].get("labels", {}).items()):
        return CHANGED
    for field in ("rules", "subjects"):
        if field in desired and _entries(desired[field]) != _entries(stored.get(field)):
            return CHANGED
    return None


def _ref(ref: Any) -> tuple[str, str, str]:
    ref = ref if isinstance(ref, dict) else {}
    return ref.get("apiGroup") or RBAC_GROUP, ref.get("kind", ""), ref.get("name", "")


def _entries(items: Any) -> list[Obj]:
    """Rules or subjects without empty fields (a server may drop or add them; they mean nothing)."""
    if not isinstance(items, list):
        return []
    return [{k: v for k, v in item.items() if v not in (None, "", [])} for item in items if isinstance(item, dict)]


def heartbeat_lease(cluster: str) -> Obj:
    """The cluster's Lease in ``karmada-cluster``, created empty for the agent to renew."""
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": cluster, "namespace": NAMESPACE_KARMADA_CLUSTER, "labels": _labels(cluster)},
        "spec": {"holderIdentity": cluster, "leaseDurationSeconds": LEASE_DURATION_SECONDS},
    }


def registered_cluster(cluster: str, registered_by: str) -> Obj:
    """The Cluster a first agent CSR creates: pull mode, owned by the registering identity."""
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": cluster, "annotations": {REGISTERED_BY_ANNOTATION: registered_by}},
        "spec": {"syncMode": "Pull"},
    }
