"""Start-up cost of each program: import time, resident memory, modules loaded.

Run: ``python -m benchmarks.import_bench``. Each figure comes from a fresh
interpreter (median of five), so caches of this process do not flatter it.
The agent and the CLI must not load ``kubernetes_asyncio`` (about 25 MiB and
1,261 modules) unless a kubeconfig needs an exec credential plugin.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

TARGETS = {
    "python (baseline)": "",
    "kubectl karmada (CLI)": "import kubectl_karmada.cli",
    "karmada-agent": "import agent.cli, karmada.kube, karmada.api",
    "karmada-controlplane": "import controlplane.cli, karmada.kube, karmada.api, karmada.scheduling",
    "localkube": "import localkube.server",
    "kubernetes_asyncio (reference)": "import kubernetes_asyncio.client, kubernetes_asyncio.config",
}

PROBE = """
import resource, sys, time
began = time.perf_counter()
{statement}
elapsed = time.perf_counter() - began
import json
print(json.dumps({{
    "seconds": elapsed,
    "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "modules": len(sys.modules),
    "kubernetes_asyncio": "kubernetes_asyncio" in sys.modules,
}}))
"""


def measure(statement: str, runs: int = 5) -> dict[str, float | bool]:
    """Median import time and peak RSS of ``statement`` in fresh interpreters."""
    samples = []
    for _ in range(runs):
        output = subprocess.run(
            [sys.executable, "-c", PROBE.format(statement=statement or "pass")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        samples.append(json.loads(output))
    return {
        "seconds": statistics.median(s["seconds"] for s in samples),
        "rss_mib": statistics.median(s["rss_mib"] for s in samples),
        "modules": statistics.median(s["modules"] for s in samples),
        "kubernetes_asyncio": any(s["kubernetes_asyncio"] for s in samples),
    }


def main() -> None:
    print(f"{'program':32s} {'import s':>9s} {'RSS MiB':>8s} {'modules':>8s}  kubernetes_asyncio")
    for name, statement in TARGETS.items():
        result = measure(statement)
        print(
            f"{name:32s} {result['seconds']:9.3f} {result['rss_mib']:8.1f} {result['modules']:8.0f}  "
            f"{'loaded' if result['kubernetes_asyncio'] else 'no'}"
        )


if __name__ == "__main__":
    main()
