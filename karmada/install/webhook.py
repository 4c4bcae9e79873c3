"""The webhook's certificates and its two webhook configurations.

``init`` makes a CA and a serving certificate for ``karmada-webhook`` (kept as
0600 files in a 0700 directory, or in the Secret ``karmada-webhook-cert`` for
``--deploy``), and installs ``mutating-config`` and ``validating-config`` with
Karmada's webhook names, rules, failure policies and timeouts, the CA as
``caBundle``, and a client configuration pointing at the webhook either by
URL (the sandbox: ``https://127.0.0.1:<port>``) or by Service (``--deploy``).
An existing, still valid CA and certificate are reused, so running init again
converges instead of rotating.
"""

from __future__ import annotations

import base64
import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.x509.oid import ExtendedKeyUsageOID

from karmada.pki.authority import current, distinguished_name, issue, new_ca
from karmada.private_files import private_directory, write_private

Obj = dict[str, Any]
SERVICE_NAME = "karmada-webhook"
NAMESPACE = "karmada-system"
SECRET_NAME = "karmada-webhook-cert"
MUTATING_CONFIG = "mutating-config"
VALIDATING_CONFIG = "validating-config"
CERT_FILE, KEY_FILE, CA_FILE, CA_KEY_FILE = "tls.crt", "tls.key", "ca.crt", "ca.key"
_VALIDITY = datetime.timedelta(days=3650)


@dataclass(frozen=True)
class WebhookCertificates:
    """PEM bytes of the CA and of the webhook's serving certificate and key."""

    ca_cert: bytes
    ca_key: bytes
    cert: bytes
    key: bytes


def _hosts() -> list[str]:
    service = f"{SERVICE_NAME}.{NAMESPACE}"
    return [SERVICE_NAME, service, f"{service}.svc", f"{service}.svc.cluster.local", "localhost", "127.0.0.1"]


def new_certificates(now: datetime.datetime | None = None) -> WebhookCertificates:
    """A fresh CA and a serving certificate for the webhook's Service names and loopback."""
    now = now or datetime.datetime.now(datetime.UTC)
    ca_cert, ca_key = new_ca("karmada-webhook-ca", now, _VALIDITY, path_length=0)
    return issue_serving(ca_cert, ca_key, now)


def issue_serving(ca_pem: bytes, ca_key_pem: bytes, now: datetime.datetime | None = None) -> WebhookCertificates:
    """A new serving certificate signed by the given CA."""
    now = now or datetime.datetime.now(datetime.UTC)
    subject = distinguished_name(f"{SERVICE_NAME}.{NAMESPACE}.svc")
    cert, key = issue(ca_pem, ca_key_pem, subject, ExtendedKeyUsageOID.SERVER_AUTH, _hosts(), now, _VALIDITY)
    return WebhookCertificates(ca_pem, ca_key_pem, cert, key)


def _valid(cert_pem: bytes, ca_pem: bytes, now: datetime.datetime) -> bool:
    return current(cert_pem, ca_pem, now, datetime.timedelta(days=30))


def load_or_create(directory: Path) -> WebhookCertificates:
    """The certificates in ``directory`` (0700; files 0600), created or renewed when missing or expiring."""
    private_directory(directory)
    paths = {name: directory / name for name in (CERT_FILE, KEY_FILE, CA_FILE, CA_KEY_FILE)}
    now = datetime.datetime.now(datetime.UTC)
    if all(path.exists() for path in paths.values()):
        existing = WebhookCertificates(*(paths[n].read_bytes() for n in (CA_FILE, CA_KEY_FILE, CERT_FILE, KEY_FILE)))
        if _valid(existing.cert, existing.ca_cert, now):
            return existing
    certificates = new_certificates(now)
    write_private(paths[CA_FILE], certificates.ca_cert)
    write_private(paths[CA_KEY_FILE], certificates.ca_key)
    write_private(paths[CERT_FILE], certificates.cert)
    write_private(paths[KEY_FILE], certificates.key)
    return certificates


def certificates_secret(certificates: WebhookCertificates) -> Obj:
    """The Secret the deployed webhook mounts as its ``--cert-dir`` (the CA key stays outside the cluster's pods)."""

    def encode(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SECRET_NAME, "namespace": NAMESPACE},
        "type": "kubernetes.io/tls",
        "data": {
            CERT_FILE: encode(certificates.cert),
            KEY_FILE: encode(certificates.key),
            CA_FILE: encode(certificates.ca_cert),
            CA_KEY_FILE: encode(certificates.ca_key),
        },
    }


def certificates_from_secret(secret: Obj | None) -> WebhookCertificates | None:
    """The certificates a previous ``init --deploy`` stored, when still valid."""
    data = (secret or {}).get("data") or {}
    try:
        parts = [base64.b64decode(data[name]) for name in (CA_FILE, CA_KEY_FILE, CERT_FILE, KEY_FILE)]
    except (KeyError, ValueError):
        return None
    certificates = WebhookCertificates(*parts)
    return (
        certificates if _valid(certificates.cert, certificates.ca_cert, datetime.datetime.now(datetime.UTC)) else None
    )


# (webhook name, path suffix, group, resource, scope, operations, sideEffects, timeout) as Karmada registers them
_MUTATING = (
    ("propagationpolicy.karmada.io", "propagationpolicy", "policy.karmada.io", "propagationpolicies", "Namespaced"),
    (
        "clusterpropagationpolicy.karmada.io",
        "clusterpropagationpolicy",
        "policy.karmada.io",
        "clusterpropagationpolicies",
        "Cluster",
    ),
    ("overridepolicy.karmada.io", "overridepolicy", "policy.karmada.io", "overridepolicies", "Namespaced"),
    ("resourcebinding.karmada.io", "resourcebinding", "work.karmada.io", "resourcebindings", "Namespaced"),
    (
        "clusterresourcebinding.karmada.io",
        "clusterresourcebinding",
        "work.karmada.io",
        "clusterresourcebindings",
        "Cluster",
    ),
    ("work.karmada.io", "work", "work.karmada.io", "works", "Namespaced"),
    ("cluster.karmada.io", "cluster", "cluster.karmada.io", "clusters", "Cluster"),  # ours: Karmada's aggregated API
)
_VALIDATING = (
    ("propagationpolicy.karmada.io", "propagationpolicy", "policy.karmada.io", "propagationpolicies", "Namespaced"),
    (
        "clusterpropagationpolicy.karmada.io",
        "clusterpropagationpolicy",
        "policy.karmada.io",
        "clusterpropagationpolicies",
        "Cluster",
    ),
    ("overridepolicy.karmada.io", "overridepolicy", "policy.karmada.io", "overridepolicies", "Namespaced"),
    (
        "clusteroverridepolicy.karmada.io",
        "clusteroverridepolicy",
        "policy.karmada.io",
        "clusteroverridepolicies",
        "Cluster",
    ),
    (
        "resourceinterpretercustomization.karmada.io",
        "resourceinterpretercustomization",
        "config.karmada.io",
        "resourceinterpretercustomizations",
        "Cluster",
    ),
    ("resourcedeletionprotection.karmada.io", "resourcedeletionprotection", "*", "*", "*"),
    ("resourcebinding.karmada.io", "resourcebinding", "work.karmada.io", "resourcebindings", "Namespaced"),
    ("clustertaintpolicy.karmada.io", "clustertaintpolicy", "policy.karmada.io", "clustertaintpolicies", "Cluster"),
    ("cluster.karmada.io", "cluster", "cluster.karmada.io", "clusters", "Cluster"),  # ours: Karmada's aggregated API
)
_CREATE_ONLY = {"resourcebinding", "clusterresourcebinding"}


def _client_config(path: str, ca_pem: bytes, url: str | None) -> Obj:
    bundle = base64.b64encode(ca_pem).decode()
    if url is not None:
        return {"url": f"{url.rstrip('/')}/{path}", "caBundle": bundle}
    service = {"name": SERVICE_NAME, "namespace": NAMESPACE, "path": f"/{path}", "port": 443}
    return {"service": service, "caBundle": bundle}


def _webhook(entry: tuple[str, str, str, str, str], prefix: str, ca_pem: bytes, url: str | None) -> Obj:
    name, suffix, group, resource, scope = entry
    operations = ["CREATE", "UPDATE"]
    if prefix == "mutate" and suffix in _CREATE_ONLY:
        operations = ["CREATE"]
    if suffix == "resourcedeletionprotection":
        operations = ["DELETE"]
    hook: Obj = {
        "name": name,
        "rules": [
            {
                "operations": operations,
                "apiGroups": [group],
                "apiVersions": ["*"],
                "resources": [resource],
                "scope": scope,
            }
        ],
        "clientConfig": _client_config(f"{prefix}-{suffix}", ca_pem, url),
        # Fail for Cluster too: Karmada validates Clusters in its aggregated API server, which no
        # outage bypasses, and Ignore would let an agent change its Cluster while the webhook is down
        "failurePolicy": "Fail",
        "sideEffects": "NoneOnDryRun" if (prefix, suffix) == ("validate", "resourcebinding") else "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": 10 if suffix == "resourceinterpretercustomization" else 3,
    }
    if suffix == "resourcedeletionprotection":
        hook["objectSelector"] = {
            "matchExpressions": [{"key": "resourcetemplate.karmada.io/deletion-protected", "operator": "Exists"}]
        }
    return hook


def webhook_configurations(ca_pem: bytes, url: str | None = None) -> list[Obj]:
    """``mutating-config`` and ``validating-config``; ``url`` is the webhook's base URL, else its Service."""
    labels = {"app": SERVICE_NAME}
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": MUTATING_CONFIG, "labels": dict(labels)},
            "webhooks": [_webhook(entry, "mutate", ca_pem, url) for entry in _MUTATING],
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": VALIDATING_CONFIG, "labels": dict(labels)},
            "webhooks": [_webhook(entry, "validate", ca_pem, url) for entry in _VALIDATING],
        },
    ]


def external_name_service(cluster_domain: str = "cluster.local") -> Obj:
    """The Service ``karmada-webhook`` of a Karmada API server that runs in a host cluster: an
    ExternalName naming the webhook's Service of the host, which the configurations' service
    reference then reaches (karmadactl init's way)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": SERVICE_NAME, "namespace": NAMESPACE},
        "spec": {
            "type": "ExternalName",
            "externalName": f"{SERVICE_NAME}.{NAMESPACE}.svc.{cluster_domain}",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP"}],
        },
    }
