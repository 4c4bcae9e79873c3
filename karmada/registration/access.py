"""Everything one agent may touch on the control plane, as objects the control
plane creates when it approves that cluster's first CSR (and removes with
the Cluster). Names follow Karmada's ``system:karmada:<cluster>:agent*``;
the rules are narrower than Karmada's: every grant is limited to the
cluster's own Cluster, heartbeat Lease and execution namespace.
"""

from __future__ import annotations

from typing import Any

from karmada.api.keys import NAMESPACE_KARMADA_CLUSTER, SYSTEM_LABEL, SYSTEM_LABEL_VALUE
from karmada.api.names import execution_space
from karmada.registration.identity import CLUSTER_LABEL, REGISTERED_BY_ANNOTATION, agent_user, rotation_csr_name

Obj = dict[str, Any]
RBAC = "rbac.authorization.k8s.io/v1"
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
