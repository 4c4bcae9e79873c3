"""Throughput, latency and memory of localkube, measured from outside the process.

Run: ``python -m benchmarks.localkube_bench`` (about a minute and a half;
``--objects`` sets the large run). The server runs as its own ``localkube
serve`` process and the clients talk to it over TLS with the admin
certificate, the way every program of this project does. Goals on a 2-core
machine: at least 1,000 writes/s with 8 clients, watch delivery p99 under 50 ms
with 10 watchers, 100,000 small ConfigMaps in under 1 GiB of server RSS (the
large run starts from a data directory holding them, written with the journal's
own snapshot writer: creating them over HTTP would take minutes).

Also measured: the write rate with ``--data-dir`` (every answer waits for the
journal's fsync; concurrent writes share one) against the in-memory rate, and
paged lists of 500 in a namespace of 10,000 and of ``--objects`` ConfigMaps,
walking every page: the first page, the middle one and the median page; and
the store's own cost of a page (without HTTP, TLS and JSON, which dominate the
figures above and share the machine's noise). A page costs its size, so the
figures at both sizes should match within noise.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.resources import CONFIGMAPS, NAMESPACES
from localkube.journal import Journal
from localkube.process import LocalKubeProcess
from localkube.store import Store


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


async def page_walk(kubeconfig: Path, namespace: str) -> list[float]:
    """Milliseconds for each page of 500 of one list, following its continue tokens to the end."""
    times: list[float] = []
    async with KubeClient(from_kubeconfig(kubeconfig)) as client:
        token = ""
        while True:
            params = {"limit": "500", "continue": token} if token else {"limit": "500"}
            began = time.perf_counter()
            page = await client.list(CONFIGMAPS, namespace, **params)
            times.append((time.perf_counter() - began) * 1000)
            token = page["metadata"].get("continue", "")
            if not token:
                return times


def store_pages(results: dict[str, float], template: dict[str, Any], counts: tuple[int, ...]) -> None:
    """Microseconds for a page of 500 in the store alone (no HTTP, TLS or JSON), first and middle,
    also with 1,000 changes since the page's snapshot to undo."""
    for count in counts:
        store = Store()
        for index in range(count):
            obj = copy.deepcopy(template)
            obj["metadata"].update(name=f"bulk-{index}", namespace="bulk")
            store.put("/configmaps", obj, "ADDED")
        label = f"{count // 1000}k"
        snapshot = {"rv": store.rv, "limit": 500}
        middle = {**snapshot, "start": f"bulk/bulk-{count // 2}"}
        results[f"store_page_{label}_first_us"] = timed(store, snapshot)
        results[f"store_page_{label}_middle_us"] = timed(store, middle)
        first = store.page("/configmaps", "bulk", rv=store.rv, limit=500).items
        for index in range(1000):
            store.put("/configmaps", copy.deepcopy(first[index % 500]), "MODIFIED")
        results[f"store_page_{label}_middle_1000_changes_us"] = timed(store, middle)


def timed(store: Store, options: dict[str, Any], rounds: int = 20) -> float:
    """Median microseconds of ``rounds`` pages of ConfigMaps in namespace ``bulk``."""
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        store.page("/configmaps", "bulk", **options)
        times.append((time.perf_counter() - began) * 1e6)
    return statistics.median(times)


async def settle(kubeconfig: Path) -> None:
    """Wait until a new server's start-up work (its controllers' first pass) is done."""
    async with KubeClient(from_kubeconfig(kubeconfig)) as client:
        for _ in range(3):
            await client.list(CONFIGMAPS, "default", limit="1")


def page_figures(results: dict[str, float], label: str, times: list[float]) -> None:
    results[f"page_{label}_first_ms"] = times[0]
    results[f"page_{label}_middle_ms"] = times[len(times) // 2]
    results[f"page_{label}_median_ms"] = statistics.median(times[:-1] or times)  # the last page may be short


async def durable_writes(directory: Path, results: dict[str, float]) -> None:
    """Write rates of a server with a data directory (fsync before every answer)."""
    data = directory / "data"
    with LocalKubeProcess(directory / "durable.kubeconfig", data_dir=data) as process:
        kubeconfig = process.kubeconfig
        for name in ("w1", "w8"):
            await make_namespace(kubeconfig, name)
        results["durable_writes_per_s_1_client"] = await create_many(kubeconfig, "w1", 1000, 1, "one")
        results["durable_writes_per_s_8_clients"] = await create_many(kubeconfig, "w8", 4000, 8, "eight")
        results["durable_journal_kib"] = (data / "state" / "journal.jsonl").stat().st_size / 1024


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
    with tempfile.TemporaryDirectory() as tmp:
        await durable_writes(Path(tmp), results)
    with tempfile.TemporaryDirectory() as tmp, LocalKubeProcess(Path(tmp) / "admin.kubeconfig") as process:
        kubeconfig = process.kubeconfig
        results["rss_idle_mib"] = rss_mib(process.pid)
        for name in ("w1", "w8", "watch", "list"):
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
        page_figures(results, "10k", await page_walk(kubeconfig, "list"))
        results["rss_10k_mib"] = rss_mib(process.pid)
        async with KubeClient(from_kubeconfig(kubeconfig)) as client:
            template = await client.get(CONFIGMAPS, "item-0", "list")
            namespace = await client.get(NAMESPACES, "list")
    store_pages(results, template, (10_000, objects))
    with tempfile.TemporaryDirectory() as tmp:
        # creating 100,000 objects over HTTP takes minutes: store them as the API did, in a snapshot
        seed(Path(tmp) / "data", template, namespace, objects)
        with LocalKubeProcess(Path(tmp) / "large.kubeconfig", data_dir=Path(tmp) / "data") as large:
            await settle(large.kubeconfig)
            page_figures(results, f"{objects // 1000}k", await page_walk(large.kubeconfig, "bulk"))
            results["objects"] = float(objects)
            results["rss_mib"] = rss_mib(large.pid)
    return results


def seed(data: Path, template: dict[str, Any], namespace: dict[str, Any], count: int) -> None:
    """A data directory holding namespace ``bulk`` with ``count`` copies of a stored ConfigMap."""
    bulk_namespace = copy.deepcopy(namespace)
    bulk_namespace["metadata"].update(name="bulk", uid=str(uuid.uuid4()), resourceVersion="1")
    bulk_namespace["metadata"]["labels"] = {"kubernetes.io/metadata.name": "bulk"}
    configmaps: dict[tuple[str, str], dict[str, Any]] = {}
    for index in range(count):
        obj = copy.deepcopy(template)
        obj["metadata"].update(name=f"bulk-{index}", namespace="bulk", uid=str(uuid.uuid4()))
        obj["metadata"]["resourceVersion"] = str(index + 2)
        configmaps[("bulk", f"bulk-{index}")] = obj
    journal = Journal(data / "state")
    journal.compact(count + 1, {"/namespaces": {("", "bulk"): bulk_namespace}, "/configmaps": configmaps})
    journal.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--objects", type=int, default=100_000, help="ConfigMaps in the large namespace (paging and RSS figures)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    results = asyncio.run(run(args.objects))
    if args.json:
        print(json.dumps(results))
        return
    print(f"localkube on {os.cpu_count()} CPUs")
    for key, value in results.items():
        print(f"  {key:40s} {value:10.1f}")


if __name__ == "__main__":
    main()
