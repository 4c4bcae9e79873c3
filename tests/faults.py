"""Faulty network parts tests put between a client and a server (fake the
server, not the function): a TCP relay that can stop answering, an HTTP
CONNECT proxy that counts its tunnels, and an API front that answers 500 to
chosen requests. All run on the test's event loop and listen on 127.0.0.1."""

from __future__ import annotations

import abc
import asyncio
import contextlib
from collections.abc import Callable

import aiohttp
from aiohttp import web

from karmada.kube import ClusterConfig


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, flowing: asyncio.Event) -> None:
    try:
        while data := await reader.read(65536):
            await flowing.wait()
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def _relay(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    host: str,
    port: int,
    flowing: asyncio.Event,
) -> None:
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(host, port)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(
        _pipe(client_reader, upstream_writer, flowing),
        _pipe(upstream_reader, client_writer, flowing),
    )


class _Listener(abc.ABC):
    def __init__(self) -> None:
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self.port = 0

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.get_running_loop().create_task(self._guarded(reader, writer))
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

    async def _guarded(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            writer.close()  # a client that hung up or spoke nonsense

    @abc.abstractmethod
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one accepted connection."""

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._handlers):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()


class StallingRelay(_Listener):
    """Forwards TCP connections to ``host:port``; :meth:`stall` makes it stop
    answering (bytes are held, connections stay open) as a hung API server or
    a cut network would; :meth:`resume` lets the held bytes through."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__()
        self.host, self.upstream_port = host, port
        self._flowing = asyncio.Event()
        self._flowing.set()

    async def start(self) -> StallingRelay:
        await self._listen()
        return self

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def stall(self) -> None:
        self._flowing.clear()

    def resume(self) -> None:
        self._flowing.set()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _relay(reader, writer, self.host, self.upstream_port, self._flowing)


class ConnectProxy(_Listener):
    """An HTTP proxy that only tunnels (``CONNECT host:port``), as HTTPS clients
    use one. ``routes`` maps the names clients ask for to loopback ports, so a
    client can address a server by a name no resolver knows."""

    def __init__(self, routes: dict[str, int] | None = None) -> None:
        super().__init__()
        self.routes = dict(routes or {})
        self.tunnels: list[str] = []
        self._open = asyncio.Event()
        self._open.set()

    async def start(self) -> ConnectProxy:
        await self._listen()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
        host, _, port = target.rpartition(":")
        if method != "CONNECT":
            writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            writer.close()
            return
        self.tunnels.append(target)
        upstream_port = self.routes.get(host, int(port))
        if host not in self.routes and host not in ("127.0.0.1", "localhost"):
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            writer.close()
            return
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await _relay(reader, writer, "127.0.0.1", upstream_port, self._open)


Fault = Callable[[str, str], bool]


class FailingApiProxy:
    """A plain-HTTP front for one API server: forwards each request upstream
    with the upstream's own credentials, except that a request for which
    ``fail(method, path)`` is true gets a 500 Status, as an API server under
    trouble answers. ``failed`` lists the requests it refused."""

    def __init__(self, upstream: ClusterConfig, fail: Fault) -> None:
        self.upstream = upstream
        self.fail = fail
        self.failed: list[tuple[str, str]] = []
        self.refused = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> FailingApiProxy:
        connector = aiohttp.TCPConnector(ssl=self.upstream.ssl_context())
        self._session = aiohttp.ClientSession(connector=connector)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        if self.fail(request.method, request.path):
            self.failed.append((request.method, request.path))
            self.refused.set()
            status = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "reason": "InternalError",
                "message": "Internal error occurred: injected by the test",
                "code": 500,
            }
            return web.json_response(status, status=500)
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("accept", "content-type")}
        async with self._session.request(
            request.method,
            self.upstream.server + request.path_qs,
            data=await request.read(),
            headers=headers,
        ) as upstream:
            body = await upstream.read()
            return web.Response(body=body, status=upstream.status, content_type=upstream.content_type)

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()


def fail_first(method: str, path: str) -> Fault:
    """A fault for the first ``method`` request of ``path`` only."""
    remaining = [1]

    def fail(got_method: str, got_path: str) -> bool:
        if (got_method, got_path) == (method, path) and remaining[0] > 0:
            remaining[0] -= 1
            return True
        return False

    return fail
