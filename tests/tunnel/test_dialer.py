"""The agent's end: backoff with jitter, and streams it refuses rather than send with its rights."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from karmada.kube import ClusterConfig, KubeClient
from karmada.tunnel import wire
from karmada.tunnel.dialer import MAX_BODY, Backoff, TunnelDialer, tunnel_url
from karmada.tunnel.link import Link, Stream
from karmada.tunnel.wire import Caller
from tests.programs import free_port
from tests.tunnel.carriers import pair


def test_backoff_grows_to_its_ceiling_with_full_jitter() -> None:
    backoff = Backoff(initial=0.5, maximum=8.0, rng=random.Random(7))
    delays = [backoff.next() for _ in range(12)]
    ceilings = [min(8.0, 0.5 * 2**n) for n in range(12)]
    assert all(0 <= delay <= ceiling for delay, ceiling in zip(delays, ceilings, strict=True))
    assert len(set(delays)) == len(delays)  # spread, not in lockstep
    backoff.reset()
    assert backoff.next() <= 0.5


def test_tunnel_url() -> None:
    assert tunnel_url("https://proxy:8443/", "edge-1") == "https://proxy:8443/tunnel/edge-1"


@pytest.fixture
async def control() -> AsyncIterator[Link]:
    """The control plane's end of a tunnel whose agent's member does not answer (a closed port)."""
    member = KubeClient(ClusterConfig(server=f"https://127.0.0.1:{free_port()}"), timeout=2)
    dialer = TunnelDialer("https://unused", "member1", lambda: member.config, member)
    control_end, agent_end = pair()
    link = Link(control_end, client=True, name="control")
    agent = Link(agent_end, client=False, handler=dialer.serve, name="agent")
    tasks = [asyncio.ensure_future(link.run()), asyncio.ensure_future(agent.run())]
    try:
        yield link
    finally:
        await control_end.close()
        await asyncio.wait(tasks, timeout=5)
        await member.close()


async def answer(stream: Stream) -> tuple[int, dict[str, str]]:
    await asyncio.wait_for(stream.received_headers(), 10)
    body = bytearray()
    while chunk := await asyncio.wait_for(stream.read(), 10):
        body += chunk
    return int(stream.header(":status")), json.loads(body)


async def test_a_stream_without_a_caller_is_refused(control: Link) -> None:
    stream = await control.open(
        [(":method", "GET"), (":scheme", "https"), (":authority", "member1"), (":path", "/api")], end_stream=True
    )
    code, status = await answer(stream)
    assert code == 403 and "without a caller" in status["message"]


async def test_a_member_that_cannot_be_reached_is_unavailable(control: Link) -> None:
    sent = wire.request_headers("GET", "/api/v1/namespaces", "member1", [], Caller("alice"))
    stream = await control.open(sent, end_stream=True)
    code, status = await answer(stream)
    assert code == 503 and status["message"].startswith(
        "the agent cannot reach its member cluster: GET /api/v1/namespaces:"
    )


async def test_a_body_over_the_limit_is_refused(control: Link) -> None:
    sent = wire.request_headers("POST", "/api/v1/namespaces/default/configmaps", "member1", [], Caller("alice"))
    stream = await control.open(sent)
    writing = asyncio.ensure_future(stream.write(b"x" * (MAX_BODY + 1)))
    code, status = await answer(stream)
    writing.cancel()
    assert code == 413 and status["reason"] == "RequestEntityTooLarge"


async def test_a_new_token_keeps_the_connections() -> None:
    """The impersonator's token is renewed in place: a `logs -f` open through the tunnel goes on."""
    client = KubeClient(ClusterConfig(server="https://127.0.0.1:1"))
    session = await client._ensure(watch=True)
    client.set_token("second")
    assert await client._ensure(watch=True) is session
    assert client._headers(client_request()).get("Authorization") == "Bearer second"
    await client.close()


def client_request() -> Any:
    from karmada.kube.client import Request

    return Request("GET", "/api")
