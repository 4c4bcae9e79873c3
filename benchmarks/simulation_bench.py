"""CPU a simulating member spends per Deployment, at two fleet sizes.

Run: ``python -m benchmarks.simulation_bench`` (a few minutes; ``--sizes``
picks the fleet sizes). Each size gets a fresh ``localkube serve
--simulate-nodes ... --simulate-workloads`` child process; the benchmark
creates that many two-replica Deployments over 8 connections, waits until
the server is idle and every Deployment is available, and divides the
child's CPU time (from ``/proc``, so Linux only) by the number of
Deployments. The figure covers the API requests and the simulation's
ReplicaSets, Pods, scheduling and status writes. The goal is a flat line: the
cost per Deployment at 2,000 must be that at 200 within noise, because the
simulation's work is proportional to what changed, not to what is stored.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.resources import DEPLOYMENTS, NAMESPACES
from localkube.process import LocalKubeProcess

REPLICAS = 2
PODS_PER_NODE = 110
IDLE_CPU_S = 0.02  # less than this much CPU in half a second counts as idle


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return ticks / os.sysconf("SC_CLK_TCK")


def deployment(name: str) -> dict[str, object]:
    labels = {"app": name}
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }


async def create_deployments(kubeconfig: Path, namespace: str, count: int, clients: int = 8) -> None:
    config = from_kubeconfig(kubeconfig)
    sessions = [KubeClient(config) for _ in range(clients)]

    async def writer(client: KubeClient, start: int) -> None:
        for index in range(start, count, clients):
            await client.create(DEPLOYMENTS, deployment(f"web-{index}"), namespace)

    try:
        await asyncio.gather(*(writer(client, i) for i, client in enumerate(sessions)))
    finally:
        for client in sessions:
            await client.close()


async def all_available(kubeconfig: Path, namespace: str, count: int) -> bool:
    async with KubeClient(from_kubeconfig(kubeconfig)) as client:
        items = (await client.list(DEPLOYMENTS, namespace))["items"]
    ready = sum(1 for d in items if (d.get("status") or {}).get("availableReplicas") == REPLICAS)
    return len(items) == count and ready == count


async def settle(pid: int, kubeconfig: Path, namespace: str, count: int, timeout: float) -> None:
    """Wait until the server is idle and every Deployment is available. Polls
    CPU time, not the API, so the waiting costs the server nothing but the
    final check."""
    deadline = time.monotonic() + timeout
    last = cpu_seconds(pid)
    while time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        now = cpu_seconds(pid)
        idle = now - last < IDLE_CPU_S
        last = now
        if idle and await all_available(kubeconfig, namespace, count):
            return
    raise TimeoutError(f"{count} Deployments not available within {timeout:.0f}s")


async def measure(count: int, nodes: int, timeout: float) -> dict[str, float]:
    args = (
        f"--simulate-nodes={nodes}",
        f"--node-pods={PODS_PER_NODE}",
        "--node-cpu=64",
        "--node-memory=256Gi",
        "--simulate-workloads",
    )
    with tempfile.TemporaryDirectory() as tmp, LocalKubeProcess(Path(tmp) / "admin.kubeconfig", extra_args=args) as p:
        async with KubeClient(from_kubeconfig(p.kubeconfig)) as client:
            await client.create(NAMESPACES, {"metadata": {"name": "bench"}})
        await settle(p.pid, p.kubeconfig, "bench", 0, timeout)
        before = cpu_seconds(p.pid)
        began = time.monotonic()
        await create_deployments(p.kubeconfig, "bench", count)
        await settle(p.pid, p.kubeconfig, "bench", count, timeout)
        spent = cpu_seconds(p.pid) - before
        return {
            "deployments": float(count),
            "cpu_s": spent,
            "cpu_ms_per_deployment": spent / count * 1000,
            "wall_s": time.monotonic() - began,
        }


async def run(sizes: list[int], timeout: float) -> list[dict[str, float]]:
    # one node count for every size, enough room for the largest, so scheduling costs the same per Pod
    nodes = max(sizes) * REPLICAS // PODS_PER_NODE + 2
    return [await measure(count, nodes, timeout) for count in sizes]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000], help="Deployments per run (200 2000)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a run may take to settle (600)")
    parser.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    args = parser.parse_args()
    results = asyncio.run(run(args.sizes, args.timeout))
    if args.json:
        for result in results:
            print(json.dumps(result))
        return
    print(f"member simulation on {os.cpu_count()} CPUs, {REPLICAS} replicas per Deployment")
    for result in results:
        print(
            f"  {int(result['deployments']):6d} Deployments: {result['cpu_ms_per_deployment']:6.2f} ms CPU each"
            f" ({result['cpu_s']:.1f} s CPU, {result['wall_s']:.1f} s wall)"
        )


if __name__ == "__main__":
    main()
