"""The write fence: a client under a fence sends writes only while its Lease is held;
the elector opens it on each renewal and shuts it before the lost term is cancelled."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import time

import pytest
from aiohttp import web

from karmada.kube import KubeClient, KubeError, LeaderElector
from karmada.kube.config import ClusterConfig, Credentials
from karmada.kube.fence import FENCED, WriteFence
from karmada.kube.leaderelection import micro_time
from karmada.kube.resources import CONFIGMAPS, LEASES
from tests.servers import plain_http


def _fence(state: str) -> WriteFence:
    fence = WriteFence("default/lease")
    if state in ("held", "revoked"):
        fence.extend(time.monotonic() + 60)
    elif state == "lapsed":
        fence.extend(time.monotonic() - 1)  # the renew deadline passed without a renewal
    if state == "revoked":
        fence.revoke()
        fence.extend(time.monotonic() + 60)  # a late renewal does not reopen a revoked fence
    return fence


@pytest.mark.parametrize(
    ("state", "method", "refused"),
    [
        ("never held", "POST", True),
        ("held", "POST", False),
        ("held", "PUT", False),
        ("lapsed", "PATCH", True),
        ("revoked", "DELETE", True),
        ("revoked", "GET", False),
        ("never held", "GET", False),
    ],
)
def test_which_requests_a_fence_lets_through(state: str, method: str, refused: bool) -> None:
    refusal = _fence(state).refusal(method, "/api/v1/namespaces/default/configmaps")
    assert (refusal is not None) == refused
    if refusal:
        assert "no longer holds Lease default/lease" in refusal


def _configmap(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "b"}}


async def test_a_fenced_client_sends_no_write_but_still_reads(kube: KubeClient) -> None:
    fence = kube.fence = _fence("revoked")
    try:
        with pytest.raises(KubeError) as refused:
            await kube.create(CONFIGMAPS, _configmap("fenced"), "default")
        assert refused.value.reason == FENCED
        assert await kube.get_or_none(CONFIGMAPS, "fenced", "default") is None  # a read still goes
        fence = kube.fence = _fence("held")
        await kube.create(CONFIGMAPS, _configmap("fenced"), "default")
    finally:
        if kube.fence is fence:
            kube.fence = None
        with contextlib.suppress(KubeError):
            await kube.delete(CONFIGMAPS, "fenced", "default")


async def test_a_write_waiting_out_a_429_is_not_sent_after_the_fence_shut() -> None:
    seen: list[str] = []

    async def busy(request: web.Request) -> web.Response:
        seen.append(request.method)
        return web.json_response(
            {"kind": "Status", "code": 429, "reason": "TooManyRequests", "message": "busy"},
            status=429,
            headers={"Retry-After": "1"},
        )

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", busy)
    async with plain_http(app) as url, KubeClient(ClusterConfig(server=url, credentials=Credentials())) as client:
        client.fence = WriteFence("default/lease")
        client.fence.extend(time.monotonic() + 0.3)  # shuts while the write waits out its Retry-After
        with pytest.raises(KubeError) as refused:
            await client.create(CONFIGMAPS, _configmap("late"), "default")
    assert refused.value.reason == FENCED
    assert seen == ["POST"]  # the first attempt only: the retry stayed here


async def test_the_elector_shuts_the_fence_before_the_lost_term_is_cancelled(kube: KubeClient) -> None:
    fence = WriteFence("default/fenced-term")
    elector = LeaderElector(
        kube, "default", "fenced-term", "leader", lease_duration=2, renew_deadline=1, retry_period=0.2, fence=fence
    )
    leading = asyncio.Event()
    at_cancel: list[str | None] = []

    async def lead() -> None:
        leading.set()
        try:
            await asyncio.Event().wait()
        finally:
            at_cancel.append(fence.refusal("POST", "/api/v1/namespaces/default/configmaps"))

    running = asyncio.create_task(elector.run(lead))
    await asyncio.wait_for(leading.wait(), 5)
    assert fence.refusal("POST", "/x") is None  # held: writes go
    while True:  # another candidate takes the Lease (as after a missed renewal)
        lease = await kube.get(LEASES, "fenced-term", "default")
        lease["spec"].update(holderIdentity="other", renewTime=micro_time(datetime.datetime.now(datetime.UTC)))
        try:
            await kube.update(LEASES, lease, "default")
            break
        except KubeError as exc:
            if not exc.conflict:
                raise
    await asyncio.wait_for(running, 10)
    assert at_cancel and at_cancel[0] is not None  # lead() saw a shut fence when its cancellation arrived
