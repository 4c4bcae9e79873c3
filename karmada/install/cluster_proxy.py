"""The cluster proxy in a host cluster, beside a dedicated ``karmada-apiserver``: its
serving certificate, the workload that serves it, its Service and the address
callers are told to dial.

The program ``karmada-cluster-proxy`` serves it, in a Deployment of its own of one
replica: an agent's tunnel lands on one process, and a user's request is answered
only by the process that holds that member's tunnel (see
:mod:`controlplane.proxy_program`). Inside the control plane's two leader-elected
replicas the tunnels would split between them and half the requests would meet no
tunnel (503). It uses the control plane's identity (its kubeconfig Secret, whose
rights include the proxy's token and access reviews and the Push members' Secrets).
``Recreate``: a rollout never runs two at once.

Ports: the container serves HTTPS on 8443 (the program's default, the usual
unprivileged HTTPS port), its probes on 10358 and metrics on 8080; the Service
``karmada-cluster-proxy`` is of the API server's Service type, a NodePort on 32444
by default (karmada-apiserver's 32443, plus one), so agents behind NAT outside the
host cluster dial ``https://<advertised address>:32444``, the address they already
reach the API server at.

The certificate is issued by the Karmada API server's CA (``karmada-cert``): agents
verify the proxy with the CA of their Karmada kubeconfig and users with the one
published in ``karmada-system/karmada-cluster-proxy``, and the proxy checks agents'
client certificates against the same CA (its CSR signer issued them). Its SANs: the
Service's cluster names, loopback (a ``kubectl port-forward``), the advertised
addresses and init's extra SANs. Plain functions over data, no I/O.
"""

from __future__ import annotations

import base64
import binascii
import copy
import datetime
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from karmada.install import apiserver_localkube
from karmada.install.apiserver_localkube import ServiceType, certificate_sans
from karmada.pki.authority import current, distinguished_name, issue

Obj = dict[str, Any]
NAME = "karmada-cluster-proxy"
NAMESPACE = "karmada-system"
LABELS = {"app": NAME}
SECRET_NAME = "karmada-cluster-proxy-cert"
CERT_MOUNT = "/etc/karmada/cluster-proxy"
TLS_CERT, TLS_KEY, CA_CERT = "tls.crt", "tls.key", "ca.crt"
CONTAINER_PORT = 8443
NODE_PORT = 32444
PROGRAM = "karmada-cluster-proxy"
HEALTH_PORT = 10358
_VOLUME = "cluster-proxy-cert"
_VALIDITY = datetime.timedelta(days=365)
_RENEW_BEFORE = datetime.timedelta(days=30)


@dataclass(frozen=True)
class ProxyOptions:
    """``enabled``: deploy and publish the proxy; ``node_port``: its Service's node port
    (a NodePort Service); ``advertise_url``: where agents and users dial it
    (``https://host[:port]``) instead of the API server's advertised address with the
    node port (a LoadBalancer's: its ingress on 8443)."""

    enabled: bool = True
    node_port: int = NODE_PORT
    advertise_url: str | None = None

    def __post_init__(self) -> None:
        if self.advertise_url is not None:
            check_url(self.advertise_url)


def check_url(url: str) -> str:
    """``url`` when it is ``https://host[:port]`` with no path; ValueError otherwise."""
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018  (a bad port raises)
    except ValueError:
        raise ValueError(f"cluster proxy URL {url!r}: bad port") from None
    if parts.scheme != "https" or not parts.hostname or parts.path.strip("/") or parts.query or parts.username:
        raise ValueError(f"cluster proxy URL {url!r}: want https://HOST[:PORT]")
    return url.rstrip("/")


def url_host(url: str) -> str:
    hostname = urlsplit(url).hostname
    assert hostname is not None
    return hostname


def url_for(address: str, port: int) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"https://{host}:{port}"


# ---- the certificate


def service_names(cluster_domain: str = "cluster.local") -> list[str]:
    """The names the Service answers to inside the host cluster, then loopback."""
    return apiserver_localkube.service_names(cluster_domain, NAME)


def subject_alt_names(
    hosts: Iterable[str], extra_names: Iterable[str] = (), cluster_domain: str = "cluster.local"
) -> list[str]:
    """The serving certificate's SANs, as the API server's rule makes them for this Service."""
    return apiserver_localkube.subject_alt_names(hosts, extra_names, cluster_domain, NAME)


def serving_pair(
    stored: Obj | None, ca_cert: bytes, ca_key: bytes, sans: Sequence[str], now: datetime.datetime | None = None
) -> tuple[bytes, bytes]:
    """The certificate and key of the stored Secret while the CA signed them, they name
    exactly ``sans`` and stay valid 30 more days (the API server's serving certificate's
    rule); else new ones, valid 365 days."""
    now = now or datetime.datetime.now(datetime.UTC)
    kept = _stored_pair(stored)
    if kept is not None and current(kept[0], ca_cert, now, _RENEW_BEFORE):
        dns, ips = certificate_sans(kept[0])
        if set(dns) | set(ips) == set(sans):
            return kept
    return issue(ca_cert, ca_key, distinguished_name(NAME), ExtendedKeyUsageOID.SERVER_AUTH, sans, now, _VALIDITY)


def _stored_pair(secret: Obj | None) -> tuple[bytes, bytes] | None:
    data = (secret or {}).get("data") or {}
    try:
        cert, key = (base64.b64decode(data[k], validate=True) for k in (TLS_CERT, TLS_KEY))
        x509.load_pem_x509_certificate(cert)
    except (KeyError, TypeError, ValueError, binascii.Error):
        return None
    return cert, key


def secret(cert: bytes, key: bytes, ca_cert: bytes) -> Obj:
    """The Secret the proxy's pod mounts: its pair and the client CA (the API server's)."""
    data = {TLS_CERT: cert, TLS_KEY: key, CA_CERT: ca_cert}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SECRET_NAME, "namespace": NAMESPACE, "labels": dict(LABELS)},
        "type": "kubernetes.io/tls",
        "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
    }


# ---- the objects


def flags() -> list[str]:
    """``karmada-cluster-proxy``'s flags, but its kubeconfig."""
    return [
        f"--health-probe-bind-address=:{HEALTH_PORT}",
        "--metrics-bind-address=:8080",
        f"--cluster-proxy-bind-address=:{CONTAINER_PORT}",
        f"--cluster-proxy-tls-cert-file={CERT_MOUNT}/{TLS_CERT}",
        f"--cluster-proxy-tls-private-key-file={CERT_MOUNT}/{TLS_KEY}",
        f"--cluster-proxy-client-ca-file={CERT_MOUNT}/{CA_CERT}",
    ]


def deployment(controlplane: Obj) -> Obj:
    """The proxy's Deployment, from the control plane's as it runs in the host (image,
    identity, probes, resources, security and mounts kept): one replica running
    ``karmada-cluster-proxy`` with the control plane's kubeconfig, its certificate
    mounted read-only."""
    proxy = copy.deepcopy(controlplane)
    proxy["metadata"] = {"name": NAME, "namespace": NAMESPACE, "labels": dict(LABELS)}
    spec = proxy["spec"]
    spec["replicas"] = 1
    spec["strategy"] = {"type": "Recreate"}
    spec["selector"] = {"matchLabels": dict(LABELS)}
    template = spec["template"]
    template["metadata"] = {"labels": dict(LABELS)}
    pod = template["spec"]
    pod.pop("affinity", None)  # the control plane's replicas spread; one replica has nothing to spread from
    (container,) = pod["containers"]
    container["name"] = NAME
    kubeconfig = [a for a in container["command"] if a.startswith("--kubeconfig=")]
    container["command"] = [PROGRAM, *kubeconfig, *flags()]
    container["ports"] = [
        {"name": "https", "containerPort": CONTAINER_PORT, "protocol": "TCP"},
        {"name": "health", "containerPort": HEALTH_PORT, "protocol": "TCP"},
        {"name": "metrics", "containerPort": 8080, "protocol": "TCP"},
    ]
    container.setdefault("volumeMounts", []).append({"name": _VOLUME, "mountPath": CERT_MOUNT, "readOnly": True})
    items = [{"key": key, "path": key} for key in (TLS_CERT, TLS_KEY, CA_CERT)]
    pod.setdefault("volumes", []).append(
        {"name": _VOLUME, "secret": {"secretName": SECRET_NAME, "defaultMode": 0o440, "items": items}}
    )
    return proxy


def service(service_type: ServiceType, node_port: int = NODE_PORT) -> Obj:
    """The Service agents and users reach the proxy through."""
    port: Obj = {"name": "https", "protocol": "TCP", "port": CONTAINER_PORT, "targetPort": "https"}
    if service_type == "NodePort":
        port["nodePort"] = node_port
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(LABELS)},
        "spec": {"type": service_type, "selector": dict(LABELS), "ports": [port]},
    }
