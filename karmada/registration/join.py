"""``join`` / ``unjoin``: a member cluster in Push mode, where the control
plane reaches the member with credentials of its own there.

``join`` first checks it can reach the member (GET /version) and that the
name (and the member's cluster ID, the uid of its ``kube-system``) is free,
in either mode; then, as Karmada's join: in the member, the namespace
``karmada-cluster``, the ServiceAccount ``karmada-<cluster>`` bound to the
ClusterRole ``karmada-controller-manager:karmada-<cluster>`` (every verb on
every resource, and GET on every non-resource URL: Karmada's rules, nothing
wider), and the ServiceAccount ``karmada-impersonator`` with the ClusterRole
of that name (impersonate users, groups, service accounts, UIDs and extras:
the cluster proxy's identity in the member); on the control plane, the Secrets ``karmada-cluster/<cluster>``
(``caBundle``, ``token``) and ``karmada-cluster/<cluster>-impersonator``
(``token``), and the Cluster with ``syncMode: Push``, ``apiEndpoint``,
``secretRef`` and ``impersonatorSecretRef``, which then owns both Secrets.
Tokens come from the TokenRequest API, bound to their ServiceAccount and
valid for ten years (Karmada waits for a legacy token Secret instead; a
TokenRequest token stops working when its ServiceAccount is deleted, which is
what ``unjoin`` does).

``unjoin`` deletes the Cluster and waits until the control plane removed it:
the cluster controller deletes the execution namespace, whose Works the push
execution controller removes from the member first. Then the Secrets and the
member-side objects go.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from karmada.api.keys import NAMESPACE_KARMADA_CLUSTER, SYSTEM_LABEL, SYSTEM_LABEL_VALUE
from karmada.api.names import validate_cluster_name
from karmada.kube import ClusterConfig, KubeClient, KubeError
from karmada.kube.objects import delete_if_present, service_account_token, wait_until
from karmada.kube.resources import (
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    CLUSTERS,
    NAMESPACES,
    SECRETS,
    SERVICEACCOUNTS,
    Resource,
)
from karmada.registration.member import IMPERSONATION_RULES

Obj = dict[str, Any]
IMPERSONATOR_ACCOUNT = "karmada-impersonator"
TOKEN_SECONDS = 10 * 365 * 24 * 3600
# Karmada's ClusterPolicyRules for the join service account
CLUSTER_POLICY_RULES: list[Obj] = [
    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
    {"nonResourceURLs": ["*"], "verbs": ["get"]},
]


class JoinError(Exception):
    """Why a join or unjoin cannot go on."""


@dataclass
class JoinOptions:
    cluster_name: str
    cluster_namespace: str = NAMESPACE_KARMADA_CLUSTER
    provider: str = ""
    region: str = ""
    zones: list[str] = field(default_factory=list)
    dry_run: bool = False


def service_account_name(cluster: str) -> str:
    return f"karmada-{cluster}"


def role_name(cluster: str) -> str:
    return f"karmada-controller-manager:{service_account_name(cluster)}"


def impersonation_secret_name(cluster: str) -> str:
    return f"{cluster}-impersonator"


def _labels() -> dict[str, str]:
    return {SYSTEM_LABEL: SYSTEM_LABEL_VALUE}


def member_objects(cluster: str, namespace: str = NAMESPACE_KARMADA_CLUSTER) -> list[Obj]:
    """What join creates in the member, in creation order."""
    account = service_account_name(cluster)
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": _labels()}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": IMPERSONATOR_ACCOUNT, "namespace": namespace, "labels": _labels()},
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": account, "namespace": namespace, "labels": _labels()},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": role_name(cluster), "labels": _labels()},
            "rules": copy.deepcopy(CLUSTER_POLICY_RULES),
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": role_name(cluster), "labels": _labels()},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name(cluster)},
        },
        # the cluster proxy's identity may impersonate callers and nothing else (Karmada's unified-auth
        # controller grants the same, narrowed to the subjects bound to clusters/proxy)
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": IMPERSONATOR_ACCOUNT, "labels": _labels()},
            "rules": copy.deepcopy(IMPERSONATION_RULES),
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": IMPERSONATOR_ACCOUNT, "labels": _labels()},
            "subjects": [{"kind": "ServiceAccount", "name": IMPERSONATOR_ACCOUNT, "namespace": namespace}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": IMPERSONATOR_ACCOUNT},
        },
    ]


def control_plane_objects(
    options: JoinOptions, endpoint: str, ca_pem: bytes | None, token: str, impersonator_token: str, cluster_id: str
) -> list[Obj]:
    """The two Secrets and the Cluster (owner references are added once the Cluster exists)."""
    name, namespace = options.cluster_name, options.cluster_namespace
    b64 = base64.b64encode
    spec: Obj = {
        "id": cluster_id,
        "syncMode": "Push",
        "apiEndpoint": endpoint,
        "secretRef": {"namespace": namespace, "name": name},
        "impersonatorSecretRef": {"namespace": namespace, "name": impersonation_secret_name(name)},
    }
    if ca_pem is None:
        spec["insecureSkipTLSVerification"] = True
    if options.provider:
        spec["provider"] = options.provider
    if options.region:
        spec["region"] = options.region
    if options.zones:
        spec["zones"] = list(options.zones)
    secret_data = {"token": b64(token.encode()).decode()}
    if ca_pem:
        secret_data["caBundle"] = b64(ca_pem).decode()
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": _labels()}},
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "namespace": namespace, "labels": _labels()},
            "data": secret_data,
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": impersonation_secret_name(name), "namespace": namespace, "labels": _labels()},
            "data": {"token": b64(impersonator_token.encode()).decode()},
        },
        {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name}, "spec": spec},
    ]


def redacted(objects: list[Obj]) -> list[Obj]:
    """For printing: Secret values replaced."""
    shown = copy.deepcopy(objects)
    for obj in shown:
        if obj["kind"] == "Secret":
            obj["data"] = dict.fromkeys(obj.get("data") or {}, "<redacted>")
    return shown


_RESOURCES: dict[str, Resource] = {
    "Namespace": NAMESPACES,
    "ServiceAccount": SERVICEACCOUNTS,
    "ClusterRole": CLUSTER_ROLES,
    "ClusterRoleBinding": CLUSTER_ROLE_BINDINGS,
    "Secret": SECRETS,
    "Cluster": CLUSTERS,
}


async def _ensure(client: KubeClient, obj: Obj) -> Obj:
    resource = _RESOURCES[obj["kind"]]
    namespace = obj["metadata"].get("namespace")
    try:
        return await client.create(resource, obj, namespace)
    except KubeError as exc:
        if not exc.already_exists:
            raise
    return await client.get(resource, obj["metadata"]["name"], namespace)


async def reachable(member: KubeClient) -> str:
    """The member's version, or a JoinError saying why it cannot be reached."""
    try:
        return str((await member.raw_get("/version")).get("gitVersion", ""))
    except KubeError as exc:
        raise JoinError(f"cannot reach the member cluster at {member.config.server}: {exc.message}") from None


async def join(
    control_plane: KubeClient,
    member: KubeClient,
    member_config: ClusterConfig,
    options: JoinOptions,
    say: Callable[[str], None],
) -> list[Obj]:
    """Join the member in Push mode; returns what was (or, dry run, would be) created."""
    name = options.cluster_name
    problems = validate_cluster_name(name)
    if problems:
        raise JoinError(f'invalid cluster name "{name}": {"; ".join(problems)}')
    await reachable(member)
    cluster_id = str((await member.get(NAMESPACES, "kube-system"))["metadata"].get("uid", ""))
    for existing in (await control_plane.list(CLUSTERS)).get("items") or []:
        same_id = cluster_id and (existing.get("spec") or {}).get("id") == cluster_id
        if existing["metadata"]["name"] == name or same_id:
            raise JoinError(f"the cluster ID {cluster_id} or the cluster name {name} has been registered")
    in_member = member_objects(name, options.cluster_namespace)
    if options.dry_run:
        planned = control_plane_objects(options, member_config.server, member_config.ca_pem, "", "", cluster_id)
        return [*in_member, *redacted(planned)]
    for obj in in_member:
        await _ensure(member, obj)
        say(f"[member] {obj['kind'].lower()}/{obj['metadata']['name']} created")
    token = await service_account_token(member, options.cluster_namespace, service_account_name(name), TOKEN_SECONDS)
    impersonator = await service_account_token(member, options.cluster_namespace, IMPERSONATOR_ACCOUNT, TOKEN_SECONDS)
    ca = None if member_config.insecure else member_config.ca_pem
    planned = control_plane_objects(options, member_config.server, ca, token, impersonator, cluster_id)
    created = [await _ensure(control_plane, obj) for obj in planned]
    cluster = created[-1]
    owner = {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "name": name,
        "uid": cluster["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    for secret in created[1:3]:
        secret.update(apiVersion="v1", kind="Secret")
        secret["metadata"]["ownerReferences"] = [owner]
        await control_plane.update(SECRETS, secret, options.cluster_namespace)
    say(f"cluster({name}) is joined successfully")
    return [*in_member, *redacted(planned)]


async def unjoin(
    control_plane: KubeClient,
    member: KubeClient | None,
    name: str,
    say: Callable[[str], None],
    *,
    cluster_namespace: str = NAMESPACE_KARMADA_CLUSTER,
    wait: float = 60.0,
    dry_run: bool = False,
) -> None:
    """Remove a Push cluster: the Cluster (after its Works), its Secrets, then the member-side objects."""
    cluster = await control_plane.get_or_none(CLUSTERS, name)
    if cluster is not None and (cluster.get("spec") or {}).get("syncMode") == "Pull":
        raise JoinError(f'cluster "{name}" is in Pull mode: it was registered, not joined; use unregister')
    if dry_run:
        say(f"would delete Cluster {name}, its Secrets in {cluster_namespace}, and its access objects in the member")
        return
    if cluster is None:
        say(f"cluster {name} is not joined on the control plane; cleaning up the rest")
    else:
        await delete_if_present(control_plane, CLUSTERS, name, None)

        async def gone() -> bool:
            return await control_plane.get_or_none(CLUSTERS, name) is None

        await wait_until(gone, wait, what=f"Cluster {name} to be removed by the control plane")
        say(f"cluster {name} removed from the control plane")
    for secret in (name, impersonation_secret_name(name)):
        await delete_if_present(control_plane, SECRETS, secret, cluster_namespace)
    if member is not None:
        for obj in reversed(member_objects(name, cluster_namespace)):
            if obj["kind"] == "Namespace":
                continue  # other clusters' accounts, or anything else, may live there
            resource = _RESOURCES[obj["kind"]]
            if await delete_if_present(member, resource, obj["metadata"]["name"], obj["metadata"].get("namespace")):
                say(f"[member] {obj['kind'].lower()}/{obj['metadata']['name']} deleted")
    say(f"cluster({name}) is unjoined successfully")
