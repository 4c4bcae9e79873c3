"""The agent's end of the tunnel: dial the control plane's cluster proxy, keep the
connection, answer each stream by sending its request to the member.

The connection is outbound HTTPS (a WebSocket upgrade on
``<server>/tunnel/<cluster>``), authenticated both ways: the agent presents its
control-plane client certificate and verifies the server against the CA of its
control-plane kubeconfig (the one it pinned at registration) for the proxy's
own address (not the API server's ``tls-server-name``), through the HTTP proxy
its kubeconfig or environment names. It is dialled again with
exponential backoff and full jitter after any loss (a control-plane restart, a
leader change, a network cut).

Each stream is one request of a caller the control plane authenticated and
authorised; the agent sends it to its member as that caller
(``Impersonate-User``/``-Group``/``-Uid``/``-Extra-*``), with credentials that
may do nothing but impersonate, so the member's own RBAC decides. A stream
without a caller is refused, never sent with the agent's rights.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable

import aiohttp

from karmada.kube import ClusterConfig, KubeClient, KubeError
from karmada.kube.proxy import proxy_for
from karmada.tunnel import wire
from karmada.tunnel.link import Headers, Link, Stream, StreamReset
from karmada.tunnel.messages import relay

log = logging.getLogger("karmada.tunnel")

MAX_BODY = 4 << 20  # kube-apiserver takes request bodies up to 3 MiB
HEARTBEAT = 30.0  # seconds between WebSocket pings: a dead connection is noticed within two
STABLE = 30.0  # seconds a tunnel must have lasted for the backoff to start over


def tunnel_url(server: str, cluster: str) -> str:
    return f"{server.rstrip('/')}/tunnel/{cluster}"


class Backoff:
    """Exponential backoff with full jitter (AWS's): a fleet reconnecting after a control-plane
    restart spreads out instead of arriving at once."""

    def __init__(self, initial: float = 0.5, maximum: float = 30.0, rng: random.Random | None = None) -> None:
        self.initial, self.maximum = initial, maximum
        self.attempt = 0
        self._rng = rng or random.Random()

    def next(self) -> float:
        ceiling = min(self.maximum, self.initial * (2**self.attempt))
        self.attempt += 1
        return self._rng.uniform(0, ceiling)

    def reset(self) -> None:
        self.attempt = 0


class TunnelDialer:
    """Keeps one tunnel up for one cluster and serves its streams with ``member``."""

    def __init__(
        self,
        server: str,
        cluster: str,
        control_plane: Callable[[], ClusterConfig],
        member: KubeClient,
        *,
        backoff: Backoff | None = None,
    ) -> None:
        self.server = server
        self.cluster = cluster
        self.control_plane = control_plane  # fresh each dial: the client certificate rotates
        self.member = member
        self.backoff = backoff or Backoff()
        self.link: Link | None = None

    async def run(self) -> None:
        """Dial, serve, dial again; until cancelled."""
        while True:
            try:
                await self._connect_and_serve()
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                log.info("cluster proxy tunnel of %s: cannot connect to %s: %s", self.cluster, self.server, exc)
            delay = self.backoff.next()
            log.debug("cluster proxy tunnel of %s: dialling again in %.1fs", self.cluster, delay)
            await asyncio.sleep(delay)

    async def _connect_and_serve(self) -> None:
        config = self.control_plane()
        ssl = config.ssl_context()
        url = tunnel_url(self.server, self.cluster)
        connector = aiohttp.TCPConnector(ssl=ssl, limit=1)
        async with (
            aiohttp.ClientSession(connector=connector, proxy=proxy_for(self.server, config.proxy_url)) as session,
            session.ws_connect(
                url,
                heartbeat=HEARTBEAT,
                max_msg_size=0,
                timeout=aiohttp.ClientWSTimeout(ws_close=5.0),
            ) as ws,
        ):
            log.info("cluster proxy tunnel of %s: connected to %s", self.cluster, self.server)
            link = self.link = Link(ws, client=False, handler=self.serve, name=self.cluster)
            began = asyncio.get_running_loop().time()
            try:
                await link.run()
            finally:
                self.link = None
            if asyncio.get_running_loop().time() - began >= STABLE:
                self.backoff.reset()  # a tunnel dropped at once (a proxy refusing it) keeps backing off
            log.info("cluster proxy tunnel of %s: disconnected", self.cluster)

    async def serve(self, stream: Stream) -> None:
        """One caller's request, sent to the member as that caller."""
        method, path, headers, impersonation, websocket = wire.split_request(stream.headers)
        if not any(name == wire.IMPERSONATE_USER and value for name, value in impersonation):
            await _refuse(stream, 403, "Forbidden", "the cluster proxy sent a request without a caller")
            return
        if not path.startswith("/") or not method:
            await _refuse(stream, 400, "BadRequest", f"not a request path: {path!r}")
            return
        headers = headers + impersonation
        if websocket:
            await self._websocket(stream, path, headers)
            return
        body = bytearray()
        while chunk := await stream.read():
            body += chunk
            if len(body) > MAX_BODY:
                await _refuse(stream, 413, "RequestEntityTooLarge", f"request body over {MAX_BODY} bytes")
                return
        try:
            response = await self.member.passthrough(method, path, headers, bytes(body) if body else None)
        except KubeError as exc:
            await _refuse(
                stream, 503, "ServiceUnavailable", f"the agent cannot reach its member cluster: {exc.message}"
            )
            return
        pump = asyncio.ensure_future(self._answer(stream, response))
        reset = asyncio.ensure_future(stream.failed.wait())
        try:
            # a caller that goes away while the member is quiet (an idle watch, a `logs -f`) resets the
            # stream: stop waiting for the member's next bytes then, not when they come
            await asyncio.wait({pump, reset}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pump, reset):
                task.cancel()
            await asyncio.gather(pump, reset, return_exceptions=True)
            response.close()

    async def _answer(self, stream: Stream, response: aiohttp.ClientResponse) -> None:
        try:
            # an answer already here whole (most are) goes as one message on the tunnel: the headers
            # with the body's first frame, the end with its last; a stream (a watch, `logs -f`) sends
            # its headers at once, before any body exists
            content = response.content
            answer = wire.response_headers(response.status, list(response.headers.items()))
            await stream.send_headers(answer, flush=not content.is_eof())
            while chunk := await content.readany():
                if content.at_eof():
                    await stream.write(chunk, end=True)
                    return
                await stream.write(chunk)
            await stream.end()
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.debug("cluster proxy tunnel of %s: the member's answer broke off: %s", self.cluster, exc)
            stream.reset()

    async def _websocket(self, stream: Stream, path: str, headers: Headers) -> None:
        protocols = [p.strip() for p in stream.header(wire.PROTOCOL).split(",") if p.strip()]
        try:
            ws = await self.member.passthrough_websocket(path, headers, protocols)
        except KubeError as exc:
            if exc.status:
                await _refuse(stream, exc.status, exc.reason, f"the member refused the upgrade: {exc.message}")
            else:
                await _refuse(stream, 503, "ServiceUnavailable", f"the agent cannot reach its member: {exc.message}")
            return
        try:
            answer = [(":status", "200"), (wire.UPGRADED, "websocket"), (wire.PROTOCOL, ws.protocol or "")]
            await stream.send_headers(answer)
            await relay(ws, stream)
        except StreamReset:
            pass
        finally:
            await ws.close()


async def _refuse(stream: Stream, code: int, reason: str, message: str) -> None:
    try:
        await stream.send_headers([(":status", str(code)), ("content-type", "application/json")], flush=False)
        await stream.write(wire.status_body(code, reason, message), end=True)
    except StreamReset:
        pass
