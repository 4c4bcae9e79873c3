"""Which proxy a connection to an API server goes through, as client-go picks
it: the kubeconfig cluster's ``proxy-url`` when set, else the environment as
Go's ``http.ProxyFromEnvironment`` reads it: ``HTTPS_PROXY`` for https
servers, ``HTTP_PROXY`` for http ones (upper-case names first), none for
``localhost`` and loopback addresses, none for hosts ``NO_PROXY`` names
(``*``; ``example.com`` for it and its subdomains, ``.example.com`` for
subdomains only; IP addresses and CIDR ranges; each optionally with a port).

Agents behind NAT often reach the control plane only through such a proxy.
HTTP(S) proxies are supported (HTTPS servers are tunnelled with CONNECT);
SOCKS is not.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from karmada.kube.config import ConfigError

DEFAULT_PORTS = {"http": "80", "https": "443"}


def _env(environ: Mapping[str, str], *names: str) -> str:
    for name in names:
        if environ.get(name):
            return environ[name]
    return ""


def _checked(proxy: str) -> str:
    if "://" not in proxy:
        proxy = "http://" + proxy  # Go accepts a bare host:port as an http proxy
    scheme = urlsplit(proxy).scheme
    if scheme not in ("http", "https"):
        raise ConfigError(f"unsupported proxy scheme {scheme!r}: only http and https proxies are supported")
    return proxy


def _excluded(host: str, port: str, no_proxy: str) -> bool:
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        if "/" in entry:
            try:
                if ip is not None and ip in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        entry_host, entry_port = entry, ""
        if entry.startswith("["):  # [v6]:port
            entry_host, _, rest = entry[1:].partition("]")
            entry_port = rest.removeprefix(":")
        elif entry.count(":") == 1:
            entry_host, entry_port = entry.split(":")
        if entry_port and entry_port != port:
            continue
        try:
            entry_ip = ipaddress.ip_address(entry_host)
        except ValueError:
            entry_ip = None
        if entry_ip is not None:
            if ip == entry_ip:
                return True
            continue
        if entry_host.startswith("*."):
            entry_host = entry_host[1:]
        if entry_host.startswith("."):
            if host.endswith(entry_host):
                return True
        elif host == entry_host or host.endswith("." + entry_host):
            return True
    return False


def proxy_for(server: str, proxy_url: str | None = None, environ: Mapping[str, str] | None = None) -> str | None:
    """The proxy URL for connections to ``server``, or None to connect directly."""
    if proxy_url:
        return _checked(proxy_url)
    environ = os.environ if environ is None else environ
    parts = urlsplit(server)
    scheme = parts.scheme or "https"
    proxy = (
        _env(environ, "HTTPS_PROXY", "https_proxy") if scheme == "https" else _env(environ, "HTTP_PROXY", "http_proxy")
    )
    if not proxy:
        return None
    host = (parts.hostname or "").lower()
    port = str(parts.port) if parts.port else DEFAULT_PORTS.get(scheme, "")
    if host == "localhost":
        return None
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:
        pass
    if _excluded(host, port, _env(environ, "NO_PROXY", "no_proxy")):
        return None
    return _checked(proxy)
