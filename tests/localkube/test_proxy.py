"""services/proxy and pods/proxy against a real HTTP backend on 127.0.0.1.

Each case mirrors kube-apiserver: pkg/registry/core/service/storage
(ResourceLocation, isValidAddress), pkg/registry/core/pod/strategy.go
(ResourceLocation), k8s.io/apiserver's getRequestOptions (the subpath) and
k8s.io/apimachinery pkg/util/proxy (redirect of an empty path, X-Forwarded-*,
Location rewriting, CORS removal, dial errors).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from yarl import URL

from localkube import proxy
from tests.programs import free_port
from tests.servers import Kubectl, Raw, ServerThread, start_server

ADMIN_TOKEN = "proxy-admin-token"
READER_TOKEN = "proxy-reader-token"
NS = "proxied"


@pytest.fixture(scope="module")
def localkube() -> Iterator[ServerThread]:
    tokens = {ADMIN_TOKEN: ("proxy-admin", ["system:masters"]), READER_TOKEN: ("proxy-reader", [])}
    yield from start_server(port=0, static_tokens=tokens)


@dataclass
class Seen:
    method: str
    path: str
    query: str
    body: bytes
    headers: dict[str, str]


@dataclass
class Backend:
    port: int = 0
    seen: list[Seen] = field(default_factory=list)


async def _echo(backend: Backend, request: web.Request) -> web.StreamResponse:
    body = await request.read()
    backend.seen.append(
        Seen(request.method, request.path, request.rel_url.raw_query_string, body, dict(request.headers))
    )
    if request.path == "/teapot":
        return web.Response(status=418, text="short and stout", headers={"X-Backend": "yes"})
    if request.path == "/redirect":
        return web.Response(status=302, headers={"Location": "/login?next=1"})
    if request.path == "/broken":
        broken = web.StreamResponse(headers={"Content-Length": "1000"})
        await broken.prepare(request)
        await broken.write(b"partial")
        assert request.transport is not None
        request.transport.close()  # the backend dies mid-answer
        return broken
    if request.path == "/elsewhere":
        return web.Response(status=302, headers={"Location": "http://example.invalid/x"})
    headers = {"Access-Control-Allow-Origin": "*", "X-Backend": "yes"}
    return web.json_response({"method": request.method, "path": request.path, "body": body.decode()}, headers=headers)


@pytest.fixture
async def backend() -> AsyncIterator[Backend]:
    state = Backend()

    async def handle(request: web.Request) -> web.StreamResponse:
        return await _echo(state, request)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    state.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield state
    finally:
        await runner.cleanup()


async def call(
    raw: Raw,
    method: str,
    path: str,
    body: bytes | None = None,
    *,
    token: str = ADMIN_TOKEN,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes, dict[str, str]]:
    """One request with a bearer token, redirects not followed."""
    sent = {"Authorization": f"Bearer {token}", **(headers or {})}
    async with (
        aiohttp.ClientSession() as session,
        session.request(
            method, URL(raw.url + path, encoded=True), data=body, headers=sent, ssl=raw.anonymous, allow_redirects=False
        ) as response,
    ):
        return response.status, await response.read(), dict(response.headers)


async def create(raw: Raw, path: str, obj: dict[str, Any]) -> dict[str, Any]:
    code, body, _ = await raw.request("POST", path, obj)
    assert code == 201, body
    return dict(body)


async def backend_pod(raw: Raw, name: str, ip: str, port: int | None) -> None:
    """A Pod with ``ip`` as its address (the status a kubelet would report)."""
    container: dict[str, Any] = {"name": "c", "image": "backend"}
    if port is not None:
        container["ports"] = [{"containerPort": port}]
    await create(
        raw, f"/api/v1/namespaces/{NS}/pods", {"metadata": {"name": name}, "spec": {"containers": [container]}}
    )
    status = {"status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]}}
    code, body, _ = await call(
        raw,
        "PATCH",
        f"/api/v1/namespaces/{NS}/pods/{name}/status",
        json.dumps(status).encode(),
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert code == 200, body


async def backend_service(raw: Raw, name: str, port: int, *, target_ref: bool = True) -> None:
    """Service ``name`` (port 80 named http) with Endpoints at 127.0.0.1:``port``."""
    await create(
        raw,
        f"/api/v1/namespaces/{NS}/services",
        {"metadata": {"name": name}, "spec": {"ports": [{"name": "http", "port": 80, "targetPort": port}]}},
    )
    address: dict[str, Any] = {"ip": "127.0.0.1"}
    if target_ref:
        await backend_pod(raw, f"{name}-pod", "127.0.0.1", port)
        address["targetRef"] = {"kind": "Pod", "namespace": NS, "name": f"{name}-pod"}
    await create(
        raw,
        f"/api/v1/namespaces/{NS}/endpoints",
        {
            "metadata": {"name": name},
            "subsets": [{"addresses": [address], "ports": [{"name": "http", "port": port, "protocol": "TCP"}]}],
        },
    )


@pytest.fixture
async def namespace(raw: Raw) -> str:
    code, body, _ = await raw.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    assert code in (201, 409), body
    return NS


async def test_the_kubernetes_service_proxies_to_localkube(raw: Raw) -> None:
    code, body, _ = await call(raw, "GET", "/api/v1/namespaces/default/services/https:kubernetes:443/proxy/version")
    assert code == 200, body
    assert json.loads(body)["minor"] == "32"
    code, body, _ = await call(raw, "GET", "/api/v1/namespaces/default/endpoints/kubernetes")
    subset = json.loads(body)["subsets"][0]
    assert subset["addresses"] == [{"ip": "127.0.0.1"}]
    port = int(raw.url.rsplit(":", 1)[1])
    assert subset["ports"][0]["port"] == port
    code, body, _ = await call(raw, "GET", "/api/v1/namespaces/default/services/kubernetes")
    assert json.loads(body)["spec"]["ports"][0]["targetPort"] == port  # as kube's endpoint reconciler sets it
    code, body, _ = await call(raw, "GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes")
    assert json.loads(body)["endpoints"][0]["addresses"] == ["127.0.0.1"]


@pytest.mark.parametrize(
    ("host", "advertised"),
    [("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "127.0.0.1"), ("localhost", "127.0.0.1"), ("::1", "::1")],
)
def test_the_address_localkube_advertises(host: str, advertised: str) -> None:
    assert proxy.advertised_address(host) == advertised


def test_kubectl_get_raw_through_the_service_proxy(admin: Kubectl) -> None:
    out = admin("get", "--raw", "/api/v1/namespaces/default/services/https:kubernetes:443/proxy/version").stdout
    assert json.loads(out)["gitVersion"].startswith("v1.32")


async def test_path_query_method_body_and_headers_pass_through(raw: Raw, namespace: str, backend: Backend) -> None:
    await backend_service(raw, "web", backend.port)
    base = f"/api/v1/namespaces/{namespace}/services/web:http/proxy"
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"):
        body = b'{"n":1}' if method in ("POST", "PUT", "PATCH") else None
        code, answer, headers = await call(raw, method, f"{base}/a/b/?x=1&y=%2F", body)
        assert code == 200, answer
        assert json.loads(answer) == {"method": method, "path": "/a/b/", "body": (body or b"").decode()}
        assert headers["X-Backend"] == "yes"
        assert "Access-Control-Allow-Origin" not in headers  # the backend's CORS headers are dropped
        seen = backend.seen[-1]
        assert seen.query == "x=1&y=%2F"
        assert "Authorization" not in seen.headers  # localkube's credentials stay behind
        assert seen.headers["X-Forwarded-Uri"] == f"{base}/a/b/"
        assert seen.headers["X-Forwarded-For"] == "127.0.0.1"
    code, _, headers = await call(raw, "HEAD", f"{base}/a")
    assert code == 200 and headers["X-Backend"] == "yes"
    # the port number or no scheme address the same port; the path is cleaned
    code, answer, _ = await call(raw, "GET", f"/api/v1/namespaces/{namespace}/services/http:web:80/proxy/x/../y")
    assert code == 200 and json.loads(answer)["path"] == "/y"


async def test_backend_status_redirects_and_empty_path(raw: Raw, namespace: str, backend: Backend) -> None:
    await backend_service(raw, "status", backend.port)
    base = f"/api/v1/namespaces/{namespace}/services/status:http/proxy"
    code, body, headers = await call(raw, "GET", f"{base}/teapot")
    assert (code, body, headers["X-Backend"]) == (418, b"short and stout", "yes")
    code, _, headers = await call(raw, "GET", f"{base}/redirect")
    assert code == 302 and headers["Location"] == f"{base}/login?next=1"
    code, _, headers = await call(raw, "GET", f"{base}/elsewhere")
    assert code == 302 and headers["Location"] == "http://example.invalid/x"
    # GET of the bare proxy path redirects to the path with a slash (issue 4958)
    code, _, headers = await call(raw, "GET", f"{base}?q=1")
    assert code == 301 and headers["Location"] == f"{base}/?q=1"
    code, body, _ = await call(raw, "GET", f"{base}/")
    assert code == 200 and json.loads(body)["path"] == "/"
    code, body, _ = await call(raw, "POST", base, b"x")
    assert code == 200 and json.loads(body)["path"] == "/"


def _status(body: bytes) -> tuple[int, str, str]:
    status = json.loads(body)
    return status["code"], status["reason"], status["message"]


async def test_service_errors_match_kube_apiserver(raw: Raw, namespace: str, backend: Backend) -> None:
    base = f"/api/v1/namespaces/{namespace}"
    await create(raw, f"{base}/services", {"metadata": {"name": "empty"}, "spec": {"ports": [{"port": 80}]}})
    code, body, _ = await call(raw, "GET", f"{base}/services/empty/proxy/")
    assert (code, *_status(body)[1:]) == (404, "NotFound", 'endpoints "empty" not found')
    await create(raw, f"{base}/endpoints", {"metadata": {"name": "empty"}, "subsets": []})
    code, body, _ = await call(raw, "GET", f"{base}/services/empty/proxy/")
    assert _status(body) == (503, "ServiceUnavailable", 'no endpoints available for service "empty"')
    assert code == 503
    await backend_service(raw, "named", backend.port)
    code, body, _ = await call(raw, "GET", f"{base}/services/named:81/proxy/")
    assert _status(body) == (503, "ServiceUnavailable", 'no service port 81 found for service "named"')
    code, body, _ = await call(raw, "GET", f"{base}/services/named:nope/proxy/")
    assert _status(body) == (503, "ServiceUnavailable", 'no endpoints available for service "named:nope"')
    code, body, _ = await call(raw, "GET", f"{base}/services/named/proxy/")  # the port is named: no match
    assert _status(body)[2] == 'no endpoints available for service "named"'
    code, body, _ = await call(raw, "GET", f"{base}/services/ftp:named:80/proxy/")
    assert _status(body) == (400, "BadRequest", 'invalid service request "ftp:named:80"')
    code, body, _ = await call(raw, "GET", f"{base}/services/missing:80/proxy/")
    assert _status(body) == (404, "NotFound", 'services "missing" not found')
    # an address that names no Pod is not proxied (kube's isValidAddress)
    await backend_service(raw, "noref", backend.port, target_ref=False)
    code, body, _ = await call(raw, "GET", f"{base}/services/noref:http/proxy/")
    assert _status(body) == (503, "ServiceUnavailable", 'no endpoints available for service "noref:http"')
    assert not backend.seen


async def test_large_bodies_and_a_backend_dying_mid_answer(raw: Raw, namespace: str, backend: Backend) -> None:
    await backend_service(raw, "big", backend.port)
    base = f"/api/v1/namespaces/{namespace}/services/big:http/proxy"
    payload = b"x" * (1 << 20)
    code, body, _ = await call(raw, "POST", f"{base}/upload", payload)
    assert code == 200 and len(json.loads(body)["body"]) == 1 << 20
    with pytest.raises(aiohttp.ClientPayloadError):
        await call(raw, "GET", f"{base}/broken")
    code, body, _ = await call(raw, "GET", f"{base}/after")  # localkube still proxies
    assert code == 200 and json.loads(body)["path"] == "/after"


async def test_unreachable_backends_answer_503(raw: Raw, namespace: str) -> None:
    port = free_port()
    await backend_service(raw, "down", port)
    code, body, _ = await call(raw, "GET", f"/api/v1/namespaces/{namespace}/services/down:http/proxy/x")
    message = f"error trying to reach service: dial tcp 127.0.0.1:{port}: connect: connection refused"
    assert _status(body) == (503, "ServiceUnavailable", message)
    await backend_pod(raw, "far", "10.244.1.7", 8080)
    code, body, _ = await call(raw, "GET", f"/api/v1/namespaces/{namespace}/pods/far/proxy/")
    assert code == 503 and "dial tcp 10.244.1.7:8080" in _status(body)[2]


async def test_pod_proxy_uses_the_pod_ip_and_first_container_port(raw: Raw, namespace: str, backend: Backend) -> None:
    await backend_pod(raw, "echo", "127.0.0.1", backend.port)
    base = f"/api/v1/namespaces/{namespace}/pods"
    code, body, _ = await call(raw, "PUT", f"{base}/echo/proxy/hello?z=9", b"payload")
    assert code == 200 and json.loads(body) == {"method": "PUT", "path": "/hello", "body": "payload"}
    assert backend.seen[-1].query == "z=9"
    code, body, _ = await call(raw, "GET", f"{base}/http:echo:{backend.port}/proxy/p")
    assert code == 200 and json.loads(body)["path"] == "/p"
    await backend_pod(raw, "pending", "", None)
    code, body, _ = await call(raw, "GET", f"{base}/pending/proxy/")
    assert _status(body) == (400, "BadRequest", "address not allowed")
    await backend_pod(raw, "linklocal", "169.254.1.1", 80)
    code, body, _ = await call(raw, "GET", f"{base}/linklocal/proxy/")
    assert _status(body) == (400, "BadRequest", "address not allowed")
    code, body, _ = await call(raw, "GET", f"{base}/nobody/proxy/")
    assert _status(body) == (404, "NotFound", 'pods "nobody" not found')


async def node(raw: Raw, name: str, addresses: list[dict[str, str]], kubelet_port: int | None = None) -> None:
    await create(raw, "/api/v1/nodes", {"metadata": {"name": name}})
    status: dict[str, Any] = {"addresses": addresses}
    if kubelet_port is not None:
        status["daemonEndpoints"] = {"kubeletEndpoint": {"Port": kubelet_port}}
    code, body, _ = await call(
        raw,
        "PATCH",
        f"/api/v1/nodes/{name}/status",
        json.dumps({"status": status}).encode(),
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert code == 200, body


async def test_node_proxy_reaches_the_kubelet_port_or_another(raw: Raw, backend: Backend) -> None:
    """pkg/registry/core/node/storage ResourceLocation: https to the kubelet port of the
    preferred address (Hostname, InternalDNS, InternalIP, ...), or the scheme and port asked."""
    port = int(raw.url.rsplit(":", 1)[1])  # localkube plays the kubelet: it serves https
    await node(raw, "local", [{"type": "InternalIP", "address": "127.0.0.1"}], kubelet_port=port)
    code, body, _ = await call(raw, "GET", "/api/v1/nodes/local/proxy/version")
    assert code == 200 and json.loads(body)["major"] == "1"
    code, body, _ = await call(raw, "POST", f"/api/v1/nodes/http:local:{backend.port}/proxy/stats?x=1", b"{}")
    assert code == 200 and json.loads(body) == {"method": "POST", "path": "/stats", "body": "{}"}
    await node(raw, "named", [{"type": "InternalIP", "address": "10.0.0.9"}, {"type": "Hostname", "address": "named"}])
    code, body, _ = await call(raw, "GET", "/api/v1/nodes/named/proxy/")
    assert code == 503 and "dial tcp named:10250" in _status(body)[2]
    await node(raw, "bare", [])
    code, body, _ = await call(raw, "GET", "/api/v1/nodes/bare/proxy/")
    message = "Internal error occurred: no preferred addresses found; known addresses: []"
    assert _status(body) == (500, "InternalError", message)
    await node(raw, "linklocal", [{"type": "InternalIP", "address": "169.254.0.1"}])
    code, body, _ = await call(raw, "GET", "/api/v1/nodes/linklocal:8080/proxy/")
    assert _status(body) == (400, "BadRequest", "address not allowed")
    code, body, _ = await call(raw, "GET", "/api/v1/nodes/ghost/proxy/")
    assert _status(body) == (404, "NotFound", 'nodes "ghost" not found')
    code, body, _ = await call(raw, "GET", "/api/v1/nodes/a:b:c:d/proxy/")
    assert _status(body) == (400, "BadRequest", 'invalid node request "a:b:c:d"')


async def test_proxy_verbs_are_authorized_on_the_subresource(raw: Raw, namespace: str, backend: Backend) -> None:
    await backend_service(raw, "guarded", backend.port)
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
    rule = {"apiGroups": [""], "resources": ["services/proxy"], "verbs": ["get"]}
    await create(raw, f"{rbac}/roles", {"metadata": {"name": "proxy-get"}, "rules": [rule]})
    await create(
        raw,
        f"{rbac}/rolebindings",
        {
            "metadata": {"name": "proxy-get"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "proxy-get"},
            "subjects": [{"kind": "User", "name": "proxy-reader", "apiGroup": "rbac.authorization.k8s.io"}],
        },
    )
    path = f"/api/v1/namespaces/{namespace}/services/guarded:http/proxy/x"
    code, _, _ = await call(raw, "GET", path, token=READER_TOKEN)
    assert code == 200
    code, body, _ = await call(raw, "POST", path, b"{}", token=READER_TOKEN)
    assert code == 403
    assert 'cannot create resource "services/proxy"' in _status(body)[2]
    code, _, _ = await call(raw, "OPTIONS", path, token=READER_TOKEN)
    assert code == 403  # OPTIONS has no verb: only a "*" rule allows it


async def test_discovery_lists_the_proxy_subresources(raw: Raw) -> None:
    code, body, _ = await raw.request("GET", "/api/v1")
    assert code == 200
    resources = {r["name"]: r for r in body["resources"]}
    assert resources["services/proxy"]["kind"] == "ServiceProxyOptions"
    assert resources["pods/proxy"]["verbs"] == ["create", "delete", "get", "patch", "update"]


def test_kubectl_get_raw_through_a_pod_proxy(admin: Kubectl, localkube: ServerThread, workdir: Path) -> None:
    """kubectl reaches localkube through a Pod whose address is localkube itself."""
    port = int(localkube.url.rsplit(":", 1)[1])
    admin("create", "namespace", "kubectl-proxy")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "self", "namespace": "kubectl-proxy"},
        "spec": {"containers": [{"name": "c", "image": "x", "ports": [{"containerPort": port}]}]},
    }
    admin("create", "-f", "-", stdin=json.dumps(pod))
    status = json.dumps({"status": {"podIP": "127.0.0.1", "podIPs": [{"ip": "127.0.0.1"}]}})
    admin("patch", "pod", "self", "-n", "kubectl-proxy", "--subresource=status", "--type=merge", "-p", status)
    out = admin("get", "--raw", "/api/v1/namespaces/kubectl-proxy/pods/https:self:/proxy/version").stdout
    assert json.loads(out)["major"] == "1"
