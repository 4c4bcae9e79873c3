"""Credentials stay fresh and connections go where the kubeconfig says.

A tiny API server accepts only the token that is current (as a real one
stops accepting an expired or revoked token) and answers 401 otherwise; an
exec plugin written by the test issues short-lived tokens and counts its
runs. TLS tests serve a certificate for a name other than the address
dialled; proxy tests go through a CONNECT proxy that counts its tunnels."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from karmada.kube import ClusterConfig, ConfigError, Credentials, KubeClient, KubeError, from_kubeconfig_bytes
from karmada.kube.proxy import proxy_for
from karmada.kube.resources import CONFIGMAPS
from localkube.pki import CertificateAuthority, cert_pem
from tests.faults import ConnectProxy

PLUGIN = """
import datetime, json, os, pathlib, sys
state = pathlib.Path(os.environ["STATE"])
runs = int(state.read_text().split()[0]) + 1 if state.exists() else 1
lifetime = float(os.environ["LIFETIME"])
expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=lifetime)
state.write_text(f"{runs} {expires.timestamp()}")
json.dump({
    "apiVersion": "client.authentication.k8s.io/v1",
    "kind": "ExecCredential",
    "status": {"token": f"token-{runs}", "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ")},
}, sys.stdout)
"""


class TokenServer:
    """Answers API requests whose bearer token ``accepts``; 401 Unauthorized otherwise."""

    def __init__(self, accepts: Callable[[str], bool], *, ssl_context: ssl.SSLContext | None = None) -> None:
        self.accepts = accepts
        self.ssl_context = ssl_context
        self.tokens: list[str] = []  # as received, in order
        self.unauthorized = 0
        self.bodies: list[Any] = []
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def start(self) -> TokenServer:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._serve)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.ssl_context).start()
        self.port = self._runner.addresses[0][1]
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _serve(self, request: web.Request) -> web.Response:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        self.tokens.append(token)
        if not self.accepts(token):
            self.unauthorized += 1
            status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Unauthorized"}
            return web.json_response({**status, "message": "Unauthorized", "code": 401}, status=401)
        if request.can_read_body:
            self.bodies.append(await request.json())
        name = request.path.rsplit("/", 1)[1]
        return web.json_response({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})


@pytest.fixture
async def servers() -> AsyncIterator[list[TokenServer]]:
    started: list[TokenServer] = []
    yield started
    for server in started:
        await server.close()


def plugin_credentials(tmp_path: Path, lifetime: float) -> tuple[Credentials, Path]:
    script = tmp_path / "plugin.py"
    script.write_text(PLUGIN)
    state = tmp_path / "plugin.state"
    exec_config = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": sys.executable,
        "args": [str(script)],
        "env": [{"name": "STATE", "value": str(state)}, {"name": "LIFETIME", "value": str(lifetime)}],
        "interactiveMode": "Never",
    }
    return Credentials(exec_config=exec_config), state


def plugin_runs(state: Path) -> int:
    return int(state.read_text().split()[0])


def current_plugin_token(state: Path, revoked: set[str]) -> Callable[[str], bool]:
    """The newest token the plugin issued, until its expiry, unless revoked."""

    def accepts(token: str) -> bool:
        runs, expires = state.read_text().split()
        return token == f"token-{runs}" and time.time() < float(expires) and token not in revoked

    return accepts


async def test_exec_credentials_are_renewed_when_they_expire(tmp_path: Path, servers: list[TokenServer]) -> None:
    credentials, state = plugin_credentials(tmp_path, lifetime=1.5)
    server = await TokenServer(current_plugin_token(state, set())).start()
    servers.append(server)
    async with KubeClient(ClusterConfig(f"http://127.0.0.1:{server.port}", credentials=credentials)) as client:
        await client.get(CONFIGMAPS, "first", "default")
        await client.get(CONFIGMAPS, "second", "default")
        assert plugin_runs(state) == 1  # cached while valid
        expires = float(state.read_text().split()[1])
        await asyncio.sleep(max(0.0, expires - time.time()) + 0.05)  # the credential's own expiry passes
        await client.get(CONFIGMAPS, "third", "default")
        assert plugin_runs(state) == 2
    assert server.unauthorized == 0, "renewed before use, not after a refusal"
    assert server.tokens == ["token-1", "token-1", "token-2"]


async def test_a_burst_of_401s_runs_the_exec_plugin_once_and_the_requests_succeed(
    tmp_path: Path, servers: list[TokenServer]
) -> None:
    credentials, state = plugin_credentials(tmp_path, lifetime=3600)
    revoked: set[str] = set()
    server = await TokenServer(current_plugin_token(state, revoked)).start()
    servers.append(server)
    async with KubeClient(ClusterConfig(f"http://127.0.0.1:{server.port}", credentials=credentials)) as client:
        await client.get(CONFIGMAPS, "warm-up", "default")
        revoked.add("token-1")  # the server stops accepting the token before its expiry
        results = await asyncio.gather(
            *(client.get(CONFIGMAPS, f"burst-{i}", "default") for i in range(5)),
            client.create(CONFIGMAPS, {"metadata": {"name": "posted"}, "data": {"k": "v"}}, "default"),
        )
    assert [r["metadata"]["name"] for r in results[:5]] == [f"burst-{i}" for i in range(5)]
    assert plugin_runs(state) == 2, "one plugin run for the whole burst"
    assert server.unauthorized == 6
    assert server.bodies == [{"metadata": {"name": "posted"}, "data": {"k": "v"}}]  # the retried POST's body


async def test_a_token_file_is_reread_periodically_after_a_401_and_survives_a_missing_file(
    tmp_path: Path, servers: list[TokenServer]
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("file-1\n")
    accepted = {"file-1"}
    server = await TokenServer(lambda token: token in accepted).start()
    servers.append(server)
    credentials = Credentials(token_file=token_file, token_file_period=0.2)
    async with KubeClient(ClusterConfig(f"http://127.0.0.1:{server.port}", credentials=credentials)) as client:
        await client.get(CONFIGMAPS, "a", "default")
        # rotated, and the old token refused at once: the 401 makes the client read the file again
        token_file.write_text("file-2\n")
        accepted.clear()
        accepted.add("file-2")
        await client.get(CONFIGMAPS, "b", "default")
        assert server.tokens[-2:] == ["file-1", "file-2"]
        # rotated while the old token still works: picked up within the period
        token_file.write_text("file-3\n")
        accepted.add("file-3")
        await asyncio.sleep(0.25)
        await client.get(CONFIGMAPS, "c", "default")
        assert server.tokens[-1] == "file-3"
        # the file vanishes for a moment (a volume being updated): the last token is kept
        token_file.unlink()
        await asyncio.sleep(0.25)
        await client.get(CONFIGMAPS, "d", "default")
        assert server.tokens[-1] == "file-3"


def serving_tls(tmp_path: Path, names: list[str]) -> tuple[ssl.SSLContext, bytes]:
    """A server context whose certificate names only ``names``, and its CA."""
    ca = CertificateAuthority.create("test-ca")
    cert, key = ca.issue_server(names)
    (tmp_path / "server.crt").write_bytes(cert)
    (tmp_path / "server.key").write_bytes(key)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "server.crt", tmp_path / "server.key")
    return context, cert_pem(ca.cert)


def kubeconfig(server: str, ca_pem: bytes, **cluster: str) -> bytes:
    entry = {"server": server, "certificate-authority-data": base64.b64encode(ca_pem).decode(), **cluster}
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": entry}],
            "users": [{"name": "u", "user": {"token": "static"}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        }
    ).encode()


async def test_tls_server_name_verifies_the_server_by_another_name(tmp_path: Path, servers: list[TokenServer]) -> None:
    context, ca_pem = serving_tls(tmp_path, ["api.member.test"])
    server = await TokenServer(lambda token: token == "static", ssl_context=context).start()
    servers.append(server)
    by_address = f"https://127.0.0.1:{server.port}"
    named = from_kubeconfig_bytes(kubeconfig(by_address, ca_pem, **{"tls-server-name": "api.member.test"}))
    async with KubeClient(named) as client:
        assert (await client.get(CONFIGMAPS, "named", "default"))["metadata"]["name"] == "named"
    async with KubeClient(from_kubeconfig_bytes(kubeconfig(by_address, ca_pem))) as client:
        with pytest.raises(KubeError, match="certificate verify failed"):
            await client.get(CONFIGMAPS, "unnamed", "default")


@pytest.fixture
async def proxied(tmp_path: Path, servers: list[TokenServer]) -> AsyncIterator[tuple[ConnectProxy, str, bytes]]:
    """A TLS server known only by a name the proxy resolves, and that proxy."""
    context, ca_pem = serving_tls(tmp_path, ["api.member.test"])
    server = await TokenServer(lambda token: token == "static", ssl_context=context).start()
    servers.append(server)
    proxy = await ConnectProxy({"api.member.test": server.port}).start()
    try:
        yield proxy, f"https://api.member.test:{server.port}", ca_pem
    finally:
        await proxy.close()


async def test_proxy_url_from_the_kubeconfig_tunnels_every_connection(
    proxied: tuple[ConnectProxy, str, bytes],
) -> None:
    proxy, server, ca_pem = proxied
    config = from_kubeconfig_bytes(kubeconfig(server, ca_pem, **{"proxy-url": proxy.url}))
    async with KubeClient(config) as client:
        await client.get(CONFIGMAPS, "through", "default")
    assert proxy.tunnels == [server.removeprefix("https://")]


async def test_https_proxy_from_the_environment(
    proxied: tuple[ConnectProxy, str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy, server, ca_pem = proxied
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "other.test,10.0.0.0/8")
    async with KubeClient(from_kubeconfig_bytes(kubeconfig(server, ca_pem))) as client:
        await client.get(CONFIGMAPS, "through", "default")
    assert proxy.tunnels == [server.removeprefix("https://")]


@pytest.mark.parametrize(
    ("server", "environ", "expected"),
    [
        ("https://api.example.com", {"HTTPS_PROXY": "http://proxy:3128"}, "http://proxy:3128"),
        ("https://api.example.com", {"https_proxy": "proxy:3128"}, "http://proxy:3128"),
        ("https://api.example.com", {"HTTPS_PROXY": "http://upper", "https_proxy": "http://lower"}, "http://upper"),
        ("https://api.example.com", {"HTTP_PROXY": "http://proxy"}, None),
        ("http://api.example.com", {"HTTP_PROXY": "http://proxy"}, "http://proxy"),
        ("https://127.0.0.1:6443", {"HTTPS_PROXY": "http://proxy"}, None),
        ("https://[::1]:6443", {"HTTPS_PROXY": "http://proxy"}, None),
        ("https://localhost:6443", {"HTTPS_PROXY": "http://proxy"}, None),
        ("https://api.example.com", {"HTTPS_PROXY": "http://proxy", "NO_PROXY": "*"}, None),
        ("https://api.example.com", {"HTTPS_PROXY": "http://proxy", "NO_PROXY": "example.com"}, None),
        ("https://example.com", {"HTTPS_PROXY": "http://proxy", "NO_PROXY": "example.com"}, None),
        ("https://example.com", {"HTTPS_PROXY": "http://proxy", "NO_PROXY": ".example.com"}, "http://proxy"),
        ("https://a.example.com", {"HTTPS_PROXY": "http://proxy", "no_proxy": ".example.com"}, None),
        ("https://notexample.com", {"HTTPS_PROXY": "http://proxy", "NO_PROXY": "example.com"}, "http://proxy"),
        ("https://10.1.2.3", {"HTTPS_PROXY": "http://proxy", "NO_PROXY": "10.0.0.0/8"}, None),
        ("https://10.1.2.3", {"HTTPS_PROXY": "http://proxy", "NO_PROXY": "10.1.2.3"}, None),
        ("https://api.example.com", {"HTTPS_PROXY": "http://proxy", "NO_PROXY": "api.example.com:443"}, None),
        ("https://api.example.com:6443", {"HTTPS_PROXY": "http://p", "NO_PROXY": "api.example.com:443"}, "http://p"),
    ],
)
def test_proxy_from_the_environment_as_go_reads_it(server: str, environ: dict[str, str], expected: str | None) -> None:
    assert proxy_for(server, None, environ) == expected


def test_the_kubeconfig_proxy_wins_and_socks_is_refused() -> None:
    environ = {"HTTPS_PROXY": "http://from-env"}
    assert proxy_for("https://127.0.0.1", "http://from-kubeconfig", environ) == "http://from-kubeconfig"
    with pytest.raises(ConfigError, match="socks5"):
        proxy_for("https://api.example.com", "socks5://127.0.0.1:1080", {})
