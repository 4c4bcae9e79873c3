"""localkube as the ``karmada-apiserver`` of a host cluster: its PKI, the objects
that run it, and the admin kubeconfig that reaches it.

Plain functions over data (no I/O; nothing here writes a file): the installer
reads the Secret a previous run stored, passes it to :func:`pki_from_secret`
and :func:`ensure_pki` (the CA and the service-account key are kept, only the
certificates whose names or lifetime no longer fit are reissued), then applies
:func:`apiserver_objects` and hands :func:`admin_kubeconfig` to the user. The
StatefulSet runs ``localkube serve`` with that PKI mounted read-only and its
journal on a PersistentVolumeClaim, so a restarted or rescheduled pod serves
the same objects under the same CA.

Facts that follow ``karmadactl init``: the Secret ``karmada-cert`` with
``ca``, ``apiserver`` (serving) and ``karmada`` (the admin client, CN
``system:admin`` in ``system:masters``) as ``NAME.crt``/``NAME.key``, mounted at
``/etc/karmada/pki``; container port 5443; a NodePort Service on 32443; a 5Gi
volume; HTTPS probes on ``/livez`` and ``/readyz``; a CA named ``karmada``
valid 10 years and leaf certificates valid 365 days; the kubeconfig's cluster
and context ``karmada-apiserver`` with the user ``karmada-admin``.
"""

from __future__ import annotations

import base64
import binascii
import copy
import datetime
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import yaml
from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID

from karmada.images import IMAGE
from karmada.kube.kubeconfig import build_kubeconfig
from karmada.pki import key_pem, new_rsa_key
from karmada.pki.authority import current, distinguished_name, ip_of, issue, new_ca, signing_key

Obj = dict[str, Any]
ServiceType = Literal["ClusterIP", "NodePort", "LoadBalancer"]

NAME = "karmada-apiserver"
NAMESPACE = "karmada-system"
LABELS = {"app": NAME}
# karmadactl init's certificate Secret and where its API server mounts it
SECRET_NAME = "karmada-cert"
PKI_MOUNT = "/etc/karmada/pki"
# the volume claim's mount; localkube keeps its journal in a directory of its own below it,
# because it makes that directory 0700 and refuses one it does not own (the volume's root is root's)
DATA_MOUNT = "/var/lib/karmada-apiserver"
DATA_DIR = f"{DATA_MOUNT}/data"
CONTAINER_PORT = 5443
NODE_PORT = 32443
USER_NAME = "karmada-admin"
ADMIN_USER = "system:admin"
ADMIN_GROUP = "system:masters"
RUN_AS = 65532  # the image's numeric user (Dockerfile)

# Secret keys. karmadactl init names each pair NAME.crt/NAME.key: ``ca`` the CA, ``apiserver``
# the serving certificate, ``karmada`` the admin client certificate. Its API server reuses
# karmada.key to sign service-account tokens; a key of its own (``sa.key``/``sa.pub``, kubeadm's
# names) lets the admin certificate be reissued without invalidating every token.
CA_CERT, CA_KEY = "ca.crt", "ca.key"
SERVING_CERT, SERVING_KEY = "apiserver.crt", "apiserver.key"
ADMIN_CERT, ADMIN_KEY = "karmada.crt", "karmada.key"
SA_KEY, SA_PUB = "sa.key", "sa.pub"
# the files the pod sees: the admin's key stays out of the API server's volume
_MOUNTED = (CA_CERT, CA_KEY, SERVING_CERT, SERVING_KEY, SA_KEY, SA_PUB)

_CA_VALIDITY = datetime.timedelta(days=3650)
_LEAF_VALIDITY = datetime.timedelta(days=365)
_RENEW_BEFORE = datetime.timedelta(days=30)


@dataclass(frozen=True, repr=False)
class ApiserverPKI:
    """PEM bytes of the CA, the serving and admin certificates with their keys, and the
    service-account signing key (RSA 2048; its public key is what tokens verify with)."""

    ca_cert: bytes
    ca_key: bytes
    serving_cert: bytes
    serving_key: bytes
    admin_cert: bytes
    admin_key: bytes
    sa_key: bytes

    def __repr__(self) -> str:  # keys never reach a log or a traceback
        return "ApiserverPKI(<PEM>)"


def _default_resources() -> Obj:
    # localkube keeps every object in memory (the journal on the volume is for restarts)
    return {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}}


@dataclass(frozen=True)
class ApiserverOptions:
    """How the API server runs. ``node_port`` applies to a NodePort Service only (a
    LoadBalancer's node port is left to the host cluster); ``extra_args`` follow the
    generated ``localkube serve`` flags."""

    image: str = IMAGE
    service_type: ServiceType = "NodePort"  # karmadactl init's (the only one it makes)
    port: int = CONTAINER_PORT
    node_port: int = NODE_PORT
    storage_size: str = "5Gi"  # karmadactl init's --etcd-pvc-size
    storage_class_name: str | None = None  # None: the host cluster's default StorageClass
    resources: Obj = field(default_factory=_default_resources)
    extra_args: tuple[str, ...] = ()


# ---- subject alternative names


def service_names(cluster_domain: str = "cluster.local", name: str = NAME) -> list[str]:
    """The names the Service ``name`` answers to inside the host cluster, then loopback."""
    service = f"{name}.{NAMESPACE}"
    return [name, service, f"{service}.svc", f"{service}.svc.{cluster_domain}", "localhost", "127.0.0.1"]


def subject_alt_names(
    hosts: Iterable[str], extra_names: Iterable[str] = (), cluster_domain: str = "cluster.local", name: str = NAME
) -> list[str]:
    """Every SAN a serving certificate of the Service ``name`` carries, in order, once each: the
    Service's names, loopback, the advertise addresses (``hosts``) and ``extra_names``; IPs in
    canonical form."""
    names: dict[str, None] = {}
    for given in [*service_names(cluster_domain, name), *hosts, *extra_names]:
        value = given.strip()
        if not value:
            continue
        ip = ip_of(value)
        names[str(ip) if ip is not None else value.lower()] = None
    return list(names)


def certificate_sans(cert_pem: bytes) -> tuple[list[str], list[str]]:
    """``(DNS names, IP addresses)`` of a certificate."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    try:
        extension = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return [], []
    return extension.get_values_for_type(x509.DNSName), [
        str(ip) for ip in extension.get_values_for_type(x509.IPAddress)
    ]


# ---- certificates


def _now(now: datetime.datetime | None) -> datetime.datetime:
    return now or datetime.datetime.now(datetime.UTC)


def new_pki(
    hosts: Iterable[str],
    extra_names: Iterable[str] = (),
    *,
    cluster_domain: str = "cluster.local",
    now: datetime.datetime | None = None,
) -> ApiserverPKI:
    """A new CA, serving certificate (:func:`subject_alt_names`), admin certificate and
    service-account key."""
    now = _now(now)
    ca_cert, ca_key = new_ca("karmada", now, _CA_VALIDITY)
    serving_cert, serving_key = _serving(ca_cert, ca_key, subject_alt_names(hosts, extra_names, cluster_domain), now)
    admin_cert, admin_key = _admin(ca_cert, ca_key, now)
    return ApiserverPKI(ca_cert, ca_key, serving_cert, serving_key, admin_cert, admin_key, key_pem(new_rsa_key(2048)))


def _serving(ca_cert: bytes, ca_key: bytes, sans: Sequence[str], now: datetime.datetime) -> tuple[bytes, bytes]:
    return issue(ca_cert, ca_key, distinguished_name(NAME), ExtendedKeyUsageOID.SERVER_AUTH, sans, now, _LEAF_VALIDITY)


def _admin(ca_cert: bytes, ca_key: bytes, now: datetime.datetime) -> tuple[bytes, bytes]:
    subject = distinguished_name(ADMIN_USER, [ADMIN_GROUP])
    return issue(ca_cert, ca_key, subject, ExtendedKeyUsageOID.CLIENT_AUTH, [], now, _LEAF_VALIDITY)


def reissue_serving(
    pki: ApiserverPKI,
    hosts: Iterable[str],
    extra_names: Iterable[str] = (),
    *,
    cluster_domain: str = "cluster.local",
    now: datetime.datetime | None = None,
) -> ApiserverPKI:
    """``pki`` with a new serving certificate and key from the same CA; the rest is kept."""
    sans = subject_alt_names(hosts, extra_names, cluster_domain)
    cert, key = _serving(pki.ca_cert, pki.ca_key, sans, _now(now))
    return replace(pki, serving_cert=cert, serving_key=key)


def _same_sans(cert_pem: bytes, wanted: Sequence[str]) -> bool:
    dns, ips = certificate_sans(cert_pem)
    return set(dns) | set(ips) == set(wanted)


def ensure_pki(
    stored: ApiserverPKI | None,
    hosts: Iterable[str],
    extra_names: Iterable[str] = (),
    *,
    cluster_domain: str = "cluster.local",
    now: datetime.datetime | None = None,
) -> ApiserverPKI:
    """What a run of init installs: ``stored`` as it is when it still fits; its CA and
    service-account key kept and only the serving certificate reissued when the SANs asked
    for changed (or it expires within 30 days), the admin certificate likewise when it
    expires; a new PKI when there is none or its CA expires within 30 days."""
    now = _now(now)
    hosts, extra_names = list(hosts), list(extra_names)
    if stored is None or not current(stored.ca_cert, stored.ca_cert, now, _RENEW_BEFORE):
        return new_pki(hosts, extra_names, cluster_domain=cluster_domain, now=now)
    pki = stored
    wanted = subject_alt_names(hosts, extra_names, cluster_domain)
    if not current(pki.serving_cert, pki.ca_cert, now, _RENEW_BEFORE) or not _same_sans(pki.serving_cert, wanted):
        pki = reissue_serving(pki, hosts, extra_names, cluster_domain=cluster_domain, now=now)
    if not current(pki.admin_cert, pki.ca_cert, now, _RENEW_BEFORE):
        cert, key = _admin(pki.ca_cert, pki.ca_key, now)
        pki = replace(pki, admin_cert=cert, admin_key=key)
    return pki


def _public_pem(private_pem: bytes) -> bytes:
    return (
        signing_key(private_pem)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


# ---- the Secret


_FIELD_KEYS = {
    "ca_cert": CA_CERT,
    "ca_key": CA_KEY,
    "serving_cert": SERVING_CERT,
    "serving_key": SERVING_KEY,
    "admin_cert": ADMIN_CERT,
    "admin_key": ADMIN_KEY,
    "sa_key": SA_KEY,
}


def pki_secret(pki: ApiserverPKI) -> Obj:
    """The Secret ``karmada-system/karmada-cert`` that holds the PKI (and ``sa.pub``, derived)."""
    data = {key: getattr(pki, attribute) for attribute, key in _FIELD_KEYS.items()}
    data[SA_PUB] = _public_pem(pki.sa_key)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": SECRET_NAME,
            "namespace": NAMESPACE,
            "labels": {**LABELS, "karmada.io/bootstrapping": "secret-defaults"},
        },
        "type": "Opaque",
        "data": {key: base64.b64encode(value).decode() for key, value in data.items()},
    }


def pki_from_secret(secret: Obj | None) -> ApiserverPKI | None:
    """The PKI a previous run stored; ``None`` when there is no Secret, a key is missing or a
    value is not PEM of the expected kind (then init makes a new one)."""
    data = (secret or {}).get("data") or {}
    try:
        values = {attribute: base64.b64decode(data[key], validate=True) for attribute, key in _FIELD_KEYS.items()}
        for attribute in ("ca_cert", "serving_cert", "admin_cert"):
            x509.load_pem_x509_certificate(values[attribute])
        for attribute in ("ca_key", "serving_key", "admin_key", "sa_key"):
            signing_key(values[attribute])
    except (KeyError, TypeError, ValueError, binascii.Error, UnsupportedAlgorithm):  # a curve it cannot load
        return None
    return ApiserverPKI(**values)


# ---- the objects


def _flags(port: int) -> list[str]:
    """``localkube serve`` as karmada-apiserver: the given PKI, the journal on the volume, no
    simulation (admission webhooks are always on in localkube)."""
    return [
        "--host=0.0.0.0",
        f"--port={port}",
        f"--data-dir={DATA_DIR}",
        f"--tls-cert-file={PKI_MOUNT}/{SERVING_CERT}",
        f"--tls-private-key-file={PKI_MOUNT}/{SERVING_KEY}",
        f"--client-ca-file={PKI_MOUNT}/{CA_CERT}",
        f"--cluster-signing-cert-file={PKI_MOUNT}/{CA_CERT}",
        f"--cluster-signing-key-file={PKI_MOUNT}/{CA_KEY}",
        f"--service-account-signing-key-file={PKI_MOUNT}/{SA_KEY}",
        f"--service-account-key-file={PKI_MOUNT}/{SA_PUB}",
    ]


def service(options: ApiserverOptions) -> Obj:
    """The Service agents and users reach the API server through."""
    port: Obj = {"name": "https", "protocol": "TCP", "port": options.port, "targetPort": "https"}
    if options.service_type == "NodePort":
        port["nodePort"] = options.node_port
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(LABELS)},
        "spec": {"type": options.service_type, "selector": dict(LABELS), "ports": [port]},
    }


def _probe(path: str, **timing: int) -> Obj:
    return {"httpGet": {"path": path, "port": "https", "scheme": "HTTPS"}, "timeoutSeconds": 5, **timing}


def volume_claim(name: str, labels: dict[str, str], size: str, storage_class_name: str | None) -> Obj:
    """A StatefulSet's volume claim template (the host's default StorageClass unless named)."""
    claim: Obj = {
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}},
    }
    if storage_class_name is not None:
        claim["spec"]["storageClassName"] = storage_class_name
    return claim


def statefulset(options: ApiserverOptions) -> Obj:
    """The StatefulSet running ``localkube serve`` on the Secret's PKI and a volume claim."""
    claim = volume_claim("data", LABELS, options.storage_size, options.storage_class_name)
    container: Obj = {
        "name": NAME,
        "image": options.image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["localkube", "serve", *_flags(options.port), *options.extra_args],
        "ports": [{"name": "https", "containerPort": options.port, "protocol": "TCP"}],
        # a long journal replays before the server listens: the startup probe gives it 5 minutes
        "startupProbe": _probe("/livez", periodSeconds=5, failureThreshold=60),
        "livenessProbe": _probe("/livez", periodSeconds=15, failureThreshold=3),
        "readinessProbe": _probe("/readyz", periodSeconds=5, failureThreshold=3),
        "resources": copy.deepcopy(options.resources),
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "privileged": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": "pki", "mountPath": PKI_MOUNT, "readOnly": True},
            {"name": "data", "mountPath": DATA_MOUNT},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
    }
    pod: Obj = {
        "automountServiceAccountToken": False,  # it talks to no API server of the host
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": RUN_AS,
            "runAsGroup": RUN_AS,
            "fsGroup": RUN_AS,  # the volume and the Secret's files readable and writable by the user
            "fsGroupChangePolicy": "OnRootMismatch",
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
        "volumes": [
            {
                "name": "pki",
                "secret": {
                    "secretName": SECRET_NAME,
                    "defaultMode": 0o440,
                    "items": [{"key": key, "path": key} for key in _MOUNTED],
                },
            },
            {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
        ],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(LABELS)},
        "spec": {
            "replicas": 1,  # one writer of the journal
            "serviceName": NAME,
            "selector": {"matchLabels": dict(LABELS)},
            "template": {"metadata": {"labels": dict(LABELS)}, "spec": pod},
            "volumeClaimTemplates": [claim],
            # the objects outlive the StatefulSet: deleting it never deletes the claim
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
        },
    }


def apiserver_objects(pki: ApiserverPKI, options: ApiserverOptions | None = None) -> list[Obj]:
    """The Secret, the Service and the StatefulSet, in the order to apply them."""
    options = options or ApiserverOptions()
    return [pki_secret(pki), service(options), statefulset(options)]


# ---- the kubeconfig


def admin_kubeconfig(pki: ApiserverPKI, server_url: str, tls_server_name: str | None = None) -> str:
    """An admin kubeconfig as karmadactl init's ``karmada-apiserver.config``: cluster and context
    ``karmada-apiserver``, user ``karmada-admin`` (``system:admin`` in ``system:masters``), every
    credential embedded. ``tls_server_name`` checks the certificate for a Service name when the
    URL is an address the certificate does not name."""

    config = build_kubeconfig(
        cluster=NAME,
        server=server_url,
        ca_pem=pki.ca_cert,
        user=USER_NAME,
        cert_pem=pki.admin_cert,
        key_pem=pki.admin_key,
        context=NAME,
        tls_server_name=tls_server_name,
    )
    return yaml.safe_dump(config, sort_keys=False)
