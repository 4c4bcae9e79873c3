"""Propagation through a sandbox: Deployments plus one PropagationPolicy, end to end.

(a) ``--deployments`` Deployments created at once: seconds until every member
    object exists, and until every template's aggregated status shows all its
    replicas ready; also when the last of the burst's ResourceBindings was created, then scheduled, and the
    last of its Works created, then applied (``a_last_*_s``, from watches of the control
    plane): which stage of the pipeline the time goes to;
(b) ``--rate`` Deployments a second for ``--seconds``: latency from each
    template's create response to the member object's ADDED event on a watch
    of the member (one process, one monotonic clock);
(c) control-plane API writes per propagated Deployment during (a), by
    resource, read from the API server's ``apiserver_request_total``, and the
    write rate the pipeline reached, and its reads (GET and LIST) per Deployment;
(d) control-plane CPU seconds and peak RSS over (a) and (b), and how much its RSS grew
    over (a) per 1,000 bindings (each with its template and Works in the caches).

The policy splits each Deployment (``--replicas``, default 2) over all members
with equal static weights, so each lands in ``min(replicas, members)`` members.

``--deps``: each Deployment mounts its own ConfigMap and Secret (created
just before it, labelled like it so the member watches see them), and the
policy says ``propagateDeps: true``; (a) then also reports the seconds until
every dependency is in every member its Deployment went to
(``a_all_dependencies_s``), and (b) the latency of the last of the three
objects per Deployment. Compare with the same run without ``--deps``.

``--mode push`` joins every member in push mode (the control plane applies
the Works and reflects their status itself, no agents); ``--mode both`` runs
pull, then push, and prints the figures side by side. (d) is then also given
per member, since in push mode the control plane does each member's work.

Members are sized from these options so that simulated capacity can never
cap the result: each member gets room for every replica of every Deployment
of (a) and (b) (the worst case: all of them in one member), and the bench
prints the nodes and pods per node it chose (``--node-pods`` overrides, e.g.
``--node-pods 110`` for the sandbox's default). While waiting for readiness it
lists the members' Pending Pods; a run whose ready count stops growing while
Pods are Unschedulable (or that makes no progress for ``--stall`` seconds)
ends at once with a ``capped:`` or ``stalled:`` line, the pending Pods per
member and the replicas not ready, and exit status 2.

Run: ``python -m benchmarks.propagation_bench [--members 10] [--deployments 1000] [--deps] [--mode both]``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.client import KubeError
from karmada.kube.resources import CONFIGMAPS, DEPLOYMENTS, PODS, RESOURCE_BINDINGS, SECRETS, WORKS, Resource
from karmada.sandbox.processes import ProcessRecord
from karmada.sandbox.sandbox import Sandbox, SandboxOptions, down, up
from localkube.metrics import parse_request_totals, parse_webhook_durations

POLICIES = Resource("policy.karmada.io", "v1alpha1", "propagationpolicies", "PropagationPolicy", True)
NAMESPACE = "default"
LABEL = "bench"
WRITES = ("POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION")
TICK = os.sysconf("SC_CLK_TCK")


def _dependencies(name: str, group: str) -> list[tuple[Resource, dict[str, Any]]]:
    """The ConfigMap and Secret a ``--deps`` Deployment mounts."""
    meta = {"namespace": NAMESPACE, "labels": {LABEL: group}}
    return [
        (
            CONFIGMAPS,
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": {"app.conf": name}},
        ),
        (
            SECRETS,
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, **meta}, "stringData": {"token": name}},
        ),
    ]


def _deployment(name: str, replicas: int, group: str, deps: bool = False) -> dict[str, Any]:
    labels = {"app": name, LABEL: group}
    pod: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    if deps:
        pod["volumes"] = [
            {"name": "config", "configMap": {"name": name}},
            {"name": "secret", "secret": {"secretName": name}},
        ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": pod,
            },
        },
    }


def _policy(members: list[str], deps: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "bench", "namespace": NAMESPACE},
        "spec": {
            **({"propagateDeps": True} if deps else {}),
            "resourceSelectors": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "labelSelector": {"matchExpressions": [{"key": LABEL, "operator": "Exists"}]},
                }
            ],
            "placement": {
                "clusterAffinity": {"clusterNames": members},
                "replicaScheduling": {
                    "replicaSchedulingType": "Divided",
                    "replicaDivisionPreference": "Weighted",
                    "weightPreference": {
                        "staticWeightList": [{"targetCluster": {"clusterNames": [m]}, "weight": 1} for m in members]
                    },
                },
            },
        },
    }


NODES_PER_MEMBER = 3
DEFAULT_NODE_PODS = 110  # a kubelet's default, with the sandbox's 8 cpu and 32Gi a node
SPARE_PODS_PER_NODE = 10  # anything else a member may run
POLL_PODS_S = 5.0  # how often the members' Pending Pods are listed while waiting for readiness
CAPPED_AFTER_S = 10.0  # no new ready template for this long while Pods are Unschedulable: capped


@dataclass(frozen=True)
class MemberSize:
    """The simulated nodes each member gets, and the Pods the bench may put in one member."""

    nodes: int
    node_pods: int
    node_cpu: str
    node_memory: str
    needed_pods: int

    def describe(self) -> str:
        return (
            f"{self.nodes} nodes of {self.node_pods} pods, {self.node_cpu} cpu, {self.node_memory} per member "
            f"({self.nodes * self.node_pods} pods; up to {self.needed_pods} bench Pods in one member)"
        )


def member_size(deployments: int, replicas: int, rate: float, seconds: float, node_pods: int = 0) -> MemberSize:
    """Nodes for each member so that no placement of (a)'s and (b)'s replicas can fill one.

    The worst case is every replica of every Deployment in a single member, so
    that is what each member must hold (plus a little for anything else);
    ``node_pods`` > 0 fixes the pods per node instead (a capped run on purpose).
    Cpu and memory grow with the pods, in the default node's proportion, though
    the bench's Pods request neither.
    """
    steady = math.ceil(rate * seconds) + 1 if seconds > 0 else 0
    needed = (deployments + steady) * max(replicas, 0)
    nodes = NODES_PER_MEMBER
    pods = node_pods if node_pods > 0 else max(DEFAULT_NODE_PODS, math.ceil(needed / nodes) + SPARE_PODS_PER_NODE)
    scale = max(1.0, pods / DEFAULT_NODE_PODS)
    return MemberSize(nodes, pods, str(math.ceil(8 * scale)), f"{math.ceil(32 * scale)}Gi", needed)


class Capped(Exception):
    """The burst cannot (or does not) become ready; the message says why, with the counts."""


@dataclass
class PendingPods:
    """The bench's Pending Pods in each member, and how many of them are Unschedulable."""

    pending: dict[str, int]
    unschedulable: dict[str, int]
    rejected: dict[str, int]  # Failed Pods a node turned away (OutOfpods and the like)

    @property
    def total_unschedulable(self) -> int:
        return sum(self.unschedulable.values()) + sum(self.rejected.values())

    def describe(self) -> str:
        def per_member(counts: dict[str, int]) -> str:
            listed = [f"{m}={n}" for m, n in counts.items() if n]
            return ", ".join(listed) or "none"

        return (
            f"pending Pods per member: {per_member(self.pending)}; "
            f"unschedulable: {per_member(self.unschedulable)}; rejected by a node: {per_member(self.rejected)}"
        )


def _unschedulable(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable"
        for c in conditions
    )


async def pending_pods(members: dict[str, KubeClient]) -> PendingPods:
    """List only Pending and Failed bench Pods (a field selector), so a healthy run costs little."""

    async def one(client: KubeClient) -> tuple[int, int, int]:
        pending = await client.list(PODS, NAMESPACE, labelSelector=LABEL, fieldSelector="status.phase=Pending")
        failed = await client.list(PODS, NAMESPACE, labelSelector=LABEL, fieldSelector="status.phase=Failed")
        items = pending.get("items") or []
        return len(items), sum(_unschedulable(p) for p in items), len(failed.get("items") or [])

    counts = await asyncio.gather(*(one(c) for c in members.values()))
    names = list(members)
    return PendingPods(
        pending={n: c[0] for n, c in zip(names, counts, strict=True)},
        unschedulable={n: c[1] for n, c in zip(names, counts, strict=True)},
        rejected={n: c[2] for n, c in zip(names, counts, strict=True)},
    )


def _program(record: ProcessRecord) -> int:
    return record.program_pid() or record.pid


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def peak_rss_mib(pid: int, field: str = "VmHWM") -> float:
    """The process's peak resident memory (``VmRSS``: its current one)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def _scheduled(binding: dict[str, Any]) -> bool:
    return bool((binding.get("spec") or {}).get("clusters"))


def _applied(work: dict[str, Any]) -> bool:
    conditions = (work.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Applied" and c.get("status") == "True" for c in conditions)


class StageWatch:
    """When each of the burst's objects of one control-plane kind was first seen, and first
    seen in a state (a binding scheduled, a Work applied): where the burst's time goes."""

    def __init__(self, client: KubeClient, resource: Resource, reached: Any) -> None:
        self.client = client
        self.resource = resource
        self.reached = reached
        self.added: dict[str, float] = {}
        self.done: dict[str, float] = {}

    def _see(self, obj: dict[str, Any], now: float) -> None:
        name = obj["metadata"]["name"]
        if not name.startswith("burst-"):
            return
        self.added.setdefault(name, now)
        if self.reached(obj):
            self.done.setdefault(name, now)

    async def run(self) -> None:
        version = ""
        while True:
            try:
                if not version:
                    listed = await self.client.list(self.resource)
                    version, now = listed["metadata"]["resourceVersion"], time.monotonic()
                    for item in listed.get("items") or []:
                        self._see(item, now)
                async for kind, obj in self.client.watch(self.resource, resource_version=version):
                    version = obj["metadata"].get("resourceVersion", version)
                    if kind in ("ADDED", "MODIFIED"):
                        self._see(obj, time.monotonic())
            except KubeError as exc:
                if exc.gone:
                    version = ""
                await asyncio.sleep(0.1)


class MemberWatch:
    """First ADDED time (monotonic) of each benchmark object of one kind in one member."""

    def __init__(self, client: KubeClient, resource: Resource = DEPLOYMENTS) -> None:
        self.client = client
        self.resource = resource
        self.added: dict[str, float] = {}
        self.changed = asyncio.Event()

    async def run(self) -> None:
        resource = self.resource
        version = (await self.client.list(resource, NAMESPACE, labelSelector=LABEL))["metadata"]["resourceVersion"]
        while True:
            try:
                async for kind, obj in self.client.watch(
                    resource, NAMESPACE, resource_version=version, params={"labelSelector": LABEL}
                ):
                    now = time.monotonic()
                    version = obj["metadata"].get("resourceVersion", version)
                    if kind == "ADDED":
                        self.added.setdefault(obj["metadata"]["name"], now)
                        self.changed.set()
            except KubeError as exc:
                if exc.gone:
                    listed = await self.client.list(resource, NAMESPACE, labelSelector=LABEL)
                    version = listed["metadata"]["resourceVersion"]
                    now = time.monotonic()
                    for item in listed.get("items") or []:
                        self.added.setdefault(item["metadata"]["name"], now)
                await asyncio.sleep(0.1)


async def _requests(client: KubeClient) -> tuple[Counter[str], Counter[str]]:
    """The control-plane API server's successful writes by resource, and its reads (GET, LIST)
    by verb and resource, so far."""
    text = await client.raw_text("/metrics")
    writes: Counter[str] = Counter()
    reads: Counter[str] = Counter()
    for (verb, _group, resource, subresource, code), count in parse_request_totals(text).items():
        where = f"{resource}/{subresource}" if subresource else resource
        if verb in WRITES and code.startswith("2"):
            writes[where] += count
        elif verb in ("GET", "LIST"):
            reads[f"{verb} {where}"] += count
    return writes, reads


async def _ready(client: KubeClient, names: set[str], replicas: int) -> tuple[set[str], int]:
    """The templates whose aggregated status has every replica ready, and the replicas not ready."""
    listed = await client.list(DEPLOYMENTS, NAMESPACE, labelSelector=LABEL)
    ready: set[str] = set()
    missing = replicas * len(names)
    for item in listed.get("items") or []:
        name = item["metadata"]["name"]
        if name not in names:
            continue
        count = int((item.get("status") or {}).get("readyReplicas") or 0)
        missing -= min(count, replicas)
        if count == replicas:
            ready.add(name)
    return ready, missing


async def wait_ready(
    client: KubeClient,
    members: dict[str, KubeClient],
    names: set[str],
    replicas: int,
    timeout: float,
    stall: float,
) -> float:
    """When every template reported all its replicas ready; :class:`Capped` as soon as that cannot happen.

    Capped: the ready count has not grown for ``CAPPED_AFTER_S`` while the members
    hold Unschedulable (or node-rejected) bench Pods. Stalled: no growth for
    ``stall`` seconds whatever the reason. Both, and the timeout, say how far it got.
    """
    began = time.monotonic()
    best, progressed, polled = -1, began, began
    pods: PendingPods | None = None
    while True:
        ready, missing = await _ready(client, names, replicas)
        now = time.monotonic()
        if len(ready) == len(names):
            return now
        if len(ready) > best:
            best, progressed = len(ready), now
        if now - polled >= POLL_PODS_S or pods is None:
            pods, polled = await pending_pods(members), now
        idle = now - progressed
        state = (
            f"{len(ready)} of {len(names)} templates ready, {missing} replicas not ready, "
            f"no new ready template for {idle:.0f}s; {pods.describe()}"
        )
        if pods.total_unschedulable and idle >= CAPPED_AFTER_S:
            raise Capped(f"capped: {pods.total_unschedulable} replicas unschedulable in the members; {state}")
        if idle >= stall:
            raise Capped(f"stalled: {state}")
        if now - began > timeout:
            raise Capped(f"timed out after {timeout:.0f}s waiting for every template to report ready: {state}")
        await asyncio.sleep(0.25)


async def _wait(check: Any, timeout: float, what: str) -> float:
    began = time.monotonic()
    while not await check():
        if time.monotonic() - began > timeout:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(0.25)
    return time.monotonic()


async def run(sandbox: Sandbox, options: argparse.Namespace, results: dict[str, float]) -> dict[str, float]:
    """Fill ``results`` as the phases finish (a capped run keeps what it measured)."""
    controlplane = next(_program(p) for p in sandbox.processes if p.name == "karmada-controlplane")
    per_deployment: int = min(int(options.replicas), len(sandbox.members))
    async with KubeClient(from_kubeconfig(sandbox.karmada_config)) as client:
        members = [KubeClient(from_kubeconfig(sandbox.members_config, m)) for m in sandbox.members]
        by_name = dict(zip(sandbox.members, members, strict=True))
        deps = bool(options.deps)
        watches = [MemberWatch(m) for m in members]
        # per member: the ConfigMap and the Secret watches (--deps)
        dep_watches = [[MemberWatch(m, CONFIGMAPS), MemberWatch(m, SECRETS)] for m in members] if deps else []
        every = watches + [w for pair in dep_watches for w in pair]
        tasks = [asyncio.create_task(w.run()) for w in every]
        # on the control plane: bindings created and scheduled, Works created and applied
        bindings = StageWatch(client, RESOURCE_BINDINGS, _scheduled)
        works = StageWatch(client, WORKS, _applied)
        tasks += [asyncio.create_task(w.run()) for w in (bindings, works)]
        try:
            await client.create(POLICIES, _policy(sandbox.members, deps), NAMESPACE)
            await asyncio.sleep(1.0)
            cpu_before = cpu_seconds(controlplane)
            rss_before = peak_rss_mib(controlplane, "VmRSS")

            # (a) a burst
            writes_before, reads_before = await _requests(client)
            webhooks_before = parse_webhook_durations(await client.raw_text("/metrics"))
            names = {f"burst-{i}" for i in range(options.deployments)}
            gate = asyncio.Semaphore(32)

            async def create(name: str, group: str) -> float:
                async with gate:
                    if deps:
                        for resource, obj in _dependencies(name, group):
                            await client.create(resource, obj, NAMESPACE)
                    await client.create(DEPLOYMENTS, _deployment(name, options.replicas, group, deps), NAMESPACE)
                return time.monotonic()

            def arrived(name: str, index: int) -> float | None:
                """When the Deployment (and with --deps its two dependencies) reached the index-th member."""
                times = [watches[index].added.get(name)]
                if deps:
                    times += [w.added.get(name) for w in dep_watches[index]]
                return None if None in times else max(t for t in times if t is not None)

            def dependencies_complete(wanted: set[str]) -> bool:
                """Every dependency in every member its Deployment is in, and each Deployment in its members."""
                placed = 0
                for index, watch in enumerate(watches):
                    for name in wanted & watch.added.keys():
                        placed += arrived(name, index) is not None
                return placed >= per_deployment * len(wanted)

            began = time.monotonic()
            await asyncio.gather(*(create(n, "burst") for n in sorted(names)))
            created = time.monotonic()

            async def all_exist() -> bool:
                return sum(len(names & w.added.keys()) for w in watches) >= per_deployment * len(names)

            exist = await _wait(all_exist, options.timeout, "every member object of the burst")
            if deps:

                async def all_dependencies() -> bool:
                    return dependencies_complete(names)

                complete = await _wait(all_dependencies, options.timeout, "every dependency of the burst")
                results["a_all_dependencies_s"] = complete - began

            results["a_create_all_s"] = created - began
            results["a_all_member_objects_s"] = exist - began
            for member_name, watch in zip(sandbox.members, watches, strict=True):
                results[f"a_member_objects[{member_name}]"] = len(names & watch.added.keys())
            ready = await wait_ready(client, by_name, names, options.replicas, options.timeout, options.stall)
            await asyncio.sleep(2.0)  # the last status writes of the burst
            writes, reads = await _requests(client)
            writes, reads = writes - writes_before, reads - reads_before
            # each admission-webhook call as the API server timed it (review sent to answer read)
            for hook, (seconds, calls) in sorted(parse_webhook_durations(await client.raw_text("/metrics")).items()):
                earlier_seconds, earlier_calls = webhooks_before.get(hook, (0.0, 0))
                if calls > earlier_calls:
                    mean = (seconds - earlier_seconds) / (calls - earlier_calls)
                    results[f"a_webhook_call_mean_ms[{hook}]"] = mean * 1000
                    results[f"a_webhook_calls_per_deployment[{hook}]"] = (calls - earlier_calls) / len(names)
            results["a_all_templates_ready_s"] = ready - began
            for label, times in (
                ("bindings_created", bindings.added),
                ("bindings_scheduled", bindings.done),
                ("works_created", works.added),
                ("works_applied", works.done),
            ):
                results[f"a_last_{label}_s"] = max(times.values()) - began if times else math.nan
            total = sum(v for k, v in writes.items() if not k.startswith(("events", "leases")))
            results["c_writes_per_deployment"] = total / len(names)
            for key, value in sorted(writes.items()):
                results[f"c_writes_per_deployment[{key}]"] = value / len(names)
            results["c_write_rate_per_s"] = total / (ready - began)
            results["c_reads_per_deployment"] = sum(reads.values()) / len(names)
            for key, value in sorted(reads.items()):
                if value / len(names) >= 0.01:
                    results[f"c_reads_per_deployment[{key}]"] = value / len(names)
            cpu_burst = cpu_seconds(controlplane)
            results["d_cpu_s_burst"] = cpu_burst - cpu_before
            # every burst Deployment has its binding (and Works) in the caches now
            grown = peak_rss_mib(controlplane, "VmRSS") - rss_before
            results["d_rss_mib_per_1000_bindings"] = grown * 1000 / len(names)

            # (b) a steady rate
            latencies: list[float] = []
            sent: dict[str, float] = {}
            interval = 1.0 / options.rate
            start = time.monotonic()
            index = 0
            pending: list[asyncio.Task[float]] = []
            while time.monotonic() - start < options.seconds:
                name = f"steady-{index}"
                pending.append(asyncio.create_task(create(name, "steady")))
                sent[name] = 0.0
                index += 1
                await asyncio.sleep(max(0.0, start + index * interval - time.monotonic()))
            for name, task in zip(list(sent), pending, strict=True):
                sent[name] = await task

            async def steady_exist() -> bool:
                if deps:
                    return dependencies_complete(set(sent))
                return sum(len(sent.keys() & w.added.keys()) for w in watches) >= per_deployment * len(sent)

            await _wait(steady_exist, options.timeout, "every member object of the steady phase")
            for index, watch in enumerate(watches):
                for n, at_create in sent.items():
                    if n in watch.added and (at := arrived(n, index)) is not None:
                        latencies.append(at - at_create)
            results["b_deployments"] = len(sent)
            results["b_latency_p50_ms"] = statistics.median(latencies) * 1000
            results["b_latency_p99_ms"] = percentile(latencies, 0.99) * 1000
            results["b_latency_max_ms"] = max(latencies) * 1000
            results["d_cpu_s_steady"] = cpu_seconds(controlplane) - cpu_burst
            results["d_peak_rss_mib"] = peak_rss_mib(controlplane)
        finally:
            for watcher in tasks:
                watcher.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for member in members:
                await member.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--deployments", type=int, default=1000, help="Deployments created at once (a)")
    parser.add_argument("--replicas", type=int, default=2, help="replicas of each Deployment")
    parser.add_argument("--rate", type=float, default=10.0, help="Deployments per second (b)")
    parser.add_argument("--seconds", type=float, default=60.0, help="duration of (b)")
    parser.add_argument("--timeout", type=float, default=600.0, help="give up waiting after this many seconds")
    parser.add_argument(
        "--deps",
        action="store_true",
        help="each Deployment with its own ConfigMap and Secret, propagated by propagateDeps",
    )
    parser.add_argument(
        "--mode",
        choices=("pull", "push", "both"),
        default="pull",
        help="members registered with agents (pull), joined (push), or one run of each side by side",
    )
    parser.add_argument(
        "--node-pods",
        type=int,
        default=0,
        help="pods per simulated node (default: sized so no placement can fill a member)",
    )
    parser.add_argument(
        "--stall",
        type=float,
        default=60.0,
        help="end the run when no template became ready for this many seconds",
    )
    args = parser.parse_args()
    names = [f"member{i}" for i in range(1, args.members + 1)]
    size = member_size(args.deployments, args.replicas, args.rate, args.seconds, args.node_pods)
    print(f"members: {size.describe()}", flush=True)
    by_mode: dict[str, dict[str, float]] = {}
    failure = ""
    for mode in ("pull", "push") if args.mode == "both" else (args.mode,):
        results: dict[str, float] = {}
        with tempfile.TemporaryDirectory() as tmp:
            push = set(names) if mode == "push" else set()
            options = SandboxOptions(
                directory=Path(tmp),
                members=list(names),
                push_members=push,
                nodes_per_member=size.nodes,
                node_pods=size.node_pods,
                node_cpu=size.node_cpu,
                node_memory=size.node_memory,
            )
            sandbox = asyncio.run(up(options, lambda _: None))
            try:
                asyncio.run(run(sandbox, args, results))
            except (Capped, TimeoutError) as exc:
                failure = f"{mode}: {exc}"
            finally:
                down(sandbox, lambda _: None)
        for key in [k for k in results if k.startswith("d_")]:
            results[f"{key}_per_member"] = results[key] / args.members
        by_mode[mode] = results
        if failure:
            break
    with_deps = ", each with a ConfigMap and a Secret (propagateDeps)" if args.deps else ""
    print(
        f"propagation through a sandbox of {args.members} members, {args.replicas} replicas per Deployment{with_deps}"
    )
    modes = list(by_mode)
    print(f"  {'':48s} " + " ".join(f"{m:>10s}" for m in modes))
    for key in dict.fromkeys(k for m in modes for k in by_mode[m]):
        print(f"  {key:48s} " + " ".join(f"{by_mode[m].get(key, float('nan')):10.2f}" for m in modes))
    if failure:
        print(failure, flush=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
