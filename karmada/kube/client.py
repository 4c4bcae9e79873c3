"""The one place that talks HTTP to API servers.

A request is data (:class:`Request`: method, path, query, body, content type);
:class:`KubeClient` executes it over one aiohttp session, decodes JSON and turns
Status errors into :class:`KubeError`. Objects stay plain dicts: most traffic
is unstructured objects of arbitrary kinds. Watches are async iterators of
``(type, object)`` pairs read line by line.

Transport: credentials come fresh from an :class:`~karmada.kube.auth.Authenticator`
before each request; a 401 refreshes them (once per burst) and, when that gave
a new token, the request is sent once more (authentication happens before the
server does anything, so this is safe for every verb). The session verifies
the server as ``tls_server_name`` when set and goes through the proxy
:func:`~karmada.kube.proxy.proxy_for` picks.

Every executed request counts in client-go's ``rest_client_requests_total``
and ``rest_client_request_duration_seconds`` (:mod:`karmada.metrics`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import logging
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import aiohttp
from multidict import CIMultiDict
from yarl import URL

from karmada import metrics
from karmada.kube import json_codec
from karmada.kube.auth import Authenticator, CredentialError
from karmada.kube.config import ClusterConfig
from karmada.kube.fence import FENCED, WRITE_METHODS, WriteFence
from karmada.kube.proxy import proxy_for
from karmada.kube.resources import Resource

log = logging.getLogger("karmada.kube")

Obj = dict[str, Any]
JSON = "application/json"
Headers = list[tuple[str, str]]  # a proxied request's, in order, names repeating
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

CONNECTION_ERROR = "ConnectionError"
"""The reason of a :class:`KubeError` with status 0: the server could not be reached or hung up."""
INVALID_RESPONSE = "InvalidResponse"
"""The reason of a :class:`KubeError` with status 0: the answer was not what the API promises."""
PAGE_SIZE = 500  # client-go's reflector and pager
MAX_RETRIES = 10  # client-go's retries of a request answered 429 with Retry-After
MAX_RETRY_AFTER = 60.0  # seconds: a larger Retry-After is waited this long


def retry_after(response: aiohttp.ClientResponse) -> float | None:
    """Seconds to wait before sending a request again that the server turned away (429 with
    ``Retry-After``: API Priority and Fairness, or a PodDisruptionBudget); None to keep the answer."""
    if response.status != 429:
        return None
    try:
        seconds = float(response.headers.get("Retry-After", ""))
    except ValueError:
        return None
    if seconds < 0:
        return None
    return min(seconds, MAX_RETRY_AFTER)


LIST_SECONDS_PER_ITEM = 0.02  # on top of the client's timeout, for each object a list request may carry
MAX_EVENT_BYTES = 16 * 1024 * 1024
"""The longest watch event read: objects reach 1.5 MiB in etcd and 3 MiB in request bodies; their JSON more."""


class KubeError(Exception):
    """An API error: HTTP status plus the server's Status reason and message."""

    def __init__(self, status: int, reason: str, message: str, body: Obj | None = None) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body or {}

    @property
    def not_found(self) -> bool:
        return self.status == 404

    @property
    def conflict(self) -> bool:
        return self.status == 409 and self.reason == "Conflict"

    @property
    def already_exists(self) -> bool:
        return self.status == 409 and self.reason == "AlreadyExists"

    @property
    def gone(self) -> bool:
        return self.status == 410


@dataclass(frozen=True)
class Request:
    """One API call, as data."""

    method: str
    path: str
    params: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    content_type: str = JSON
    accept: str = JSON
    timeout: float | None = None
    """Seconds for the whole exchange; the client's default when None."""


def object_path(
    resource: Resource, namespace: str | None = None, name: str | None = None, subresource: str = ""
) -> str:
    """The URL path of a collection or object."""
    base = f"/api/{resource.version}" if not resource.group else f"/apis/{resource.group}/{resource.version}"
    if resource.namespaced and namespace:
        base += f"/namespaces/{quote(namespace, safe='')}"
    base += f"/{resource.plural}"
    if name:
        base += f"/{quote(name, safe='')}"
    if subresource:
        base += f"/{subresource}"
    return base


class KubeClient:
    """An async client for one API server."""

    def __init__(self, config: ClusterConfig, *, timeout: float = 30.0) -> None:
        self._timeout = timeout
        self._session: aiohttp.ClientSession | None = None
        # watches on a pool of their own: each holds its connection for minutes (HTTP/1.1, where
        # client-go multiplexes them over HTTP/2), so on the requests' bounded pool a few dozen
        # watches (two per Push member) would leave no connection for any other request
        self._watch_session: aiohttp.ClientSession | None = None
        self._watched = False
        self._companions: list[KubeClient] = []
        self._parent: KubeClient | None = None
        # set while a leadership term writes through this client (companions have none)
        self.fence: WriteFence | None = None
        self._use(config)

    def companion(self) -> KubeClient:
        """A client with these settings and connections of its own, switched by this one's
        :meth:`set_config` too (a renewed certificate); its user closes it. For requests that
        must not queue behind this client's, as client-go gives leader election its own client."""
        other = KubeClient(self.config, timeout=self._timeout)
        other._parent = self
        self._companions.append(other)
        return other

    def _use(self, config: ClusterConfig) -> None:
        self.config = config
        self._auth = Authenticator(config.credentials)
        self._proxy = proxy_for(config.server, config.proxy_url)
        self._tls = not config.server.startswith("http://")
        self._ssl = config.ssl_context() if self._tls else None
        self._session_cert = (config.credentials.client_cert_pem, config.credentials.client_key_pem)

    async def __aenter__(self) -> KubeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection pool.

        A watch cut short closes its TLS connection outside the pool; the TLS
        shutdown needs a few loop turns to finish, so give it a moment before
        the caller's loop may end (aiohttp's documented graceful shutdown).
        """
        if self._parent is not None and self in self._parent._companions:
            self._parent._companions.remove(self)
        sessions = [s for s in (self._session, self._watch_session) if s is not None]
        self._session = self._watch_session = None
        for session in sessions:
            await session.close()
        if sessions and self._watched:
            await asyncio.sleep(0.05)

    async def set_config(self, config: ClusterConfig) -> None:
        """Switch to new settings (e.g. a renewed client certificate) without a restart:
        requests from now on use them; open watches end and their informers reconnect."""
        old = [s for s in (self._session, self._watch_session) if s is not None]
        self._session = self._watch_session = None
        self._use(config)
        for session in old:
            await session.close()
        for companion in self._companions:
            await companion.set_config(config)

    def set_token(self, token: str) -> None:
        """A new bearer token for requests from now on; open connections and streams go on (a
        token is sent per request, unlike a client certificate, which needs new connections)."""
        self.config = dataclasses.replace(
            self.config, credentials=dataclasses.replace(self.config.credentials, token=token)
        )
        self._auth = Authenticator(self.config.credentials)

    async def _ensure(self, watch: bool = False) -> aiohttp.ClientSession:
        try:
            issued = await self._auth.current()
        except CredentialError as exc:
            raise KubeError(0, "CredentialError", str(exc)) from None
        cert = (issued.cert_pem, issued.key_pem)
        if self._tls and cert != self._session_cert:
            # a client certificate from an exec plugin: new TLS settings, new connections
            self._ssl, self._session_cert = self.config.ssl_context(*cert), cert
            old = [s for s in (self._session, self._watch_session) if s is not None]
            self._session = self._watch_session = None
            for session in old:
                await session.close()
        if watch:
            if self._watch_session is None:
                self._watch_session = self._new_session(limit=0)  # one connection per open watch
            return self._watch_session
        if self._session is None:
            self._session = self._new_session(limit=64)
        return self._session

    def _new_session(self, limit: int) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(ssl=self._ssl if self._ssl is not None else False, limit=limit)
        return aiohttp.ClientSession(connector=connector, proxy=self._proxy, middlewares=(self._transport,))

    async def _transport(
        self, request: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType
    ) -> aiohttp.ClientResponse:
        """Every request of the session: the TLS server name, retries after a 429 with
        ``Retry-After`` (as client-go's: the server did not run it), and one retry after a
        401 when refreshed credentials gave a new token."""
        if self.config.tls_server_name:
            request.server_hostname = self.config.tls_server_name
        response = await self._send(request, handler)
        for _ in range(MAX_RETRIES):
            wait = retry_after(response)
            if wait is None:
                break
            response.release()
            await asyncio.sleep(wait)
            response = await self._send(request, handler)
        if response.status != 401:
            return response
        sent = request.headers.get("Authorization", "").removeprefix("Bearer ") or None
        if not await self._auth.unauthorized(sent):
            return response
        issued = self._auth.issued
        if not issued.token or (issued.cert_pem, issued.key_pem) != self._session_cert:
            return response  # a new client certificate needs new connections: the next request has them
        response.release()
        request.headers["Authorization"] = f"Bearer {issued.token}"
        return await self._send(request, handler)

    async def _send(self, request: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType) -> aiohttp.ClientResponse:
        """One attempt; a write under a :class:`WriteFence` only while the Lease is held, and
        cut off at the fence's deadline (a write waiting for a connection must not go out late)."""
        fence = self.fence
        if fence is None or request.method not in WRITE_METHODS:
            return await handler(request)
        refusal = fence.refusal(request.method, request.url.path)
        if refusal is not None:
            raise KubeError(0, FENCED, refusal)
        try:
            async with asyncio.timeout(fence.remaining()):
                return await handler(request)
        except TimeoutError:
            if fence.remaining() > 0:
                raise
            raise KubeError(0, FENCED, fence.refusal(request.method, request.url.path) or "") from None

    def _headers(self, request: Request) -> dict[str, str]:
        headers = {"Accept": request.accept}
        if request.body is not None:
            headers["Content-Type"] = request.content_type
        token = self._auth.issued.token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    async def execute(self, request: Request) -> Obj:
        """Run a request; the decoded JSON body, or :class:`KubeError`."""
        session = await self._ensure()
        data = None if request.body is None else json_codec.dumps(request.body)
        started = time.perf_counter()
        code = "<error>"  # client-go's code label of a request that got no answer
        try:
            async with session.request(
                request.method,
                self.config.server + request.path,
                params=dict(request.params),
                # a stream, not bytes: aiohttp warns on (and blocks the loop for) raw bodies over 1 MiB
                data=None if data is None else io.BytesIO(data),
                headers=self._headers(request),
                timeout=aiohttp.ClientTimeout(total=request.timeout or self._timeout),
            ) as response:
                code = str(response.status)
                return self._decode(response.status, await response.read())
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise KubeError(0, "ConnectionError", f"{request.method} {request.path}: {exc!s}") from exc
        finally:
            host = self._metrics_host
            metrics.REST_DURATION.labels(request.method, host).observe(time.perf_counter() - started)
            metrics.REST_REQUESTS.labels(code, request.method, host).inc()

    @property
    def _metrics_host(self) -> str:
        """client-go's host label: the server's host:port."""
        return urlsplit(self.config.server).netloc

    @staticmethod
    def _decode(status: int, raw: bytes) -> Obj:
        try:
            body = json_codec.loads(raw) if raw else {}
        except (ValueError, RecursionError):
            body = {}
        if status >= 400:
            if isinstance(body, dict) and body.get("kind") == "Status":
                raise KubeError(status, body.get("reason", ""), body.get("message", ""), body)
            raise KubeError(status, "Unknown", raw[:500].decode(errors="replace"))
        return body if isinstance(body, dict) else {"value": body}

    # -- verbs -------------------------------------------------------------
    async def get(self, resource: Resource, name: str, namespace: str | None = None, subresource: str = "") -> Obj:
        return await self.execute(Request("GET", object_path(resource, namespace, name, subresource)))

    async def get_or_none(self, resource: Resource, name: str, namespace: str | None = None) -> Obj | None:
        try:
            return await self.get(resource, name, namespace)
        except KubeError as exc:
            if exc.not_found:
                return None
            raise

    async def list(self, resource: Resource, namespace: str | None = None, **params: str) -> Obj:
        return await self.execute(Request("GET", object_path(resource, namespace), params))

    async def create(self, resource: Resource, body: Obj, namespace: str | None = None, **params: str) -> Obj:
        return await self.execute(Request("POST", object_path(resource, namespace), params, body))

    async def update(self, resource: Resource, body: Obj, namespace: str | None = None, subresource: str = "") -> Obj:
        name = body["metadata"]["name"]
        return await self.execute(Request("PUT", object_path(resource, namespace, name, subresource), {}, body))

    async def patch(
        self,
        resource: Resource,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        content_type: str = MERGE_PATCH,
        subresource: str = "",
        **params: str,
    ) -> Obj:
        return await self.execute(
            Request("PATCH", object_path(resource, namespace, name, subresource), params, patch, content_type)
        )

    async def apply(
        self, resource: Resource, body: Obj, namespace: str | None = None, *, manager: str, force: bool = True
    ) -> Obj:
        """Server-side apply of ``body`` as ``manager``."""
        params = {"fieldManager": manager}
        if force:
            params["force"] = "true"
        return await self.patch(resource, body["metadata"]["name"], body, namespace, content_type=APPLY_PATCH, **params)

    async def delete(
        self,
        resource: Resource,
        name: str,
        namespace: str | None = None,
        *,
        propagation: str = "Background",
        preconditions: Obj | None = None,
    ) -> Obj:
        body: Obj = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
        if preconditions:
            body["preconditions"] = preconditions
        return await self.execute(Request("DELETE", object_path(resource, namespace, name), {}, body))

    async def raw_get(self, path: str) -> Obj:
        return await self.execute(Request("GET", path))

    async def raw_text(self, path: str) -> str:
        """GET a non-JSON path (``/metrics``): the body as text, or :class:`KubeError`."""
        session = await self._ensure()
        request = Request("GET", path, accept="text/plain")
        try:
            async with session.get(
                self.config.server + path,
                headers=self._headers(request),
                timeout=aiohttp.ClientTimeout(total=self._timeout),
            ) as response:
                raw = await response.read()
                if response.status >= 400:
                    self._decode(response.status, raw)
                return raw.decode(response.get_encoding())
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise KubeError(0, "ConnectionError", f"GET {path}: {exc!s}") from exc

    async def get_if_changed(self, path: str, accept: str, etag: str | None) -> tuple[Obj | None, str | None]:
        """GET ``path`` (``accept`` first, JSON as the fallback) unless it still has ``etag``:
        (None, etag) when the server answered 304 Not Modified, else (document, its ETag)."""
        session = await self._ensure()
        request = Request("GET", path, accept=f"{accept},{JSON}")
        headers = self._headers(request)
        if etag:
            headers["If-None-Match"] = etag
        try:
            async with session.get(
                self.config.server + path, headers=headers, timeout=aiohttp.ClientTimeout(total=self._timeout)
            ) as response:
                if response.status == 304:
                    return None, etag
                return self._decode(response.status, await response.read()), response.headers.get("ETag")
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise KubeError(0, "ConnectionError", f"GET {path}: {exc!s}") from exc

    async def execute_with_accept(self, path: str, accept: str) -> Obj:
        """GET ``path`` asking for a specific representation first (JSON as the fallback),
        e.g. aggregated discovery."""
        return await self.execute(Request("GET", path, accept=f"{accept},{JSON}"))

    async def list_all(
        self,
        resource: Resource,
        namespace: str | None = None,
        *,
        page_size: int = PAGE_SIZE,
        transform: Callable[[Obj], Obj] | None = None,
        **params: str,
    ) -> Obj:
        """Every object of a collection as one list, read ``page_size`` at a time
        (``limit``/``continue``, one snapshot: the first page's resourceVersion).

        Each page has a timeout that grows with the page. When the continue token
        expires (410) before the last page, the collection is read again in one
        request, as client-go's pager falls back to. ``transform`` is applied to
        each item as its page arrives, so only the transformed objects pile up.
        """
        items: list[Obj] = []
        token = version = ""
        while True:
            query = dict(params)
            if page_size > 0:
                query["limit"] = str(page_size)
            if token:
                query["continue"] = token
            try:
                page = await self._list_page(resource, namespace, query, page_size or len(items) + PAGE_SIZE)
            except KubeError as exc:
                if not (exc.gone and token):
                    raise
                log.info(
                    "list of %s: continue token expired after %d items; listing again in one request",
                    resource.plural,
                    len(items),
                )
                expected, items = 2 * len(items) + PAGE_SIZE, []
                full = await self._list_page(resource, namespace, dict(params), expected)
                items.extend(transform(item) if transform else item for item in full["items"] or [])
                return _list_of(full, items, str(full["metadata"].get("resourceVersion", "")))
            if not token:
                version = str(page["metadata"].get("resourceVersion", ""))
            items.extend(transform(item) if transform else item for item in page["items"] or [])
            token = str(page["metadata"].get("continue") or "") if page_size > 0 else ""
            if not token:
                return _list_of(page, items, version)

    async def _list_page(self, resource: Resource, namespace: str | None, query: Obj, expected: int) -> Obj:
        path = object_path(resource, namespace)
        timeout = self._timeout + expected * LIST_SECONDS_PER_ITEM
        page = await self.execute(Request("GET", path, query, timeout=timeout))
        items = page.get("items")
        if (
            not isinstance(page.get("metadata"), dict)
            or "items" not in page
            or not (items is None or (isinstance(items, list) and all(isinstance(i, dict) for i in items)))
        ):
            raise KubeError(0, INVALID_RESPONSE, f"list {path}: the answer is not a list")
        return page

    def _passthrough_headers(self, headers: Headers) -> CIMultiDict[str]:
        """The caller's headers as given, with this client's token (a certificate goes in TLS)."""
        sent: CIMultiDict[str] = CIMultiDict(headers)
        token = self._auth.issued.token
        if token:
            sent["Authorization"] = f"Bearer {token}"
        return sent

    async def passthrough(
        self, method: str, path_qs: str, headers: Headers, body: bytes | None
    ) -> aiohttp.ClientResponse:
        """Send a request as a proxy does (the cluster proxy's): the path, query and headers as
        given, this client's credentials; the raw answer, not decoded or decompressed, for the
        caller to stream and release. No total timeout: a ``watch`` or ``logs -f`` lasts."""
        session = await self._ensure(watch=True)
        sent = self._passthrough_headers(headers)
        try:
            return await session.request(
                method,
                URL(self.config.server + path_qs, encoded=True),
                data=None if body is None else io.BytesIO(body),
                headers=sent,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self._timeout),
                auto_decompress=False,
                allow_redirects=False,
            )
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise KubeError(0, CONNECTION_ERROR, f"{method} {path_qs.partition('?')[0]}: {exc!s}") from exc

    async def passthrough_websocket(
        self, path_qs: str, headers: Headers, protocols: Sequence[str]
    ) -> aiohttp.ClientWebSocketResponse:
        """Open a WebSocket as a proxy does (``exec``, ``attach``, ``port-forward``); a refused
        upgrade raises :class:`KubeError` with the server's status."""
        session = await self._ensure(watch=True)
        sent = self._passthrough_headers(headers)
        try:
            return await session.ws_connect(
                URL(self.config.server + path_qs, encoded=True),
                protocols=protocols,
                headers=sent,
                timeout=aiohttp.ClientWSTimeout(ws_close=5.0),
                max_msg_size=0,
                autoping=True,
            )
        except aiohttp.WSServerHandshakeError as exc:
            raise KubeError(exc.status, "UpgradeFailed", exc.message) from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise KubeError(0, CONNECTION_ERROR, f"GET {path_qs.partition('?')[0]}: {exc!s}") from exc

    async def watch(
        self,
        resource: Resource,
        namespace: str | None = None,
        *,
        resource_version: str = "",
        timeout_seconds: int = 300,
        bookmarks: bool = True,
        params: Mapping[str, str] | None = None,
        accept: str = JSON,
    ) -> AsyncGenerator[tuple[str, Obj], None]:
        """Stream ``(type, object)`` events (each object a Table row when ``accept`` asks
        ``as=Table``, as for kubectl's ``get -w``); an ERROR event raises :class:`KubeError`,
        and so does a line that is not an event (reason ``InvalidResponse``) or a
        broken connection (status 0, reason ``ConnectionError``)."""
        session = await self._ensure(watch=True)
        self._watched = True
        query = dict(params or {})
        query.update({"watch": "true", "timeoutSeconds": str(timeout_seconds)})
        if resource_version:
            query["resourceVersion"] = resource_version
        if bookmarks:
            query["allowWatchBookmarks"] = "true"
        request = Request("GET", object_path(resource, namespace), query, accept=accept)
        try:
            async with session.get(
                self.config.server + request.path,
                params=query,
                headers=self._headers(request),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self._timeout, sock_read=timeout_seconds + 30),
            ) as response:
                if response.status >= 400:
                    self._decode(response.status, await response.read())
                async for line in _lines(response.content, MAX_EVENT_BYTES, request.path):
                    kind, obj = _event(line, request.path)
                    if kind == "ERROR":
                        raise KubeError(int(obj.get("code", 500)), obj.get("reason", ""), obj.get("message", ""), obj)
                    yield kind, obj
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise KubeError(0, CONNECTION_ERROR, f"watch {request.path}: {exc!s}") from exc


def _list_of(page: Obj, items: list[Obj], version: str) -> Obj:
    return {
        "kind": page.get("kind", ""),
        "apiVersion": page.get("apiVersion", ""),
        "metadata": {"resourceVersion": version},
        "items": items,
    }


async def _lines(content: aiohttp.StreamReader, limit: int, path: str) -> AsyncGenerator[bytes, None]:
    """The lines of a watch stream, each up to ``limit`` bytes (aiohttp's own
    ``readline`` stops at twice its read buffer, 512 KiB, below what objects reach)."""
    buffer = bytearray()
    scanned = 0  # bytes of buffer known to hold no newline
    async for chunk in content.iter_any():
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", max(start, scanned))) != -1:
            if end > start:
                yield bytes(buffer[start:end])
            start = end + 1
        del buffer[:start]
        scanned = len(buffer)
        if len(buffer) > limit:
            raise KubeError(0, INVALID_RESPONSE, f"watch {path}: an event longer than {limit} bytes")
    if buffer.strip():
        raise KubeError(0, CONNECTION_ERROR, f"watch {path}: the stream ended inside an event")


def _event(line: bytes, path: str) -> tuple[str, Obj]:
    try:
        event = json_codec.loads(line)
        kind, obj = event["type"], event["object"]
        if not isinstance(kind, str) or not isinstance(obj, dict):
            raise TypeError("type or object of the wrong kind")
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise KubeError(0, INVALID_RESPONSE, f"watch {path}: not a watch event ({exc!s:.200})") from exc
    return kind, obj
