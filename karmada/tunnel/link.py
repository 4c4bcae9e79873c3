"""One tunnel: HTTP/2 (the ``h2`` library's state machine) over a WebSocket.

The agent dials the control plane (outbound HTTPS only, through an HTTP proxy
where one is configured) and upgrades to a WebSocket; over it the two sides
speak HTTP/2 with the roles reversed: the control plane is the HTTP/2 client
that opens streams, the agent the server that answers them. Each proxied
request is one stream, so many requests share one connection and h2's flow
control keeps them apart: a stream whose reader is slow stops receiving once
its window is full, while the others go on.

Windows: every stream may have :data:`STREAM_WINDOW` bytes in flight; the
connection's window is opened again as soon as data arrives (so one slow
stream can never close it for the rest), a stream's only once its reader has
taken the data. A stream's memory is therefore bounded by its window.

A peer may only do what its role allows: the agent cannot open streams (h2
refuses a server-initiated stream without a push promise, and pushes are
disabled), so nothing reaches the control plane's side through a tunnel.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

log = logging.getLogger("karmada.tunnel")

Headers = list[tuple[str, str]]
STREAM_WINDOW = 1 << 20  # bytes in flight per stream
CONNECTION_WINDOW = (1 << 31) - 1
MAX_STREAMS = 1000  # concurrent streams an agent accepts
MAX_FRAME = 1 << 16


class Carrier(Protocol):
    """What the link runs over: an aiohttp WebSocket, client or server side."""

    async def send_bytes(self, data: bytes) -> None: ...

    async def receive_bytes(self) -> bytes: ...

    async def close(self) -> object: ...


class StreamReset(Exception):
    """The stream was reset by the peer or the link went away."""


class LinkClosed(StreamReset):
    """The tunnel is gone."""


class Stream:
    """One HTTP/2 stream: the headers received, then the body read and written."""

    def __init__(self, link: Link, stream_id: int) -> None:
        self.link = link
        self.id = stream_id
        self.headers: Headers = []
        self._got_headers = asyncio.Event()
        self._data: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._window = asyncio.Event()
        self._failure: str | None = None
        self.failed = asyncio.Event()  # reset by the peer, or the link went away
        self.local_ended = False
        self.remote_ended = False

    # -- received ------------------------------------------------------------------------------
    async def received_headers(self) -> Headers:
        """The request (agent side) or response (control-plane side) headers."""
        await self._got_headers.wait()
        if not self.headers:
            raise StreamReset(self._failure or "stream reset")
        return self.headers

    def header(self, name: str) -> str:
        return next((value for key, value in self.headers if key == name), "")

    async def read(self) -> bytes:
        """The next chunk of the body; ``b""`` at its end. Taking it opens the window again."""
        chunk = await self._data.get()
        if chunk is None:
            self._data.put_nowait(None)  # stays at the end for later reads
            if self._failure is not None:
                raise StreamReset(self._failure)
            return b""
        self.link._consumed(self, len(chunk))
        return chunk

    # -- sent ----------------------------------------------------------------------------------
    async def send_headers(self, headers: Headers, end_stream: bool = False, flush: bool = True) -> None:
        """Send headers; ``flush`` false leaves them to go out with the body's first frame."""
        self._check()
        try:
            self.link.conn.send_headers(self.id, headers, end_stream=end_stream)
        except h2.exceptions.ProtocolError:  # StreamClosedError too: the peer reset or closed it
            raise StreamReset("stream closed") from None
        self.local_ended = end_stream
        if flush or end_stream:
            await self.link.flush()

    async def write(self, data: bytes, end: bool = False) -> None:
        """Send ``data`` (and with ``end``, end the stream on its last frame), waiting for window
        where the peer has not taken what it got; one carrier message when it fits one frame."""
        view = memoryview(data)
        while True:
            self._check()
            try:
                window = self.link.conn.local_flow_control_window(self.id)
                size = min(window, self.link.conn.max_outbound_frame_size, len(view))
                last = size == len(view)
                if size > 0 or (last and end):
                    self.link.conn.send_data(self.id, view[:size].tobytes(), end_stream=end and last)
            except h2.exceptions.ProtocolError:  # StreamClosedError too: the peer reset or closed it
                raise StreamReset("stream closed") from None
            if size <= 0 and not last:
                self._window.clear()
                await self._window.wait()
                continue
            view = view[size:]
            if not view:
                break
            await self.link.flush()
        if end:
            self.local_ended = True
        await self.link.flush()
        if end:
            self.link._maybe_forget(self)

    async def end(self) -> None:
        if self.local_ended or self._failure is not None:
            return
        self.local_ended = True
        with contextlib.suppress(h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
            self.link.conn.end_stream(self.id)
        await self.link.flush()
        self.link._maybe_forget(self)

    def reset(self, code: h2.errors.ErrorCodes = h2.errors.ErrorCodes.CANCEL) -> None:
        """Abandon the stream (the reader went away): the peer stops sending."""
        if self._failure is None and not (self.local_ended and self.remote_ended):
            with contextlib.suppress(h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                self.link.conn.reset_stream(self.id, code)
            self.link.flush_soon()
        self._fail("stream cancelled")

    def _check(self) -> None:
        if self._failure is not None:
            raise StreamReset(self._failure)

    def _fail(self, why: str) -> None:
        if self._failure is None:
            self._failure = why
        self.failed.set()
        self._got_headers.set()
        self._window.set()
        self._data.put_nowait(None)
        self.link.streams.pop(self.id, None)
        self.link._capacity.set()


StreamHandler = Callable[[Stream], Awaitable[None]]


class Link:
    """HTTP/2 over one carrier; ``client`` opens streams, the other side serves them."""

    def __init__(self, carrier: Carrier, *, client: bool, handler: StreamHandler | None = None, name: str = "") -> None:
        config = h2.config.H2Configuration(client_side=client, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config)
        self.carrier = carrier
        self.client = client
        self.handler = handler
        self.name = name
        self.streams: dict[int, Stream] = {}
        self.closed: asyncio.Event = asyncio.Event()
        self._write_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._flushing: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()  # the peer's settings (its stream limit) have arrived
        self._capacity = asyncio.Event()  # set when a stream ends: room for one more

    async def run(self) -> None:
        """Speak HTTP/2 until the carrier ends; every stream then fails with :class:`LinkClosed`."""
        self.conn.initiate_connection()
        settings: dict[h2.settings.SettingCodes | int, int] = {
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: STREAM_WINDOW,
            h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: MAX_STREAMS,
            h2.settings.SettingCodes.MAX_FRAME_SIZE: MAX_FRAME,
        }
        if self.client:
            settings[h2.settings.SettingCodes.ENABLE_PUSH] = 0
        self.conn.update_settings(settings)
        self.conn.increment_flow_control_window(CONNECTION_WINDOW - self.conn.inbound_flow_control_window)
        try:
            await self.flush()
            while True:
                try:
                    data = await self.carrier.receive_bytes()
                except Exception as exc:  # the carrier closed or sent a non-binary message
                    log.debug("tunnel %s: carrier ended: %s", self.name, exc)
                    return
                try:
                    events = self.conn.receive_data(data)
                except h2.exceptions.ProtocolError as exc:
                    log.warning("tunnel %s: protocol error from the peer, closing: %s", self.name, exc)
                    self.flush_soon()
                    return
                for event in events:
                    self._on(event)
                await self.flush()
        finally:
            await self._close()

    async def open(self, headers: Headers, end_stream: bool = False) -> Stream:
        """A new stream carrying a request (client side)."""
        while True:
            if self.closed.is_set():
                raise LinkClosed("the tunnel is closed")
            limit = self.conn.remote_settings.max_concurrent_streams
            if self._settled.is_set() and self.conn.open_outbound_streams < limit:
                break
            # before the peer's limit is known, or at it: wait (a request queues, it does not fail)
            self._capacity.clear()
            waits = [asyncio.ensure_future(e.wait()) for e in (self.closed, self._capacity, self._settled)]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for wait in waits:
                    wait.cancel()
        stream_id = self.conn.get_next_available_stream_id()
        stream = self.streams[stream_id] = Stream(self, stream_id)
        try:
            self.conn.send_headers(stream_id, headers, end_stream=end_stream)
        except h2.exceptions.TooManyStreamsError:
            self.streams.pop(stream_id, None)
            raise StreamReset("the tunnel has too many open streams") from None
        stream.local_ended = end_stream
        await self.flush()
        return stream

    async def flush(self) -> None:
        async with self._write_lock:
            data = self.conn.data_to_send()
            if data and not self.closed.is_set():
                try:
                    await self.carrier.send_bytes(data)
                except (ConnectionError, RuntimeError) as exc:
                    log.debug("tunnel %s: write failed: %s", self.name, exc)

    def flush_soon(self) -> None:
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.get_running_loop().create_task(self.flush())

    async def aclose(self) -> None:
        """Say goodbye and close the carrier (run() then ends)."""
        if not self.closed.is_set():
            with contextlib.suppress(h2.exceptions.ProtocolError):
                self.conn.close_connection()
            await self.flush()
        with contextlib.suppress(Exception):
            await self.carrier.close()

    # -- events --------------------------------------------------------------------------------
    def _on(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.RequestReceived) and event.stream_id is not None:
            stream = self.streams[event.stream_id] = Stream(self, event.stream_id)
            stream.headers = _text(event.headers)
            stream._got_headers.set()  # an END_STREAM flag comes as its own StreamEnded event
            if self.handler is None:
                stream.reset(h2.errors.ErrorCodes.REFUSED_STREAM)
                return
            task = asyncio.get_running_loop().create_task(self._serve(stream))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif isinstance(event, h2.events.ResponseReceived) and event.stream_id is not None:
            known = self.streams.get(event.stream_id)
            if known is not None:
                known.headers = _text(event.headers)
                known._got_headers.set()
        elif isinstance(event, h2.events.DataReceived) and event.stream_id is not None:
            # the connection's window opens at once: only the stream's waits for its reader
            if event.flow_controlled_length:
                self.conn.increment_flow_control_window(event.flow_controlled_length)
            known = self.streams.get(event.stream_id)
            if known is None:
                return
            if event.data:
                known._data.put_nowait(event.data)
            padding = (event.flow_controlled_length or 0) - len(event.data or b"")
            if padding > 0:
                self._consumed(known, padding)
        elif isinstance(event, h2.events.StreamEnded) and event.stream_id is not None:
            known = self.streams.get(event.stream_id)
            if known is not None:
                known.remote_ended = True
                known._data.put_nowait(None)
                self._maybe_forget(known)
        elif isinstance(event, h2.events.StreamReset) and event.stream_id is not None:
            known = self.streams.get(event.stream_id)
            if known is not None:
                known._fail(f"stream reset by the peer ({event.error_code!s})")
        elif isinstance(event, h2.events.WindowUpdated):
            if not event.stream_id:
                for stream in list(self.streams.values()):
                    stream._window.set()
            elif event.stream_id in self.streams:
                self.streams[event.stream_id]._window.set()
        elif isinstance(event, h2.events.RemoteSettingsChanged):
            self._settled.set()
            self._capacity.set()
            for stream in list(self.streams.values()):
                stream._window.set()
        elif isinstance(event, h2.events.ConnectionTerminated):
            log.debug("tunnel %s: the peer ended the connection (%s)", self.name, event.error_code)

    async def _serve(self, stream: Stream) -> None:
        assert self.handler is not None
        try:
            await self.handler(stream)
        except StreamReset:
            pass
        except Exception:  # a bug in one stream must not end the tunnel
            log.exception("tunnel %s: stream %d failed", self.name, stream.id)
            stream.reset(h2.errors.ErrorCodes.INTERNAL_ERROR)

    def _consumed(self, stream: Stream, size: int) -> None:
        if size <= 0 or stream._failure is not None or stream.remote_ended:
            return
        with contextlib.suppress(h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
            self.conn.increment_flow_control_window(size, stream_id=stream.id)
            self.flush_soon()

    def _maybe_forget(self, stream: Stream) -> None:
        if stream.local_ended and stream.remote_ended:
            self.streams.pop(stream.id, None)
            self._capacity.set()

    async def _close(self) -> None:
        self.closed.set()
        for stream in list(self.streams.values()):
            stream._fail("the tunnel closed")
        self.streams.clear()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await self.carrier.close()


def _text(headers: object) -> Headers:
    """h2's decoded headers (``header_encoding`` set: strings) as plain pairs."""
    return [(str(name), str(value)) for name, value in headers or ()]  # type: ignore[attr-defined]
