"""karmada-controlplane and karmada-webhook in a host cluster, connected to a Karmada
API server that is not the host's own (the dedicated ``karmada-apiserver`` beside
them, or an external one).

The objects of ``manifests/deploy`` fall in two halves. Identities and rights
(ServiceAccounts, Roles, bindings) go into the Karmada API server: they are what
its RBAC checks, and they bind the users named by :func:`user_of` as well as the
service accounts. The workloads (Deployments, the webhook's Service, the
disruption budgets) go into the host, each pod mounting the Secret
``<component>-config`` (key ``karmada.config``) at ``/etc/karmada/config``,
karmadactl init's layout, instead of a service-account token of the host, which
the Karmada API server would not accept. Plain functions over data, no I/O.
"""

from __future__ import annotations

import base64
import copy
import datetime
from collections.abc import Iterable
from typing import Any

import yaml
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from karmada.kube.kubeconfig import build_kubeconfig
from karmada.pki.authority import current, distinguished_name, issue

Obj = dict[str, Any]
NAMESPACE = "karmada-system"
COMPONENTS = ("karmada-controlplane", "karmada-webhook")
CONFIG_MOUNT = "/etc/karmada/config"
CONFIG_KEY = "karmada.config"
IDENTITY_KINDS = frozenset({"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"})
_VOLUME = "karmada-config"
_VALIDITY = datetime.timedelta(days=365)
_RENEW_BEFORE = datetime.timedelta(days=30)


def user_of(component: str) -> str:
    """The user a component's client certificate names (the RBAC bindings' ``User`` subject)."""
    return f"system:karmada:{component}"


def config_secret_name(component: str) -> str:
    return f"{component}-config"


def split(documents: Iterable[Obj]) -> tuple[list[Obj], list[Obj]]:
    """``(identities and rights, workloads)`` of the deploy manifests, in their order."""
    identities: list[Obj] = []
    workloads: list[Obj] = []
    for doc in documents:
        (identities if doc["kind"] in IDENTITY_KINDS else workloads).append(doc)
    return identities, workloads


def hosted_workloads(workloads: Iterable[Obj]) -> list[Obj]:
    """Copies of the workloads whose pods reach the Karmada API server with their component's
    kubeconfig Secret and carry no service-account token of the host."""
    hosted = []
    for doc in workloads:
        copied = copy.deepcopy(doc)
        if copied["kind"] == "Deployment":
            _mount_kubeconfig(copied)
        hosted.append(copied)
    return hosted


def _mount_kubeconfig(deployment: Obj) -> None:
    name = deployment["metadata"]["name"]
    if name not in COMPONENTS:
        raise ValueError(f"deployment {name} is not one of {', '.join(COMPONENTS)}")
    pod = deployment["spec"]["template"]["spec"]
    pod.pop("serviceAccountName", None)
    pod["automountServiceAccountToken"] = False
    pod.setdefault("volumes", []).append(
        {
            "name": _VOLUME,
            "secret": {
                "secretName": config_secret_name(name),
                "defaultMode": 0o440,
                "items": [{"key": CONFIG_KEY, "path": CONFIG_KEY}],
            },
        }
    )
    (container,) = pod["containers"]
    container["command"] = [*container["command"], f"--kubeconfig={CONFIG_MOUNT}/{CONFIG_KEY}"]
    container.setdefault("volumeMounts", []).append({"name": _VOLUME, "mountPath": CONFIG_MOUNT, "readOnly": True})


def component_kubeconfig(
    component: str, server: str, ca_pem: bytes, cert_pem: bytes, key_pem: bytes, tls_server_name: str | None = None
) -> str:
    """The kubeconfig a component's pod reads: the server, its CA and the component's certificate."""
    config = build_kubeconfig(
        cluster="karmada-apiserver",
        server=server,
        ca_pem=ca_pem,
        user=component,
        cert_pem=cert_pem,
        key_pem=key_pem,
        context=component,
        tls_server_name=tls_server_name,
    )
    return yaml.safe_dump(config, sort_keys=False)


def config_secret(component: str, kubeconfig: str, name: str | None = None) -> Obj:
    """The Secret ``<component>-config`` (or ``name``) holding the kubeconfig as ``karmada.config``."""
    name = name or config_secret_name(component)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": component}},
        "type": "Opaque",
        "data": {CONFIG_KEY: base64.b64encode(kubeconfig.encode()).decode()},
    }


def client_certificate(
    component: str,
    ca_cert: bytes,
    ca_key: bytes,
    stored: Obj | None,
    now: datetime.datetime | None = None,
    *,
    user: str | None = None,
) -> tuple[bytes, bytes]:
    """The component's certificate and key: the ones in its stored Secret while they are signed
    by this CA, name the user (default :func:`user_of` the component) and stay valid 30 more
    days; else new ones."""
    now = now or datetime.datetime.now(datetime.UTC)
    user = user or user_of(component)
    kept = _stored_credentials(stored)
    if kept is not None and current(kept[0], ca_cert, now, _RENEW_BEFORE) and _names(kept[0], user):
        return kept
    subject = distinguished_name(user)
    return issue(ca_cert, ca_key, subject, ExtendedKeyUsageOID.CLIENT_AUTH, [], now, _VALIDITY)


def _stored_credentials(secret: Obj | None) -> tuple[bytes, bytes] | None:
    try:
        text = base64.b64decode(((secret or {}).get("data") or {})[CONFIG_KEY])
        user = yaml.safe_load(text)["users"][0]["user"]
        return base64.b64decode(user["client-certificate-data"]), base64.b64decode(user["client-key-data"])
    except (KeyError, IndexError, TypeError, ValueError, yaml.YAMLError):
        return None


def _names(cert_pem: bytes, user: str) -> bool:
    cert = x509.load_pem_x509_certificate(cert_pem)
    return [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)] == [user]
