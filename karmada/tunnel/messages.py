"""WebSocket messages carried inside one tunnel stream (``exec``, ``attach``,
``port-forward``): each side ends its own WebSocket (aiohttp's) and the stream
between them carries whole messages, so a subprotocol (``v5.channel.k8s.io``,
``SPDY/3.1+portforward.k8s.io`` ...) passes through untouched.

A message on the stream is one byte of kind (1 text, 2 binary, 8 close), four
bytes of length (big-endian) and the payload; a close's payload is its two-byte
code and reason, as in the WebSocket frame. HTTP/2 gives no message boundaries
of its own (DATA frames may be split or merged), hence this prefix.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from typing import Any

import aiohttp

from karmada.tunnel.link import Stream, StreamReset

TEXT, BINARY, CLOSE = 1, 2, 8
_HEAD = struct.Struct(">BI")
MAX_MESSAGE = 16 << 20  # a message bigger than this ends the relay


class MessageError(Exception):
    """The stream carried something that is not a message."""


def pack(kind: int, payload: bytes) -> bytes:
    return _HEAD.pack(kind, len(payload)) + payload


class Unpacker:
    """Messages out of stream chunks, whatever their boundaries."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[tuple[int, bytes]]:
        self._buffer += chunk
        out = []
        while len(self._buffer) >= _HEAD.size:
            kind, size = _HEAD.unpack_from(self._buffer)
            if kind not in (TEXT, BINARY, CLOSE) or size > MAX_MESSAGE:
                raise MessageError(f"not a relayed WebSocket message (kind {kind}, {size} bytes)")
            if len(self._buffer) < _HEAD.size + size:
                break
            out.append((kind, bytes(self._buffer[_HEAD.size : _HEAD.size + size])))
            del self._buffer[: _HEAD.size + size]
        return out


def close_payload(code: int, reason: str = "") -> bytes:
    return struct.pack(">H", code) + reason.encode()[:120]


def parse_close(payload: bytes) -> tuple[int, str]:
    if len(payload) < 2:
        return 1000, ""
    return struct.unpack(">H", payload[:2])[0], payload[2:].decode(errors="replace")


async def _socket_to_stream(ws: Any, stream: Stream) -> None:
    while True:
        message = await ws.receive()
        if message.type == aiohttp.WSMsgType.BINARY:
            await stream.write(pack(BINARY, message.data))
        elif message.type == aiohttp.WSMsgType.TEXT:
            await stream.write(pack(TEXT, message.data.encode()))
        else:  # close, closing, closed or error: pass the close on and end our half
            code = ws.close_code or 1000
            with contextlib.suppress(StreamReset):
                await stream.write(pack(CLOSE, close_payload(code)))
                await stream.end()
            return


async def _stream_to_socket(stream: Stream, ws: Any) -> None:
    unpacker = Unpacker()
    while True:
        chunk = await stream.read()
        if not chunk:
            await ws.close()
            return
        for kind, payload in unpacker.feed(chunk):
            if kind == BINARY:
                await ws.send_bytes(payload)
            elif kind == TEXT:
                await ws.send_str(payload.decode(errors="replace"))
            else:
                code, reason = parse_close(payload)
                await ws.close(code=code, message=reason.encode())
                return


async def _both_ways(tasks: list[asyncio.Future[None]], sockets: tuple[Any, ...]) -> None:
    """Run the two directions until one ends, give the other a moment to deliver what is in
    flight, then stop both and close the sockets; an unexpected error is raised."""
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        pending = [t for t in tasks if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=1.0)
        for task in done:
            exc = task.exception()
            if exc is not None and not isinstance(exc, StreamReset | MessageError | ConnectionError):
                raise exc
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for ws in sockets:
            if not ws.closed:
                with contextlib.suppress(Exception):
                    await ws.close()


async def relay(ws: Any, stream: Stream) -> None:
    """Messages both ways between a WebSocket and a stream until either side closes."""
    try:
        await _both_ways(
            [
                asyncio.ensure_future(_socket_to_stream(ws, stream)),
                asyncio.ensure_future(_stream_to_socket(stream, ws)),
            ],
            (ws,),
        )
    finally:
        stream.reset()


async def _socket_to_socket(source: Any, target: Any) -> None:
    while True:
        message = await source.receive()
        if message.type == aiohttp.WSMsgType.BINARY:
            await target.send_bytes(message.data)
        elif message.type == aiohttp.WSMsgType.TEXT:
            await target.send_str(message.data)
        else:
            await target.close(code=source.close_code or 1000)
            return


async def join(a: Any, b: Any) -> None:
    """Messages both ways between two WebSockets (a Push member's, reached directly)."""
    await _both_ways(
        [asyncio.ensure_future(_socket_to_socket(a, b)), asyncio.ensure_future(_socket_to_socket(b, a))], (a, b)
    )
