"""The cluster proxy from outside: what it adds to a request, how many it carries, whether
held streams stall the rest, a large watch, and the agent's memory per tunnel stream.

Run: ``python -m benchmarks.proxy_bench`` (about two minutes; ``--quick`` for a small run of
about 40 s). A sandbox (``karmada.sandbox``: two pull members, one simulated node each, no
webhook) comes up in a temporary directory and is taken down at the end, also on failure.
member1's agent keeps its tunnel (``--cluster-proxy-server``); member2's agent is restarted
without it, as the baseline for the agent's memory. Every request through the proxy is
``<proxy>/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/<path>`` with the control
plane's admin certificate (``karmada.config``), so it goes caller -> control plane (TLS,
authentication, a SubjectAccessReview cached 10 s) -> the agent's tunnel (HTTP/2 over one
WebSocket) -> the agent -> member1's API server; "direct" is the same request to member1's
API server with ``members.config``'s certificate. Clients are aiohttp sessions in this
process, over TLS.

1. ``get_*``: ``--gets`` sequential GETs of ``/api/v1/namespaces/default`` on one kept-alive
   connection each way, proxy and direct alternating (after a warm-up); p50/p99 and what the
   proxy adds (proxy minus direct at each percentile). Goal: added p99 under 5 ms on loopback.
2. ``load_*``: ``--clients`` concurrent clients (a connection each) GETting the same for
   ``--seconds`` seconds, through the proxy, then direct: requests/s and p99.
3. ``logs_*``: ``--log-streams`` concurrent ``pods/log?follow=true&tailLines=0`` streams
   through the proxy (one connection each) of a simulated container that writes a line every
   5 s; while they are held open, ``--gets`` more GETs alternate proxy/direct as in (1). Every
   stream must receive new lines; ``tick_spread`` is, per log line, the time between the first
   and the last stream receiving it (a stalled stream shows as a large spread).
4. ``watch_*``: a watch on ConfigMaps of an empty namespace through the proxy, one direct, and
   one through the proxy that is opened but not read (held) until the end; then
   ``--watch-events`` ConfigMaps created directly in member1 by ``--writers`` concurrent
   writers. Time from the first create to the last ADDED event, per watch, and events/s; the
   held watch is read afterwards (are its events all there?).
5. ``mem_*``: RSS (from /proc) of member1's agent with its tunnel idle against member2's agent
   without a tunnel (both restarted together, then idle ``--settle`` seconds; the median of 5
   samples); then ``--idle-streams`` idle watches held open through the proxy, twice (opened,
   held ``--hold`` seconds, closed): the agent's growth per open stream in KiB, its growth
   while they are held idle, what is left after they close, and its open file descriptors
   (each stream is one connection from the agent to its member). The control plane's RSS
   beside it. Measured first, before the other parts touch member1's agent.

Everything shares the machine's cores: the client (this process), the control plane, the
agent and both API servers. The load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import ssl
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from karmada.clusterproxy.endpoint import discover
from karmada.clusterproxy.kubeconfig import load_kubeconfigs, proxy_kubeconfig
from karmada.kube import ClusterConfig, KubeClient, from_kubeconfig
from karmada.kube.config import from_kubeconfig_dict
from karmada.kube.resources import CONFIGMAPS, NAMESPACES, PODS
from karmada.sandbox.processes import ProcessRecord, start, stop
from karmada.sandbox.sandbox import Sandbox, SandboxOptions, agent_name, down, up

MEMBER = "member1"  # with the tunnel: every proxied request goes here
BASELINE = "member2"  # its agent restarted without --cluster-proxy-server
GET_PATH = "/api/v1/namespaces/default"
LOGGER_POD = "proxy-bench-logger"
IDLE_NAMESPACE = "proxy-bench-idle"
WATCH_NAMESPACE = "proxy-bench-watch"
TUNNEL_CONNECTED = f"cluster proxy tunnel of {MEMBER}: connected to"
LOG_INTERVAL = 5.0  # localkube's simulated containers: a line every 5 s
WARMUP = 50
Results = dict[str, float]


def say(line: str) -> None:
    print(f"[proxy_bench] {line}", file=sys.stderr, flush=True)


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def program_pid(record: ProcessRecord) -> int:
    """The program's pid (``record.pid`` is its supervisor's)."""
    pid = record.program_pid()
    if pid is None:
        raise RuntimeError(f"{record.name} has no program pid")
    return pid


async def median_rss_kib(pid: int, samples: int = 5, every: float = 0.5) -> float:
    values = []
    for index in range(samples):
        if index:
            await asyncio.sleep(every)
        values.append(rss_kib(pid))
    return float(statistics.median(values))


@dataclass
class Target:
    """One way to member1's API server: its base URL and TLS (with the client certificate)."""

    name: str
    base: str
    context: ssl.SSLContext

    def session(self, limit: int) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(ssl=self.context, limit=limit)
        return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None))

    def url(self, path: str) -> str:
        return self.base + path


@dataclass
class Bench:
    sandbox: Sandbox
    proxy: Target
    direct: Target
    member: ClusterConfig
    results: Results = field(default_factory=dict)
    samples: int = 5  # RSS samples, their median
    sample_every: float = 0.5
    log_lines: int = 2  # new lines every log stream must receive
    pause: float = 1.0  # seconds for the processes to take in a change before RSS is read

    def record(self, name: str) -> ProcessRecord:
        return next(p for p in self.sandbox.processes if p.name == name)


# -- the sandbox ---------------------------------------------------------------------------------


async def targets(sandbox: Sandbox) -> tuple[Target, Target, ClusterConfig]:
    """The proxy as ``kubectl karmada proxy-config member1`` builds it (the endpoint from the
    karmada-system/karmada-cluster-proxy ConfigMap), and member1 directly."""
    control_plane = from_kubeconfig(sandbox.karmada_config)
    async with KubeClient(control_plane, timeout=10) as client:
        endpoint = await discover(client)
    if endpoint is None:
        raise RuntimeError("the sandbox published no cluster proxy")
    kubeconfig, base = load_kubeconfigs(str(sandbox.karmada_config))
    proxied = from_kubeconfig_dict(proxy_kubeconfig(kubeconfig, base, None, MEMBER, endpoint), base=base)
    member = from_kubeconfig(sandbox.members_config, context=MEMBER)
    proxy = Target("proxy", proxied.server.rstrip("/"), proxied.ssl_context())
    direct = Target("direct", member.server.rstrip("/"), member.ssl_context())
    return proxy, direct, member


async def restart_agents(sandbox: Sandbox, timeout: float = 60.0) -> None:
    """Both agents stopped and started again together: member1's as it was, member2's without
    ``--cluster-proxy-server``; returns once member1's agent says its tunnel is connected and
    the control plane says it has it (no request sent: that would build the agent's client
    of its member before the idle figure)."""
    names = [agent_name(MEMBER), agent_name(BASELINE)]
    old = {p.name: p for p in sandbox.processes if p.name in names}
    controlplane = next(p for p in sandbox.processes if p.name == "karmada-controlplane")
    waits = [
        (Path(old[names[0]].log), TUNNEL_CONNECTED),
        (Path(controlplane.log), f"cluster proxy: tunnel of {MEMBER} open"),
    ]
    offsets = [log.stat().st_size for log, _ in waits]
    await asyncio.to_thread(stop, list(old.values()))
    for name in names:
        record = old[name]
        args = record.args
        if name == agent_name(BASELINE):
            args = [a for a in args if not a.startswith("--cluster-proxy-server")]
            if len(args) == len(record.args):
                raise RuntimeError(f"{name} was started without --cluster-proxy-server: nothing to compare")
        started = await asyncio.to_thread(start, name, args, Path(record.log), Path(record.run_dir))
        sandbox.processes[sandbox.processes.index(record)] = started
        sandbox.save()
    deadline = time.monotonic() + timeout
    for (log, marker), offset in zip(waits, offsets, strict=True):
        while marker not in log.read_bytes()[offset:].decode(errors="replace"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {marker!r} in {log} within {timeout:g}s of the agents' restart")
            await asyncio.sleep(0.2)


async def proxy_ready(proxy: Target, timeout: float = 60.0) -> None:
    """A GET through the proxy answers 200 (the control plane has the tunnel)."""
    deadline = time.monotonic() + timeout
    async with proxy.session(1) as session:
        while True:
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(proxy.url(GET_PATH)) as response:
                    await response.read()
                    if response.status == 200:
                        return
            if time.monotonic() > deadline:
                raise RuntimeError(f"no answer 200 through the proxy within {timeout:g}s")
            await asyncio.sleep(0.2)


# -- 1 and 3: sequential GETs --------------------------------------------------------------------


async def alternating_gets(bench: Bench, count: int, warmup: int = WARMUP) -> tuple[list[float], list[float]]:
    """``count`` GETs each way, one kept-alive connection each, proxy and direct alternating;
    milliseconds per request (the body read)."""
    timings: dict[str, list[float]] = {"proxy": [], "direct": []}
    async with bench.proxy.session(1) as proxied, bench.direct.session(1) as direct:
        pairs = [(bench.proxy, proxied), (bench.direct, direct)]
        for index in range(warmup + count):
            for target, session in pairs:
                began = time.perf_counter()
                async with session.get(target.url(GET_PATH)) as response:
                    await response.read()
                    if response.status != 200:
                        raise RuntimeError(f"GET through {target.name}: {response.status}")
                if index >= warmup:
                    timings[target.name].append((time.perf_counter() - began) * 1000)
    return timings["proxy"], timings["direct"]


def latency_rows(results: Results, prefix: str, proxied: list[float], direct: list[float]) -> None:
    for label, fraction in (("p50", 0.50), ("p99", 0.99)):
        p, d = percentile(proxied, fraction), percentile(direct, fraction)
        results[f"{prefix}_proxy_{label}_ms"] = p
        results[f"{prefix}_direct_{label}_ms"] = d
        results[f"{prefix}_added_{label}_ms"] = p - d


async def part_get_latency(bench: Bench, count: int) -> None:
    say(f"1. {count} sequential GETs each way")
    proxied, direct = await alternating_gets(bench, count)
    latency_rows(bench.results, "get", proxied, direct)
    bench.results["get_count"] = count


# -- 2: concurrent GETs --------------------------------------------------------------------------


async def load(target: Target, clients: int, seconds: float) -> tuple[float, list[float]]:
    timings: list[float] = []
    async with target.session(clients) as session:

        async def client(stop_at: float, record: bool) -> None:
            while time.monotonic() < stop_at:
                began = time.perf_counter()
                async with session.get(target.url(GET_PATH)) as response:
                    await response.read()
                    if response.status != 200:
                        raise RuntimeError(f"GET through {target.name}: {response.status}")
                if record:
                    timings.append((time.perf_counter() - began) * 1000)

        await asyncio.gather(*(client(time.monotonic() + 1.0, False) for _ in range(clients)))  # connections up
        began = time.monotonic()
        await asyncio.gather(*(client(began + seconds, True) for _ in range(clients)))
        elapsed = time.monotonic() - began
    return len(timings) / elapsed, timings


async def part_load(bench: Bench, clients: int, seconds: float) -> None:
    say(f"2. {clients} concurrent clients for {seconds:g}s, proxy then direct")
    for target in (bench.proxy, bench.direct):
        rate, timings = await load(target, clients, seconds)
        bench.results[f"load_{target.name}_requests_per_s"] = rate
        bench.results[f"load_{target.name}_p99_ms"] = percentile(timings, 0.99)
    bench.results["load_clients"] = clients
    bench.results["load_ratio_proxy_to_direct"] = (
        bench.results["load_proxy_requests_per_s"] / bench.results["load_direct_requests_per_s"]
    )


# -- 3: held log streams -------------------------------------------------------------------------


async def running_pod(member: ClusterConfig, name: str, timeout: float = 60.0) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    async with KubeClient(member) as client:
        if await client.get_or_none(PODS, name, "default") is None:
            await client.create(PODS, body, "default")
        deadline = time.monotonic() + timeout
        while ((await client.get(PODS, name, "default")).get("status") or {}).get("phase") != "Running":
            if time.monotonic() > deadline:
                raise RuntimeError(f"pod {name} not Running after {timeout:g}s")
            await asyncio.sleep(0.2)


async def part_log_streams(bench: Bench, streams: int, gets: int) -> None:
    say(f"3. {streams} logs -f streams through the proxy, {gets} GETs each way meanwhile")
    await running_pod(bench.member, LOGGER_POD)
    path = f"/api/v1/namespaces/default/pods/{LOGGER_POD}/log?follow=true&tailLines=0"
    received: list[dict[str, float]] = [{} for _ in range(streams)]  # line -> when it arrived
    opened = asyncio.Event()
    ready = 0
    async with bench.proxy.session(0) as session:

        async def follow(index: int) -> None:
            nonlocal ready
            async with session.get(bench.proxy.url(path)) as response:
                if response.status != 200:
                    raise RuntimeError(f"logs -f through the proxy: {response.status} {await response.text()}")
                ready += 1
                if ready == streams:
                    opened.set()
                async for line in response.content:
                    received[index][line.decode().strip()] = time.monotonic()

        began = time.monotonic()
        tasks = [asyncio.create_task(follow(i)) for i in range(streams)]
        try:
            waiting = asyncio.create_task(opened.wait())
            done, _ = await asyncio.wait([waiting, *tasks], timeout=60, return_when=asyncio.FIRST_COMPLETED)
            if waiting not in done:
                for task in done:
                    task.result()  # its error
                raise RuntimeError(f"only {ready} of {streams} log streams opened in 60 s")
            bench.results["logs_open_all_s"] = time.monotonic() - began
            held_from = time.monotonic()
            proxied, direct = await alternating_gets(bench, gets, warmup=10)
            latency_rows(bench.results, "logs_held_get", proxied, direct)
            # every stream a new line: at most one interval after the last opened, plus slack
            deadline = held_from + bench.log_lines * LOG_INTERVAL + 2
            while time.monotonic() < deadline and not all(len(lines) >= bench.log_lines for lines in received):
                await asyncio.sleep(0.2)
            for task in tasks:
                if task.done():
                    task.result()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    counts = [len(lines) for lines in received]
    spreads = []
    for line in set().union(*received):
        times = [lines[line] for lines in received if line in lines]
        if len(times) == streams:
            spreads.append((max(times) - min(times)) * 1000)
    bench.results["logs_streams"] = streams
    bench.results["logs_streams_with_new_lines"] = sum(1 for c in counts if c >= 1)
    bench.results["logs_min_new_lines_per_stream"] = min(counts)
    bench.results["logs_tick_spread_max_ms"] = max(spreads) if spreads else float("nan")


# -- 4: a watch of many events -------------------------------------------------------------------


async def namespace(member: ClusterConfig, name: str) -> None:
    async with KubeClient(member) as client:
        if await client.get_or_none(NAMESPACES, name) is None:
            await client.create(NAMESPACES, {"metadata": {"name": name}})


async def part_watch(bench: Bench, events: int, writers: int) -> None:
    say(f"4. a watch of {events} ADDED events through the proxy and direct ({writers} writers)")
    await namespace(bench.member, WATCH_NAMESPACE)
    path = f"/api/v1/namespaces/{WATCH_NAMESPACE}/configmaps"
    async with bench.direct.session(1) as session, session.get(bench.direct.url(path)) as response:
        version = (await response.json())["metadata"]["resourceVersion"]
    query = f"{path}?watch=true&timeoutSeconds=900&resourceVersion={version}"
    last: dict[str, float] = {}
    counts = {"proxy": 0, "direct": 0}
    agent = program_pid(bench.record(agent_name(MEMBER)))
    async with bench.proxy.session(0) as proxied, bench.direct.session(0) as direct:
        held = await proxied.get(bench.proxy.url(query))  # opened, not read until the end
        responses = {
            "proxy": await proxied.get(bench.proxy.url(query)),
            "direct": await direct.get(bench.direct.url(query)),
        }
        for response in [held, *responses.values()]:
            if response.status != 200:
                raise RuntimeError(f"watch: {response.status} {await response.text()}")

        async def read(name: str, response: aiohttp.ClientResponse) -> None:
            async for line in response.content:
                if not line.strip():
                    continue
                event = json.loads(line)
                if event.get("type") == "ADDED":
                    counts[name] += 1
                    if counts[name] == events:
                        last[name] = time.monotonic()
                        return

        readers = [asyncio.create_task(read(name, response)) for name, response in responses.items()]
        rss_before = rss_kib(agent)
        try:
            async with KubeClient(bench.member) as client:
                began = time.monotonic()

                async def writer(first: int) -> None:
                    for index in range(first, events, writers):
                        body = {"metadata": {"name": f"cm-{index}"}, "data": {"index": str(index)}}
                        await client.create(CONFIGMAPS, body, WATCH_NAMESPACE)

                await asyncio.gather(*(writer(i) for i in range(writers)))
                written = time.monotonic()
            await asyncio.wait(readers, timeout=max(60.0, events / 50))
            for task in readers:
                if task.done():
                    task.result()
            missing = [name for name in responses if name not in last]
            if missing:
                raise RuntimeError(f"watch {missing}: {[counts[n] for n in missing]} of {events} ADDED events")
            bench.results["watch_agent_rss_growth_held_kib"] = rss_kib(agent) - rss_before
            # the held watch, read now: its events all there?
            held_count = 0
            with contextlib.suppress(TimeoutError, aiohttp.ClientError):
                async with asyncio.timeout(max(30.0, events / 200)):
                    async for line in held.content:
                        if line.strip() and json.loads(line).get("type") == "ADDED":
                            held_count += 1
                            if held_count == events:
                                break
        finally:
            for task in readers:
                task.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
            for response in [held, *responses.values()]:
                response.close()
    bench.results["watch_events"] = events
    bench.results["watch_writes_per_s"] = events / (written - began)
    for name in responses:
        bench.results[f"watch_{name}_all_s"] = last[name] - began
        bench.results[f"watch_{name}_events_per_s"] = events / (last[name] - began)
        bench.results[f"watch_{name}_last_after_writes_ms"] = (last[name] - written) * 1000
    bench.results["watch_held_events_received"] = held_count
    # a new watch without resourceVersion starts with an ADDED event per existing ConfigMap: the
    # rate a watch is carried at when the writers are not what limits it, proxy then direct
    for target in (bench.proxy, bench.direct):
        bench.results[f"watch_replay_{target.name}_events_per_s"] = events / await replay(target, path, events)


async def replay(target: Target, path: str, events: int) -> float:
    """Seconds from opening a watch without resourceVersion to its ``events``-th ADDED event."""
    count = 0
    async with target.session(1) as session:
        began = time.monotonic()
        async with asyncio.timeout(max(60.0, events / 100)), session.get(target.url(f"{path}?watch=true")) as response:
            if response.status != 200:
                raise RuntimeError(f"watch through {target.name}: {response.status}")
            async for line in response.content:
                if line.strip() and json.loads(line).get("type") == "ADDED":
                    count += 1
                    if count == events:
                        return time.monotonic() - began
    raise RuntimeError(f"watch through {target.name}: {count} of {events} ADDED events, then it ended")


# -- 5: memory -----------------------------------------------------------------------------------


async def idle_streams(proxy: Target, count: int) -> tuple[aiohttp.ClientSession, list[aiohttp.ClientResponse]]:
    session = proxy.session(0)
    query = f"/api/v1/namespaces/{IDLE_NAMESPACE}/configmaps?watch=true&timeoutSeconds=900"
    responses = await asyncio.gather(*(session.get(proxy.url(query)) for _ in range(count)))
    for response in responses:
        if response.status != 200:
            raise RuntimeError(f"idle watch: {response.status}")
    return session, list(responses)


async def part_memory(bench: Bench, streams: int, settle: float, hold: float) -> None:
    say(f"5. agents' memory: restarting both agents, {settle:g}s idle, then {streams} idle streams twice")
    restarted = time.monotonic()
    await restart_agents(bench.sandbox)
    say(f"   agents restarted, member1's tunnel up again in {time.monotonic() - restarted:.1f}s")
    await asyncio.sleep(settle)
    agent = program_pid(bench.record(agent_name(MEMBER)))
    baseline = program_pid(bench.record(agent_name(BASELINE)))
    controlplane = program_pid(bench.record("karmada-controlplane"))
    r = bench.results

    async def rss(pid: int = agent) -> float:
        return await median_rss_kib(pid, bench.samples, bench.sample_every)

    tunnel_idle, no_tunnel = await asyncio.gather(rss(agent), rss(baseline))
    r["mem_agent_tunnel_idle_mib"] = tunnel_idle / 1024
    r["mem_agent_no_tunnel_mib"] = no_tunnel / 1024
    r["mem_agent_tunnel_cost_mib"] = (tunnel_idle - no_tunnel) / 1024
    # the first request through the tunnel builds the agent's client of its member: before the count
    await namespace(bench.member, IDLE_NAMESPACE)
    await proxy_ready(bench.proxy)
    await asyncio.sleep(bench.pause)
    before = await rss()
    fds_before = open_fds(agent)
    r["mem_idle_streams"] = streams
    async with KubeClient(bench.member) as member:
        for round_ in (1, 2):
            start_rss, cp_start = await rss(), rss_kib(controlplane)
            session, responses = await idle_streams(bench.proxy, streams)
            try:
                await asyncio.sleep(bench.pause)
                opened, cp_opened = await rss(), rss_kib(controlplane)
                r[f"mem_r{round_}_agent_fds_open"] = open_fds(agent) - fds_before
                await asyncio.sleep(hold)
                held = await rss()
            finally:
                for response in responses:
                    response.close()
                await session.close()
            await asyncio.sleep(2 * bench.pause)
            closed = await rss()
            fds_closed = open_fds(agent) - fds_before
            # two events in the idle namespace: the first makes the control plane's write to the gone
            # caller fail (it resets the stream), the second the agent's write to the reset stream
            for event in ("a", "b"):
                await member.create(CONFIGMAPS, {"metadata": {"name": f"wake-{round_}-{event}"}}, IDLE_NAMESPACE)
                await asyncio.sleep(bench.pause / 2)
            await asyncio.sleep(bench.pause)
            woken = await rss()
            r[f"mem_r{round_}_agent_kib_per_open_stream"] = (opened - start_rss) / streams
            r[f"mem_r{round_}_cp_kib_per_open_stream"] = (cp_opened - cp_start) / streams
            r[f"mem_r{round_}_agent_growth_held_{hold:g}s_kib"] = held - opened
            r[f"mem_r{round_}_agent_fds_left_after_close"] = fds_closed
            r[f"mem_r{round_}_agent_fds_left_after_2_events"] = open_fds(agent) - fds_before
            r[f"mem_r{round_}_agent_rss_left_after_close_kib"] = closed - before
            r[f"mem_r{round_}_agent_rss_left_after_2_events_kib"] = woken - before


# -- the run -------------------------------------------------------------------------------------


@dataclass
class Settings:
    gets: int
    clients: int
    seconds: float
    log_streams: int
    watch_events: int
    writers: int
    idle_streams: int
    settle: float
    hold: float
    quick: bool


def settings_of(args: argparse.Namespace) -> Settings:
    quick = args.quick
    return Settings(
        gets=args.gets if args.gets is not None else (100 if quick else 500),
        clients=args.clients if args.clients is not None else (8 if quick else 32),
        seconds=args.seconds if args.seconds is not None else (2.0 if quick else 10.0),
        log_streams=args.log_streams if args.log_streams is not None else (10 if quick else 100),
        watch_events=args.watch_events if args.watch_events is not None else (500 if quick else 10_000),
        writers=args.writers,
        idle_streams=args.idle_streams if args.idle_streams is not None else (20 if quick else 100),
        settle=args.settle if args.settle is not None else (3.0 if quick else 20.0),
        hold=args.hold if args.hold is not None else (2.0 if quick else 10.0),
        quick=quick,
    )


async def run(settings: Settings, directory: Path) -> Results:
    options = SandboxOptions(directory=directory, members=[MEMBER, BASELINE], nodes_per_member=1, webhook=False)
    began = time.monotonic()
    say(f"local up in {directory}")
    sandbox = await up(options, lambda _: None)
    try:
        proxy, direct, member = await targets(sandbox)
        bench = Bench(sandbox, proxy, direct, member)
        if settings.quick:
            bench.samples, bench.sample_every, bench.log_lines, bench.pause = 3, 0.2, 1, 0.5
        bench.results["up_s"] = time.monotonic() - began
        parts: list[Callable[[], Awaitable[None]]] = [
            lambda: part_memory(bench, settings.idle_streams, settings.settle, settings.hold),
            lambda: part_get_latency(bench, settings.gets),
            lambda: part_load(bench, settings.clients, settings.seconds),
            lambda: part_log_streams(bench, settings.log_streams, settings.gets),
            lambda: part_watch(bench, settings.watch_events, settings.writers),
        ]
        for part in parts:
            part_began = time.monotonic()
            await part()
            say(f"   ({time.monotonic() - part_began:.1f}s)")
        dead = [p.name for p in sandbox.processes if not p.alive() or (p.state().get("restarts") or 0) > 0]
        bench.results["processes_restarted_or_gone"] = len(dead)
        bench.results["load_average_1m"] = os.getloadavg()[0]
        return bench.results
    finally:
        say("local down")
        down(sandbox, lambda _: None)


def table(results: Results) -> str:
    def fmt(value: float) -> str:
        return f"{value:12.3f}" if isinstance(value, float) else f"{value:12d}"

    r = results
    lines = [f"{key:44s}{fmt(value)}" for key, value in r.items()]
    added = r.get("get_added_p99_ms", float("nan"))
    lines.append(f"goal: added p99 under 5 ms on loopback: {'met' if added < 5.0 else 'NOT met'} ({added:.3f} ms;")
    lines.append(f"      {r.get('logs_held_get_added_p99_ms', float('nan')):.3f} ms with the log streams held)")
    held = max(r.get(k, 0.0) for k in r if k.startswith("mem_r") and "_growth_held_" in k)
    lines.append(
        f"memory: the idle tunnel {r.get('mem_agent_tunnel_cost_mib', float('nan')):.2f} MiB of agent RSS; "
        f"an open idle stream {r.get('mem_r1_agent_kib_per_open_stream', float('nan')):.0f} KiB, "
        f"growth while held at most {held:.0f} KiB in all"
    )
    opened = int(r.get("mem_r1_agent_fds_open", 0))
    left = int(r.get("mem_r1_agent_fds_left_after_close", 0))
    woken = int(r.get("mem_r1_agent_fds_left_after_2_events", 0))
    verdict = "released" if left <= 0 else f"NOT released: {left} of the {opened} new member connections still open"
    lines.append(f"        idle streams the caller closed: {verdict} (after 2 events in their namespace: {woken})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small numbers: a run of about 40 s")
    parser.add_argument("--gets", type=int, help="sequential GETs each way in (1) and (3) (500; quick 100)")
    parser.add_argument("--clients", type=int, help="concurrent clients in (2) (32; quick 8)")
    parser.add_argument("--seconds", type=float, help="seconds of (2), each way (10; quick 2)")
    parser.add_argument("--log-streams", type=int, help="logs -f streams held in (3) (100; quick 10)")
    parser.add_argument("--watch-events", type=int, help="ConfigMaps created for the watch in (4) (10000; quick 500)")
    parser.add_argument("--writers", type=int, default=16, help="concurrent writers in (4) (16)")
    parser.add_argument("--idle-streams", type=int, help="idle watches held in (5) (100; quick 20)")
    parser.add_argument("--settle", type=float, help="seconds the restarted agents idle before (5) (20; quick 3)")
    parser.add_argument("--hold", type=float, help="seconds the idle streams are held in (5) (10; quick 2)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures to FILE as JSON")
    args = parser.parse_args()
    settings = settings_of(args)
    with tempfile.TemporaryDirectory(prefix="proxy-bench-") as tmp:
        results = asyncio.run(run(settings, Path(tmp)))
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
