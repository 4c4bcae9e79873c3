"""API Priority and Fairness in a running localkube: with its one global-default seat held by
a request that waits, another user of that level is answered 429 with ``Retry-After: 1``
after the wait limit, while the exempt admin and an agent's Lease heartbeat are served at
once; the real kubectl (client-go) retries the 429 and succeeds; ``/metrics`` counts it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import localkube.paging
from tests.servers import Kubectl, Raw, ServerThread, start_server

BUSY, OTHER, AGENT = "busy-token", "other-token", "agent-token"
HOLD = "/api/v1/namespaces/default/configmaps/absent?resourceVersion=999999999"  # waits 3 s, then 504


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    tokens = {
        BUSY: ("busy", []),
        OTHER: ("other", []),
        AGENT: ("system:karmada:agent:member1", ["system:karmada:agents"]),
    }
    # 1 + 1 seats: every priority level has one
    yield from start_server(
        port=0, static_tokens=tokens, max_requests_inflight=1, max_mutating_requests_inflight=1, request_wait_limit=0.5
    )


@pytest.fixture(scope="module")
def raw(server: ServerThread, tmp_path_factory: pytest.TempPathFactory) -> Raw:
    workdir = tmp_path_factory.mktemp("apf")
    admin = Kubectl(server.kubeconfig(workdir), workdir / "cache")
    admin("create", "clusterrolebinding", "everyone", "--clusterrole=cluster-admin", "--group=system:authenticated")
    return Raw(server, server.kubeconfig(workdir))


async def test_a_full_level_turns_requests_away_and_other_levels_are_not_held(
    raw: Raw, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(localkube.paging, "TOO_LARGE_WAIT", 10.0)  # the holder keeps its seat long enough
    hold = asyncio.create_task(raw.request("GET", HOLD, token=BUSY))
    await asyncio.sleep(0.3)
    started = time.monotonic()
    status, body, headers = await raw.request("GET", "/api/v1/namespaces", token=OTHER)
    assert time.monotonic() - started >= 0.45  # it waited for a seat (request_wait_limit) first
    assert status == 429, body
    assert headers.get("Retry-After") == "1"
    assert body["reason"] == "TooManyRequests" and body["message"] == "Too many requests, please try again later."
    assert body["details"]["retryAfterSeconds"] == 1
    admin_status, _, _ = await raw.request("GET", "/api/v1/namespaces")  # system:masters: exempt
    lease_status, _, _ = await raw.request(
        "GET", "/apis/coordination.k8s.io/v1/namespaces/karmada-cluster/leases/member1", token=AGENT
    )  # node-high: a seat of its own
    assert (admin_status, lease_status) == (200, 404)
    assert not hold.done(), "both were answered while global-default's one seat was still held"
    assert (await hold)[0] == 504
    status, _, _ = await raw.request("GET", "/api/v1/namespaces", token=OTHER)  # the seat is free again
    assert status == 200


def test_kubectl_waits_out_a_429_and_succeeds(server: ServerThread, raw: Raw, tmp_path: Path) -> None:
    user = Kubectl(server.kubeconfig(tmp_path, "jane", []), tmp_path / "cache")

    async def held_while() -> tuple[int, str]:
        hold = asyncio.create_task(raw.request("GET", HOLD, token=BUSY))
        await asyncio.sleep(0.3)
        output = await asyncio.to_thread(user, "get", "namespaces", "-o", "name")
        return (await hold)[0], str(output)

    before = _rejected(raw)
    hold_status, output = asyncio.run(held_while())
    assert hold_status == 504
    assert "namespace/default" in output
    assert _rejected(raw) > before


def _rejected(raw: Raw) -> int:
    status, text, _ = asyncio.run(raw.request("GET", "/metrics"))
    assert status == 200
    for line in str(text).splitlines():
        if line.startswith('apiserver_flowcontrol_rejected_requests_total{flow_schema="global-default"'):
            return int(line.rsplit(" ", 1)[1])
    return 0
