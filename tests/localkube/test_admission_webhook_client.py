"""localkube's webhook client against a real TLS webhook server (a small HTTP/1.1 server written
here, so that each test chooses when the server closes a connection): kept-alive connections are
reused per caBundle, and a connection the webhook closed while idle never fails a call."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from localkube.pki import CertificateAuthority, cert_pem
from localkube.webhook_client import WebhookClients, post_review

REVIEW = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u"}})


class Webhook:
    """Answers every review ``allowed``; counts accepted connections. ``answers_per_connection``:
    after that many answers a connection is closed (without ``Connection: close``); ``drop_next``:
    a request arriving on a connection that already answered one is dropped unanswered (the race
    of a webhook closing an idle connection as the request is sent); ``drop_all``: every request
    is; ``delay``: seconds before answering."""

    def __init__(self, directory: Path, ca: CertificateAuthority) -> None:
        cert, key = ca.issue_server(["127.0.0.1"])
        (directory / "hook.crt").write_bytes(cert)
        (directory / "hook.key").write_bytes(key)
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(directory / "hook.crt", directory / "hook.key")
        self.accepted = 0
        self.open = 0
        self.answers_per_connection = 0
        self.drop_next = False
        self.drop_all = False
        self.delay = 0.0
        self.port = 0
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/review"

    async def start(self) -> None:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", self.port, ssl=self.context)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.writers):
            writer.close()
        await self.server.wait_closed()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self.open += 1
        self.writers.add(writer)
        answered = 0
        try:
            while await self.answer(reader, writer, answered):
                answered += 1
                if answered == self.answers_per_connection:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            self.open -= 1
            self.writers.discard(writer)
            writer.close()

    async def answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, answered: int) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.decode().split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "content-length":
                length = int(value)
        await reader.readexactly(length)
        if self.drop_all or (self.drop_next and answered):
            return False
        await asyncio.sleep(self.delay)
        body = json.dumps(
            {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "u", "allowed": True}}
        ).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        writer.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()
        return True


def bundle(*cas: CertificateAuthority) -> str:
    return base64.b64encode(b"".join(cert_pem(ca.cert) for ca in cas)).decode()


@pytest.fixture
def ca() -> CertificateAuthority:
    return CertificateAuthority.create()


@pytest.fixture
async def webhook(tmp_path: Path, ca: CertificateAuthority) -> AsyncIterator[Webhook]:
    server = Webhook(tmp_path, ca)
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def clients() -> AsyncIterator[WebhookClients]:
    pool = WebhookClients()
    yield pool
    await pool.close()


async def call(webhook: Webhook, clients: WebhookClients, ca_bundle: str, timeout: int = 10) -> object:
    return await post_review(webhook.url, "", ca_bundle, timeout, REVIEW.encode(), clients)


async def test_calls_reuse_one_connection(webhook: Webhook, clients: WebhookClients, ca: CertificateAuthority) -> None:
    for _ in range(20):
        answer = await call(webhook, clients, bundle(ca))
        assert answer == {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {"uid": "u", "allowed": True},
        }
    assert webhook.accepted == 1


async def test_parallel_calls_open_a_bounded_number_of_connections(
    webhook: Webhook, clients: WebhookClients, ca: CertificateAuthority
) -> None:
    webhook.delay = 0.05
    for _ in range(3):
        await asyncio.gather(*(call(webhook, clients, bundle(ca)) for _ in range(8)))
    assert webhook.accepted == 8


async def test_connections_are_bounded(webhook: Webhook, ca: CertificateAuthority) -> None:
    clients = WebhookClients(connections=2)
    webhook.delay = 0.05
    try:
        await asyncio.gather(*(call(webhook, clients, bundle(ca)) for _ in range(8)))
    finally:
        await clients.close()
    assert webhook.accepted == 2


async def test_webhook_closing_after_each_answer_fails_no_call(
    webhook: Webhook, clients: WebhookClients, ca: CertificateAuthority
) -> None:
    webhook.answers_per_connection = 1
    for _ in range(30):
        await call(webhook, clients, bundle(ca))
    assert webhook.accepted == 30


async def test_request_lost_on_a_reused_connection_is_sent_again_on_a_new_one(
    webhook: Webhook, clients: WebhookClients, ca: CertificateAuthority
) -> None:
    webhook.drop_next = True
    for _ in range(10):
        await call(webhook, clients, bundle(ca))
    # the first connection answers once, then each call loses its request on the pooled connection
    # and is answered on a dialed one that is not kept
    assert webhook.accepted == 10


async def test_a_failure_on_a_new_connection_is_not_retried(
    webhook: Webhook, clients: WebhookClients, ca: CertificateAuthority
) -> None:
    webhook.drop_all = True
    shown = f'Post "https://127.0.0.1:{webhook.port}/review?timeout=10s": Server disconnected'
    with pytest.raises(OSError, match=f"^{shown}$".replace("?", r"\?")):
        await call(webhook, clients, bundle(ca))
    assert webhook.accepted == 1
    webhook.drop_all = False
    await call(webhook, clients, bundle(ca))
    webhook.drop_all = True
    with pytest.raises(OSError, match="Server disconnected"):
        await call(webhook, clients, bundle(ca))  # lost on the pooled connection, then on a dialed one
    assert webhook.accepted == 3


async def test_webhook_restarted_on_the_same_port(
    webhook: Webhook, clients: WebhookClients, ca: CertificateAuthority
) -> None:
    await call(webhook, clients, bundle(ca))
    await webhook.stop()
    await webhook.start()
    await call(webhook, clients, bundle(ca))
    await call(webhook, clients, bundle(ca))
    assert webhook.accepted == 2


async def test_different_ca_bundles_never_share_a_connection(
    webhook: Webhook, clients: WebhookClients, ca: CertificateAuthority
) -> None:
    other = bundle(ca, CertificateAuthority.create())  # verifies the same server, other TLS settings
    for _ in range(5):
        await call(webhook, clients, bundle(ca))
        await call(webhook, clients, other)
    assert webhook.accepted == 2


async def test_timeout_still_applies(webhook: Webhook, clients: WebhookClients, ca: CertificateAuthority) -> None:
    await call(webhook, clients, bundle(ca))
    webhook.delay = 3
    started = time.monotonic()
    with pytest.raises(OSError) as raised:
        await call(webhook, clients, bundle(ca), timeout=1)
    assert str(raised.value) == f'Post "https://127.0.0.1:{webhook.port}/review?timeout=1s": context deadline exceeded'
    assert time.monotonic() - started < 2.5


async def test_close_closes_the_kept_connections(
    webhook: Webhook, clients: WebhookClients, ca: CertificateAuthority
) -> None:
    await call(webhook, clients, bundle(ca))
    assert webhook.open == 1
    await clients.close()
    for _ in range(100):
        if not webhook.open:
            break
        await asyncio.sleep(0.01)
    assert webhook.open == 0
    await call(webhook, clients, bundle(ca))  # a later call opens a new one
    assert webhook.accepted == 2
