"""The admission-webhook client: POST an AdmissionReview over pooled keep-alive connections.

kube-apiserver calls a webhook through an ``http.Transport`` that client-go keeps
per TLS configuration, so a webhook called on every write (karmada-webhook on
every Work) is asked over a few kept-alive connections, not a TLS handshake per
call. localkube does the same. :class:`WebhookClients` (one per server, owned
by its :class:`localkube.admission_webhooks.WebhookAdmission`) holds one
aiohttp session per (event loop, caBundle, TLS server name): the key is the TLS
settings, so two caBundles never share a connection. Each session is bounded
(at most ``CONNECTIONS`` open connections, idle ones closed after
``IDLE_SECONDS``, Go's ``IdleConnTimeout``) and there are at most ``CLIENTS``
of them, the least recently used closed once its calls are done. Sessions are
made lazily by the calls, in the task of the write being admitted, on that
task's event loop; the server closes them when it stops
(:meth:`WebhookClients.close`, from ``LocalKube.stop``).

A kept-alive connection may have been closed by the webhook while it sat idle
(a ``keepalive_timeout`` shorter than ours, a restart) and the request sent on
it is then lost. Go's ``net/http`` retries a request that failed on a reused
connection before any byte of the answer arrived (``shouldRetryRequest``), and
so does :func:`post_review`: once, on a connection dialed for it. Go retries a
POST so only when nothing of it was written, unless the request is marked
idempotent; a review is replayed either way, as webhooks declare themselves
free of side effects (``sideEffects: None``) and the review carries the same
uid. A failure on a new connection, or after part of an answer, is the
caller's. ``timeoutSeconds`` bounds the call, the retry included (Go's
context deadline).

Errors are ``OSError`` with the words Go's client would use (``Post "URL":
...``); :mod:`localkube.admission_webhooks` makes them kube-apiserver's
``failed calling webhook`` messages.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import errno
import functools
import json
import ssl
from collections import OrderedDict
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from localkube import json_codec

# open connections of one session (aiohttp's default), idle ones kept this long (Go's IdleConnTimeout)
CONNECTIONS = 100
IDLE_SECONDS = 90.0
# distinct (loop, caBundle, server name) sessions kept; a cluster has a handful of webhooks
CLIENTS = 64

_Key = tuple[asyncio.AbstractEventLoop, str, str]


@functools.lru_cache(maxsize=64)
def _ssl_context(ca_bundle: str) -> ssl.SSLContext:
    """The TLS settings for a caBundle (none: the system's roots), built once per bundle: loading
    the system's roots took half the control plane's API server CPU when every call built them
    (1,000 agents registering: their Cluster writes, and every deletion, are reviewed by karmada-webhook)."""
    if ca_bundle:
        pem = base64.b64decode(ca_bundle).decode("ascii", "replace")
        return ssl.create_default_context(cadata=pem)
    return ssl.create_default_context()


async def _reused(_session: Any, context: SimpleNamespace, _params: Any) -> None:
    """Trace hook: the request's connection came from the pool (``pc.isReused()`` in Go)."""
    context.trace_request_ctx["reused"] = True


def _tracing() -> aiohttp.TraceConfig:
    trace = aiohttp.TraceConfig()
    trace.on_connection_reuseconn.append(_reused)
    trace.freeze()
    return trace


@dataclass
class _Client:
    """One session and its in-flight calls (a session evicted while in use is closed after)."""

    session: aiohttp.ClientSession
    active: int = 0
    evicted: bool = False
    # calls retried on a connection dialed for them (never from the pool)
    fresh: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        await self.session.close()
        if self.fresh is not None:
            await self.fresh.close()


def _session(connections: int, force_close: bool) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(
        limit=connections, keepalive_timeout=None if force_close else IDLE_SECONDS, force_close=force_close
    )
    # no session timeout: each call's timeoutSeconds bounds it, retry included
    return aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=None), trace_configs=[_tracing()]
    )


class WebhookClients:
    """The pooled webhook clients of one localkube server."""

    def __init__(self, clients: int = CLIENTS, connections: int = CONNECTIONS) -> None:
        self._limit = clients
        self._connections = connections
        self._clients: OrderedDict[_Key, _Client] = OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()

    def _acquire(self, ca_bundle: str, server_name: str) -> _Client:
        key = (asyncio.get_running_loop(), ca_bundle, server_name)
        client = self._clients.get(key)
        if client is None or client.session.closed:
            client = self._clients[key] = _Client(_session(self._connections, force_close=False))
        self._clients.move_to_end(key)
        while len(self._clients) > self._limit:
            _, oldest = self._clients.popitem(last=False)
            oldest.evicted = True
            self._close_if_idle(oldest)
        client.active += 1
        return client

    def _release(self, client: _Client) -> None:
        client.active -= 1
        self._close_if_idle(client)

    def _close_if_idle(self, client: _Client) -> None:
        if client.evicted and client.active == 0:
            task = asyncio.get_running_loop().create_task(client.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        """Close every session of the running loop (the server's), idle connections and all; a
        later call opens new ones. Sessions of another loop cannot be closed from here: dropped."""
        loop = asyncio.get_running_loop()
        clients = [client for (owner, _, _), client in self._clients.items() if owner is loop]
        self._clients.clear()
        for client in clients:
            await client.close()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)


async def post_review(
    url: str, server_name: str, ca_bundle: str, timeout: int, body: bytes, clients: WebhookClients
) -> Any:
    """POST a review; returns the decoded JSON answer or raises OSError with Go's description."""
    parts = urlsplit(url)
    target = urlunsplit((parts.scheme, parts.netloc, parts.path, f"timeout={timeout}s", ""))
    shown = f'Post "{target}"'
    try:
        context = _ssl_context(ca_bundle)
    except (ValueError, ssl.SSLError, binascii.Error):
        raise OSError(f"{shown}: x509: invalid caBundle") from None
    host = parts.hostname or ""
    port = parts.port or 443
    client = clients._acquire(ca_bundle, server_name)
    try:
        async with asyncio.timeout(timeout):
            status, text = await _round_trip(client, target, context, server_name, body)
    except TimeoutError:
        raise OSError(f"{shown}: context deadline exceeded") from None
    except aiohttp.ClientConnectorCertificateError as exc:
        raise OSError(f"{shown}: {_go_tls_error(exc.certificate_error, server_name or host)}") from None
    except aiohttp.ClientSSLError as exc:
        raise OSError(f"{shown}: {_go_tls_error(exc, server_name or host)}") from None
    except aiohttp.ClientConnectorError as exc:
        raise OSError(f"{shown}: {_go_dial_error(host, port, exc)}") from None
    except aiohttp.ClientError as exc:
        raise OSError(f"{shown}: {exc}") from None
    finally:
        clients._release(client)
    if not 200 <= status < 300:
        raise OSError(_server_error(status, text))
    try:
        return json_codec.loads(text)
    except ValueError as exc:
        raise OSError(f"couldn't get version/kind; json parse error: {exc}") from None


async def _round_trip(
    client: _Client, target: str, context: ssl.SSLContext, server_name: str, body: bytes
) -> tuple[int, bytes]:
    """One POST, retried once on a dialed connection when a pooled one fails before the answer."""
    try:
        return await _send(client.session, target, context, server_name, body, retryable=True)
    except _StaleConnection:
        if client.fresh is None or client.fresh.closed:
            client.fresh = _session(CONNECTIONS, force_close=True)
        return await _send(client.fresh, target, context, server_name, body, retryable=False)


class _StaleConnection(Exception):
    """A reused connection failed before any byte of the answer: the request may be sent again."""


async def _send(
    session: aiohttp.ClientSession,
    target: str,
    context: ssl.SSLContext,
    server_name: str,
    body: bytes,
    retryable: bool,
) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, */*"}
    trace: dict[str, bool] = {"reused": False}
    try:
        async with session.post(
            target,
            data=body,
            headers=headers,
            ssl=context,
            server_hostname=server_name or None,
            trace_request_ctx=trace,
        ) as response:
            # the status line and headers arrived: from here on a failure is not retried
            retryable = False
            return response.status, await response.read()
    except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
        if retryable and trace["reused"] and _before_answer(exc):
            raise _StaleConnection() from exc
        raise


def _before_answer(exc: aiohttp.ClientError) -> bool:
    """Whether the connection broke before any byte of the answer: closed with nothing received
    (aiohttp then gives no partial message), or reset while sending or awaiting the answer."""
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return isinstance(exc.message, str)
    return not isinstance(exc, aiohttp.ClientConnectorError)


def _go_dial_error(host: str, port: int, exc: BaseException) -> str:
    code = getattr(exc, "errno", None)
    os_error = getattr(exc, "os_error", None)
    if code is None and os_error is not None:
        code = getattr(os_error, "errno", None)
    if code == errno.ECONNREFUSED:
        return f"dial tcp {host}:{port}: connect: connection refused"
    return f"dial tcp {host}:{port}: {getattr(os_error, 'strerror', None) or exc}"


def _go_tls_error(exc: BaseException, server_name: str) -> str:
    text = str(exc).lower()  # OpenSSL says "Hostname mismatch"
    if "hostname" in text or "ip address mismatch" in text:
        return f"tls: failed to verify certificate: x509: certificate is not valid for {server_name}"
    if "expired" in text:
        return "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
    return "tls: failed to verify certificate: x509: certificate signed by unknown authority"


def _server_error(status: int, body: bytes) -> str:
    """client-go's text for a non-2xx answer that is not a Status."""
    try:
        decoded = json.loads(body)
    except ValueError:
        decoded = None
    if isinstance(decoded, dict) and decoded.get("kind") == "Status" and decoded.get("message"):
        return str(decoded["message"])
    text = body.decode("utf-8", "replace").strip()
    if status == 404:
        return "the server could not find the requested resource"
    if status in (401, 403):
        return "Unauthorized" if status == 401 else f"forbidden: {text}"
    return f'an error on the server ("{text}") has prevented the request from succeeding'


__all__ = ["WebhookClients", "post_review"]
