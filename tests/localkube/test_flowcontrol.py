"""API Priority and Fairness as pure parts: which FlowSchema and priority level a request
falls in (kube-apiserver's default schemas, and localkube's two for Karmada's agents), which
requests take no seat, how seats are shared, and how a level hands freed seats out."""

from __future__ import annotations

import asyncio

import pytest

from localkube.errors import APIError
from localkube.flowcontrol import FlowControl, Level, classify, long_running, seats_of
from localkube.requestinfo import RequestInfo


def resource(verb: str, group: str, name: str, subresource: str = "", namespace: str = "ns") -> RequestInfo:
    return RequestInfo(
        path="/x", method="GET", is_resource=True, group=group, resource=name, subresource=subresource,
        namespace=namespace, verb=verb,
    )  # fmt: skip


AUTH = "system:authenticated"
SA = ["system:serviceaccounts", AUTH]
AGENT = ["system:karmada:agents", AUTH]
LEASE = "coordination.k8s.io"
CASES = [
    ("admin", ["system:masters", AUTH], resource("create", "work.karmada.io", "works"), "exempt", "exempt"),
    ("anyone", [AUTH], RequestInfo(path="/readyz", method="GET", verb="get"), "probes", "exempt"),
    ("anyone", [AUTH], RequestInfo(path="/version", method="GET", verb="get"), "global-default", "global-default"),
    (
        "system:kube-controller-manager", [AUTH], resource("update", LEASE, "leases"),
        "system-leader-election", "leader-election",
    ),
    (
        "system:serviceaccount:kube-system:x", [AUTH], resource("get", "", "configmaps"),
        "system-leader-election", "leader-election",
    ),
    (
        "system:serviceaccount:app:ctl", SA, resource("update", LEASE, "leases"),
        "workload-leader-election", "leader-election",
    ),
    (
        "system:serviceaccount:app:ctl", SA, resource("list", LEASE, "leases"),
        "service-accounts", "workload-low",
    ),
    ("system:node:n1", ["system:nodes", AUTH], resource("update", LEASE, "leases"), "system-node-high", "node-high"),
    ("system:node:n1", ["system:nodes", AUTH], resource("update", "", "pods", "status"), "system-nodes", "system"),
    (
        "system:karmada:agent:member1", AGENT, resource("update", LEASE, "leases"),
        "karmada-agent-heartbeats", "node-high",
    ),
    (
        "system:karmada:agent:member1", AGENT, resource("update", "work.karmada.io", "works", "status"),
        "karmada-agents", "system",
    ),
    ("system:kube-scheduler", [AUTH], resource("create", "", "pods", "binding"), "kube-scheduler", "workload-high"),
    ("system:serviceaccount:kube-system:dns", ["system:serviceaccounts", AUTH], resource("list", "", "services"),
     "kube-system-service-accounts", "workload-high"),
    ("jane", [AUTH], resource("list", "apps", "deployments"), "global-default", "global-default"),
    ("system:anonymous", ["system:unauthenticated"], resource("get", "", "pods"), "global-default", "global-default"),
    ("odd", [], resource("get", "", "pods"), "catch-all", "catch-all"),
]  # fmt: skip


@pytest.mark.parametrize(("user", "groups", "info", "schema", "level"), CASES)
def test_classify(user: str, groups: list[str], info: RequestInfo, schema: str, level: str) -> None:
    assert classify(user, groups, info) == (schema, level)


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        (resource("watch", "", "pods"), True),
        (resource("get", "", "pods", "log"), True),
        (resource("create", "", "pods", "exec"), True),
        (resource("get", "", "services", "proxy"), True),
        (resource("get", "", "pods", "status"), False),
        (resource("list", "", "pods"), False),
        (RequestInfo(path="/metrics", method="GET", verb="get"), False),
    ],
)
def test_long_running_requests_take_no_seat(info: RequestInfo, expected: bool) -> None:
    assert long_running(info) is expected


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        (
            600,  # kube-apiserver's 400 + 200
            {"system": 74, "node-high": 98, "leader-election": 25, "workload-high": 98, "workload-low": 245,
             "global-default": 49, "catch-all": 13},
        ),
        (
            32,
            {"system": 4, "node-high": 6, "leader-election": 2, "workload-high": 6, "workload-low": 14,
             "global-default": 3, "catch-all": 1},
        ),
        (2, dict.fromkeys(("system", "node-high", "leader-election", "workload-high", "workload-low",
                           "global-default", "catch-all"), 1)),
    ],
)  # fmt: skip
def test_seats_are_shares_of_the_limit_rounded_up(limit: int, expected: dict[str, int]) -> None:
    assert seats_of(limit) == expected


async def _served_order(level: Level, requests: list[str]) -> list[str]:
    """Queue ``requests`` (flow names) on a level whose one seat is held, then free it."""
    await level.acquire("holder", 5)
    order: list[str] = []

    async def one(flow: str, index: int) -> None:
        await level.acquire(flow, 5)
        order.append(f"{flow}{index}")
        await asyncio.sleep(0)
        level.release()

    tasks = [asyncio.create_task(one(flow, i)) for i, flow in enumerate(requests)]
    await asyncio.sleep(0)
    level.release()
    await asyncio.gather(*tasks)
    return order


async def test_a_freed_seat_goes_to_the_next_flow_in_turn() -> None:
    # a's burst of four does not make b and c wait for all of it
    order = await _served_order(Level("l", 1), ["a", "a", "a", "a", "b", "c"])
    assert order == ["a0", "b4", "c5", "a1", "a2", "a3"]


async def test_a_level_runs_no_more_than_its_seats() -> None:
    level = Level("l", 3)
    running = peak = 0

    async def one() -> None:
        nonlocal running, peak
        await level.acquire("f", 5)
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        level.release()

    await asyncio.gather(*(one() for _ in range(20)))
    assert peak == 3 and level.executing == 0 and level.waiting == 0


async def test_a_request_that_gives_up_leaves_the_queue() -> None:
    level = Level("l", 1)
    await level.acquire("holder", 5)
    with pytest.raises(TimeoutError):
        await level.acquire("late", 0.05)
    assert level.waiting == 0 and not level.queues
    level.release()
    assert level.executing == 0
    await level.acquire("next", 0.05)  # the seat is free again, not lost
    assert level.executing == 1


async def test_a_seat_granted_to_a_request_cancelled_at_that_moment_is_passed_on() -> None:
    level = Level("l", 1)
    await level.acquire("holder", 5)
    first = asyncio.create_task(level.acquire("a", 5))
    second = asyncio.create_task(level.acquire("b", 5))
    await asyncio.sleep(0)
    level.release()  # the seat goes to a ...
    first.cancel()  # ... which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await first
    await asyncio.wait_for(second, 1)  # b got it
    assert level.executing == 1 and level.waiting == 0


async def test_flow_control_answers_429_after_the_wait_limit_and_counts_it() -> None:
    flow = FlowControl(1, 1, wait_limit=0.05)
    info = resource("list", "apps", "deployments")
    async with flow.seat("jane", [AUTH], info):
        with pytest.raises(APIError) as raised:
            async with flow.seat("joe", [AUTH], info):
                pass
        async with flow.seat("admin", ["system:masters"], info):  # exempt: never waits
            pass
        async with flow.seat("jane", [AUTH], resource("watch", "apps", "deployments")):  # long-running
            pass
    assert raised.value.code == 429 and raised.value.retry_after == 1
    assert raised.value.message == "Too many requests, please try again later."
    text = flow.render()
    rejected = 'apiserver_flowcontrol_rejected_requests_total{flow_schema="global-default",'
    assert f'{rejected}priority_level="global-default",reason="time-out"}} 1' in text
    assert 'apiserver_flowcontrol_nominal_limit_seats{priority_level="node-high"} 1' in text
    assert 'apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"} 1' in text
    assert 'apiserver_flowcontrol_current_executing_requests{priority_level="global-default"} 0' in text
