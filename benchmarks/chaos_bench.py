"""Chaos run: seeded faults against a sandbox under churn, then an audit of every member.

A sandbox of ``--members`` members; ``--deployments`` Deployments, each with a ConfigMap it
mounts (propagated by ``propagateDeps``), under three PropagationPolicies: Divided, Duplicated,
and one with cluster failover (Gracefully) on a single cluster. Then ``--rounds`` rounds, each:
``--churn`` seconds of Deployments created, scaled, updated (template and ConfigMap) and
deleted, with one fault from the seeded plan (:func:`karmada.sandbox.chaos.plan`) at a random
moment of it: the control plane, the webhook, an agent, a member's localkube or the control
plane's localkube is SIGKILLed (its supervisor restarts it) or SIGSTOPped for 5-60 s (times
``--hold-scale``) and continued; or an agent is partitioned: every agent reaches the control
plane through a loopback TCP proxy of this process (its ``--karmada-kubeconfig`` points there),
and a partition closes that agent's connections and refuses new ones for the hold. After the
churn and the fault, the round waits for convergence: every template bound and scheduled, and
the audit of the members clean (no lost, duplicated, stale or orphaned copy); the time from
the fault's end to that is the round's convergence time. A program not running again
``--restart-timeout`` seconds after its fault is one that needed a manual restart: the bench
says so and restarts it itself (SIGKILL of a stopped one is not that: SIGCONT comes first).

A clock fault steps one member agent's wall clock an hour ahead for the hold, then back to
true time (an hour back): every agent runs under a :class:`karmada.sandbox.clock.SteppedClock`
(libfaketime; ``--no-clock`` without it, which also changes the seeded plan). The fault holds
until the agent has renewed its Lease on the stepped clock (30 s at most), and for its hold
at least. A round has converged only once every Cluster is
Ready again, too, so a cluster judged silent after a step (or any fault) shows as slow or
unconverged, not as a clean audit of workloads that failed over.

Run: ``python -m benchmarks.chaos_bench [--members 5 --deployments 500 --rounds 50 --seed 1]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import random
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from karmada.api.keys import NAMESPACE_KARMADA_CLUSTER
from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.client import KubeError
from karmada.kube.resources import CLUSTERS, CONFIGMAPS, DEPLOYMENTS, LEASES, NAMESPACES, RESOURCE_BINDINGS, Resource
from karmada.private_files import write_private
from karmada.sandbox.chaos import Audit, Fault, Have, Template, audit, not_ready, percentile, plan, unbound, wanted
from karmada.sandbox.clock import INSTALL_HINT, SteppedClock, library
from karmada.sandbox.processes import ProcessRecord, start, stop
from karmada.sandbox.sandbox import (
    CONTROL_PLANE,
    CONTROLLER_MANAGER,
    WEBHOOK,
    Sandbox,
    SandboxOptions,
    agent_name,
    down,
    up,
)
from karmada.timestamps import parse_time, utcnow

POLICIES = Resource("policy.karmada.io", "v1alpha1", "propagationpolicies", "PropagationPolicy", True)
NAMESPACE = "chaos"
LABEL = "chaos.bench/policy"
VERSION = "chaos.bench/version"
KINDS = ("divided", "duplicated", "failover")


@dataclass
class Options:
    members: int = 5
    deployments: int = 500
    rounds: int = 50
    seed: int = 1
    churn: float = 20.0  # seconds of churn a round
    hold_scale: float = 1.0  # times the 5-60 s of a stop or a partition
    converge_timeout: float = 300.0
    restart_timeout: float = 60.0
    partition: bool = True
    clock: bool = True
    directory: Path | None = None
    say: Callable[[str], None] = print


@dataclass
class RoundResult:
    fault: Fault
    converged: float | None  # seconds after the fault ended; None: not within the timeout
    audit: Audit
    unbound: list[Template]
    manual: list[str]
    not_ready: list[str] = field(default_factory=list)


@dataclass
class Result:
    rounds: list[RoundResult] = field(default_factory=list)
    final: Audit = field(default_factory=Audit)
    final_unbound: list[Template] = field(default_factory=list)
    final_not_ready: list[str] = field(default_factory=list)

    @property
    def manual(self) -> list[str]:
        return [name for r in self.rounds for name in r.manual]


# -- the workload ---------------------------------------------------------------------------


def _policy(kind: str, members: list[str]) -> dict[str, Any]:
    placement: dict[str, Any] = {"clusterAffinity": {"clusterNames": members}}
    spec: dict[str, Any] = {
        "propagateDeps": True,
        "resourceSelectors": [
            {"apiVersion": "apps/v1", "kind": "Deployment", "labelSelector": {"matchLabels": {LABEL: kind}}}
        ],
    }
    if kind == "divided":
        weights = {"staticWeightList": [{"targetCluster": {"clusterNames": [m]}, "weight": 1} for m in members]}
        placement["replicaScheduling"] = {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": weights,
        }
    elif kind == "duplicated":
        placement["replicaScheduling"] = {"replicaSchedulingType": "Duplicated"}
    else:
        placement["replicaScheduling"] = {"replicaSchedulingType": "Duplicated"}
        placement["spreadConstraints"] = [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}]
        spec["failover"] = {"cluster": {"purgeMode": "Gracefully"}}
    spec["placement"] = placement
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": f"chaos-{kind}", "namespace": NAMESPACE},
        "spec": spec,
    }


def _config_map(name: str, version: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-config", "namespace": NAMESPACE, "labels": {"chaos.bench/object": "true"}},
        "data": {"version": str(version)},
    }


def _deployment(name: str, kind: str, replicas: int, version: int) -> dict[str, Any]:
    labels = {"app": name, LABEL: kind, "chaos.bench/object": "true"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels, "annotations": {VERSION: str(version)}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "10m"}}}],
                    "volumes": [{"name": "config", "configMap": {"name": f"{name}-config"}}],
                },
            },
        },
    }


class Workload:
    """The Deployments (and ConfigMaps) of the run, changed at random; the truth is the
    control plane's, so a write lost to a fault is no difference in the audit."""

    def __init__(self, client: KubeClient, rng: random.Random) -> None:
        self.client = client
        self.rng = rng
        self.names: dict[str, int] = {}  # name -> its version
        self.next = 0
        self.errors = 0

    async def create(self) -> None:
        name = f"app-{self.next}"
        kind = KINDS[self.next % len(KINDS)]
        self.next += 1
        await self.client.create(CONFIGMAPS, _config_map(name, 1), NAMESPACE)
        await self.client.create(DEPLOYMENTS, _deployment(name, kind, self.rng.randint(1, 6), 1), NAMESPACE)
        self.names[name] = 1

    async def step(self) -> None:
        """One random change; a refused write (a server down, a timeout) counts as an error."""
        try:
            choice = self.rng.random()
            if not self.names or choice < 0.2:
                await self.create()
                return
            name = self.rng.choice(sorted(self.names))
            if choice < 0.5:
                await self.client.patch(DEPLOYMENTS, name, {"spec": {"replicas": self.rng.randint(1, 6)}}, NAMESPACE)
            elif choice < 0.8:
                version = self.names[name] + 1
                await self.client.patch(CONFIGMAPS, f"{name}-config", {"data": {"version": str(version)}}, NAMESPACE)
                annotations = {"metadata": {"annotations": {VERSION: str(version)}}}
                await self.client.patch(DEPLOYMENTS, name, annotations, NAMESPACE)
                self.names[name] = version
            else:
                del self.names[name]
                await self.client.delete(DEPLOYMENTS, name, NAMESPACE)
                await self.client.delete(CONFIGMAPS, f"{name}-config", NAMESPACE)
        except (TimeoutError, KubeError, OSError):
            self.errors += 1


async def _list(client: KubeClient, resource: Resource, timeout: float = 20.0) -> list[dict[str, Any]]:
    result = await asyncio.wait_for(client.list(resource, NAMESPACE), timeout)
    items: list[dict[str, Any]] = result.get("items") or []
    return items


def _version(obj: dict[str, Any]) -> str:
    if obj["kind"] == "ConfigMap":
        return str((obj.get("data") or {}).get("version"))
    return str(((obj.get("metadata") or {}).get("annotations") or {}).get(VERSION))


async def _templates(client: KubeClient) -> tuple[dict[Template, str], dict[Template, int]]:
    versions: dict[Template, str] = {}
    replicas: dict[Template, int] = {}
    for resource in (DEPLOYMENTS, CONFIGMAPS):
        for obj in await _list(client, resource):
            if (obj["metadata"].get("labels") or {}).get("chaos.bench/object") != "true":
                continue
            if obj["metadata"].get("deletionTimestamp"):
                continue
            key = (resource.kind, NAMESPACE, obj["metadata"]["name"])
            versions[key] = _version({**obj, "kind": resource.kind})
            if resource is DEPLOYMENTS:
                replicas[key] = int((obj.get("spec") or {}).get("replicas") or 0)
    # a ConfigMap whose Deployment is gone (or whose create a fault refused) is required by
    # nothing: no policy selects it, so it has no binding and no member may hold it
    required = {(CONFIGMAPS.kind, NAMESPACE, f"{name}-config") for kind, _, name in replicas}
    versions = {t: v for t, v in versions.items() if t[0] != CONFIGMAPS.kind or t in required}
    return versions, replicas


async def check(karmada: KubeClient, members: dict[str, KubeClient]) -> tuple[Audit, list[Template]]:
    """The audit of every member against the bindings, and the templates not yet bound."""
    versions, replicas = await _templates(karmada)
    bindings = await _list(karmada, RESOURCE_BINDINGS)
    have: dict[tuple[str, str, str, str], Have] = {}
    for cluster, client in members.items():
        for resource in (DEPLOYMENTS, CONFIGMAPS):
            for obj in await _list(client, resource):
                if (obj["metadata"].get("labels") or {}).get("chaos.bench/object") != "true":
                    continue
                count = int((obj.get("spec") or {}).get("replicas") or 0) if resource is DEPLOYMENTS else None
                have[(cluster, resource.kind, NAMESPACE, obj["metadata"]["name"])] = Have(
                    _version({**obj, "kind": resource.kind}), count
                )
    return audit(wanted(bindings, versions), have, set(versions)), unbound(bindings, versions, replicas)


# -- faults ---------------------------------------------------------------------------------


class PartitionProxy:
    """A loopback TCP relay between one agent and the control plane's API server that can be
    cut: a cut closes every relayed connection and refuses new ones until healed."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.cut = False
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> PartitionProxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._relay(reader, writer)
        except asyncio.CancelledError:
            pass  # closed with the proxy: nothing to report
        finally:
            self._tasks.discard(task)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut:
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (OSError, asyncio.IncompleteReadError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers -= {writer, up_writer}

    def sever(self) -> None:
        self.cut = True
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    def heal(self) -> None:
        self.cut = False

    async def close(self) -> None:
        self.sever()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


def _record(sandbox: Sandbox, name: str) -> ProcessRecord:
    return next(p for p in sandbox.processes if p.name == name)


def _process_of(fault: Fault) -> str:
    return {
        "controlplane": CONTROLLER_MANAGER,
        "webhook": WEBHOOK,
        "karmada-localkube": CONTROL_PLANE,
        "agent": agent_name(fault.member or ""),
        "member-localkube": fault.member or "",
        "partition": agent_name(fault.member or ""),
        "clock": agent_name(fault.member or ""),
    }[fault.target]


def _signal(record: ProcessRecord, signum: int) -> None:
    pid = record.program_pid()
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


async def _inject(fault: Fault, sandbox: Sandbox, faulty: Faulty, hold: float) -> None:
    """Apply ``fault`` and, for a stop, a cut or a clock step, undo it after ``hold`` seconds."""
    record = _record(sandbox, _process_of(fault))
    if fault.action == "step":
        clock = faulty.clocks[fault.member or ""]
        clock.step(CLOCK_STEP)
        try:
            # held until the agent has renewed its Lease on the stepped clock (else the step back
            # would test nothing: sandbox agents renew every 10 s), and for the hold at least
            began = time.monotonic()
            await _renewed_ahead(faulty, fault.member or "", CLOCK_RENEWAL_WAIT)
            await asyncio.sleep(max(0.0, hold - (time.monotonic() - began)))
        finally:
            clock.step(0)
    elif fault.action == "kill":
        _signal(record, signal.SIGKILL)
    elif fault.action == "stop":
        _signal(record, signal.SIGSTOP)
        try:
            await asyncio.sleep(hold)
        finally:
            _signal(record, signal.SIGCONT)
    else:
        proxy = faulty.proxies[fault.member or ""]
        proxy.sever()
        try:
            await asyncio.sleep(hold)
        finally:
            proxy.heal()


async def _running(record: ProcessRecord, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if record.condition()[0]:
            return True
        await asyncio.sleep(0.5)
    return False


@dataclass
class Faulty:
    """What the bench put between the agents and the world: their relays and their clocks."""

    proxies: dict[str, PartitionProxy] = field(default_factory=dict)
    clocks: dict[str, SteppedClock] = field(default_factory=dict)
    karmada: KubeClient | None = None  # to see a clock fault take effect


CLOCK_STEP = 3600  # seconds ahead a clock fault puts an agent, until it steps back
CLOCK_RENEWAL_WAIT = 30.0  # how long a clock fault waits for a renewal on the stepped clock


async def _renewed_ahead(faulty: Faulty, member: str, timeout: float) -> bool:
    """Whether ``member``'s agent renewed its Lease with a renewTime well ahead of true time
    within ``timeout`` seconds."""
    if faulty.karmada is None:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(TimeoutError, KubeError, OSError):
            lease = await asyncio.wait_for(faulty.karmada.get(LEASES, member, NAMESPACE_KARMADA_CLUSTER), 5.0)
            renewed = (lease.get("spec") or {}).get("renewTime")
            if renewed and parse_time(renewed) > utcnow() + datetime.timedelta(seconds=CLOCK_STEP / 2):
                return True
        await asyncio.sleep(0.5)
    return False


def _clock_agents(sandbox: Sandbox, clocks: dict[str, SteppedClock]) -> None:
    """Start every agent's supervisor again with the agent on a stepped clock, through ``env``
    (which execs the agent: the pid stays the program's), so that it stays on the clock across
    restarts while the supervisor itself keeps the true one (it sleeps with ``time.sleep``,
    which libfaketime breaks)."""
    for member in sandbox.members:
        clock = clocks[member] = SteppedClock(sandbox.directory / f"{member}.clock")
        record = _record(sandbox, agent_name(member))
        stop([record])
        variables = [f"{key}={value}" for key, value in clock.env(dict(os.environ)).items()]
        args = ["env", *variables, *record.args]
        fresh = start(record.name, args, Path(record.log), Path(record.run_dir))
        sandbox.processes[sandbox.processes.index(record)] = fresh
    sandbox.save()  # `local down` finds the new supervisors


async def _route_agents(sandbox: Sandbox, proxies: dict[str, PartitionProxy], timeout: float) -> None:
    """Point every agent at its proxy: rewrite its control-plane kubeconfig, then kill it so its
    supervisor starts it again on the new one."""
    for member in sandbox.members:
        path = sandbox.directory / member / "karmada-agent.kubeconfig"
        config = yaml.safe_load(path.read_text())
        port = int(config["clusters"][0]["cluster"]["server"].rsplit(":", 1)[1])
        proxy = await PartitionProxy(port).start()
        proxies[member] = proxy
        config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{proxy.port}"
        write_private(path, yaml.safe_dump(config).encode())
        record = _record(sandbox, agent_name(member))
        _signal(record, signal.SIGKILL)
    for member in sandbox.members:
        await asyncio.sleep(1.5)  # the supervisor's first backoff is 1 s
        if not await _running(_record(sandbox, agent_name(member)), timeout):
            raise RuntimeError(f"{agent_name(member)} did not start again on its proxy")


# -- the run --------------------------------------------------------------------------------


async def _converge(
    karmada: KubeClient, members: dict[str, KubeClient], timeout: float
) -> tuple[float | None, Audit, list[Template]]:
    began = time.monotonic()
    result, missing = Audit(), list[Template]()
    while time.monotonic() - began < timeout:
        try:
            result, missing = await check(karmada, members)
            ready = result.clean and not missing and not await _not_ready(karmada)
        except (TimeoutError, KubeError, OSError):
            await asyncio.sleep(1)
            continue
        if ready:
            return time.monotonic() - began, result, missing
        await asyncio.sleep(1)
    return None, result, missing


async def _not_ready(karmada: KubeClient) -> list[str]:
    clusters = await asyncio.wait_for(karmada.list(CLUSTERS), 20.0)
    return not_ready(clusters.get("items") or [])


async def _not_ready_now(karmada: KubeClient) -> list[str]:
    """The clusters not Ready, for a report: an API that does not answer says so, not a crash."""
    try:
        return await _not_ready(karmada)
    except (TimeoutError, KubeError, OSError) as exc:
        return [f"(clusters not listed: {type(exc).__name__})"]


async def run(options: Options) -> Result:
    if options.clock and library() is None:
        raise SystemExit(f"chaos_bench: {INSTALL_HINT}; or run with --no-clock (another seeded plan)")
    names = [f"member{i}" for i in range(1, options.members + 1)]
    with contextlib.ExitStack() as stack:
        directory = options.directory or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        sandbox = await up(SandboxOptions(directory=directory / "sandbox", members=names), lambda _: None)
        faulty = Faulty()
        try:
            return await _run(options, sandbox, faulty)
        finally:
            for proxy in faulty.proxies.values():
                await proxy.close()
            down(sandbox, lambda _: None)


async def _run(options: Options, sandbox: Sandbox, faulty: Faulty) -> Result:
    say = options.say
    rng = random.Random(options.seed)
    hold = (5 * options.hold_scale, 60 * options.hold_scale)
    faults = plan(options.rounds, sandbox.members, options.seed, hold, options.churn, options.partition, options.clock)
    if options.clock:
        await asyncio.to_thread(_clock_agents, sandbox, faulty.clocks)
    if options.partition:
        await _route_agents(sandbox, faulty.proxies, options.restart_timeout)
    result = Result()
    members_config = {m: sandbox.directory / m / "admin.kubeconfig" for m in sandbox.members}
    async with contextlib.AsyncExitStack() as stack:
        karmada = await stack.enter_async_context(KubeClient(from_kubeconfig(sandbox.karmada_config)))
        faulty.karmada = karmada
        members = {
            m: await stack.enter_async_context(KubeClient(from_kubeconfig(path))) for m, path in members_config.items()
        }
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        await karmada.create(NAMESPACES, namespace)
        for kind in KINDS:
            await karmada.create(POLICIES, _policy(kind, sandbox.members), NAMESPACE)
        workload = Workload(karmada, rng)
        began = time.monotonic()
        for _ in range(options.deployments):
            await workload.create()
        took, _, _ = await _converge(karmada, members, options.converge_timeout)
        say(f"{options.deployments} Deployments placed in {took if took is not None else float('nan'):.1f}s")
        for number, fault in enumerate(faults, 1):
            result.rounds.append(await _round(options, sandbox, faulty, karmada, members, workload, fault))
            last = result.rounds[-1]
            say(
                f"round {number}: {fault.target} {fault.action} {fault.member or ''} hold {fault.hold:g}s "
                f"-> {f'converged in {last.converged:.1f}s' if last.converged is not None else 'NOT converged'} "
                f"{last.audit.counts()} unbound {len(last.unbound)}"
                + (f" not Ready: {last.not_ready}" if last.not_ready else "")
                + (f" manual restart: {last.manual}" if last.manual else "")
            )
        _, result.final, result.final_unbound = await _converge(karmada, members, options.converge_timeout)
        result.final_not_ready = await _not_ready_now(karmada)
        say(f"run took {time.monotonic() - began:.0f}s; {workload.errors} writes refused during faults")
    return result


async def _round(
    options: Options,
    sandbox: Sandbox,
    faulty: Faulty,
    karmada: KubeClient,
    members: dict[str, KubeClient],
    workload: Workload,
    fault: Fault,
) -> RoundResult:
    async def churn() -> None:
        end = time.monotonic() + options.churn
        while time.monotonic() < end:
            await workload.step()
            await asyncio.sleep(0.05)

    async def hit() -> None:
        await asyncio.sleep(fault.delay)
        await _inject(fault, sandbox, faulty, fault.hold)

    await asyncio.gather(churn(), hit())
    manual = []
    record = _record(sandbox, _process_of(fault))
    if not await _running(record, options.restart_timeout):
        manual.append(record.name)  # the supervisor did not bring it back
    converged, found, missing = await _converge(karmada, members, options.converge_timeout)
    return RoundResult(fault, converged, found, missing, manual, await _not_ready_now(karmada))


def table(result: Result) -> str:
    """The figures of a run as a text table."""
    lines = ["| fault | rounds | converged | p50 s | p99 s | max s |", "| --- | --- | --- | --- | --- | --- |"]
    groups: dict[str, list[RoundResult]] = {}
    for r in result.rounds:
        groups.setdefault(f"{r.fault.target} {r.fault.action}", []).append(r)
    groups["all"] = list(result.rounds)
    for name, rounds in sorted(groups.items(), key=lambda item: (item[0] == "all", item[0])):
        times = [r.converged for r in rounds if r.converged is not None]
        lines.append(
            f"| {name} | {len(rounds)} | {len(times)} | {percentile(times, 0.5):.1f} | {percentile(times, 0.99):.1f} "
            f"| {max(times, default=0.0):.1f} |"
        )
    counts = result.final.counts()
    lines.append("")
    lines.append(
        "| after the last round | lost | duplicated | stale | orphaned | unbound | not Ready | manual restarts |"
    )
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    lines.append(
        f"| objects | {counts['lost']} | {counts['duplicated']} | {counts['stale']} | {counts['orphaned']} "
        f"| {len(result.final_unbound)} | {len(result.final_not_ready)} {result.final_not_ready or ''} "
        f"| {len(result.manual)} {result.manual or ''} |"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, default=5)
    parser.add_argument("--deployments", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--churn", type=float, default=20.0, help="seconds of churn a round")
    parser.add_argument("--hold-scale", type=float, default=1.0, help="times the 5-60 s of a stop or partition")
    parser.add_argument("--converge-timeout", type=float, default=300.0)
    parser.add_argument("--no-partition", action="store_true", help="agents straight to the API server, no cuts")
    parser.add_argument("--no-clock", action="store_true", help="no clock faults (agents on the true clock)")
    parser.add_argument("--json", type=Path, help="also write the summary (summary()) to this file")
    args = parser.parse_args()
    options = Options(
        members=args.members,
        deployments=args.deployments,
        rounds=args.rounds,
        seed=args.seed,
        churn=args.churn,
        hold_scale=args.hold_scale,
        converge_timeout=args.converge_timeout,
        partition=not args.no_partition,
        clock=not args.no_clock,
    )
    result = asyncio.run(run(options))
    for r in result.rounds:
        for kind, keys in (("lost", r.audit.lost), ("duplicated", r.audit.duplicated), ("stale", r.audit.stale)):
            for key in keys[:5]:
                print(f"  after {r.fault.target} {r.fault.action}: {kind} {key}")
    print(table(result))
    if args.json is not None:
        args.json.write_text(json.dumps(summary(result), indent=1))


def summary(result: Result) -> dict[str, Any]:
    """The run's outcome as data: the final counts, what stayed unbound, the programs that
    needed a manual restart, and each round's fault, convergence time and counts."""
    return {
        "final": result.final.counts(),
        "final_unbound": [list(t) for t in result.final_unbound],
        "final_not_ready": result.final_not_ready,
        "manual": result.manual,
        "rounds": [
            {
                "fault": f"{r.fault.target} {r.fault.action} {r.fault.member or ''}".strip(),
                "hold": r.fault.hold,
                "converged": r.converged,
                "counts": r.audit.counts(),
                "not_ready": r.not_ready,
                "lost": [list(k) for k in r.audit.lost],
                "duplicated": [list(k) for k in r.audit.duplicated],
                "stale": [list(k) for k in r.audit.stale],
                "orphaned": [list(k) for k in r.audit.orphaned],
            }
            for r in result.rounds
        ],
    }


if __name__ == "__main__":
    main()
