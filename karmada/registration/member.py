"""What ``register`` creates in the member cluster for the agent, and the
command line its Deployment runs (Karmada's names and flags)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import yaml

from karmada.api.keys import SYSTEM_LABEL, SYSTEM_LABEL_VALUE
from karmada.images import AGENT_IMAGE

Obj = dict[str, Any]
AGENT_NAME = "karmada-agent"
AGENT_SERVICE_ACCOUNT = "karmada-agent-sa"
# who the agent is when it sends cluster-proxy requests: it may only impersonate the caller
PROXY_IMPERSONATOR = "karmada-agent-impersonator"
IMPERSONATION_RULES = [
    {"apiGroups": [""], "resources": ["users", "groups", "serviceaccounts"], "verbs": ["impersonate"]},
    {"apiGroups": ["authentication.k8s.io"], "resources": ["userextras/*", "uids"], "verbs": ["impersonate"]},
]
KUBECONFIG_SECRET = "karmada-kubeconfig"
KUBECONFIG_MOUNT = "/etc/kubeconfig"
HEALTH_PORT = 10357  # Karmada's --health-probe-bind-address default
METRICS_PORT = 8080  # Karmada's --metrics-bind-address default
RUN_AS = 65532  # the Dockerfile's numeric user


@dataclass
class AgentSettings:
    """How the agent in one member cluster is configured."""

    cluster_name: str
    cluster_api_endpoint: str
    namespace: str = "karmada-system"
    cluster_namespace: str = "karmada-cluster"
    provider: str = ""
    region: str = ""
    zones: list[str] = field(default_factory=list)
    image: str = AGENT_IMAGE
    replicas: int = 1
    proxy_server_address: str = ""
    cert_rotation: bool = True
    cluster_proxy_server: str = ""  # the control plane's cluster proxy the agent tunnels to

    def command(self, kubeconfig_path: str = f"{KUBECONFIG_MOUNT}/{KUBECONFIG_SECRET}") -> list[str]:
        """The agent's command line, as the Deployment runs it."""
        args = [
            "karmada-agent",
            f"--karmada-kubeconfig={kubeconfig_path}",
            f"--karmada-kubeconfig-namespace={self.namespace}",
            f"--cluster-name={self.cluster_name}",
            f"--cluster-api-endpoint={self.cluster_api_endpoint}",
        ]
        if self.provider:
            args.append(f"--cluster-provider={self.provider}")
        if self.region:
            args.append(f"--cluster-region={self.region}")
        if self.zones:
            args.append(f"--cluster-zones={','.join(self.zones)}")
        args.append("--controllers=*" + (",certRotation" if self.cert_rotation else ",-certRotation"))
        if self.proxy_server_address:
            args.append(f"--proxy-server-address={self.proxy_server_address}")
        if self.cluster_proxy_server:
            args.append(f"--cluster-proxy-server={self.cluster_proxy_server}")
        args += [
            f"--cluster-namespace={self.cluster_namespace}",
            "--cluster-status-update-frequency=10s",
            f"--health-probe-bind-address=:{HEALTH_PORT}",
            f"--metrics-bind-address=:{METRICS_PORT}",
            "--v=2",
        ]
        return args


def _meta(name: str, namespace: str | None = None) -> Obj:
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return meta


def member_objects(settings: AgentSettings, agent_kubeconfig: Obj) -> list[Obj]:
    """Namespace, kubeconfig Secret, RBAC, service account and Deployment, in creation order."""
    ns = settings.namespace
    secret_text = yaml.safe_dump(agent_kubeconfig, sort_keys=False)
    labels = {"app": AGENT_NAME}
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": ns, "labels": {SYSTEM_LABEL: SYSTEM_LABEL_VALUE}},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": _meta(KUBECONFIG_SECRET, ns),
            "type": "Opaque",
            "data": {KUBECONFIG_SECRET: base64.b64encode(secret_text.encode()).decode()},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": _meta(AGENT_NAME),
            "rules": [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["get"]},
            ],
        },
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(AGENT_SERVICE_ACCOUNT, ns)},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(AGENT_NAME),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": AGENT_NAME},
            "subjects": [{"kind": "ServiceAccount", "name": AGENT_SERVICE_ACCOUNT, "namespace": ns}],
        },
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(PROXY_IMPERSONATOR, ns)},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": _meta(PROXY_IMPERSONATOR),
            "rules": [dict(rule) for rule in IMPERSONATION_RULES],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(PROXY_IMPERSONATOR),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": PROXY_IMPERSONATOR},
            "subjects": [{"kind": "ServiceAccount", "name": PROXY_IMPERSONATOR, "namespace": ns}],
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {**_meta(AGENT_NAME, ns), "labels": labels},
            "spec": {
                "replicas": settings.replicas,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "serviceAccountName": AGENT_SERVICE_ACCOUNT,
                        "tolerations": [{"key": "node-role.kubernetes.io/master", "operator": "Exists"}],
                        "securityContext": {
                            "runAsNonRoot": True,
                            "runAsUser": RUN_AS,
                            "runAsGroup": RUN_AS,
                            "seccompProfile": {"type": "RuntimeDefault"},
                        },
                        "containers": [
                            {
                                "name": AGENT_NAME,
                                "image": settings.image,
                                "imagePullPolicy": "IfNotPresent",
                                "command": settings.command(),
                                "ports": [
                                    {"name": "health", "containerPort": HEALTH_PORT, "protocol": "TCP"},
                                    {"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"},
                                ],
                                "livenessProbe": {
                                    "httpGet": {"path": "/healthz", "port": "health"},
                                    "initialDelaySeconds": 10,
                                    "periodSeconds": 15,
                                    "timeoutSeconds": 5,
                                },
                                # ready once the Cluster is found and, while leading, the caches synced
                                "readinessProbe": {
                                    "httpGet": {"path": "/readyz", "port": "health"},
                                    "periodSeconds": 5,
                                    "timeoutSeconds": 5,
                                },
                                "volumeMounts": [
                                    {"name": "kubeconfig", "mountPath": KUBECONFIG_MOUNT},
                                    {"name": "tmp", "mountPath": "/tmp"},
                                ],
                                "resources": {
                                    "requests": {"cpu": "100m", "memory": "64Mi"},
                                    "limits": {"memory": "512Mi"},
                                },
                                "securityContext": {
                                    "allowPrivilegeEscalation": False,
                                    "privileged": False,
                                    "readOnlyRootFilesystem": True,
                                    "capabilities": {"drop": ["ALL"]},
                                },
                            }
                        ],
                        "volumes": [
                            {"name": "kubeconfig", "secret": {"secretName": KUBECONFIG_SECRET}},
                            {"name": "tmp", "emptyDir": {"sizeLimit": "16Mi"}},
                        ],
                    },
                },
            },
        },
        {
            # at most one agent replica down during a drain, whatever --karmada-agent-replicas says
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {**_meta(AGENT_NAME, ns), "labels": labels},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels}},
        },
    ]


def redacted(objects: list[Obj]) -> list[Obj]:
    """The same objects with secret data replaced, for ``--dry-run`` output."""
    return [
        {**obj, "data": dict.fromkeys(obj.get("data") or {}, "<redacted>")} if obj["kind"] == "Secret" else obj
        for obj in objects
    ]
