"""Throughput, latency and memory of localkube, measured from outside the process.

Run: ``python -m benchmarks.localkube_bench`` (about two minutes; ``--objects``
lowers the memory run). The server runs as its own ``localkube serve`` process
and the clients talk to it over TLS with the admin certificate, the way every
program of this project does. Goals on a 2-core machine: at least 1,000 writes/s
with 8 clients, watch delivery p99 under 50 ms with 10 watchers, 100,000 small
ConfigMaps in under 1 GiB of server RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.resources import CONFIGMAPS, NAMESPACES
from localkube.process import LocalKubeProcess


def rss_mib(pid: int) -> float:
    """Resident memory of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def create_many(kubeconfig: Path, namespace: str, count: int, clients: int, prefix: str) -> float:
    """Create ``count`` small ConfigMaps with ``clients`` concurrent connections; writes/s."""
    config = from_kubeconfig(kubeconfig)
    sessions = [KubeClient(config) for _ in range(clients)]

    async def writer(client: KubeClient, start: int) -> None:
        for index in range(start, count, clients):
            body = {"metadata": {"name": f"{prefix}-{index}"}, "data": {"key": "value"}}
            await client.create(CONFIGMAPS, body, namespace)

    began = time.perf_counter()
    try:
        await asyncio.gather(*(writer(client, i) for i, client in enumerate(sessions)))
    finally:
        for client in sessions:
            await client.close()
    return count / (time.perf_counter() - began)


async def watch_latency(kubeconfig: Path, namespace: str, watchers: int, events: int) -> list[float]:
    """Milliseconds from a create's response to each watcher seeing it."""
    config = from_kubeconfig(kubeconfig)
    writer = KubeClient(config)
    readers = [KubeClient(config) for _ in range(watchers)]
    sent: dict[str, float] = {}
    delays: list[float] = []
    listed = await writer.list(CONFIGMAPS, namespace)
    start_rv = listed["metadata"]["resourceVersion"]

    async def reader(client: KubeClient) -> None:
        seen = 0
        async for kind, obj in client.watch(CONFIGMAPS, namespace, resource_version=start_rv):
            if kind != "ADDED":
                continue
            arrived = time.perf_counter()
            name = obj["metadata"]["name"]
            while name not in sent:  # the event can beat the writer's own response
                await asyncio.sleep(0)
            delays.append(max(0.0, arrived - sent[name]) * 1000)
            seen += 1
            if seen == events:
                return

    tasks = [asyncio.create_task(reader(client)) for client in readers]
    await asyncio.sleep(0.2)
    try:
        for index in range(events):
            name = f"watched-{index}"
            before = time.perf_counter()
            sent[name] = before
            await writer.create(CONFIGMAPS, {"metadata": {"name": name}}, namespace)
            await asyncio.sleep(0.005)  # a steady stream, not a burst
        await asyncio.wait_for(asyncio.gather(*tasks), 60)
    finally:
        for client in [writer, *readers]:
            await client.close()
    return delays


async def list_latency(kubeconfig: Path, namespace: str, rounds: int) -> tuple[list[float], list[float]]:
    """Milliseconds for full lists and for first pages of 500."""
    async with KubeClient(from_kubeconfig(kubeconfig)) as client:
        full, paged = [], []
        for _ in range(rounds):
            began = time.perf_counter()
            await client.list(CONFIGMAPS, namespace)
            full.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            await client.list(CONFIGMAPS, namespace, limit="500")
            paged.append((time.perf_counter() - began) * 1000)
    return full, paged


async def make_namespace(kubeconfig: Path, name: str) -> None:
    async with KubeClient(from_kubeconfig(kubeconfig)) as client:
        await client.create(NAMESPACES, {"metadata": {"name": name}})


async def run(objects: int) -> dict[str, float]:
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, LocalKubeProcess(Path(tmp) / "admin.kubeconfig") as process:
        kubeconfig = process.kubeconfig
        results["rss_idle_mib"] = rss_mib(process.pid)
        for name in ("w1", "w8", "watch", "list", "bulk"):
            await make_namespace(kubeconfig, name)
        results["writes_per_s_1_client"] = await create_many(kubeconfig, "w1", 2000, 1, "one")
        results["writes_per_s_8_clients"] = await create_many(kubeconfig, "w8", 4000, 8, "eight")
        delays = await watch_latency(kubeconfig, "watch", 10, 300)
        results["watch_p50_ms"] = statistics.median(delays)
        results["watch_p99_ms"] = percentile(delays, 0.99)
        await create_many(kubeconfig, "list", 10_000, 8, "item")
        full, paged = await list_latency(kubeconfig, "list", 5)
        results["list_10k_full_ms"] = statistics.median(full)
        results["list_10k_first_page_500_ms"] = statistics.median(paged)
        stored = 2000 + 4000 + 300 + 10_000
        remaining = max(0, objects - stored)
        if remaining:
            results["bulk_writes_per_s"] = await create_many(kubeconfig, "bulk", remaining, 8, "bulk")
        results["objects"] = float(stored + remaining)
        results["rss_mib"] = rss_mib(process.pid)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=100_000, help="ConfigMaps stored for the RSS figure")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    results = asyncio.run(run(args.objects))
    if args.json:
        print(json.dumps(results))
        return
    print(f"localkube on {os.cpu_count()} CPUs")
    for key, value in results.items():
        print(f"  {key:28s} {value:10.1f}")


if __name__ == "__main__":
    main()
