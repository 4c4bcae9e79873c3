"""The cluster proxy's HTTPS server: Karmada's proxy path for callers, the tunnel
endpoint for agents.

``/apis/cluster.karmada.io/v1alpha1/clusters/NAME/proxy/<path>`` is served as
karmada-aggregated-apiserver serves it: the caller is authenticated (client
certificate or bearer token, :mod:`.callers`), authorised for ``clusters/proxy``
on that Cluster (:mod:`.access`), and the rest of the path, with its query and
body, goes to the member as that caller (impersonated), so the member's RBAC
applies too. A kubeconfig whose server ends in ``.../clusters/NAME/proxy``
therefore lets kubectl do anything in the member it may: get, watch, apply,
``logs -f``, and over WebSocket ``exec``, ``attach`` and ``port-forward``.

A Pull member is reached through its agent's tunnel (``/tunnel/NAME``, where
only that cluster's agent certificate is accepted); a Push member directly, as
Karmada does: the Cluster's ``apiEndpoint`` with the token of its
``impersonatorSecretRef``.

Errors are Kubernetes ``Status`` objects: 401 without good credentials, 403
without the right, 404 for an unknown cluster, 503 when the member cannot be
reached (no tunnel, or the agent cannot reach its member) and 504 when it does
not answer within the response timeout. SPDY upgrades (kubectl's fallback when a
WebSocket upgrade fails) are not proxied: no maintained Python library speaks it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from karmada.clusterproxy.access import AccessUnavailable, ProxyAccess, forbidden_message, verb_of
from karmada.clusterproxy.callers import AuthenticationError, TokenAuthenticator, bearer_token, caller_of_certificate
from karmada.kube import KubeClient, KubeError
from karmada.registration.identity import AGENTS_GROUP, agent_user
from karmada.tunnel import wire
from karmada.tunnel.hub import Hub
from karmada.tunnel.link import Headers, Stream, StreamReset
from karmada.tunnel.messages import join, relay

log = logging.getLogger("karmada.clusterproxy")

PROXY_PREFIX = "/apis/cluster.karmada.io/v1alpha1/clusters/"
MAX_BODY = 4 << 20
Obj = dict[str, Any]


@dataclass
class ProxySettings:
    response_timeout: float = 30.0  # seconds a member has to start its answer


def status_response(code: int, reason: str, message: str) -> web.Response:
    return web.Response(status=code, body=wire.status_body(code, reason, message), content_type="application/json")


def server_context(cert_file: str, key_file: str, client_ca_file: str) -> ssl.SSLContext:
    """TLS for the proxy: its serving certificate, and client certificates verified against
    the Karmada API server's client CA when presented (a token may stand in for one)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    context.load_verify_locations(client_ca_file)
    context.verify_mode = ssl.CERT_OPTIONAL
    return context


class ClusterProxy:
    """The aiohttp application of the cluster proxy."""

    def __init__(
        self,
        control_plane: KubeClient,
        cluster: Callable[[str], Obj | None],
        push_member: Callable[[Obj], Awaitable[KubeClient]],
        settings: ProxySettings | None = None,
    ) -> None:
        self.hub = Hub()
        self.tokens = TokenAuthenticator(control_plane)
        self.access = ProxyAccess(control_plane)
        self.cluster = cluster  # the Cluster by name, from a watch cache
        self.push_member = push_member  # a client of a Push member, with its impersonator token
        self.settings = settings or ProxySettings()

    def application(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_get("/tunnel/{cluster}", self.tunnel)
        app.router.add_route("*", PROXY_PREFIX + "{name}/proxy{tail:(/.*)?}", self.proxy)
        app.router.add_get("/healthz", self.healthz)
        return app

    async def healthz(self, _request: web.Request) -> web.Response:
        return web.Response(text="ok")

    # -- agents --------------------------------------------------------------------------------
    async def tunnel(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["cluster"]
        caller = caller_of_certificate(_peercert(request))
        if caller is None:
            return status_response(401, "Unauthorized", "a tunnel needs the agent's client certificate")
        if caller.user != agent_user(name) or AGENTS_GROUP not in caller.groups:
            log.warning("cluster proxy: %s may not open the tunnel of cluster %s", caller.user, name)
            return status_response(403, "Forbidden", f'User "{caller.user}" may not open the tunnel of cluster {name}')
        cluster = self.cluster(name)
        if cluster is None:
            return status_response(404, "NotFound", f'clusters.cluster.karmada.io "{name}" not found')
        if (cluster.get("spec") or {}).get("syncMode") != "Pull":
            return status_response(409, "Conflict", f"cluster {name} is not in Pull mode: it needs no tunnel")
        ws = web.WebSocketResponse(heartbeat=30.0, max_msg_size=0)
        await ws.prepare(request)
        await self.hub.serve(name, ws)
        return ws

    # -- callers -------------------------------------------------------------------------------
    async def proxy(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        try:
            caller = await self._authenticate(request)
        except AuthenticationError as exc:
            if exc.unavailable:
                return status_response(503, "ServiceUnavailable", str(exc))
            return status_response(401, "Unauthorized", "Unauthorized")
        try:
            allowed = await self.access.allowed(caller, name, request.method)
        except AccessUnavailable as exc:
            return status_response(503, "ServiceUnavailable", str(exc))
        if not allowed:
            return status_response(403, "Forbidden", forbidden_message(caller, verb_of(request.method), name))
        cluster = self.cluster(name)
        if cluster is None:
            return status_response(404, "NotFound", f'clusters.cluster.karmada.io "{name}" not found')
        # the path and query as the caller encoded them (a decoded `exit 3` or `a%26b` would change meaning)
        _cluster_segment, _, after = request.rel_url.raw_path[len(PROXY_PREFIX) :].partition("/")
        tail = after.removeprefix("proxy") or "/"
        query = request.rel_url.raw_query_string
        path_qs = tail + (f"?{query}" if query else "")
        headers = list(request.headers.items())
        websocket = request.headers.get("Upgrade", "").lower() == "websocket"
        if request.headers.get("Upgrade") and not websocket:
            return status_response(
                400, "BadRequest", f"the cluster proxy upgrades only to WebSocket, not {request.headers['Upgrade']}"
            )
        if (cluster.get("spec") or {}).get("syncMode") == "Push":
            return await self._direct(request, cluster, caller, path_qs, headers, websocket)
        link = self.hub.link(name)
        if link is None:
            return status_response(
                503,
                "ServiceUnavailable",
                f"cluster {name} is not connected to the cluster proxy: its agent has no tunnel open "
                "(is it running, with --cluster-proxy-server set?)",
            )
        body = None if websocket else await request.read()
        sent = wire.request_headers(request.method, path_qs, name, headers, caller, websocket)
        try:
            # a WebSocket's stream stays open both ways: its messages follow the answer
            stream = await link.open(sent, end_stream=not body and not websocket)
        except StreamReset as exc:
            return status_response(503, "ServiceUnavailable", f"cluster {name}: {exc}")
        try:
            if body:
                await stream.write(body, end=True)
            try:
                async with asyncio.timeout(self.settings.response_timeout):
                    answer = await stream.received_headers()
            except TimeoutError:
                return self._timed_out(name)
            status = int(stream.header(":status") or 502)
            if websocket and stream.header(wire.UPGRADED) == "websocket":
                ws = web.WebSocketResponse(protocols=_protocols(stream.header(wire.PROTOCOL)), max_msg_size=0)
                await ws.prepare(request)
                await relay(ws, stream)
                return ws
            return await self._stream_back(request, status, answer, stream)
        except StreamReset as exc:
            return status_response(503, "ServiceUnavailable", f"cluster {name}: the tunnel broke off ({exc})")
        finally:
            stream.reset()

    async def _stream_back(
        self, request: web.Request, status: int, answer: Headers, stream: Stream
    ) -> web.StreamResponse:
        headers = [(key, value) for key, value in answer if not key.startswith(":") and key not in wire.HOP_BY_HOP]
        if stream.remote_ended:  # the whole answer is here: one write to the caller
            body = bytearray()
            while chunk := await stream.read():
                body += chunk
            whole = web.Response(status=status, body=bytes(body))
            whole.headers.clear()
            whole.headers.extend(headers)
            return whole
        response = web.StreamResponse(status=status)
        response.headers.extend(headers)
        await response.prepare(request)
        with contextlib.suppress(ConnectionResetError):
            while chunk := await stream.read():
                await response.write(chunk)
            await response.write_eof()
        return response

    async def _direct(
        self, request: web.Request, cluster: Obj, caller: wire.Caller, path_qs: str, headers: Headers, websocket: bool
    ) -> web.StreamResponse:
        name = cluster["metadata"]["name"]
        try:
            member = await self.push_member(cluster)
        except (ValueError, KubeError) as exc:
            return status_response(503, "ServiceUnavailable", f"cluster {name}: {exc}")
        sent = wire.forwardable(headers) + caller.impersonation()
        if websocket:
            protocols = _protocols(request.headers.get("Sec-WebSocket-Protocol", ""))
            try:
                member_ws = await member.passthrough_websocket(path_qs, sent, protocols)
            except KubeError as exc:
                return status_response(exc.status or 503, exc.reason or "ServiceUnavailable", exc.message)
            ws = web.WebSocketResponse(protocols=[member_ws.protocol] if member_ws.protocol else (), max_msg_size=0)
            await ws.prepare(request)
            await join(ws, member_ws)
            return ws
        body = await request.read()
        try:
            async with asyncio.timeout(self.settings.response_timeout):
                upstream = await member.passthrough(request.method, path_qs, sent, body or None)
        except TimeoutError:
            return self._timed_out(name)
        except KubeError as exc:
            return status_response(503, "ServiceUnavailable", f"cluster {name}: {exc.message}")
        try:
            response = web.StreamResponse(status=upstream.status)
            for key, value in upstream.headers.items():
                if key.lower() not in wire.HOP_BY_HOP:
                    response.headers.add(key, value)
            await response.prepare(request)
            with contextlib.suppress(ConnectionResetError, aiohttp.ClientError):
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
            return response
        finally:
            upstream.close()

    def _timed_out(self, name: str) -> web.Response:
        timeout = self.settings.response_timeout
        return status_response(504, "Timeout", f"cluster {name} did not answer within {timeout:g}s")

    async def _authenticate(self, request: web.Request) -> wire.Caller:
        caller = caller_of_certificate(_peercert(request))
        if caller is not None:
            return caller
        token = bearer_token(request.headers.get("Authorization", ""))
        if not token:
            raise AuthenticationError("Unauthorized")
        return await self.tokens.authenticate(token)


def _peercert(request: web.Request) -> dict[str, Any] | None:
    transport = request.transport
    if transport is None:
        return None
    cert = transport.get_extra_info("peercert")
    return cert if isinstance(cert, dict) and cert else None


def _protocols(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())
