"""``pods/portforward``: every containerPort of a simulated Pod is an echo server.

Two WebSocket protocols, as kubectl and other clients speak them:

- ``SPDY/3.1+portforward.k8s.io`` (kubectl 1.32's default): a SPDY/3.1
  session tunneled in the WebSocket's binary messages (:mod:`localkube.spdy`).
  For each local connection kubectl opens an ``error`` and a ``data`` stream
  carrying ``port`` and ``requestID`` headers; each gets a SYN_REPLY, bytes on
  the data stream come back on it, and when kubectl half-closes the data
  stream both streams are closed from this end too. A port the Pod does not
  declare answers on the error stream with the kubelet's ``error forwarding
  port N to pod ...`` and closes.
- ``v4.channel.k8s.io`` / ``v4.base64.channel.k8s.io`` (or no subprotocol):
  the kubelet's WebSocket port-forward, ports listed in the ``ports`` query;
  port i has data channel 2i and error channel 2i+1, the first message of each
  carrying the port (two bytes, little-endian).

Errors before the upgrade are kube-apiserver's: the Pod (404), ``pod X does
not have a host assigned`` (400). Where localkube differs: no SPDY upgrade of
the connection itself (the fallback kubectl takes only when the WebSocket
upgrade fails; Python has no maintained SPDY library): it is answered with a
400 Status. Only TCP, only echo; an echo of a closed connection ends at once.
"""

from __future__ import annotations

import base64
import contextlib
from dataclasses import dataclass
from typing import Any

from aiohttp import WSMsgType, web

from localkube import spdy
from localkube.errors import bad_request
from localkube.pod_connect import get_pod, ports_of, require_host

Obj = dict[str, Any]

TUNNEL = "SPDY/3.1+portforward.k8s.io"
V4, V4_BASE64 = "v4.channel.k8s.io", "v4.base64.channel.k8s.io"
PROTOCOLS = (TUNNEL, V4, V4_BASE64)
CLOSE_TIMEOUT = 2.0


def check(store: Any, namespace: str, name: str) -> Obj:
    pod = get_pod(store, namespace, name)
    require_host(pod)
    return pod


def forward_error(pod: Obj, port: int) -> str:
    """The kubelet's message for a port nothing listens on in the Pod."""
    meta = pod["metadata"]
    return (
        f"error forwarding port {port} to pod {meta['name']}, uid {meta.get('uid', '')}:"
        f" failed to connect to localhost:{port} inside the pod: connect: connection refused"
    )


def requested_ports(query: Any) -> list[int]:
    raw = ",".join(query.getall("ports", []) + query.getall("port", []))
    try:
        ports = [int(p) for p in raw.split(",") if p.strip()]
    except ValueError:
        raise bad_request(f'invalid port "{raw}"') from None
    for port in ports:
        if not 0 < port < 65536:
            raise bad_request(f"port {port} must be in the range 1-65535")
    return ports


async def serve(store: Any, request: web.Request, pod: Obj) -> web.StreamResponse:
    upgrade = request.headers.get("Upgrade", "").lower()
    if "spdy" in upgrade:
        raise bad_request(
            f"localkube serves pods/portforward over WebSocket only ({', '.join(PROTOCOLS)}): "
            "SPDY/3.1 upgrades are not supported"
        )
    if "websocket" not in upgrade:
        raise bad_request("Upgrade request required")
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
    ports: list[int] = []
    if TUNNEL not in offered:
        ports = requested_ports(request.query)
        if not ports:
            raise bad_request('query parameter "port" is required')
    ws = web.WebSocketResponse(protocols=PROTOCOLS, timeout=CLOSE_TIMEOUT)
    await ws.prepare(request)
    with contextlib.suppress(ConnectionResetError):
        if ws.ws_protocol == TUNNEL:
            await _tunnel(ws, pod)
        else:
            await _channels(ws, pod, ports, base64_text=ws.ws_protocol == V4_BASE64)
    return ws


# -- SPDY inside the WebSocket ---------------------------------------------------------------
@dataclass
class _Stream:
    kind: str  # "data" or "error"
    port: int
    request: str
    closed_here: bool = False


async def _tunnel(ws: web.WebSocketResponse, pod: Obj) -> None:
    session = spdy.Session()
    streams: dict[int, _Stream] = {}
    errors: dict[str, int] = {}  # requestID -> its error stream
    listening = set(ports_of(pod))

    async def send(data: bytes) -> None:
        if not ws.closed:
            await ws.send_bytes(data)

    async def close(stream_id: int) -> None:
        stream = streams.get(stream_id)
        if stream is not None and not stream.closed_here:
            stream.closed_here = True
            await send(session.data(stream_id, b"", fin=True))

    async def finish(data_id: int) -> None:
        """The request is over: its data stream and its error stream close from this end."""
        request_id = streams[data_id].request
        await close(data_id)
        if request_id in errors:
            await close(errors[request_id])

    async for message in ws:
        if message.type != WSMsgType.BINARY:
            continue
        try:
            frames = session.feed(message.data)
        except spdy.ProtocolError:
            await send(session.goaway(max(streams, default=0)))
            break
        for frame in frames:
            if frame.kind == spdy.SYN_STREAM:
                headers = {k: v[0] for k, v in frame.headers.items() if v}
                port = int(headers["port"]) if headers.get("port", "").isdigit() else 0
                stream = _Stream(headers.get("streamtype", ""), port, headers.get("requestid", ""))
                streams[frame.stream_id] = stream
                await send(session.syn_reply(frame.stream_id))
                if stream.kind == "error":
                    errors[stream.request] = frame.stream_id
                elif stream.kind == "data" and port not in listening:
                    error_id = errors.get(stream.request)
                    if error_id is not None:
                        await send(session.data(error_id, forward_error(pod, port).encode()))
                    await finish(frame.stream_id)
                elif frame.fin and stream.kind == "data":
                    await finish(frame.stream_id)
            elif frame.kind == spdy.DATA:
                stream_or_none = streams.get(frame.stream_id)
                if stream_or_none is None:
                    await send(session.rst_stream(frame.stream_id, 2))  # INVALID_STREAM
                    continue
                if stream_or_none.kind == "data" and frame.data and not stream_or_none.closed_here:
                    await send(session.data(frame.stream_id, frame.data))  # the echo
                if frame.fin and stream_or_none.kind == "data":
                    await finish(frame.stream_id)
            elif frame.kind == spdy.PING:
                await send(frame.raw)
            elif frame.kind == spdy.RST_STREAM:
                stream_or_none = streams.pop(frame.stream_id, None)
                if stream_or_none is not None and errors.get(stream_or_none.request) == frame.stream_id:
                    errors.pop(stream_or_none.request, None)
            elif frame.kind == spdy.GOAWAY:
                return
            # SETTINGS, WINDOW_UPDATE, HEADERS: nothing to do for an echo


# -- the kubelet's WebSocket channels ----------------------------------------------------------
async def _channels(ws: web.WebSocketResponse, pod: Obj, ports: list[int], base64_text: bool) -> None:
    listening = set(ports_of(pod))

    async def send(channel: int, data: bytes) -> None:
        if ws.closed:
            return
        if base64_text:
            await ws.send_str(chr(ord("0") + channel) + base64.b64encode(data).decode())
        else:
            await ws.send_bytes(bytes([channel]) + data)

    for index, port in enumerate(ports):
        prefix = port.to_bytes(2, "little")
        await send(2 * index, prefix)
        await send(2 * index + 1, prefix)
        if port not in listening:
            await send(2 * index + 1, forward_error(pod, port).encode())
    async for message in ws:
        if message.type == WSMsgType.BINARY:
            raw: bytes = message.data
        elif message.type == WSMsgType.TEXT and base64_text and message.data:
            raw = bytes([ord(message.data[0]) - ord("0")]) + base64.b64decode(message.data[1:])
        else:
            continue
        if not raw or raw[0] % 2 or raw[0] // 2 >= len(ports):
            continue  # only data channels carry bytes from the client
        if ports[raw[0] // 2] in listening and raw[1:]:
            await send(raw[0], raw[1:])
