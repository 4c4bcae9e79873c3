"""The kubeconfig ``proxy-config`` prints: the user's own credentials, the proxy's address."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from karmada.clusterproxy.endpoint import Endpoint
from karmada.clusterproxy.kubeconfig import KubeconfigError, proxy_kubeconfig, proxy_path

ENDPOINT = Endpoint("https://proxy.example:8443/", b"-----BEGIN CERTIFICATE-----\n")


def kubeconfig(user: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
    context: dict[str, Any] = {"cluster": "karmada", "user": "me"}
    if namespace:
        context["namespace"] = namespace
    return {
        "clusters": [{"name": "karmada", "cluster": {"server": "https://karmada:5443"}}],
        "users": [{"name": "me", "user": user}],
        "contexts": [{"name": "karmada", "context": context}],
        "current-context": "karmada",
    }


@pytest.mark.parametrize(
    ("user", "expected"),
    [
        ({"token": "t"}, {"token": "t"}),
        ({"client-certificate-data": "Y2VydA==", "client-key-data": "a2V5"}, None),
        (
            {"client-certificate": "certs/me.crt", "client-key": "/abs/me.key"},
            {"client-certificate": "/home/u/.kube/certs/me.crt", "client-key": "/abs/me.key"},
        ),
        ({"tokenFile": "token"}, {"tokenFile": "/home/u/.kube/token"}),
        ({"exec": {"command": "aws", "args": ["eks", "get-token"]}}, None),
    ],
)
def test_the_users_credentials_come_along(user: dict[str, Any], expected: dict[str, Any] | None) -> None:
    built = proxy_kubeconfig(kubeconfig(user), Path("/home/u/.kube"), None, "member1", ENDPOINT)
    assert built["users"][0]["user"] == (expected if expected is not None else user)


def test_the_server_is_the_clusters_proxy_path() -> None:
    built = proxy_kubeconfig(kubeconfig({"token": "t"}, "apps"), Path("/"), None, "edge-7", ENDPOINT)
    cluster = built["clusters"][0]["cluster"]
    assert cluster["server"] == "https://proxy.example:8443/apis/cluster.karmada.io/v1alpha1/clusters/edge-7/proxy"
    assert base64.b64decode(cluster["certificate-authority-data"]) == ENDPOINT.ca_pem
    assert built["contexts"][0]["context"] == {
        "cluster": "karmada-proxy-edge-7",
        "user": "karmada-proxy-edge-7",
        "namespace": "apps",
    }
    assert built["current-context"] == "karmada-proxy-edge-7"
    assert proxy_path("m") == "/apis/cluster.karmada.io/v1alpha1/clusters/m/proxy"


def test_an_unknown_context_is_named() -> None:
    with pytest.raises(KubeconfigError, match='context "nope" not found'):
        proxy_kubeconfig(kubeconfig({}), Path("/"), "nope", "m", ENDPOINT)
