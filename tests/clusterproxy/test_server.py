"""The cluster proxy's answers, with a stand-in agent on an in-memory tunnel: who may
call, what reaches the member, and the errors when the member cannot answer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from karmada.clusterproxy.server import ClusterProxy, ProxySettings
from karmada.kube import KubeClient
from karmada.tunnel.link import Link, Stream
from tests.tunnel.carriers import pair

TOKEN = "valid-token"
CLUSTERS = {
    "member1": {"metadata": {"name": "member1"}, "spec": {"syncMode": "Pull"}},
    "member2": {"metadata": {"name": "member2"}, "spec": {"syncMode": "Pull"}},
    "push1": {"metadata": {"name": "push1"}, "spec": {"syncMode": "Push"}},
}


class ControlPlane:
    """TokenReview and SubjectAccessReview as the API server answers them."""

    def __init__(self) -> None:
        self.allowed = {("alice", "member1"), ("alice", "push1")}

    async def create(self, resource: Any, body: dict[str, Any], *_: Any, **__: Any) -> dict[str, Any]:
        if body["kind"] == "TokenReview":
            good = body["spec"]["token"] == TOKEN
            user = {"username": "alice", "groups": ["dev", "system:authenticated"]}
            return {"status": {"authenticated": good, "user": user if good else {}}}
        attributes = body["spec"]["resourceAttributes"]
        return {"status": {"allowed": (body["spec"]["user"], attributes["name"]) in self.allowed}}


class Agent:
    """The agent's end: answers from a script, records what it was sent."""

    def __init__(self) -> None:
        self.seen: list[list[tuple[str, str]]] = []
        self.bodies: list[bytes] = []
        self.silent = False
        self.released: asyncio.Queue[str] = asyncio.Queue()

    async def serve(self, stream: Stream) -> None:
        self.seen.append(stream.headers)
        if "watch=true" in stream.header(":path"):  # a quiet watch: headers, then nothing
            await stream.send_headers([(":status", "200"), ("content-type", "application/json")])
            await stream.failed.wait()
            self.released.put_nowait(stream.header(":path"))
            return
        body = bytearray()
        while chunk := await stream.read():
            body += chunk
        self.bodies.append(bytes(body))
        if self.silent:
            await asyncio.sleep(3600)
        await stream.send_headers([(":status", "201"), ("content-type", "application/json"), ("x-member", "yes")])
        await stream.write(json.dumps({"path": stream.header(":path"), "size": len(body)}).encode())
        await stream.end()


class Proxy:
    def __init__(self, server: TestServer, proxy: ClusterProxy, agent: Agent) -> None:
        self.server, self.proxy, self.agent = server, proxy, agent

    def url(self, cluster: str, path: str) -> str:
        return str(self.server.make_url(f"/apis/cluster.karmada.io/v1alpha1/clusters/{cluster}/proxy{path}"))


async def no_push_member(cluster: dict[str, Any]) -> KubeClient:
    raise ValueError("Push cluster push1 has no spec.impersonatorSecretRef: `kubectl karmada join` sets it")


@pytest.fixture
async def proxy() -> AsyncIterator[Proxy]:
    cluster_proxy = ClusterProxy(
        ControlPlane(),  # type: ignore[arg-type]
        CLUSTERS.get,
        no_push_member,
        ProxySettings(response_timeout=0.5),
    )
    agent = Agent()
    control_end, agent_end = pair()
    agent_link = Link(agent_end, client=False, handler=agent.serve, name="member1")
    tasks = [
        asyncio.ensure_future(cluster_proxy.hub.serve("member1", control_end)),
        asyncio.ensure_future(agent_link.run()),
    ]
    server = TestServer(cluster_proxy.application(), handler_cancellation=True)
    await server.start_server()
    try:
        yield Proxy(server, cluster_proxy, agent)
    finally:
        await server.close()
        await control_end.close()
        await asyncio.wait(tasks, timeout=5)
        await asyncio.sleep(0.05)  # closed transports finish closing before the test's loop ends


async def call(url: str, method: str = "GET", token: str | None = TOKEN, **kwargs: Any) -> tuple[int, Any, Any]:
    headers = dict(kwargs.pop("headers", {}))
    if token:
        headers["Authorization"] = f"Bearer {token}"
    async with aiohttp.ClientSession() as session, session.request(method, url, headers=headers, **kwargs) as r:
        text = await r.text()
    await asyncio.sleep(0.01)  # the closed connection's transport finishes closing on the loop (no leak warning)
    try:
        body = json.loads(text)
    except ValueError:
        body = text
    return r.status, body, r.headers


async def test_a_request_reaches_the_member_as_its_caller(proxy: Proxy) -> None:
    status, body, headers = await call(
        proxy.url("member1", "/api/v1/namespaces/default/configmaps?fieldManager=kubectl"),
        "POST",
        data=b"x" * 100_000,
        headers={"Impersonate-User": "system:admin", "Impersonate-Group": "system:masters"},
    )
    assert (status, body) == (
        201,
        {"path": "/api/v1/namespaces/default/configmaps?fieldManager=kubectl", "size": 100_000},
    )
    assert headers["x-member"] == "yes"
    sent = proxy.agent.seen[-1]
    assert ("impersonate-user", "alice") in sent and ("impersonate-group", "dev") in sent
    # the caller's own credentials and impersonation stay behind; implied groups are the member's to add
    names = [name for name, _ in sent]
    assert "authorization" not in names
    assert ("impersonate-user", "system:admin") not in sent and ("impersonate-group", "system:masters") not in sent
    assert ("impersonate-group", "system:authenticated") not in sent


@pytest.mark.parametrize(
    ("cluster", "token", "code", "message"),
    [
        ("member1", None, 401, "Unauthorized"),
        ("member1", "wrong", 401, "Unauthorized"),
        (
            "member2",
            TOKEN,
            403,
            'clusters.cluster.karmada.io "member2" is forbidden: User "alice" cannot get resource "clusters/proxy"',
        ),
        ("member9", TOKEN, 403, "forbidden"),  # access is checked before existence, as the API server does
    ],
)
async def test_refusals(proxy: Proxy, cluster: str, token: str | None, code: int, message: str) -> None:
    status, body, _ = await call(proxy.url(cluster, "/api"), token=token)
    assert status == code
    assert body["kind"] == "Status" and body["code"] == code and message in body["message"]
    assert not proxy.agent.seen


async def test_an_unknown_cluster_is_not_found(proxy: Proxy) -> None:
    proxy.proxy.access.allowed = _always  # type: ignore[method-assign,assignment]
    status, body, _ = await call(proxy.url("member9", "/api"))
    assert (status, body["reason"]) == (404, "NotFound")
    assert body["message"] == 'clusters.cluster.karmada.io "member9" not found'


async def _always(*_: Any) -> bool:
    return True


async def test_a_cluster_without_a_tunnel_is_unavailable(proxy: Proxy) -> None:
    proxy.proxy.access.allowed = _always  # type: ignore[method-assign,assignment]
    status, body, _ = await call(proxy.url("member2", "/api"))
    assert status == 503
    assert "cluster member2 is not connected to the cluster proxy: its agent has no tunnel open" in body["message"]


async def test_a_member_that_never_answers_times_out(proxy: Proxy) -> None:
    proxy.agent.silent = True
    status, body, _ = await call(proxy.url("member1", "/api"))
    assert (status, body["reason"], body["message"]) == (504, "Timeout", "cluster member1 did not answer within 0.5s")
    proxy.agent.silent = False
    status, _, _ = await call(proxy.url("member1", "/api"))  # the tunnel itself is fine
    assert status == 201


async def test_a_push_member_without_its_impersonator_is_unavailable(proxy: Proxy) -> None:
    status, body, _ = await call(proxy.url("push1", "/api"))
    assert status == 503 and "impersonatorSecretRef" in body["message"]


async def test_only_websocket_upgrades(proxy: Proxy) -> None:
    status, body, _ = await call(
        proxy.url("member1", "/api/v1/namespaces/d/pods/p/exec"),
        headers={"Connection": "Upgrade", "Upgrade": "SPDY/3.1"},
    )
    assert status == 400 and "only to WebSocket, not SPDY/3.1" in body["message"]


async def test_the_tunnel_needs_an_agent_certificate(proxy: Proxy) -> None:
    status, body, _ = await call(str(proxy.server.make_url("/tunnel/member1")), token=TOKEN)
    assert status == 401 and "client certificate" in body["message"]


async def test_a_caller_that_hangs_up_on_a_quiet_watch_releases_its_stream(proxy: Proxy) -> None:
    """Nothing comes from the member, the caller goes: the agent learns at once (a reset), not at
    the member's next event, and lets go of its request to the member."""
    url = proxy.url("member1", "/api/v1/namespaces/quiet/configmaps?watch=true")
    session = aiohttp.ClientSession()
    response = await session.get(url, headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status == 200
    response.close()
    await session.close()
    await asyncio.sleep(0.01)
    assert await asyncio.wait_for(proxy.agent.released.get(), 5) == "/api/v1/namespaces/quiet/configmaps?watch=true"
    assert not proxy.proxy.hub.link("member1").streams  # type: ignore[union-attr]


async def test_the_path_and_query_go_as_the_caller_encoded_them(proxy: Proxy) -> None:
    """``sh -c "exit 3"``'s ``exit+3`` and a ``%26`` inside a value reach the member untouched."""
    url = proxy.url("member1", "/api/v1/namespaces/a%2Fb/pods/p/exec?command=sh&command=exit+3&labelSelector=x%26y")
    status, body, _ = await call(url, "POST", data=b"", headers={"Content-Type": "text/plain"})
    assert status == 201
    assert body["path"] == "/api/v1/namespaces/a%2Fb/pods/p/exec?command=sh&command=exit+3&labelSelector=x%26y"
