"""The control plane at many clusters, without agents: what ``karmada-controlplane``
costs per cluster, and how the scheduler keeps up with spread constraints.

For each size N of ``--clusters`` (default ``1000``; a list ``10,100,1000``
runs each in turn, every size from scratch):

1. one control-plane API server, the real ``localkube serve`` program, with
   Karmada installed as ``kubectl karmada init`` installs it;
2. N pull-mode Clusters created directly, each with the status an agent
   writes (Ready and CompleteAPIEnablements conditions, kubernetesVersion and
   apiEnablements read once from this localkube before Karmada's CRDs exist,
   i.e. what a plain member serves; nodeSummary; resourceSummary with
   allocatable and allocated), ``region``/``zone``/``provider`` in spec and
   labels (10 regions, 3 zones each, 3 providers) so spread constraints have
   groups, and its heartbeat Lease in ``karmada-cluster``, renewed by the
   harness every 10 s as an agent does (40 s lease, renew fraction 0.25),
   spread evenly over the interval;
3. the real ``karmada-controlplane`` program; the harness waits until every
   Cluster carries the controller's finalizer and every work queue is empty.

Then it measures, from outside the controller (``/proc/<pid>``, the API
server's ``apiserver_request_total``, the controller's ``/metrics``):

- idle, for ``--idle`` seconds (60) with the Leases renewing: controller CPU
  seconds and RSS, and the requests it sends to its API server by verb and
  resource (the harness's own Lease renewals subtracted);
- (a) ``--duplicated`` Deployments (5) each ``Duplicated`` to every cluster
  (5 x N Works): seconds until every Work exists, controller CPU seconds per
  Work;
- (b) ``--spread`` Deployments (100), one policy with spread constraints
  (``region`` 2..3 groups, ``cluster`` 3..6 groups; 12 replicas divided by
  available replicas) over every cluster: scheduling latency p50/p99 (the
  harness sees the binding appear, then its ``Scheduled`` condition; both on
  one watch and one clock), the scheduler's own ``e2e_scheduling_duration``
  p50/p99 from its histogram, bindings scheduled per second, seconds until
  every Work exists, controller CPU seconds per binding and per Work.

It prints one table (a column per size) and the growth factor of each
per-cluster figure from one size to the next (1.0 = cost per cluster flat).

``--profile DIR``: runs ``py-spy record`` (an optional tool, not a project
dependency) on the controller during idle, (a) and (b), writing
``DIR/<N>-<phase>.txt`` (collapsed stacks) and ``.svg``; print the top
functions with ``--top DIR/<N>-<phase>.txt``.

Run: ``python -m benchmarks.controlplane_scale_bench --clusters 10,100,1000``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import itertools
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from karmada.install import InitOptions, init
from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.client import KubeError
from karmada.kube.informer import Informer
from karmada.kube.resources import CLUSTERS, DEPLOYMENTS, LEASES, RESOURCE_BINDINGS, WORKS, Resource
from karmada.members.member import Discovery, kubernetes_version
from karmada.timestamps import format_micro_time, now_time, utcnow
from localkube.metrics import parse_request_totals

POLICIES = Resource("policy.karmada.io", "v1alpha1", "propagationpolicies", "PropagationPolicy", True)
NAMESPACE = "default"
LEASE_NAMESPACE = "karmada-cluster"
FINALIZER = "karmada.io/cluster-controller"
LEASE_DURATION = 40
RENEW_INTERVAL = LEASE_DURATION * 0.25
REGIONS = 10
ZONES_PER_REGION = 3
PROVIDERS = ("aws", "gcp", "azure")
TICK = os.sysconf("SC_CLK_TCK")
CONCURRENCY = 16
MARKER = "localkube serving on "


# -- processes ---------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_program(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    # run in the log's directory: ``-m`` imports the interpreter's installed code, not the caller's
    with open(log, "wb") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=log.parent)


def stop_program(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def wait_for_line(log: Path, marker: str, process: subprocess.Popen[bytes], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}; see {log}")
        for line in log.read_text(errors="replace").splitlines():
            if marker in line:
                return line
        await asyncio.sleep(0.1)
    raise TimeoutError(f"no {marker!r} in {log} after {timeout:.0f}s")


async def wait_until(check: Callable[[], Awaitable[bool]], timeout: float, what: str, interval: float = 0.5) -> float:
    began = time.monotonic()
    while True:
        try:
            if await check():
                return time.monotonic()
        except (KubeError, aiohttp.ClientError, TimeoutError) as exc:  # a busy server: look again
            print(f"# waiting for {what}: {exc}", flush=True)
        if time.monotonic() - began > timeout:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(interval)


# -- what an agent would have written ------------------------------------------------------


def cluster_place(index: int) -> tuple[str, str, str]:
    region = f"region-{index % REGIONS}"
    zone = f"{region}-{'abc'[(index // REGIONS) % ZONES_PER_REGION]}"
    return region, zone, PROVIDERS[index % len(PROVIDERS)]


def cluster_object(name: str, index: int) -> dict[str, Any]:
    region, zone, provider = cluster_place(index)
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {
            "name": name,
            "labels": {"region": region, "zone": zone, "provider": provider, "bench": "true"},
        },
        "spec": {
            "syncMode": "Pull",
            "apiEndpoint": f"https://{name}.invalid:6443",
            "provider": provider,
            "region": region,
            "zones": [zone],
        },
    }


def cluster_status(index: int, version: str, enablements: list[dict[str, Any]]) -> dict[str, Any]:
    """An agent's status of a 3-node member: 24 CPUs, 96 GiB, 330 pods, some of it in use."""
    rng = random.Random(index)
    used_cpu = rng.randint(1, 12)
    used_mem = rng.randint(2, 48)
    used_pods = rng.randint(10, 200)
    stamp = now_time()
    return {
        "kubernetesVersion": version,
        "apiEnablements": enablements,
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "ClusterReady",
                "message": "cluster is healthy and ready to accept workloads",
                "lastTransitionTime": stamp,
            },
            {
                "type": "CompleteAPIEnablements",
                "status": "True",
                "reason": "Complete",
                "message": "collected complete APIEnablements from the cluster",
                "lastTransitionTime": stamp,
            },
        ],
        "nodeSummary": {"totalNum": 3, "readyNum": 3},
        "resourceSummary": {
            "allocatable": {"cpu": "24", "memory": "96Gi", "pods": "330", "ephemeral-storage": "300Gi"},
            "allocated": {"cpu": f"{used_cpu}", "memory": f"{used_mem}Gi", "pods": f"{used_pods}"},
        },
    }


def lease_object(name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name,
            "namespace": LEASE_NAMESPACE,
            "labels": {"karmada.io/system": "true", "cluster.karmada.io/cluster-name": name},
            "ownerReferences": [
                {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "name": name, "uid": uid}
            ],
        },
        "spec": {
            "holderIdentity": name,
            "leaseDurationSeconds": LEASE_DURATION,
            "renewTime": format_micro_time(utcnow()),
        },
    }


class Agents:
    """Every cluster's Lease, renewed each ``RENEW_INTERVAL`` like N agents, spread over it."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.leases: dict[str, dict[str, Any]] = {}
        self.renewals = 0  # PUTs answered, subtracted from the API server's counts
        self.failures = 0
        self.skipped = 0  # renewals not sent because the previous one of the Lease was still out

    async def create(self, name: str, uid: str) -> None:
        self.leases[name] = await self.client.create(LEASES, lease_object(name, uid), LEASE_NAMESPACE)

    async def renew(self, name: str) -> None:
        lease = self.leases[name]
        lease["spec"]["renewTime"] = format_micro_time(utcnow())
        try:
            self.leases[name] = await self.client.update(LEASES, lease, LEASE_NAMESPACE)
        except KubeError as exc:
            if exc.status == 0:
                raise  # not answered: maybe not counted by the server either
            self.renewals += 1
            self.failures += 1
            self.leases[name] = await self.client.get(LEASES, name, LEASE_NAMESPACE)
        else:
            self.renewals += 1  # counted once answered, as the API server counts it

    async def run(self) -> None:
        """Each Lease renewed every interval, the next renewal of a Lease only once its last one
        answered (an agent renews in one loop), so a slow API server is not flooded."""
        names = sorted(self.leases)
        gap = RENEW_INTERVAL / max(1, len(names))
        pending: dict[str, asyncio.Task[None]] = {}
        try:
            while True:
                round_start = time.monotonic()
                for i, name in enumerate(names):
                    delay = round_start + i * gap - time.monotonic()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    if name in pending:
                        self.skipped += 1
                        continue
                    task = pending[name] = asyncio.create_task(self._renew_quietly(name))
                    task.add_done_callback(functools.partial(_forget, pending, name))
                rest = round_start + RENEW_INTERVAL - time.monotonic()
                if rest > 0:
                    await asyncio.sleep(rest)
        finally:
            for task in list(pending.values()):
                task.cancel()
            await asyncio.gather(*pending.values(), return_exceptions=True)

    async def _renew_quietly(self, name: str) -> None:
        try:
            await self.renew(name)
        except (KubeError, aiohttp.ClientError, TimeoutError):
            self.failures += 1


def _forget(pending: dict[str, asyncio.Task[None]], name: str, _: asyncio.Task[None]) -> None:
    pending.pop(name, None)


# -- metrics ----------------------------------------------------------------------------


async def request_counts(client: KubeClient) -> Counter[tuple[str, str, str]]:
    counts: Counter[tuple[str, str, str]] = Counter()
    for (verb, _group, resource, subresource, _code), count in parse_request_totals(
        await client.raw_text("/metrics")
    ).items():
        counts[(verb, resource, subresource)] += count
    return counts


async def controller_metrics(session: aiohttp.ClientSession, url: str) -> str:
    async with session.get(url) as response:
        return await response.text()


def metric_samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    found = []
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        body, _, value = line.rpartition(" ")
        labels = dict(re.findall(r'(\w+)="([^"]*)"', body))
        found.append((labels, float(value)))
    return found


def histogram_quantile(text: str, name: str, fraction: float, where: dict[str, str]) -> float:
    """Prometheus' histogram_quantile over the cumulative buckets of ``name`` matching ``where``."""
    buckets: dict[float, float] = {}
    for labels, value in metric_samples(text, name + "_bucket"):
        if all(labels.get(k) == v for k, v in where.items()):
            bound = float("inf") if labels["le"] == "+Inf" else float(labels["le"])
            buckets[bound] = buckets.get(bound, 0.0) + value
    if not buckets:
        return float("nan")
    bounds = sorted(buckets)
    total = buckets[bounds[-1]]
    if total == 0:
        return float("nan")
    rank = fraction * total
    lower, below = 0.0, 0.0
    for bound in bounds:
        if buckets[bound] >= rank:
            if bound == float("inf"):
                return lower
            return lower + (bound - lower) * (rank - below) / max(buckets[bound] - below, 1e-9)
        lower, below = bound, buckets[bound]
    return lower


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


# -- workloads ----------------------------------------------------------------------------


def deployment(name: str, group: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name, "bench": group}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "nginx:1.27",
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                        }
                    ]
                },
            },
        },
    }


def policy(name: str, group: str, placement: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "resourceSelectors": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "labelSelector": {"matchLabels": {"bench": group}}}
            ],
            "placement": placement,
        },
    }


DUPLICATED = {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}
SPREAD = {
    "spreadConstraints": [
        {"spreadByField": "region", "minGroups": 2, "maxGroups": 3},
        {"spreadByField": "cluster", "minGroups": 3, "maxGroups": 6},
    ],
    "replicaScheduling": {
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
        "weightPreference": {"dynamicWeight": "AvailableReplicas"},
    },
}
SPREAD_REPLICAS = 12


class Watcher:
    """Bindings and Works as the harness sees them: when each binding appeared and when it
    was first Scheduled (monotonic), and how many Works exist."""

    def __init__(self, client: KubeClient) -> None:
        self.clusters = Informer(client, CLUSTERS, label_selector="bench=true")
        self.bindings = Informer(client, RESOURCE_BINDINGS)
        self.works = Informer(client, WORKS)
        self.appeared: dict[str, float] = {}
        self.scheduled: dict[str, float] = {}
        self.targets: dict[str, int] = {}
        self.bindings.add_handler(self._binding)

    def _binding(self, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        now = time.monotonic()
        name = obj["metadata"]["name"]
        self.appeared.setdefault(name, now)
        conditions = (obj.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "Scheduled" and c.get("status") == "True" for c in conditions):
            self.scheduled.setdefault(name, now)
            self.targets[name] = len((obj.get("spec") or {}).get("clusters") or [])

    async def start(self) -> None:
        for informer in (self.clusters, self.bindings, self.works):
            informer.start()
        for informer in (self.clusters, self.bindings, self.works):
            await informer.wait_synced(300)

    async def stop(self) -> None:
        for informer in (self.clusters, self.bindings, self.works):
            await informer.stop()

    def accepted(self) -> int:
        return sum(FINALIZER in (c["metadata"].get("finalizers") or []) for c in self.clusters.items())

    def works_with(self, prefix: str) -> int:
        return sum(1 for w in self.works.items() if w["metadata"]["name"].startswith(prefix))


# -- py-spy ---------------------------------------------------------------------------------


class Profiler:
    """``py-spy record`` of one process for one phase, when ``--profile`` asks."""

    def __init__(self, directory: Path | None, pid: int, name: str) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.outputs: list[Path] = []
        if directory is None:
            return
        spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        directory.mkdir(parents=True, exist_ok=True)
        raw = directory / f"{name}.txt"
        self.outputs = [raw]
        # raw collapsed stacks (for --top) ; nonblocking: do not pause the controller per sample
        args = [spy, "record", "--pid", str(pid), "--nonblocking", "--rate", "50", "--format", "raw", "-o", str(raw)]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()


def top_functions(path: Path, count: int = 25) -> list[tuple[str, float, float]]:
    """(function, own %, inclusive %) from a collapsed-stack file, the largest inclusive first."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, value = line.rpartition(" ")
        if not value.isdigit():
            continue
        samples = int(value)
        total += samples
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
        for frame in set(frames):
            inclusive[frame] += samples
        if frames:
            own[frames[-1]] += samples
    total = max(total, 1)
    ranked = sorted(inclusive, key=lambda f: (-own[f], -inclusive[f]))[:count]
    return [(f, 100.0 * own[f] / total, 100.0 * inclusive[f] / total) for f in ranked]


# -- one size --------------------------------------------------------------------------------


async def run_size(size: int, options: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    say = print if options.verbose else (lambda *_: None)
    results: dict[str, Any] = {"clusters": size}
    data = workdir / f"n{size}"
    data.mkdir(mode=0o700)
    kubeconfig = data / "admin.kubeconfig"
    server_log = data / "localkube.log"
    server = start_program(
        [
            sys.executable,
            "-m",
            "localkube",
            "serve",
            "--port",
            "0",
            "--data-dir",
            str(data / "apiserver"),
            "--kubeconfig-out",
            str(kubeconfig),
        ],
        server_log,
    )
    controller: subprocess.Popen[bytes] | None = None
    session = aiohttp.ClientSession()
    tasks: list[asyncio.Task[Any]] = []
    watcher: Watcher | None = None
    try:
        await wait_for_line(server_log, MARKER, server, 60)
        # the agents' renewals on their own connections, so the harness's reads do not queue behind them
        async with (
            KubeClient(from_kubeconfig(kubeconfig)) as client,
            KubeClient(from_kubeconfig(kubeconfig)) as lease_client,
        ):
            version = await kubernetes_version(client)
            enablements, _ = await Discovery(client).enablements()  # a plain member's, before Karmada's CRDs
            await init(client, InitOptions(), lambda _: None)
            say(f"[{size}] karmada installed")

            began = time.monotonic()
            agents = Agents(lease_client)
            gate = asyncio.Semaphore(CONCURRENCY)

            async def add(index: int) -> None:
                name = f"member{index + 1}"
                async with gate:
                    created = await client.create(CLUSTERS, cluster_object(name, index))
                    created["status"] = cluster_status(index, version, enablements)
                    await client.update(CLUSTERS, created, subresource="status")
                    await agents.create(name, created["metadata"]["uid"])

            await asyncio.gather(*(add(i) for i in range(size)))
            results["create_clusters_s"] = time.monotonic() - began
            say(f"[{size}] {size} clusters created in {results['create_clusters_s']:.1f}s")
            tasks.append(asyncio.create_task(agents.run()))
            watcher = Watcher(client)
            await watcher.start()

            metrics_port = free_port()
            metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
            controller_log = data / "controlplane.log"
            started = time.monotonic()
            controller = start_program(
                [
                    options.controller_python,
                    "-m",
                    "controlplane",
                    f"--kubeconfig={kubeconfig}",
                    f"--metrics-bind-address=127.0.0.1:{metrics_port}",
                    "--health-probe-bind-address=0",
                ],
                controller_log,
            )
            pid = controller.pid

            async def settled() -> bool:
                if watcher is None or watcher.accepted() < size:
                    return False
                try:
                    text = await controller_metrics(session, metrics_url)
                except aiohttp.ClientError:
                    return False
                return all(value == 0 for _, value in metric_samples(text, "workqueue_depth"))

            await wait_until(settled, options.timeout, "every cluster accepted", interval=1.0)
            results["settle_s"] = time.monotonic() - started
            results["settle_cpu_s"] = cpu_seconds(pid)
            say(f"[{size}] controller settled in {results['settle_s']:.1f}s ({results['settle_cpu_s']:.1f} CPU s)")
            await asyncio.sleep(5)  # let the startup's last writes come back as events

            # idle
            profiler = Profiler(options.profile, pid, f"{size}-idle")
            counts_before = await request_counts(client)
            renewals_before = agents.renewals
            cpu_before = cpu_seconds(pid)
            await asyncio.sleep(options.idle)
            cpu_after = cpu_seconds(pid)
            counts_after = await request_counts(client)
            profiler.stop()
            renewed = agents.renewals - renewals_before
            requests = counts_after - counts_before
            requests[("PUT", "leases", "")] -= renewed
            requests = Counter({k: v for k, v in requests.items() if v > 0})
            results["idle_cpu_s"] = cpu_after - cpu_before
            results["idle_cpu_pct"] = 100.0 * (cpu_after - cpu_before) / options.idle
            results["idle_rss_mib"] = rss_mib(pid)
            results["idle_requests_per_s"] = sum(requests.values()) / options.idle
            results["idle_requests"] = {f"{v} {r}{'/' + s if s else ''}": n for (v, r, s), n in requests.items()}
            results["lease_renewals_per_s"] = renewed / options.idle
            say(f"[{size}] idle: {results['idle_cpu_s']:.2f} CPU s, {results['idle_rss_mib']:.0f} MiB, {requests}")

            # (a) Duplicated to every cluster
            profiler = Profiler(options.profile, pid, f"{size}-duplicated")
            cpu_before = cpu_seconds(pid)
            await client.create(POLICIES, policy("duplicated", "dup", DUPLICATED), NAMESPACE)
            began = time.monotonic()
            for i in range(options.duplicated):
                await client.create(DEPLOYMENTS, deployment(f"dup-{i}", "dup", 2), NAMESPACE)
            wanted_a = int(options.duplicated) * size

            async def works_a() -> bool:
                return watcher is not None and watcher.works_with("dup-") >= wanted_a

            done = await wait_until(works_a, options.timeout, f"{wanted_a} Works of (a)", interval=0.25)
            results["a_works"] = wanted_a
            results["a_all_works_s"] = done - began
            results["a_cpu_s"] = cpu_seconds(pid) - cpu_before
            results["a_cpu_ms_per_work"] = 1000.0 * results["a_cpu_s"] / wanted_a
            results["a_rss_mib"] = rss_mib(pid)
            profiler.stop()
            say(f"[{size}] (a) {wanted_a} Works in {results['a_all_works_s']:.1f}s, {results['a_cpu_s']:.1f} CPU s")

            async def quiet() -> bool:
                text = await controller_metrics(session, metrics_url)
                return all(value == 0 for _, value in metric_samples(text, "workqueue_depth"))

            await wait_until(quiet, options.timeout, "the queues to drain after (a)")
            await asyncio.sleep(3)

            # (b) spread constraints
            metrics_before = await controller_metrics(session, metrics_url)
            profiler = Profiler(options.profile, pid, f"{size}-spread")
            cpu_before = cpu_seconds(pid)
            await client.create(POLICIES, policy("spread", "spread", SPREAD), NAMESPACE)
            began = time.monotonic()
            names = [f"spread-{i}" for i in range(options.spread)]
            gate_b = asyncio.Semaphore(8)

            async def create_b(name: str) -> None:
                async with gate_b:
                    await client.create(DEPLOYMENTS, deployment(name, "spread", SPREAD_REPLICAS), NAMESPACE)

            await asyncio.gather(*(create_b(n) for n in names))
            bindings_b = [f"{n}-deployment" for n in names]

            async def scheduled_b() -> bool:
                return watcher is not None and all(b in watcher.scheduled for b in bindings_b)

            await wait_until(scheduled_b, options.timeout, "every (b) binding scheduled", interval=0.25)
            wanted_b = sum(watcher.targets[b] for b in bindings_b)

            async def works_b() -> bool:
                return watcher is not None and watcher.works_with("spread-") >= wanted_b

            done = await wait_until(works_b, options.timeout, f"{wanted_b} Works of (b)", interval=0.25)
            results["b_bindings"] = len(bindings_b)
            results["b_works"] = wanted_b
            latencies = [watcher.scheduled[b] - watcher.appeared[b] for b in bindings_b]
            results["b_sched_p50_ms"] = 1000 * percentile(latencies, 0.5)
            results["b_sched_p99_ms"] = 1000 * percentile(latencies, 0.99)
            first = min(watcher.appeared[b] for b in bindings_b)
            last = max(watcher.scheduled[b] for b in bindings_b)
            results["b_bindings_per_s"] = len(bindings_b) / max(last - first, 1e-6)
            results["b_all_works_s"] = done - began
            results["b_cpu_s"] = cpu_seconds(pid) - cpu_before
            results["b_cpu_ms_per_binding"] = 1000.0 * results["b_cpu_s"] / len(bindings_b)
            results["b_cpu_ms_per_work"] = 1000.0 * results["b_cpu_s"] / max(wanted_b, 1)
            profiler.stop()
            metrics_after = await controller_metrics(session, metrics_url)
            results.update(_scheduler_quantiles(metrics_before, metrics_after))
            results["rss_mib_peak"] = rss_mib(pid, "VmHWM")
            results["lease_failures"] = agents.failures
            results["lease_skipped"] = agents.skipped
            say(f"[{size}] (b) {results}")
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if watcher is not None:
            await watcher.stop()
        await session.close()
        if controller is not None:
            stop_program(controller)
        stop_program(server)
    return results


def _scheduler_quantiles(before: str, after: str) -> dict[str, float]:
    """The scheduler's e2e duration p50/p99 over (b) only: the histogram's difference."""
    name = "karmada_scheduler_e2e_scheduling_duration_seconds"
    lines = []
    old = {
        tuple(sorted(labels.items())): value
        for labels, value in metric_samples(before, name + "_bucket")
        if labels.get("result") == "scheduled"
    }
    for labels, value in metric_samples(after, name + "_bucket"):
        if labels.get("result") != "scheduled":
            continue
        delta = value - old.get(tuple(sorted(labels.items())), 0.0)
        body = ",".join(f'{k}="{v}"' for k, v in labels.items())
        lines.append(f"{name}_bucket{{{body}}} {delta}")
    text = "\n".join(lines)
    return {
        "b_scheduler_p50_ms": 1000 * histogram_quantile(text, name, 0.5, {"result": "scheduled"}),
        "b_scheduler_p99_ms": 1000 * histogram_quantile(text, name, 0.99, {"result": "scheduled"}),
    }


# -- the table -----------------------------------------------------------------------------

ROWS: list[tuple[str, str, str, bool]] = [
    # (key, label, format, per cluster for the growth factor)
    ("create_clusters_s", "harness: clusters+status+Leases created (s)", "{:.1f}", False),
    ("settle_s", "controller start until every cluster accepted (s)", "{:.1f}", True),
    ("settle_cpu_s", "  CPU s for it", "{:.1f}", True),
    ("idle_cpu_s", "idle CPU s over the idle window", "{:.2f}", True),
    ("idle_cpu_pct", "idle CPU %", "{:.1f}", True),
    ("idle_rss_mib", "idle RSS (MiB)", "{:.0f}", False),
    ("idle_requests_per_s", "idle requests/s to the API server", "{:.2f}", True),
    ("lease_renewals_per_s", "Lease renewals/s (harness)", "{:.1f}", True),
    ("a_works", "(a) Works (Duplicated x clusters)", "{:.0f}", True),
    ("a_all_works_s", "(a) s until every Work exists", "{:.1f}", True),
    ("a_cpu_ms_per_work", "(a) CPU ms per Work", "{:.2f}", False),
    ("b_bindings", "(b) bindings (spread constraints)", "{:.0f}", False),
    ("b_works", "(b) Works", "{:.0f}", False),
    ("b_sched_p50_ms", "(b) scheduling latency p50 (ms)", "{:.0f}", True),
    ("b_sched_p99_ms", "(b) scheduling latency p99 (ms)", "{:.0f}", True),
    ("b_scheduler_p50_ms", "(b) scheduler e2e histogram p50 (ms)", "{:.0f}", True),
    ("b_scheduler_p99_ms", "(b) scheduler e2e histogram p99 (ms)", "{:.0f}", True),
    ("b_bindings_per_s", "(b) bindings scheduled per s", "{:.1f}", False),
    ("b_all_works_s", "(b) s until every Work exists", "{:.1f}", False),
    ("b_cpu_ms_per_binding", "(b) CPU ms per binding", "{:.0f}", True),
    ("b_cpu_ms_per_work", "(b) CPU ms per Work", "{:.1f}", False),
    ("rss_mib_peak", "peak RSS (MiB)", "{:.0f}", False),
]


def table(all_results: list[dict[str, Any]]) -> str:
    sizes = [r["clusters"] for r in all_results]
    width = max(len(label) for _, label, _, _ in ROWS) + 2
    lines = [f"{'clusters':<{width}}" + "".join(f"{s:>12}" for s in sizes)]
    for key, label, fmt, _ in ROWS:
        cells = "".join(f"{fmt.format(r[key]) if key in r else '-':>12}" for r in all_results)
        lines.append(f"{label:<{width}}" + cells)
    if len(all_results) > 1:
        lines.append("")
        lines.append("growth factor per cluster (cost per cluster at the larger size / at the smaller; 1.0 = flat)")
        for key, label, _, per_cluster in ROWS:
            if not per_cluster or key in ("a_works", "lease_renewals_per_s"):
                continue
            factors = []
            for small, large in itertools.pairwise(all_results):
                if key not in small or key not in large or not small[key]:
                    factors.append("-")
                    continue
                ratio = (large[key] / large["clusters"]) / (small[key] / small["clusters"])
                factors.append(f"{ratio:.2f}")
            pairs = "".join(f"{f'{a}->{b}':>12}" for a, b in itertools.pairwise(sizes))
            lines.append(f"{label:<{width}}" + "".join(f"{f:>12}" for f in factors) + f"   ({pairs.strip()})")
    return "\n".join(lines)


async def main_async(options: argparse.Namespace) -> list[dict[str, Any]]:
    results = []
    with tempfile.TemporaryDirectory(prefix="cpscale-") as tmp:
        for size in options.clusters:
            began = time.monotonic()
            result = await run_size(size, options, Path(tmp))
            result["wall_s"] = time.monotonic() - began
            results.append(result)
            print(f"# {size} clusters done in {result['wall_s']:.0f}s; load average {os.getloadavg()}", flush=True)
            if options.verbose:
                print(f"# idle requests by verb/resource: {result['idle_requests']}", flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clusters", default="1000", help="comma-separated sizes (default 1000)")
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of the idle measurement (60)")
    parser.add_argument("--duplicated", type=int, default=5, help="Deployments Duplicated to every cluster (5)")
    parser.add_argument("--spread", type=int, default=100, help="Deployments with spread constraints (100)")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds any one wait may take (1200)")
    parser.add_argument("--profile", type=Path, default=None, help="py-spy record the controller per phase into DIR")
    parser.add_argument("--top", type=Path, default=None, help="print the top functions of a --profile file and exit")
    parser.add_argument(
        "--controller-python",
        default=sys.executable,
        help="the interpreter that runs karmada-controlplane (another checkout's, to compare; this one's)",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    options = parser.parse_args(argv)
    if options.top is not None:
        for function, own, inclusive in top_functions(options.top):
            print(f"{own:6.1f}% {inclusive:6.1f}%  {function}")
        return 0
    try:
        options.clusters = [int(s) for s in str(options.clusters).split(",") if s.strip()]
    except ValueError:
        parser.error(f"--clusters: want comma-separated numbers, got {options.clusters!r}")
    if not options.clusters or min(options.clusters) < 1:
        parser.error("--clusters: every size must be at least 1")
    load = os.getloadavg()
    results = asyncio.run(main_async(options))
    print(f"load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, at end {os.getloadavg()}")
    print(table(results))
    if statistics and options.verbose:
        for result in results:
            print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
