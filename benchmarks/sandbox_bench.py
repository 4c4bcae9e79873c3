"""Time from ``kubectl karmada local up`` to every cluster Ready, the time to
apply ``--works`` Works in member1, and the resident memory of the processes
once idle (member1's agent holding those Works).

Run: ``python -m benchmarks.sandbox_bench [--members 3 10]``. Each size gets a
fresh sandbox in a temporary directory; RSS is read from /proc after the
sandbox idled for ``--idle`` seconds (agents and control plane have done their
first rounds of status reporting by then).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.resources import WORKS
from karmada.sandbox.processes import ProcessRecord
from karmada.sandbox.sandbox import Sandbox, SandboxOptions, down, up


def _program(record: ProcessRecord) -> int:
    """The program's PID (``record.pid`` is its supervisor's)."""
    return record.program_pid() or record.pid


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _apply_works(sandbox: Sandbox, count: int) -> float:
    """``count`` Works (one ConfigMap each) for member1; seconds until all are Applied."""
    began = time.monotonic()
    async with KubeClient(from_kubeconfig(sandbox.karmada_config)) as client:
        for index in range(count):
            name = f"bench-{index}"
            manifest = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": name,
                    "namespace": "default",
                    "labels": {"karmada.io/managed": "true"},
                    "annotations": {"work.karmada.io/name": name, "work.karmada.io/namespace": "karmada-es-member1"},
                },
                "data": {"index": str(index)},
            }
            work = {
                "apiVersion": "work.karmada.io/v1alpha1",
                "kind": "Work",
                "metadata": {"name": name, "namespace": "karmada-es-member1"},
                "spec": {"workload": {"manifests": [manifest]}},
            }
            await client.create(WORKS, work, "karmada-es-member1")
        while True:
            works = (await client.list(WORKS, "karmada-es-member1")).get("items") or []
            applied = [
                w
                for w in works
                if any(
                    c["type"] == "Applied" and c["status"] == "True"
                    for c in (w.get("status") or {}).get("conditions") or []
                )
            ]
            if len(applied) >= count:
                return time.monotonic() - began
            await asyncio.sleep(0.2)


def measure(members: int, idle: float, works: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        options = SandboxOptions(directory=Path(tmp), members=[f"member{i}" for i in range(1, members + 1)])
        began = time.monotonic()
        sandbox = asyncio.run(up(options, lambda _: None))
        elapsed = time.monotonic() - began
        try:
            applied = asyncio.run(_apply_works(sandbox, works)) if works else 0.0
            time.sleep(idle)
            agents = [rss_mib(_program(p)) for p in sandbox.processes if p.name.startswith("karmada-agent")]
            loaded = rss_mib(next(_program(p) for p in sandbox.processes if p.name == "karmada-agent-member1"))
            controlplane = [rss_mib(_program(p)) for p in sandbox.processes if p.name == "karmada-controlplane"]
            names = ("member", "karmada-apiserver")
            servers = [rss_mib(_program(p)) for p in sandbox.processes if p.name.startswith(names)]
        finally:
            down(sandbox, lambda _: None)
    return {
        "up_to_all_ready_s": elapsed,
        f"apply_{works}_works_s": applied,
        "agent_rss_median_mib": statistics.median(agents),
        f"agent_rss_with_{works}_works_mib": loaded,
        "agent_rss_max_mib": max(agents),
        "controlplane_rss_mib": controlplane[0],
        "localkube_rss_median_mib": statistics.median(servers),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, nargs="+", default=[3, 10])
    parser.add_argument("--idle", type=float, default=15.0, help="seconds to idle before reading memory")
    parser.add_argument("--works", type=int, default=100, help="Works (one ConfigMap each) applied in member1")
    args = parser.parse_args()
    for members in args.members:
        results = measure(members, args.idle, args.works)
        print(f"sandbox with {members} members")
        for key, value in results.items():
            print(f"  {key:28s} {value:8.1f}")


if __name__ == "__main__":
    main()
