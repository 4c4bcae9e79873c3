"""How cost grows with the number of member clusters: a sandbox of 10, 100 and
1,000 members (``--sizes``), pull mode, and push mode for 10 and 100
(``--modes``, ``--push-sizes``).

Each size runs in a fresh sandbox (``karmada.sandbox``) whose members are
grouped ``members_per_process`` to a ``localkube serve --fleet`` process and
a ``karmada-agent --fleet`` process (``--members-per-process``; by default
``ceil(N / 10)`` up to 100, so every size runs about ten of each), one
simulated node per member. For each size and mode:

(a) ``up_s``: ``local up`` until every Cluster is Ready (every member through
    the real token, ``register`` and CSR flow, or ``join`` in push mode);
(b) at idle (``--idle`` seconds after a settling pause): CPU seconds per
    second and RSS of ``karmada-controlplane`` and of the control plane's
    localkube (``/proc/<pid>/stat`` and ``status``), and the control-plane
    API server's requests per second by verb and resource (deltas of
    ``apiserver_request_total`` on its ``/metrics``);
(c) memory per simulated cluster: RSS of the grouped localkube processes
    over their members, and of the grouped agent processes over theirs;
(d) OCM's test, 5 Works per cluster: 5 ConfigMaps and one Duplicated
    PropagationPolicy with no cluster affinity (every cluster); seconds
    until every Work exists in the control plane (``d_5_works_created_s``,
    from a watch of Works) and until every ResourceBinding reports every
    cluster applied (``aggregatedStatus[].applied``);
(e) 100 Deployments at once, spread over all clusters: cluster ``j`` gets
    the label ``scale-bench/group=g<j mod G>`` with ``G = min(100, N)``,
    Deployment ``i`` carries ``g<i mod G>`` and the PropagationPolicy of its
    group sends it (Duplicated, one replica) to the clusters with that label,
    so each Deployment lands on a different subset (``N/G`` clusters) and
    together they cover every cluster; seconds until every binding reports
    every target cluster applied;
(f) a steady rate (``--rate`` Deployments a second for ``--seconds``) into
    the groups of a sample of members (at most ``--watched``, spread evenly,
    each watched with ``propagation_bench.MemberWatch``): p50/p99 latency
    from a template's create response to the ADDED event in each member it
    lands in (one process, one monotonic clock), and the same path split
    where the Work for that member appears in the control plane's watch:
    ``f_to_work`` (the control plane's part) and ``f_work_to_member`` (the
    agent pulling and applying it, and the member's watch).

Then a table of the figures, one column per size and mode, and the cost per
cluster with its growth factor between consecutive sizes (flat is 1.00).

Run: ``python -m benchmarks.scale_bench [--sizes 10,100,1000] [--modes pull,push]``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import math
import os
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.propagation_bench import MemberWatch, cpu_seconds, peak_rss_mib, percentile
from benchmarks.sandbox_bench import _program, rss_mib
from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.informer import Informer
from karmada.kube.resources import CLUSTERS, CONFIGMAPS, DEPLOYMENTS, RESOURCE_BINDINGS, WORKS, Resource
from karmada.sandbox.sandbox import CONTROL_PLANE, CONTROLLER_MANAGER, Sandbox, SandboxOptions, down, up
from localkube.metrics import minus, parse_request_durations, parse_request_totals, quantile

POLICIES = Resource("policy.karmada.io", "v1alpha1", "propagationpolicies", "PropagationPolicy", True)
NAMESPACE = "default"
LABEL = "bench"  # what propagation_bench.MemberWatch selects on
GROUP = "scale-bench/group"
MAX_GROUPS = 100
LEASE_PUT = ("PUT", "coordination.k8s.io", "leases", "")


def default_per_process(size: int) -> int:
    """About ten processes of each kind at any size, at most 100 members in one."""
    return max(1, min(100, math.ceil(size / 10)))


def _configmap(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {LABEL: "works"}},
        "data": {"work": name},
    }


def _deployment(name: str, group: str) -> dict[str, Any]:
    labels = {"app": name, LABEL: "spread", GROUP: group}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
            },
        },
    }


def _policy(name: str, kind: str, api_version: str, selector: dict[str, Any], placement: dict[str, Any]) -> Any:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "resourceSelectors": [{"apiVersion": api_version, "kind": kind, "labelSelector": selector}],
            "placement": {**placement, "replicaScheduling": {"replicaSchedulingType": "Duplicated"}},
        },
    }


async def _requests(client: KubeClient) -> Counter[str]:
    """Requests served so far by verb and resource."""
    counts: Counter[str] = Counter()
    for (verb, _group, resource, subresource, _code), count in parse_request_totals(
        await client.raw_text("/metrics")
    ).items():
        counts[f"{verb} {resource}/{subresource}" if subresource else f"{verb} {resource}"] += count
    return counts


def _turned_away(metrics_text: str) -> int:
    """Requests answered 429 so far (API Priority and Fairness found no seat in time)."""
    return sum(count for key, count in parse_request_totals(metrics_text).items() if key[-1] == "429")


async def _applied(bindings: Informer, expected: dict[str, int]) -> bool:
    """Whether every binding named in ``expected`` (binding name -> clusters) reports that many
    applied. Read from a watch cache: a LIST of every binding each poll (five of them 200 KB at
    1,000 clusters) would be a good part of the API server's load that it measures."""
    done = 0
    for binding in bindings.items():
        want = expected.get(binding["metadata"]["name"])
        entries = (binding.get("status") or {}).get("aggregatedStatus") or []
        if want is not None and sum(1 for e in entries if e.get("applied")) >= want:
            done += 1
    return done == len(expected)


class WorkArrivals:
    """When each Work first appeared in the control plane, by (execution namespace, the name of
    the template it carries): the control plane's share of a propagation, apart from the
    member's (its agent applying it, at whatever CPU a simulated member gets)."""

    def __init__(self, client: KubeClient) -> None:
        self.seen: dict[tuple[str, str], float] = {}
        # a cache of only what this needs: 5,000 Works in full would be the bench's own memory
        self.informer = Informer(client, WORKS, transform=self._small)
        self.informer.add_handler(self._record)

    @staticmethod
    def _small(obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        manifests = ((obj.get("spec") or {}).get("workload") or {}).get("manifests") or [{}]
        template = ((manifests[0] or {}).get("metadata") or {}).get("name", "")
        return {"metadata": {k: meta[k] for k in ("name", "namespace", "resourceVersion") if k in meta}, "t": template}

    def _record(self, kind: str, obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
        if kind != "DELETED":
            self.seen.setdefault((obj["metadata"].get("namespace", ""), obj["t"]), time.monotonic())

    def count(self, templates: set[str]) -> int:
        return sum(1 for _, template in self.seen if template in templates)


async def _wait(check: Any, timeout: float, what: str, interval: float) -> float:
    began = time.monotonic()
    while not await check():
        if time.monotonic() - began > timeout:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(interval)
    return time.monotonic() - began


def _pids(sandbox: Sandbox, names: set[str]) -> list[int]:
    return [_program(p) for p in sandbox.processes if p.name in names]


async def run(sandbox: Sandbox, options: argparse.Namespace, mode: str) -> dict[str, float]:
    results: dict[str, float] = {}
    size = len(sandbox.members)
    controlplane = _pids(sandbox, {CONTROLLER_MANAGER})[0]
    apiserver = _pids(sandbox, {CONTROL_PLANE})[0]
    interval = 0.5
    async with KubeClient(from_kubeconfig(sandbox.karmada_config)) as client:
        # (b) idle
        await asyncio.sleep(options.settle)
        cpu_before = {pid: cpu_seconds(pid) for pid in (controlplane, apiserver)}
        requests_before = await _requests(client)
        began = time.monotonic()
        await asyncio.sleep(options.idle)
        idle = time.monotonic() - began
        requests = await _requests(client) - requests_before
        results["b_controlplane_cpu_share"] = (cpu_seconds(controlplane) - cpu_before[controlplane]) / idle
        results["b_apiserver_cpu_share"] = (cpu_seconds(apiserver) - cpu_before[apiserver]) / idle
        results["b_controlplane_rss_mib"] = rss_mib(controlplane)
        results["b_apiserver_rss_mib"] = rss_mib(apiserver)
        results["b_apiserver_requests_per_s"] = sum(requests.values()) / idle
        for key, count in requests.most_common(options.top):
            results[f"b_rps[{key}]"] = count / idle

        # (c) memory per simulated cluster
        servers = {g.server for g in sandbox.groups}
        agents = {g.agent for g in sandbox.groups if g.agent}
        pulled = sum(1 for m in sandbox.members if m not in sandbox.push_members)
        results["c_localkube_mib_per_cluster"] = sum(rss_mib(p) for p in _pids(sandbox, servers)) / size
        if pulled:
            results["c_agent_mib_per_cluster"] = sum(rss_mib(p) for p in _pids(sandbox, agents)) / pulled

        # the groups of (e), labelled before any policy exists, so no binding is rescheduled by it
        groups = min(MAX_GROUPS, size)
        members_of: dict[str, list[str]] = {f"g{k}": [] for k in range(groups)}
        label_gate = asyncio.Semaphore(16)

        async def label(member: str, group: str) -> None:
            async with label_gate:
                await client.patch(CLUSTERS, member, {"metadata": {"labels": {GROUP: group}}})

        for index, member in enumerate(sandbox.members):
            members_of[f"g{index % groups}"].append(member)
        await asyncio.gather(*(label(m, g) for g, ms in members_of.items() for m in ms))

        # (d) 5 Works per cluster
        bindings = Informer(client, RESOURCE_BINDINGS, namespace=NAMESPACE)
        bindings.start()
        await bindings.wait_synced(60)
        arrivals = WorkArrivals(client)
        arrivals.informer.start()
        await arrivals.informer.wait_synced(60)
        cpu_work = cpu_seconds(controlplane)
        metrics_before = await client.raw_text("/metrics")
        durations_before = parse_request_durations(metrics_before)
        everywhere = _policy("works", "ConfigMap", "v1", {"matchLabels": {LABEL: "works"}}, {})
        await client.create(POLICIES, everywhere, NAMESPACE)
        await asyncio.sleep(1.0)
        began = time.monotonic()
        for index in range(5):
            await client.create(CONFIGMAPS, _configmap(f"works-{index}"), NAMESPACE)
        expected = {f"works-{index}-configmap": size for index in range(5)}
        templates = {f"works-{index}" for index in range(5)}

        async def all_created() -> bool:
            return arrivals.count(templates) >= 5 * size

        await _wait(all_created, options.timeout, "5 Works per cluster in the control plane", 0.1)
        results["d_5_works_created_s"] = time.monotonic() - began
        await _wait(lambda: _applied(bindings, expected), options.timeout, "5 Works in every cluster", interval)
        results["d_5_works_per_cluster_s"] = time.monotonic() - began
        _progress(results, "d_5_works_created_s", "d_5_works_per_cluster_s")

        # (e) 100 Deployments over all clusters, a subset each
        for group in members_of:
            selector = {"matchLabels": {LABEL: "spread", GROUP: group}}
            placement = {"clusterAffinity": {"labelSelector": {"matchLabels": {GROUP: group}}}}
            await client.create(
                POLICIES, _policy(f"spread-{group}", "Deployment", "apps/v1", selector, placement), NAMESPACE
            )
        await asyncio.sleep(1.0)
        gate = asyncio.Semaphore(16)

        async def create(name: str, group: str) -> float:
            async with gate:
                await client.create(DEPLOYMENTS, _deployment(name, group), NAMESPACE)
            return time.monotonic()

        began = time.monotonic()
        names = {f"spread-{i}": f"g{i % groups}" for i in range(options.deployments)}
        await asyncio.gather(*(create(n, g) for n, g in names.items()))
        expected = {f"{n}-deployment": len(members_of[g]) for n, g in names.items()}
        await _wait(lambda: _applied(bindings, expected), options.timeout, "the Deployments applied", interval)
        results["e_deployments_applied_s"] = time.monotonic() - began
        results["d_e_controlplane_cpu_s"] = cpu_seconds(controlplane) - cpu_work
        metrics_after = await client.raw_text("/metrics")
        durations = parse_request_durations(metrics_after)
        results["d_e_turned_away_429"] = float(_turned_away(metrics_after) - _turned_away(metrics_before))
        renewals = minus(durations.get(LEASE_PUT, []), durations_before.get(LEASE_PUT, []))
        results["d_e_lease_put_p99_s"] = quantile(0.99, renewals)
        answered = _summed(minus(durations[k], durations_before.get(k, [])) for k in durations if k[0] != "WATCH")
        results["d_e_request_p50_s"] = quantile(0.5, answered)
        results["d_e_request_p99_s"] = quantile(0.99, answered)
        _progress(results, "e_deployments_applied_s", "d_e_lease_put_p99_s", "d_e_request_p99_s", "d_e_turned_away_429")

        # (f) steady rate into the groups of the watched members
        step = max(1, size // options.watched)
        watched = sandbox.members[::step][: options.watched]
        group_of = {m: g for g, ms in members_of.items() for m in ms}
        targets = sorted({group_of[m] for m in watched}, key=lambda g: int(g[1:]))
        clients = {m: KubeClient(from_kubeconfig(sandbox.members_config, m)) for m in watched}
        watches = {m: MemberWatch(c) for m, c in clients.items()}
        tasks = [asyncio.create_task(w.run()) for w in watches.values()]
        try:
            await asyncio.sleep(2.0)  # the watches' first lists
            sent: dict[str, tuple[str, asyncio.Task[float]]] = {}
            start = time.monotonic()
            index = 0
            while time.monotonic() - start < options.seconds:
                name, group = f"steady-{index}", targets[index % len(targets)]
                sent[name] = (group, asyncio.create_task(create(name, group)))
                index += 1
                await asyncio.sleep(max(0.0, start + index * (1.0 / options.rate) - time.monotonic()))
            created = {name: (group, await task) for name, (group, task) in sent.items()}
            wanted = [(n, m) for n, (g, _) in created.items() for m in watched if group_of[m] == g]

            async def arrived() -> bool:
                return all(n in watches[m].added for n, m in wanted)

            await _wait(arrived, options.timeout, "the steady Deployments in the watched members", 0.25)
            latencies = [watches[m].added[n] - created[n][1] for n, m in wanted]
            # the same path split where the Work appears: the control plane's part, then the member's
            to_work = [arrivals.seen[(f"karmada-es-{m}", n)] - created[n][1] for n, m in wanted]
            to_member = [watches[m].added[n] - arrivals.seen[(f"karmada-es-{m}", n)] for n, m in wanted]
            results["f_steady_deployments"] = len(created)
            results["f_latency_p50_ms"] = statistics.median(latencies) * 1000
            results["f_latency_p99_ms"] = percentile(latencies, 0.99) * 1000
            results["f_to_work_p50_ms"] = statistics.median(to_work) * 1000
            results["f_to_work_p99_ms"] = percentile(to_work, 0.99) * 1000
            results["f_work_to_member_p50_ms"] = statistics.median(to_member) * 1000
            results["f_work_to_member_p99_ms"] = percentile(to_member, 0.99) * 1000
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for watched_client in clients.values():
                await watched_client.close()
        results["f_controlplane_peak_rss_mib"] = peak_rss_mib(controlplane)
        await bindings.stop()
        await arrivals.informer.stop()
    results.update(_log_counts(sandbox))
    return results


def _summed(series: Any) -> list[tuple[float, int]]:
    """Cumulative buckets of several series added up (they share kube-apiserver's bounds)."""
    total: dict[float, int] = {}
    for buckets in series:
        for bound, count in buckets:
            total[bound] = total.get(bound, 0) + count
    return sorted(total.items())


def _progress(results: dict[str, float], *names: str) -> None:
    """A figure as soon as it is measured: a run stopped half-way still leaves its numbers."""
    print("    " + ", ".join(f"{name} {results[name]:.3f}" for name in names), flush=True)


def _log_counts(sandbox: Sandbox) -> dict[str, float]:
    """How often the control plane stepped down over the whole run (a renewal missed its
    deadline, or another took the Lease) and wrote its Lease slower than the retry period
    (the wait for its own loop included), and the stalls and slow requests its API server logged."""

    def count(name: str, needle: str) -> float:
        record = next(p for p in sandbox.processes if p.name == name)
        return float(Path(record.log).read_text(errors="replace").count(needle))

    return {
        "leader_step_downs": count(CONTROLLER_MANAGER, "; stepping down") + count(CONTROLLER_MANAGER, " lost lease "),
        "leader_slow_renewals": count(CONTROLLER_MANAGER, "writing lease karmada-system/"),
        "apiserver_loop_stalls": count(CONTROL_PLANE, "event loop stalled"),
        "apiserver_slow_requests": count(CONTROL_PLANE, "slow request:"),
    }


def measure(size: int, mode: str, options: argparse.Namespace) -> dict[str, float]:
    names = [f"member{i}" for i in range(1, size + 1)]
    per_process = options.members_per_process or default_per_process(size)
    with tempfile.TemporaryDirectory() as tmp:
        sandbox_options = SandboxOptions(
            directory=Path(tmp),
            members=names,
            push_members=set(names) if mode == "push" else set(),
            members_per_process=per_process,
            nodes_per_member=1,
        )
        began = time.monotonic()
        sandbox = asyncio.run(up(sandbox_options, lambda line: print(f"    {line}", flush=True)))
        up_s = time.monotonic() - began
        try:
            results = {"a_up_s": up_s, "members_per_process": float(per_process)}
            results.update(asyncio.run(run(sandbox, options, mode)))
        finally:
            down(sandbox, lambda _: None)
    return results


PER_CLUSTER = (
    "a_up_s",
    "b_controlplane_cpu_share",
    "b_apiserver_cpu_share",
    "b_controlplane_rss_mib",
    "b_apiserver_rss_mib",
    "b_apiserver_requests_per_s",
    "c_localkube_mib_per_cluster",
    "c_agent_mib_per_cluster",
    "d_5_works_per_cluster_s",
    "d_e_controlplane_cpu_s",
)


def report(columns: dict[str, dict[str, float]]) -> None:
    heads = list(columns)
    keys = list(dict.fromkeys(k for results in columns.values() for k in results))
    width = max(len(k) for k in keys) + 2
    print(f"{'':{width}s}" + "".join(f"{h:>14s}" for h in heads))
    for key in keys:
        print(f"{key:{width}s}" + "".join(f"{columns[h].get(key, float('nan')):14.3f}" for h in heads))
    for mode in dict.fromkeys(h.split()[1] for h in heads):
        sized = [(int(h.split()[0]), columns[h]) for h in heads if h.split()[1] == mode]
        if len(sized) < 2:
            continue
        print(
            f"\ncost per cluster ({mode}), its growth factor between sizes (1.00 = flat), and the marginal"
            " cost of each cluster added between sizes (a fixed base makes the per-cluster cost fall)"
        )
        pairs = list(itertools.pairwise(sized))
        print(
            f"{'':{width}s}"
            + "".join(f"{n:>14d}" for n, _ in sized)
            + "".join(f"{f'x {a}->{b}':>14s}" for (a, _), (b, _) in pairs)
            + "".join(f"{f'+1 {a}->{b}':>14s}" for (a, _), (b, _) in pairs)
        )
        for key in PER_CLUSTER:
            nan = float("nan")
            per = [(r[key] if key.startswith("c_") else r[key] / n) if key in r else nan for n, r in sized]
            growth = [b / a if a else nan for a, b in itertools.pairwise(per)]
            marginal = [
                (rb.get(key, nan) - ra.get(key, nan)) / (b - a) if not key.startswith("c_") else nan
                for (a, ra), (b, rb) in pairs
            ]
            print(
                f"{key:{width}s}"
                + "".join(f"{v:14.5f}" for v in per)
                + "".join(f"{g:14.2f}" for g in growth)
                + "".join(f"{m:14.5f}" for m in marginal)
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,1000", help="member clusters per run, comma-separated")
    parser.add_argument("--modes", default="pull,push", help="pull and/or push, comma-separated")
    parser.add_argument("--push-sizes", default="10,100", help="the sizes also run in push mode")
    parser.add_argument("--members-per-process", type=int, default=0, help="0: ceil(N/10), at most 100")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds after Ready before idling")
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of idle measured")
    parser.add_argument("--top", type=int, default=6, help="verb/resource pairs shown of the idle requests")
    parser.add_argument("--deployments", type=int, default=100, help="Deployments spread over the clusters (e)")
    parser.add_argument("--rate", type=float, default=2.0, help="Deployments per second (f)")
    parser.add_argument("--seconds", type=float, default=20.0, help="duration of (f)")
    parser.add_argument("--watched", type=int, default=50, help="members watched for latency (f)")
    parser.add_argument("--timeout", type=float, default=600.0, help="give up waiting after this many seconds")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    modes = [m for m in args.modes.split(",") if m]
    push_sizes = {int(s) for s in args.push_sizes.split(",") if s}
    columns: dict[str, dict[str, float]] = {}
    for mode in modes:
        for size in sizes:
            if mode == "push" and size not in push_sizes:
                continue
            print(f"{size} clusters, {mode} mode (load average {os.getloadavg()[0]:.1f})", flush=True)
            columns[f"{size} {mode}"] = measure(size, mode, args)
            columns[f"{size} {mode}"]["load_average_1m"] = os.getloadavg()[0]
    report(columns)


if __name__ == "__main__":
    main()
