"""Where an API server is and how to authenticate to it: kubeconfig (file, bytes
or dict, any context), in-cluster service-account credentials, client
certificates, bearer tokens, token files and exec credential plugins, the TLS
server name to verify and the proxy to go through.

These are settings only; :mod:`karmada.kube.auth` obtains and refreshes the
credentials they describe, :mod:`karmada.kube.proxy` picks the proxy.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

IN_CLUSTER_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class ConfigError(ValueError):
    """The connection settings are incomplete or inconsistent."""


@dataclass
class Credentials:
    """How requests authenticate."""

    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None
    token: str | None = None
    token_file: Path | None = None
    exec_config: dict[str, Any] | None = None
    token_file_period: float = 60.0  # how long a token read from token_file is used (client-go: 1 minute)

    def bearer(self) -> str | None:
        """The bearer token as configured (``token_file`` read now)."""
        if self.token_file is not None:
            return self.token_file.read_text().strip()
        return self.token


@dataclass
class ClusterConfig:
    """One API server and the credentials to use with it."""

    server: str
    ca_pem: bytes | None = None
    insecure: bool = False
    credentials: Credentials = field(default_factory=Credentials)
    tls_server_name: str | None = None  # the name to verify the server's certificate against
    proxy_url: str | None = None  # kubeconfig's proxy-url; None: HTTPS_PROXY/NO_PROXY decide

    def ssl_context(self, client_cert_pem: bytes | None = None, client_key_pem: bytes | None = None) -> ssl.SSLContext:
        """TLS verifying the server against ``ca_pem`` and presenting a client certificate:
        the one given (e.g. from an exec plugin), else the configured one, if any."""
        if self.insecure:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif self.ca_pem:
            context = ssl.create_default_context(cadata=self.ca_pem.decode())
        else:
            context = ssl.create_default_context()
        cert_pem = client_cert_pem or self.credentials.client_cert_pem
        key_pem = client_key_pem or self.credentials.client_key_pem
        if cert_pem and key_pem:
            # ssl needs files; they live only as long as loading takes, in a 0700 directory
            with tempfile.TemporaryDirectory(prefix="karmada-tls-") as directory:
                cert = Path(directory) / "tls.crt"
                key = Path(directory) / "tls.key"
                cert.write_bytes(cert_pem)
                with os.fdopen(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
                    out.write(key_pem)
                context.load_cert_chain(cert, key)
        return context


def _data_or_file(entry: dict[str, Any], data_key: str, file_key: str, base: Path | None) -> bytes | None:
    if entry.get(data_key):
        return base64.b64decode(entry[data_key])
    if entry.get(file_key):
        path = Path(entry[file_key])
        if not path.is_absolute() and base is not None:
            path = base / path
        return path.read_bytes()
    return None


def _named(items: list[dict[str, Any]] | None, name: str, what: str) -> dict[str, Any]:
    for item in items or []:
        if item.get("name") == name:
            return dict(item.get(what) or {})
    raise ConfigError(f"{what} {name!r} not found in kubeconfig")


def from_kubeconfig_dict(data: dict[str, Any], context: str | None = None, base: Path | None = None) -> ClusterConfig:
    """Connection settings of one context of a parsed kubeconfig."""
    name = context or data.get("current-context")
    if not name:
        raise ConfigError("the kubeconfig has no current-context; pass a context name")
    ctx = _named(data.get("contexts"), name, "context")
    cluster = _named(data.get("clusters"), ctx.get("cluster", ""), "cluster")
    user = _named(data.get("users"), ctx.get("user", ""), "user") if ctx.get("user") else {}
    if not cluster.get("server"):
        raise ConfigError(f"cluster {ctx.get('cluster')!r} has no server")
    proxy_url = cluster.get("proxy-url")
    if proxy_url and "://" in proxy_url and proxy_url.split("://", 1)[0] not in ("http", "https"):
        raise ConfigError(f"cluster {ctx.get('cluster')!r}: only http and https proxy-url schemes are supported")
    token_file = user.get("tokenFile")
    credentials = Credentials(
        client_cert_pem=_data_or_file(user, "client-certificate-data", "client-certificate", base),
        client_key_pem=_data_or_file(user, "client-key-data", "client-key", base),
        token=user.get("token"),
        token_file=Path(token_file) if token_file else None,
        exec_config=user.get("exec"),
    )
    return ClusterConfig(
        server=str(cluster["server"]).rstrip("/"),
        ca_pem=_data_or_file(cluster, "certificate-authority-data", "certificate-authority", base),
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        credentials=credentials,
        tls_server_name=cluster.get("tls-server-name"),
        proxy_url=proxy_url,
    )


def _load_file(path: str | Path | None) -> tuple[dict[str, Any], Path]:
    if path is None:
        env = os.environ.get("KUBECONFIG", "")
        path = env.split(os.pathsep)[0] if env else Path.home() / ".kube" / "config"
    file = Path(path).expanduser()
    try:
        data = yaml.safe_load(file.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read kubeconfig {file}: {exc.strerror}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{file} is not a kubeconfig")
    return data, file


def from_kubeconfig(path: str | Path | None = None, context: str | None = None) -> ClusterConfig:
    """Load a kubeconfig file (default: ``$KUBECONFIG``'s first entry, else ``~/.kube/config``)."""
    data, file = _load_file(path)
    return from_kubeconfig_dict(data, context, file.parent)


def context_cluster_name(path: str | Path | None = None, context: str | None = None) -> str:
    """The name of the cluster entry the (current) context uses."""
    data, _ = _load_file(path)
    name = context or data.get("current-context")
    if not name:
        raise ConfigError("the kubeconfig has no current-context; pass a context name")
    return str(_named(data.get("contexts"), name, "context").get("cluster", ""))


def from_kubeconfig_bytes(content: bytes | str, context: str | None = None) -> ClusterConfig:
    """A kubeconfig held in memory (e.g. read from a Secret)."""
    data = yaml.safe_load(content)
    if not isinstance(data, dict):
        raise ConfigError("not a kubeconfig")
    return from_kubeconfig_dict(data, context)


def from_flags(kubeconfig: str | None, context: str | None) -> ClusterConfig:
    """A program's API server: the kubeconfig (and context) given, else the pod's in-cluster settings."""
    if kubeconfig or context:
        return from_kubeconfig(kubeconfig, context)
    return in_cluster()


def in_cluster(directory: Path = IN_CLUSTER_DIR) -> ClusterConfig:
    """The pod's service-account credentials and the in-cluster API endpoint."""
    host = os.environ.get("KUBERNETES_SERVICE_HOST")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        raise ConfigError("not running in a cluster: KUBERNETES_SERVICE_HOST is not set")
    if ":" in host:
        host = f"[{host}]"
    return ClusterConfig(
        server=f"https://{host}:{port}",
        ca_pem=(directory / "ca.crt").read_bytes(),
        credentials=Credentials(token_file=directory / "token"),
    )
