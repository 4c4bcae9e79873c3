"""Writing kubeconfigs: one cluster, one user, one context, as kubectl and
client libraries expect them (credentials inline as base64 ``*-data``)."""

from __future__ import annotations

import base64
from typing import Any

Obj = dict[str, Any]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def build_kubeconfig(
    *,
    cluster: str,
    server: str,
    ca_pem: bytes | None,
    user: str,
    cert_pem: bytes | None = None,
    key_pem: bytes | None = None,
    token: str | None = None,
    context: str | None = None,
    namespace: str | None = None,
    tls_server_name: str | None = None,
) -> Obj:
    """A complete kubeconfig whose current context joins ``cluster`` and ``user``;
    ``tls_server_name`` checks the certificate for a name other than the URL's host."""
    cluster_entry: Obj = {"server": server}
    if ca_pem:
        cluster_entry["certificate-authority-data"] = _b64(ca_pem)
    if tls_server_name:
        cluster_entry["tls-server-name"] = tls_server_name
    user_entry: Obj = {}
    if cert_pem and key_pem:
        user_entry["client-certificate-data"] = _b64(cert_pem)
        user_entry["client-key-data"] = _b64(key_pem)
    if token:
        user_entry["token"] = token
    name = context or f"{user}@{cluster}"
    context_entry: Obj = {"cluster": cluster, "user": user}
    if namespace:
        context_entry["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster, "cluster": cluster_entry}],
        "users": [{"name": user, "user": user_entry}],
        "contexts": [{"name": name, "context": context_entry}],
        "current-context": name,
        "preferences": {},
    }


def merge_kubeconfigs(configs: list[Obj], current: str | None = None) -> Obj:
    """Several single-context kubeconfigs as one file (entries keep their names)."""
    merged: Obj = {"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [], "contexts": [], "preferences": {}}
    for config in configs:
        for key in ("clusters", "users", "contexts"):
            merged[key].extend(config.get(key) or [])
    merged["current-context"] = current or (merged["contexts"][0]["name"] if merged["contexts"] else "")
    return merged
