"""Where callers find the cluster proxy, and its serving certificate.

Whoever installs the proxy (``local up``, or an operator by hand) records its
address and CA in the ConfigMap ``karmada-system/karmada-cluster-proxy`` (``server``, ``ca.crt``), so
``kubectl karmada proxy-config``, ``logs`` and ``exec`` find it with nothing but
the user's Karmada kubeconfig; ``--cluster-proxy-server`` overrides it.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from cryptography.x509.oid import ExtendedKeyUsageOID

from karmada.api.keys import NAMESPACE_KARMADA_SYSTEM
from karmada.kube import KubeClient, KubeError
from karmada.kube.resources import CONFIGMAPS
from karmada.pki.authority import distinguished_name, issue
from karmada.private_files import private_directory, write_private

CONFIGMAP = "karmada-cluster-proxy"
CERT_DAYS = 365


@dataclass(frozen=True)
class Endpoint:
    server: str  # https://host:port
    ca_pem: bytes | None


async def publish(client: KubeClient, endpoint: Endpoint) -> None:
    data = {"server": endpoint.server}
    if endpoint.ca_pem:
        data["ca.crt"] = endpoint.ca_pem.decode()
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": CONFIGMAP, "namespace": NAMESPACE_KARMADA_SYSTEM},
        "data": data,
    }
    await client.apply(CONFIGMAPS, body, NAMESPACE_KARMADA_SYSTEM, manager="kubectl-karmada")


async def discover(client: KubeClient) -> Endpoint | None:
    try:
        found = await client.get_or_none(CONFIGMAPS, CONFIGMAP, NAMESPACE_KARMADA_SYSTEM)
    except KubeError:
        return None
    data = (found or {}).get("data") or {}
    if not data.get("server"):
        return None
    ca = data.get("ca.crt")
    return Endpoint(str(data["server"]).rstrip("/"), ca.encode() if ca else None)


def write_serving_pair(ca_cert: bytes, ca_key: bytes, hosts: list[str], directory: Path) -> tuple[Path, Path]:
    """A serving certificate for ``hosts`` signed by the CA, as ``tls.crt``/``tls.key`` (0600 in 0700)."""
    now = datetime.datetime.now(datetime.UTC)
    cert, key = issue(
        ca_cert,
        ca_key,
        distinguished_name("karmada-cluster-proxy"),
        ExtendedKeyUsageOID.SERVER_AUTH,
        hosts,
        now,
        datetime.timedelta(days=CERT_DAYS),
    )
    private_directory(directory)
    return write_private(directory / "tls.crt", cert), write_private(directory / "tls.key", key)
