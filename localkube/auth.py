"""Authentication (client certificates, bearer tokens, bootstrap tokens, anonymous),
the attributes of a request that authorization judges (see ``rbac``), and the
RBAC objects kube-apiserver seeds."""

from __future__ import annotations

import base64
import datetime
import hmac
import re
from dataclasses import dataclass, field
from typing import Any

from localkube.store import Store

Obj = dict[str, Any]

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
MASTERS = "system:masters"
ANONYMOUS = "system:anonymous"

_BOOTSTRAP_TOKEN = re.compile(r"\A([a-z0-9]{6})\.([a-z0-9]{16})\Z")
_BOOTSTRAP_GROUP = re.compile(r"\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\Z")


@dataclass
class Identity:
    """Who made a request."""

    user: str
    groups: list[str] = field(default_factory=list)
    uid: str = ""
    extra: dict[str, list[str]] = field(default_factory=dict)

    def to_user_info(self) -> Obj:
        info: Obj = {"username": self.user, "groups": list(self.groups)}
        if self.uid:
            info["uid"] = self.uid
        if self.extra:
            info["extra"] = self.extra
        return info


def with_authenticated(user: str, groups: list[str], uid: str = "") -> Identity:
    all_groups = list(groups)
    if AUTHENTICATED not in all_groups:
        all_groups.append(AUTHENTICATED)
    return Identity(user, all_groups, uid)


ANONYMOUS_IDENTITY = Identity(ANONYMOUS, [UNAUTHENTICATED])


def _secret_value(secret: Obj, key: str) -> str | None:
    raw = (secret.get("data") or {}).get(key)
    if raw is None:
        return None
    try:
        return base64.b64decode(raw).decode()
    except (ValueError, UnicodeDecodeError):
        return None


def bootstrap_token_expiration(secret: Obj) -> datetime.datetime | None:
    """When a bootstrap token expires (None: never, or its expiration cannot be parsed)."""
    value = _secret_value(secret, "expiration")
    if value is None:
        return None
    try:
        when = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def bootstrap_token_expired(secret: Obj, now: datetime.datetime | None = None) -> bool:
    """A token whose ``expiration`` has passed, or cannot be parsed, is expired."""
    value = _secret_value(secret, "expiration")
    if value is None:
        return False
    try:
        when = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return True
    if when.tzinfo is None:
        return True
    return (now or datetime.datetime.now(datetime.UTC)) >= when


def authenticate_bootstrap_token(store: Store, token: str) -> Identity | None:
    """``system:bootstrap:<id>`` for a valid, unexpired, authentication-enabled token."""
    match = _BOOTSTRAP_TOKEN.match(token)
    if not match:
        return None
    token_id, token_secret = match.groups()
    secret = store.get("/secrets", "kube-system", f"bootstrap-token-{token_id}")
    if secret is None or secret["metadata"].get("deletionTimestamp"):
        return None
    if secret.get("type") != "bootstrap.kubernetes.io/token":
        return None
    if _secret_value(secret, "token-id") != token_id:
        return None
    stored = _secret_value(secret, "token-secret") or ""
    if not hmac.compare_digest(stored.encode(), token_secret.encode()):
        return None
    if bootstrap_token_expired(secret):
        return None
    if _secret_value(secret, "usage-bootstrap-authentication") != "true":
        return None
    groups = {"system:bootstrappers"}
    extra = _secret_value(secret, "auth-extra-groups") or ""
    for group in (g.strip() for g in extra.split(",") if g.strip()):
        if not _BOOTSTRAP_GROUP.match(group):
            return None
        groups.add(group)
    return with_authenticated(f"system:bootstrap:{token_id}", sorted(groups))


# ---- authorization ----------------------------------------------------------


@dataclass(frozen=True)
class Attributes:
    """What a request wants to do."""

    verb: str
    resource_request: bool
    group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""


def forbidden_message(identity: Identity, attrs: Attributes, reason: str = "") -> str:
    """kube-apiserver's 403 text (with the authorizer's reason, when it gives one)."""
    if reason:
        return f"{forbidden_message(identity, attrs)}: {reason}"
    if not attrs.resource_request:
        return f'User "{identity.user}" cannot {attrs.verb} path "{attrs.path}"'
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    target = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    if attrs.name:
        target += f' "{attrs.name}"'
    where = f' in the namespace "{attrs.namespace}"' if attrs.namespace else " at the cluster scope"
    return (
        f'{target} is forbidden: User "{identity.user}" cannot {attrs.verb} resource "{resource}"'
        f' in API group "{attrs.group}"{where}'
    )


BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}


# what the aggregated edit role may change; admin adds namespace RBAC and leases
_EDITABLE = (
    "configmaps",
    "endpoints",
    "persistentvolumeclaims",
    "pods",
    "services",
    "serviceaccounts",
    "secrets",
    "deployments",
    "replicasets",
    "statefulsets",
    "daemonsets",
    "jobs",
    "cronjobs",
    "ingresses",
    "poddisruptionbudgets",
    "deployments/scale",
    "replicasets/scale",
    "statefulsets/scale",
)


def _cluster_role(name: str, rules: list[Obj]) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": dict(BOOTSTRAP_LABELS)},
        "rules": rules,
    }


def _cluster_binding(name: str, role: str, groups: list[str]) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name, "labels": dict(BOOTSTRAP_LABELS)},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g} for g in groups],
    }


_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]
# edit includes view and admin includes edit (kube aggregates them), so an
# admin of a namespace holds, and may bind there, the rights of edit and view
_VIEW_RULE: Obj = {
    "apiGroups": ["", "apps", "batch", "networking.k8s.io", "policy", "coordination.k8s.io"],
    "resources": [
        "configmaps",
        "endpoints",
        "persistentvolumeclaims",
        "pods",
        "services",
        "serviceaccounts",
        "events",
        "namespaces",
        "deployments",
        "replicasets",
        "statefulsets",
        "daemonsets",
        "jobs",
        "cronjobs",
        "ingresses",
        "poddisruptionbudgets",
        "leases",
        "deployments/scale",
        "replicasets/scale",
        "statefulsets/scale",
        "pods/status",
        "services/status",
        "deployments/status",
        "namespaces/status",
    ],
    "verbs": _READ,
}


def default_rbac() -> list[tuple[str, Obj]]:
    """``(storage key, object)`` of the RBAC objects kube-apiserver seeds at startup."""
    roles = [
        _cluster_role(
            "cluster-admin",
            [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ],
        ),
        _cluster_role(
            "system:discovery",
            [
                {
                    "nonResourceURLs": [
                        "/api",
                        "/api/*",
                        "/apis",
                        "/apis/*",
                        "/healthz",
                        "/livez",
                        "/openapi",
                        "/openapi/*",
                        "/readyz",
                        "/version",
                        "/version/",
                    ],
                    "verbs": ["get"],
                }
            ],
        ),
        _cluster_role(
            "system:basic-user",
            [
                {
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"],
                },
                {
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["selfsubjectreviews"],
                    "verbs": ["create"],
                },
            ],
        ),
        _cluster_role(
            "system:public-info-viewer",
            [
                {
                    "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
                    "verbs": ["get"],
                }
            ],
        ),
        _cluster_role(
            "system:auth-delegator",
            [
                {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
                {
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["subjectaccessreviews"],
                    "verbs": ["create"],
                },
            ],
        ),
        _cluster_role(
            "system:node-bootstrapper",
            [
                {
                    "apiGroups": ["certificates.k8s.io"],
                    "resources": ["certificatesigningrequests"],
                    "verbs": ["create", "get", "list", "watch"],
                }
            ],
        ),
        _cluster_role("view", [_VIEW_RULE]),
        _cluster_role(
            "edit",
            [
                {
                    "apiGroups": ["", "apps", "batch", "networking.k8s.io", "policy"],
                    "resources": list(_EDITABLE),
                    "verbs": _READ + _WRITE,
                },
                _VIEW_RULE,
            ],
        ),
        _cluster_role(
            "admin",
            [
                {
                    "apiGroups": [
                        "",
                        "apps",
                        "batch",
                        "networking.k8s.io",
                        "policy",
                        "rbac.authorization.k8s.io",
                        "coordination.k8s.io",
                    ],
                    "resources": [*_EDITABLE, "roles", "rolebindings", "leases"],
                    "verbs": _READ + _WRITE,
                },
                _VIEW_RULE,
            ],
        ),
    ]
    bindings = [
        _cluster_binding("cluster-admin", "cluster-admin", [MASTERS]),
        _cluster_binding("system:discovery", "system:discovery", [AUTHENTICATED]),
        _cluster_binding("system:basic-user", "system:basic-user", [AUTHENTICATED]),
        _cluster_binding("system:public-info-viewer", "system:public-info-viewer", [AUTHENTICATED, UNAUTHENTICATED]),
    ]
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {
            "name": "kubeadm:bootstrap-signer-clusterinfo",
            "namespace": "kube-public",
            "labels": dict(BOOTSTRAP_LABELS),
        },
        "rules": [
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": ["cluster-info"],
                "verbs": ["get"],
            }
        ],
    }
    role_binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": "kubeadm:bootstrap-signer-clusterinfo",
            "namespace": "kube-public",
            "labels": dict(BOOTSTRAP_LABELS),
        },
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "kubeadm:bootstrap-signer-clusterinfo",
        },
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": ANONYMOUS}],
    }
    return (
        [("rbac.authorization.k8s.io/clusterroles", r) for r in roles]
        + [("rbac.authorization.k8s.io/clusterrolebindings", b) for b in bindings]
        + [
            ("rbac.authorization.k8s.io/roles", role),
            ("rbac.authorization.k8s.io/rolebindings", role_binding),
        ]
    )
