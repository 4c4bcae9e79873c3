"""Kubernetes' own API server as the ``karmada-apiserver`` of a host cluster
(``init --apiserver kube``): etcd, kube-apiserver and a kube-controller-manager
that runs only the controllers Karmada needs, Karmada's layout for those who
outgrow one localkube replica.

Plain functions over data, no I/O. The objects follow ``karmadactl init``:
an etcd StatefulSet (1, 3 or 5 members, headless Service ``etcd``, one volume
each, its own CA in the Secret ``etcd-cert``), a ``karmada-apiserver``
Deployment (kube-apiserver on port 5443, the Secret ``karmada-cert`` that
localkube's layout uses too, so the Service, the admin kubeconfig and the
components' kubeconfigs are the same), and ``kube-controller-manager`` with
its kubeconfig Secret ``kube-controller-manager-config``. Differences, each
for a reason: etcd's peers talk TLS with client certificates (karmadactl's
peers use plain HTTP), the service accounts have a key pair of their own
(``sa.key``), the etcd members start in parallel (the first one cannot get
ready without a quorum), every container runs as a non-root user with a
read-only root filesystem, and no front proxy is configured (there is no
aggregated API server here).

Which controllers: ``namespace`` and ``garbagecollector`` (deleting a
namespace or an owner cleans up, which Karmada's own controllers rely on),
``serviceaccount-token``, ``bootstrapsigner`` and ``tokencleaner`` (the
bootstrap tokens ``register`` uses), ``csrsigning`` and ``csrcleaner`` (the
agents' client certificates), ``clusterrole-aggregation`` and
``ttl-after-finished``. Never ``deployment``, ``replicaset``, ``job`` or any
other workload controller: templates must stay templates.
"""

from __future__ import annotations

import base64
import binascii
import copy
import datetime
from dataclasses import dataclass, field, replace
from typing import Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.x509.oid import ExtendedKeyUsageOID

from karmada.images import ETCD_VERSION, KUBE_REGISTRY, KUBE_VERSION
from karmada.install import apiserver_localkube as localkube
from karmada.pki.authority import current, distinguished_name, issue, new_ca, signing_key

Obj = dict[str, Any]

NAMESPACE = localkube.NAMESPACE
APISERVER = localkube.NAME
ETCD = "etcd"
ETCD_SECRET = "etcd-cert"
ETCD_LABELS = {"app": ETCD}
CONTROLLER_MANAGER = "kube-controller-manager"
CONTROLLER_MANAGER_LABELS = {"app": CONTROLLER_MANAGER}
# kube-apiserver's bootstrap RBAC binds system:kube-controller-manager to what it needs
CONTROLLER_MANAGER_USER = "system:kube-controller-manager"
CONTROLLER_MANAGER_PORT = 10257
CONTROLLERS = (
    "namespace",
    "garbagecollector",
    "serviceaccount-token",
    "ttl-after-finished",
    "bootstrapsigner",
    "tokencleaner",
    "csrcleaner",
    "csrsigning",
    "clusterrole-aggregation",
)
ETCD_CLIENT_PORT, ETCD_PEER_PORT, ETCD_METRICS_PORT = 2379, 2380, 2381
ETCD_DATA = "/var/lib/karmada-etcd"
ETCD_PKI = "/etc/etcd/pki"
KARMADA_PKI = localkube.PKI_MOUNT
KCM_CONFIG_MOUNT = "/etc/karmada/config"
KCM_CONFIG_KEY = "karmada.config"
SERVICE_CLUSTER_IP_RANGE = "10.96.0.0/12"
RUN_AS = localkube.RUN_AS

# etcd-cert's keys, karmadactl's names: the etcd CA, the members' certificate (server and peer),
# and the API server's client certificate
ETCD_CA_CERT, ETCD_CA_KEY = "etcd-ca.crt", "etcd-ca.key"
ETCD_SERVER_CERT, ETCD_SERVER_KEY = "etcd-server.crt", "etcd-server.key"
ETCD_CLIENT_CERT, ETCD_CLIENT_KEY = "etcd-client.crt", "etcd-client.key"
_ETCD_MOUNTED = (ETCD_CA_CERT, ETCD_SERVER_CERT, ETCD_SERVER_KEY)
_APISERVER_ETCD_MOUNTED = (ETCD_CA_CERT, ETCD_CLIENT_CERT, ETCD_CLIENT_KEY)
# karmada-cert's files each program sees: the admin's key never, the CA's key only the signer's
_APISERVER_MOUNTED = (
    localkube.CA_CERT,
    localkube.SERVING_CERT,
    localkube.SERVING_KEY,
    localkube.SA_KEY,
    localkube.SA_PUB,
)
_KCM_MOUNTED = (localkube.CA_CERT, localkube.CA_KEY, localkube.SA_KEY)

_CA_VALIDITY = datetime.timedelta(days=3650)
_LEAF_VALIDITY = datetime.timedelta(days=365)
_RENEW_BEFORE = datetime.timedelta(days=30)


def _resources(cpu: str, memory: str, limit: str) -> Obj:
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": limit}}


@dataclass(frozen=True)
class KubeOptions:
    """The kube layout's choices. ``registry`` replaces ``registry.k8s.io`` in all three images
    (a mirror); ``etcd_image``, ``apiserver_image`` and ``controller_manager_image`` name an
    image outright."""

    registry: str = KUBE_REGISTRY
    kube_version: str = KUBE_VERSION
    etcd_image: str | None = None
    apiserver_image: str | None = None
    controller_manager_image: str | None = None
    etcd_replicas: int = 1
    apiserver_replicas: int = 1
    storage_size: str = "5Gi"
    storage_class_name: str | None = None
    cluster_domain: str = "cluster.local"
    etcd_resources: Obj = field(default_factory=lambda: _resources("100m", "256Mi", "2Gi"))
    apiserver_resources: Obj = field(default_factory=lambda: _resources("250m", "512Mi", "2Gi"))
    controller_manager_resources: Obj = field(default_factory=lambda: _resources("100m", "128Mi", "512Mi"))

    def __post_init__(self) -> None:
        if self.etcd_replicas not in (1, 3, 5):
            raise ValueError(f"etcd replicas must be 1, 3 or 5 (a quorum of an odd size), not {self.etcd_replicas}")
        if self.apiserver_replicas < 1:
            raise ValueError(f"karmada-apiserver replicas must be at least 1, not {self.apiserver_replicas}")

    def image(self, name: str) -> str:
        given = {
            ETCD: self.etcd_image,
            "kube-apiserver": self.apiserver_image,
            CONTROLLER_MANAGER: self.controller_manager_image,
        }[name]
        if given:
            return given
        tag = ETCD_VERSION if name == ETCD else self.kube_version
        return f"{self.registry.rstrip('/')}/{name}:{tag}"


def high_availability() -> KubeOptions:
    """The documented HA layout: three etcd members and two API servers on different nodes."""
    return KubeOptions(etcd_replicas=3, apiserver_replicas=2)


# ---- etcd's PKI


@dataclass(frozen=True, repr=False)
class EtcdPKI:
    """PEM bytes of etcd's own CA, the members' certificate and the API server's client
    certificate. A CA of its own: the Karmada CA signs every agent's client certificate, and
    none of those may reach etcd."""

    ca_cert: bytes
    ca_key: bytes
    server_cert: bytes
    server_key: bytes
    client_cert: bytes
    client_key: bytes

    def __repr__(self) -> str:
        return "EtcdPKI(<PEM>)"


def member_names(options: KubeOptions) -> list[str]:
    """Each member's DNS name through the headless Service, in ordinal order."""
    return [f"{ETCD}-{n}.{ETCD}.{NAMESPACE}.svc.{options.cluster_domain}" for n in range(options.etcd_replicas)]


def etcd_sans(options: KubeOptions) -> list[str]:
    service = f"{ETCD}.{NAMESPACE}"
    names = [ETCD, service, f"{service}.svc", f"{service}.svc.{options.cluster_domain}"]
    return [*names, *member_names(options), "localhost", "127.0.0.1"]


def _server(pki_ca: tuple[bytes, bytes], options: KubeOptions, now: datetime.datetime) -> tuple[bytes, bytes]:
    usages = (ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH)  # it serves and dials peers
    return issue(*pki_ca, distinguished_name("karmada-etcd-server"), usages, etcd_sans(options), now, _LEAF_VALIDITY)


def _client(pki_ca: tuple[bytes, bytes], now: datetime.datetime) -> tuple[bytes, bytes]:
    subject = distinguished_name("karmada-etcd-client")
    return issue(*pki_ca, subject, ExtendedKeyUsageOID.CLIENT_AUTH, [], now, _LEAF_VALIDITY)


def ensure_etcd_pki(stored: EtcdPKI | None, options: KubeOptions, now: datetime.datetime | None = None) -> EtcdPKI:
    """``stored`` while it fits; the members' certificate reissued when the member names changed
    (a different replica count) or it is near its end, the client's likewise; a new PKI when
    there is none or its CA is near its end."""
    now = now or datetime.datetime.now(datetime.UTC)
    if stored is None or not current(stored.ca_cert, stored.ca_cert, now, _RENEW_BEFORE):
        ca = new_ca("karmada-etcd", now, _CA_VALIDITY)
        return EtcdPKI(*ca, *_server(ca, options, now), *_client(ca, now))
    pki, ca = stored, (stored.ca_cert, stored.ca_key)
    dns, ips = localkube.certificate_sans(pki.server_cert)
    fits = set(dns) | set(ips) == set(etcd_sans(options))
    if not fits or not current(pki.server_cert, pki.ca_cert, now, _RENEW_BEFORE):
        cert, key = _server(ca, options, now)
        pki = replace(pki, server_cert=cert, server_key=key)
    if not current(pki.client_cert, pki.ca_cert, now, _RENEW_BEFORE):
        cert, key = _client(ca, now)
        pki = replace(pki, client_cert=cert, client_key=key)
    return pki


_ETCD_KEYS = {
    "ca_cert": ETCD_CA_CERT,
    "ca_key": ETCD_CA_KEY,
    "server_cert": ETCD_SERVER_CERT,
    "server_key": ETCD_SERVER_KEY,
    "client_cert": ETCD_CLIENT_CERT,
    "client_key": ETCD_CLIENT_KEY,
}


def etcd_secret(pki: EtcdPKI) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": ETCD_SECRET, "namespace": NAMESPACE, "labels": dict(ETCD_LABELS)},
        "type": "Opaque",
        "data": {key: base64.b64encode(getattr(pki, name)).decode() for name, key in _ETCD_KEYS.items()},
    }


def etcd_pki_from_secret(secret: Obj | None) -> EtcdPKI | None:
    data = (secret or {}).get("data") or {}
    try:
        values = {name: base64.b64decode(data[key], validate=True) for name, key in _ETCD_KEYS.items()}
        for name in ("ca_cert", "server_cert", "client_cert"):
            x509.load_pem_x509_certificate(values[name])
        for name in ("ca_key", "server_key", "client_key"):
            signing_key(values[name])
    except (KeyError, TypeError, ValueError, binascii.Error, UnsupportedAlgorithm):  # a curve it cannot load
        return None
    return EtcdPKI(**values)


# ---- the objects


def _secret_volume(name: str, secret: str, keys: tuple[str, ...]) -> Obj:
    return {
        "name": name,
        "secret": {"secretName": secret, "defaultMode": 0o440, "items": [{"key": k, "path": k} for k in keys]},
    }


def _hardened(container: Obj) -> Obj:
    container["securityContext"] = {
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    return container


def _pod_security() -> Obj:
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS,
        "runAsGroup": RUN_AS,
        "fsGroup": RUN_AS,
        "fsGroupChangePolicy": "OnRootMismatch",
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _spread(labels: dict[str, str], required: bool) -> Obj:
    """Replicas on different nodes: required for the API servers and the controller managers
    (karmadactl's), preferred for etcd (a small host may have fewer nodes than members)."""
    term = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": dict(labels)}}
    if required:
        return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}]
        }
    }


def _pod(labels: dict[str, str], container: Obj, volumes: list[Obj], *, spread_required: bool) -> Obj:
    """A pod of the layout: no service-account token of the host, non-root, spread over nodes."""
    return {
        "automountServiceAccountToken": False,
        "securityContext": _pod_security(),
        "affinity": _spread(labels, required=spread_required),
        "containers": [container],
        "volumes": volumes,
    }


def etcd_service(options: KubeOptions) -> Obj:
    """The headless Service that names each member (``etcd-N.etcd``); members find each other
    through it before they are ready."""
    ports = [
        {"name": "client", "port": ETCD_CLIENT_PORT, "targetPort": "client", "protocol": "TCP"},
        {"name": "peer", "port": ETCD_PEER_PORT, "targetPort": "peer", "protocol": "TCP"},
    ]
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": ETCD, "namespace": NAMESPACE, "labels": dict(ETCD_LABELS)},
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": dict(ETCD_LABELS),
            "ports": ports,
        },
    }


def _etcd_command(options: KubeOptions) -> list[str]:
    domain = f"{ETCD}.{NAMESPACE}.svc.{options.cluster_domain}"
    initial = ",".join(f"{ETCD}-{n}=https://{ETCD}-{n}.{domain}:{ETCD_PEER_PORT}" for n in range(options.etcd_replicas))
    pki = ETCD_PKI
    return [
        "etcd",
        "--name=$(POD_NAME)",
        f"--data-dir={ETCD_DATA}/data",
        f"--listen-client-urls=https://0.0.0.0:{ETCD_CLIENT_PORT}",
        f"--advertise-client-urls=https://$(POD_NAME).{domain}:{ETCD_CLIENT_PORT}",
        f"--listen-peer-urls=https://0.0.0.0:{ETCD_PEER_PORT}",
        f"--initial-advertise-peer-urls=https://$(POD_NAME).{domain}:{ETCD_PEER_PORT}",
        f"--listen-metrics-urls=http://0.0.0.0:{ETCD_METRICS_PORT}",
        f"--initial-cluster={initial}",
        "--initial-cluster-state=new",
        "--initial-cluster-token=karmada-etcd",
        "--client-cert-auth=true",
        f"--trusted-ca-file={pki}/{ETCD_CA_CERT}",
        f"--cert-file={pki}/{ETCD_SERVER_CERT}",
        f"--key-file={pki}/{ETCD_SERVER_KEY}",
        "--peer-client-cert-auth=true",
        f"--peer-trusted-ca-file={pki}/{ETCD_CA_CERT}",
        f"--peer-cert-file={pki}/{ETCD_SERVER_CERT}",
        f"--peer-key-file={pki}/{ETCD_SERVER_KEY}",
        "--auto-compaction-mode=periodic",
        "--auto-compaction-retention=8h",  # etcd's own 2 GiB quota: well inside the volume, with its WAL
    ]


def _http_probe(path: str, port: int | str, scheme: str, **timing: int) -> Obj:
    return {"httpGet": {"path": path, "port": port, "scheme": scheme}, "timeoutSeconds": 5, **timing}


def etcd_statefulset(options: KubeOptions) -> Obj:
    claim = localkube.volume_claim("etcd-data", ETCD_LABELS, options.storage_size, options.storage_class_name)
    env = [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ]
    container = _hardened(
        {
            "name": ETCD,
            "image": options.image(ETCD),
            "imagePullPolicy": "IfNotPresent",
            "command": _etcd_command(options),
            "env": env,
            "ports": [
                {"name": "client", "containerPort": ETCD_CLIENT_PORT, "protocol": "TCP"},
                {"name": "peer", "containerPort": ETCD_PEER_PORT, "protocol": "TCP"},
                {"name": "metrics", "containerPort": ETCD_METRICS_PORT, "protocol": "TCP"},
            ],
            "startupProbe": _http_probe("/readyz", "metrics", "HTTP", periodSeconds=5, failureThreshold=60),
            "livenessProbe": _http_probe("/livez", "metrics", "HTTP", periodSeconds=10, failureThreshold=3),
            "readinessProbe": _http_probe("/readyz", "metrics", "HTTP", periodSeconds=5, failureThreshold=3),
            "resources": copy.deepcopy(options.etcd_resources),
            "volumeMounts": [
                {"name": "etcd-data", "mountPath": ETCD_DATA},
                {"name": "etcd-pki", "mountPath": ETCD_PKI, "readOnly": True},
            ],
        }
    )
    pod = _pod(ETCD_LABELS, container, [_secret_volume("etcd-pki", ETCD_SECRET, _ETCD_MOUNTED)], spread_required=False)
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": ETCD, "namespace": NAMESPACE, "labels": dict(ETCD_LABELS)},
        "spec": {
            "replicas": options.etcd_replicas,
            "serviceName": ETCD,
            "podManagementPolicy": "Parallel",  # a member is ready only once a quorum has started
            "selector": {"matchLabels": dict(ETCD_LABELS)},
            "template": {"metadata": {"labels": dict(ETCD_LABELS)}, "spec": pod},
            "volumeClaimTemplates": [claim],
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
        },
    }


def _apiserver_command(options: KubeOptions, port: int) -> list[str]:
    pki, etcd = KARMADA_PKI, f"{KARMADA_PKI}/etcd"
    servers = ",".join(f"https://{name}:{ETCD_CLIENT_PORT}" for name in member_names(options))
    return [
        "kube-apiserver",
        "--bind-address=0.0.0.0",
        f"--secure-port={port}",
        "--authorization-mode=Node,RBAC",
        "--allow-privileged=false",
        "--anonymous-auth=true",  # the kubelet's probes of /livez and /readyz (system:public-info-viewer)
        f"--client-ca-file={pki}/{localkube.CA_CERT}",
        "--enable-bootstrap-token-auth=true",  # register's bootstrap tokens
        f"--etcd-servers={servers}",
        f"--etcd-cafile={etcd}/{ETCD_CA_CERT}",
        f"--etcd-certfile={etcd}/{ETCD_CLIENT_CERT}",
        f"--etcd-keyfile={etcd}/{ETCD_CLIENT_KEY}",
        "--disable-admission-plugins=StorageObjectInUseProtection,ServiceAccount",
        f"--service-account-issuer=https://kubernetes.default.svc.{options.cluster_domain}",
        f"--service-account-key-file={pki}/{localkube.SA_PUB}",
        f"--service-account-signing-key-file={pki}/{localkube.SA_KEY}",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        f"--tls-cert-file={pki}/{localkube.SERVING_CERT}",
        f"--tls-private-key-file={pki}/{localkube.SERVING_KEY}",
        "--tls-min-version=VersionTLS12",
        "--v=2",
    ]


def apiserver_deployment(options: KubeOptions, port: int = localkube.CONTAINER_PORT) -> Obj:
    """kube-apiserver as ``karmada-apiserver``: the port named ``https`` that the shared
    Service targets, probes on ``/livez`` and ``/readyz``."""
    labels = localkube.LABELS
    container = _hardened(
        {
            "name": APISERVER,
            "image": options.image("kube-apiserver"),
            "imagePullPolicy": "IfNotPresent",
            "command": _apiserver_command(options, port),
            "ports": [{"name": "https", "containerPort": port, "protocol": "TCP"}],
            "startupProbe": _http_probe("/livez", "https", "HTTPS", periodSeconds=5, failureThreshold=60),
            "livenessProbe": _http_probe("/livez", "https", "HTTPS", periodSeconds=15, failureThreshold=3),
            "readinessProbe": _http_probe("/readyz", "https", "HTTPS", periodSeconds=5, failureThreshold=3),
            "resources": copy.deepcopy(options.apiserver_resources),
            "volumeMounts": [
                {"name": "karmada-pki", "mountPath": KARMADA_PKI, "readOnly": True},
                {"name": "etcd-client", "mountPath": f"{KARMADA_PKI}/etcd", "readOnly": True},
            ],
        }
    )
    volumes = [
        _secret_volume("karmada-pki", localkube.SECRET_NAME, _APISERVER_MOUNTED),
        _secret_volume("etcd-client", ETCD_SECRET, _APISERVER_ETCD_MOUNTED),
    ]
    pod = _pod(labels, container, volumes, spread_required=True)
    return _deployment(APISERVER, labels, options.apiserver_replicas, pod)


def _deployment(name: str, labels: dict[str, str], replicas: int, pod: Obj) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": dict(labels)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            # one pod per node (required anti-affinity): a surge pod would find no node, so a
            # rollout replaces one pod at a time instead
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
        },
    }


def controller_manager_config_secret_name() -> str:
    return f"{CONTROLLER_MANAGER}-config"


def _controller_manager_command(options: KubeOptions) -> list[str]:
    pki, config = KARMADA_PKI, f"{KCM_CONFIG_MOUNT}/{KCM_CONFIG_KEY}"
    return [
        "kube-controller-manager",
        f"--kubeconfig={config}",
        f"--authentication-kubeconfig={config}",
        f"--authorization-kubeconfig={config}",
        "--bind-address=0.0.0.0",
        f"--secure-port={CONTROLLER_MANAGER_PORT}",
        f"--controllers={','.join(CONTROLLERS)}",
        f"--cluster-signing-cert-file={pki}/{localkube.CA_CERT}",
        f"--cluster-signing-key-file={pki}/{localkube.CA_KEY}",
        f"--root-ca-file={pki}/{localkube.CA_CERT}",
        f"--service-account-private-key-file={pki}/{localkube.SA_KEY}",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        "--use-service-account-credentials=true",
        "--leader-elect=true",
        f"--leader-elect-resource-namespace={NAMESPACE}",
        "--v=2",
    ]


def controller_manager_deployment(options: KubeOptions) -> Obj:
    labels = CONTROLLER_MANAGER_LABELS
    container = _hardened(
        {
            "name": CONTROLLER_MANAGER,
            "image": options.image(CONTROLLER_MANAGER),
            "imagePullPolicy": "IfNotPresent",
            "command": _controller_manager_command(options),
            "ports": [{"name": "https", "containerPort": CONTROLLER_MANAGER_PORT, "protocol": "TCP"}],
            "livenessProbe": _http_probe("/healthz", "https", "HTTPS", periodSeconds=10, failureThreshold=8),
            "resources": copy.deepcopy(options.controller_manager_resources),
            "volumeMounts": [
                {"name": "karmada-pki", "mountPath": KARMADA_PKI, "readOnly": True},
                {"name": "karmada-config", "mountPath": KCM_CONFIG_MOUNT, "readOnly": True},
                {"name": "tmp", "mountPath": "/tmp"},
            ],
        }
    )
    volumes = [
        _secret_volume("karmada-pki", localkube.SECRET_NAME, _KCM_MOUNTED),
        _secret_volume("karmada-config", controller_manager_config_secret_name(), (KCM_CONFIG_KEY,)),
        {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
    ]
    pod = _pod(labels, container, volumes, spread_required=True)
    # as many as API servers (leader-elected: one works, the others wait)
    return _deployment(CONTROLLER_MANAGER, labels, options.apiserver_replicas, pod)


def host_objects(options: KubeOptions, port: int = localkube.CONTAINER_PORT) -> list[Obj]:
    """The workloads of the layout, in the order to apply them (without the Secrets)."""
    return [
        etcd_service(options),
        etcd_statefulset(options),
        apiserver_deployment(options, port),
        controller_manager_deployment(options),
    ]
