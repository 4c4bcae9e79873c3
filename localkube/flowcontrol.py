"""API Priority and Fairness, as kube-apiserver does it, for a server that is
one event loop.

Every request that is not long-running takes a seat of its priority level
before it is served and gives it back when answered. A level has a fixed
number of seats (its share of the server's limit, kube-apiserver's default
``nominalConcurrencyShares``); a request finding none waits in its flow's queue,
and a freed seat goes to the next flow in turn (round robin over the flows
with waiting requests: one busy client cannot starve the others of its
level). A request that waited longer than ``wait_limit`` is answered 429 with
``Retry-After: 1``, as kube-apiserver's are.

Why here: every executing request interleaves its steps on the one loop, so
without seats 1,000 agents' status writes make each turn of the loop seconds
long, and a leader's Lease renewal waits behind them until its deadline has
passed. With seats the loop runs at most the seated requests, and heartbeats
and leader election have levels of their own.

The classification follows kube-apiserver's default FlowSchemas (``exempt``,
``probes``, ``system-leader-election``, ``workload-leader-election``,
``system-node-high``, ``system-nodes``, ``kube-controller-manager``,
``kube-scheduler``, ``kube-system-service-accounts``, ``service-accounts``,
``global-default``, ``catch-all``), with two of localkube's own for Karmada's
pull-mode agents, which are to a Karmada control plane what kubelets are to a
cluster: ``karmada-agent-heartbeats`` (their Leases, level ``node-high``) and
``karmada-agents`` (the rest, level ``system``). Long-running requests
(watches, proxy, exec, attach, port-forward, logs) take no seat, as there.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from localkube.errors import APIError
from localkube.metrics import Histogram
from localkube.requestinfo import RequestInfo

# kube-apiserver's defaults for its two limits, whose sum is the server's concurrency limit
KUBE_MAX_REQUESTS_INFLIGHT = 400
KUBE_MAX_MUTATING_REQUESTS_INFLIGHT = 200
# localkube's defaults: every seat is a request interleaving on the one event loop
MAX_REQUESTS_INFLIGHT = 24
MAX_MUTATING_REQUESTS_INFLIGHT = 8
WAIT_LIMIT = 15.0  # seconds in a queue before 429 (kube-apiserver's request wait limit)
RETRY_AFTER = 1
TOO_MANY = "Too many requests, please try again later."

EXEMPT = "exempt"
# kube-apiserver's default priority levels and their nominalConcurrencyShares (exempt: no seats)
SHARES = {
    "system": 30,
    "node-high": 40,
    "leader-election": 10,
    "workload-high": 40,
    "workload-low": 100,
    "global-default": 20,
    "catch-all": 5,
}
LONG_RUNNING_VERBS = frozenset({"watch", "proxy"})
LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "proxy", "log", "portforward"})
PROBES = frozenset({"/healthz", "/readyz", "/livez"})
LEADER_ELECTION_RESOURCES = frozenset({("coordination.k8s.io", "leases"), ("", "endpoints"), ("", "configmaps")})
LEADER_ELECTION_VERBS = frozenset({"get", "create", "update"})
MASTERS = "system:masters"
NODES = "system:nodes"
SERVICE_ACCOUNTS = "system:serviceaccounts"
KUBE_SYSTEM_ACCOUNTS = "system:serviceaccount:kube-system:"
AGENTS = "system:karmada:agents"  # karmada.registration.identity.AGENTS_GROUP
# kube-apiserver's buckets for apiserver_flowcontrol_request_wait_duration_seconds
WAIT_BUCKETS = (0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0)


def long_running(info: RequestInfo) -> bool:
    """kube-apiserver's long-running check: these hold a connection open and take no seat."""
    return info.verb in LONG_RUNNING_VERBS or (info.is_resource and info.subresource in LONG_RUNNING_SUBRESOURCES)


def classify(user: str, groups: list[str], info: RequestInfo) -> tuple[str, str]:
    """(FlowSchema, priority level) of a request, the first schema in precedence order that matches."""
    if MASTERS in groups:
        return "exempt", EXEMPT
    if not info.is_resource and info.path in PROBES:
        return "probes", EXEMPT
    resource = (info.group, info.resource)
    electing = info.is_resource and resource in LEADER_ELECTION_RESOURCES and info.verb in LEADER_ELECTION_VERBS
    if electing and (
        user in ("system:kube-controller-manager", "system:kube-scheduler") or user.startswith(KUBE_SYSTEM_ACCOUNTS)
    ):
        return "system-leader-election", "leader-election"
    if electing and SERVICE_ACCOUNTS in groups:
        return "workload-leader-election", "leader-election"
    if NODES in groups and info.is_resource and resource in (("", "nodes"), ("coordination.k8s.io", "leases")):
        return "system-node-high", "node-high"
    if AGENTS in groups and info.is_resource and resource == ("coordination.k8s.io", "leases"):
        return "karmada-agent-heartbeats", "node-high"
    if NODES in groups:
        return "system-nodes", "system"
    if AGENTS in groups:
        return "karmada-agents", "system"
    if user == "system:kube-controller-manager":
        return "kube-controller-manager", "workload-high"
    if user == "system:kube-scheduler":
        return "kube-scheduler", "workload-high"
    if user.startswith(KUBE_SYSTEM_ACCOUNTS):
        return "kube-system-service-accounts", "workload-high"
    if SERVICE_ACCOUNTS in groups:
        return "service-accounts", "workload-low"
    if "system:authenticated" in groups or "system:unauthenticated" in groups:
        return "global-default", "global-default"
    return "catch-all", "catch-all"


def seats_of(limit: int) -> dict[str, int]:
    """Each level's seats: its share of the server's concurrency limit, rounded up (as there)."""
    total = sum(SHARES.values())
    return {level: max(1, math.ceil(limit * shares / total)) for level, shares in SHARES.items()}


class Level:
    """One priority level's seats and its flows' queues."""

    def __init__(self, name: str, seats: int) -> None:
        self.name = name
        self.seats = seats
        self.executing = 0
        self.queues: dict[str, deque[asyncio.Future[None]]] = {}
        self.turns: deque[str] = deque()  # flows with waiting requests, in round-robin order
        self.waiting = 0

    async def acquire(self, flow: str, wait_limit: float) -> None:
        if self.executing < self.seats and not self.waiting:
            self.executing += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue = self.queues.get(flow)
        if queue is None:
            queue = self.queues[flow] = deque()
            self.turns.append(flow)
        queue.append(waiter)
        self.waiting += 1
        try:
            async with asyncio.timeout(wait_limit):
                await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.release()  # granted the moment it gave up: pass the seat on
            else:
                self._forget(flow, waiter)
            raise

    def _forget(self, flow: str, waiter: asyncio.Future[None]) -> None:
        queue = self.queues.get(flow)
        if queue is None or waiter not in queue:
            return
        queue.remove(waiter)
        self.waiting -= 1
        if not queue:
            del self.queues[flow]
            self.turns.remove(flow)

    def release(self) -> None:
        """Give the seat back, or straight to the next flow's oldest waiting request."""
        while self.turns:
            flow = self.turns.popleft()
            queue = self.queues[flow]
            waiter = queue.popleft()
            self.waiting -= 1
            if queue:
                self.turns.append(flow)
            else:
                del self.queues[flow]
            if not waiter.done():
                waiter.set_result(None)  # the seat passes on: executing stays the same
                return
        self.executing -= 1


class FlowControl:
    """The seats of one server."""

    def __init__(
        self,
        max_requests_inflight: int = MAX_REQUESTS_INFLIGHT,
        max_mutating_requests_inflight: int = MAX_MUTATING_REQUESTS_INFLIGHT,
        wait_limit: float = WAIT_LIMIT,
    ) -> None:
        self.limit = max_requests_inflight + max_mutating_requests_inflight
        self.wait_limit = wait_limit
        self.levels = {name: Level(name, seats) for name, seats in seats_of(self.limit).items()}
        # per (priority level, FlowSchema)
        self.rejected: Counter[tuple[str, str]] = Counter()
        self.dispatched: Counter[tuple[str, str]] = Counter()
        self.waits: dict[tuple[str, str], Histogram] = {}

    @asynccontextmanager
    async def seat(self, user: str, groups: list[str], info: RequestInfo) -> AsyncIterator[None]:
        """Hold a seat of the request's level while the body runs (none for exempt or long-running
        requests); 429 after waiting ``wait_limit`` seconds for one."""
        if long_running(info):
            yield
            return
        schema, name = classify(user, groups, info)
        key = (name, schema)
        level = self.levels.get(name)
        if level is None:
            self.dispatched[key] += 1
            yield
            return
        started = time.monotonic()
        try:
            await level.acquire(user, self.wait_limit)
        except TimeoutError:
            self.rejected[key] += 1
            self._observe_wait(key, time.monotonic() - started)
            raise APIError(429, "TooManyRequests", TOO_MANY, retry_after=RETRY_AFTER) from None
        self._observe_wait(key, time.monotonic() - started)
        self.dispatched[key] += 1
        try:
            yield
        finally:
            level.release()

    def _observe_wait(self, key: tuple[str, str], seconds: float) -> None:
        histogram = self.waits.get(key)
        if histogram is None:
            histogram = self.waits[key] = Histogram(WAIT_BUCKETS)
        histogram.observe(seconds)

    def render(self) -> str:
        """kube-apiserver's flow-control series, in Prometheus' text format."""
        lines: list[str] = []

        def series(name: str, kind: str, text: str, samples: list[tuple[str, float]]) -> None:
            lines.extend([f"# HELP {name} {text}", f"# TYPE {name} {kind}"])
            lines.extend(f"{name}{{{labels}}} {value:g}" for labels, value in samples)

        levels = sorted(self.levels.items())
        series(
            "apiserver_flowcontrol_nominal_limit_seats",
            "gauge",
            "Nominal number of execution seats configured for each priority level",
            [(f'priority_level="{name}"', level.seats) for name, level in levels],
        )
        series(
            "apiserver_flowcontrol_current_executing_requests",
            "gauge",
            "Number of requests in any execution stage in the API Priority and Fairness subsystem",
            [(f'priority_level="{name}"', level.executing) for name, level in levels],
        )
        series(
            "apiserver_flowcontrol_current_inqueue_requests",
            "gauge",
            "Number of requests currently pending in queues of the API Priority and Fairness subsystem",
            [(f'priority_level="{name}"', level.waiting) for name, level in levels],
        )
        series(
            "apiserver_flowcontrol_dispatched_requests_total",
            "counter",
            "Number of requests executed by API Priority and Fairness subsystem",
            [(f'flow_schema="{s}",priority_level="{n}"', c) for (n, s), c in sorted(self.dispatched.items())],
        )
        series(
            "apiserver_flowcontrol_rejected_requests_total",
            "counter",
            "Number of requests rejected by API Priority and Fairness subsystem",
            [
                (f'flow_schema="{s}",priority_level="{n}",reason="time-out"', c)
                for (n, s), c in sorted(self.rejected.items())
            ],
        )
        name = "apiserver_flowcontrol_request_wait_duration_seconds"
        series(name, "histogram", "Length of time a request spent waiting in its queue", [])
        for (level, schema), histogram in sorted(self.waits.items()):
            lines += histogram.lines(name, f'flow_schema="{schema}",priority_level="{level}"')
        return "\n".join(lines) + "\n"
