"""Time from ``kubectl karmada local up`` to every cluster Ready, and the
resident memory of the processes once idle.

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

from karmada.sandbox.sandbox import SandboxOptions, down, up


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure(members: int, idle: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        options = SandboxOptions(directory=Path(tmp), members=[f"member{i}" for i in range(1, members + 1)])
        began = time.monotonic()
        sandbox = asyncio.run(up(options, lambda _: None))
        elapsed = time.monotonic() - began
        try:
            time.sleep(idle)
            agents = [rss_mib(p.pid) for p in sandbox.processes if p.name.startswith("karmada-agent")]
            controlplane = [rss_mib(p.pid) for p in sandbox.processes if p.name == "karmada-controlplane"]
            servers = [rss_mib(p.pid) for p in sandbox.processes if p.name.startswith(("member", "karmada-apiserver"))]
        finally:
            down(sandbox, lambda _: None)
    return {
        "up_to_all_ready_s": elapsed,
        "agent_rss_median_mib": statistics.median(agents),
        "agent_rss_max_mib": max(agents),
        "controlplane_rss_mib": controlplane[0],
        "localkube_rss_median_mib": statistics.median(servers),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, nargs="+", default=[3, 10])
    parser.add_argument("--idle", type=float, default=15.0, help="seconds to idle before reading memory")
    args = parser.parse_args()
    for members in args.members:
        results = measure(members, args.idle)
        print(f"sandbox with {members} members")
        for key, value in results.items():
            print(f"  {key:28s} {value:8.1f}")


if __name__ == "__main__":
    main()
