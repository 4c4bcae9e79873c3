"""localkube's cost when it plays a fleet, and when 1,000 agents talk to one of it.

(a) ``localkube serve --clusters N --simulate-nodes 3`` for each N of
    ``--sizes`` (10, 100, 1000): seconds to serve all, RSS of the process,
    and its CPU seconds over ``--idle-seconds`` (30) with nothing changing;
    per cluster: the RSS beyond the smallest size divided by the extra
    clusters, and idle CPU divided by N.
(b) one control-plane localkube with ``--agents`` (1,000) identities, each as
    a karmada-agent is: a client certificate ``system:node:NAME`` in
    ``system:nodes``, its own ClusterRole, ClusterRoleBinding and RoleBinding
    (in its execution namespace ``karmada-es-NAME``), and 2 watches open
    (Works in its namespace, its Cluster by ``metadata.name``). Then: the
    server's idle CPU with those 2,000 watches open, and Lease renewals (a
    PUT of its own Lease in ``karmada-cluster``) from all identities round
    robin, ``--concurrency`` at a time for ``--seconds``: renewals per second
    and server CPU milliseconds per renewal.

CPU comes from ``/proc/PID/stat`` of the server alone (the load generator
runs in this process), memory is RSS; the load average is printed, since
other work on the machine slows the wall-clock figures.

Run: ``python -m benchmarks.localkube_fleet_bench [--sizes 10,100,1000] [--agents 1000]``
(``--skip-fleet``/``--skip-agents`` for one half).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import itertools
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from localkube.pki import CertificateAuthority, cert_pem

TICKS = os.sysconf("SC_CLK_TCK")
LOCALKUBE = [sys.executable, "-m", "localkube", "serve"]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def serve(args: list[str], ready: str, timeout: float) -> tuple[subprocess.Popen[str], float]:
    """Start ``localkube serve ARGS`` and wait for the line ``ready``; the process and seconds taken."""
    started = time.monotonic()
    process = subprocess.Popen([*LOCALKUBE, *args], stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stdout is not None
    # blocking reads (a select() beside a buffered readline misses lines already buffered)
    timer = threading.Timer(timeout, process.kill)
    timer.start()
    try:
        for line in process.stdout:
            if line.strip() == ready:
                return process, time.monotonic() - started
    finally:
        timer.cancel()
    process.kill()
    raise RuntimeError(f"localkube {' '.join(args)} did not serve in {timeout} s")


def stop(process: subprocess.Popen[str]) -> float:
    """SIGTERM and the seconds until the process ends."""
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(300)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()
    return time.monotonic() - started


def fleet_costs(sizes: list[int], idle: float) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for size in sizes:
        process, took = serve(
            ["--clusters", str(size), "--port", "0", "--simulate-nodes", "3"],
            f"localkube fleet serving {size} clusters",
            timeout=60 + size * 2,
        )
        try:
            time.sleep(5)  # the simulation's first writes settle
            before = cpu_seconds(process.pid)
            time.sleep(idle)
            idle_cpu = cpu_seconds(process.pid) - before
            rss = rss_mib(process.pid)
        finally:
            stopped = stop(process)
        row = {
            "clusters": size,
            "start_s": round(took, 1),
            "stop_s": round(stopped, 1),
            "rss_mib": round(rss, 1),
            "idle_cpu_s": round(idle_cpu, 3),
            "idle_cpu_ms_per_cluster_per_s": round(idle_cpu / idle / size * 1000, 4),
            "load": load(),
        }
        if rows:
            first = rows[0]
            row["rss_mib_per_extra_cluster"] = round((rss - first["rss_mib"]) / (size - first["clusters"]), 3)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


# -- (b) 1,000 agents on one control-plane localkube ---------------------------------------------
class Agent:
    """One agent identity: its TLS context (own client certificate) and HTTP session."""

    def __init__(self, name: str, ca: CertificateAuthority, directory: Path) -> None:
        self.name = name
        cert, key = ca.issue_client(f"system:node:{name}", ["system:nodes"])
        (directory / f"{name}.crt").write_bytes(cert)
        (directory / f"{name}.key").write_bytes(key)
        self.context = ssl.create_default_context(cadata=cert_pem(ca.cert).decode())
        self.context.load_cert_chain(directory / f"{name}.crt", directory / f"{name}.key")
        self.session: aiohttp.ClientSession | None = None
        self.lease: dict[str, Any] | None = None

    def open(self) -> aiohttp.ClientSession:
        self.session = aiohttp.ClientSession(
            # an agent renews every 10 s and keeps its connection (client-go keeps idle ones 90 s);
            # aiohttp's 15 s default would make each round-robin renewal a new TLS handshake
            connector=aiohttp.TCPConnector(ssl=self.context, limit=0, keepalive_timeout=300),
            timeout=aiohttp.ClientTimeout(total=None),
        )
        return self.session


def _rbac(name: str) -> list[tuple[str, dict[str, Any]]]:
    """The objects of one agent: its namespace, roles, bindings and Lease (as the CSR approver
    and the cluster controller would leave them)."""
    user = f"system:node:{name}"
    namespace = f"karmada-es-{name}"
    role = f"karmada-agent:{name}"
    return [
        ("/api/v1/namespaces", {"metadata": {"name": namespace}}),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            {
                "metadata": {"name": role},
                "rules": [
                    {
                        "apiGroups": ["cluster.karmada.io"],
                        "resources": ["clusters", "clusters/status"],
                        "resourceNames": [name],
                        "verbs": ["get", "list", "watch", "update", "patch"],
                    },
                    {
                        "apiGroups": ["coordination.k8s.io"],
                        "resources": ["leases"],
                        "resourceNames": [name],
                        "verbs": ["get", "update", "patch"],
                    },
                ],
            },
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            {
                "metadata": {"name": role},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
            },
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            {
                "metadata": {"name": f"{role}:works"},
                "rules": [
                    {
                        "apiGroups": ["work.karmada.io"],
                        "resources": ["works", "works/status"],
                        "verbs": ["get", "list", "watch", "update", "patch"],
                    }
                ],
            },
        ),
        (
            f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings",
            {
                "metadata": {"name": role, "namespace": namespace},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{role}:works"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
            },
        ),
        (
            "/apis/coordination.k8s.io/v1/namespaces/karmada-cluster/leases",
            {
                "metadata": {"name": name, "namespace": "karmada-cluster"},
                "spec": {"holderIdentity": name, "leaseDurationSeconds": 40},
            },
        ),
        ("/apis/cluster.karmada.io/v1alpha1/clusters", {"metadata": {"name": name}, "spec": {"syncMode": "Pull"}}),
    ]


async def _post_all(session: aiohttp.ClientSession, url: str, objects: list[tuple[str, dict[str, Any]]]) -> None:
    limit = asyncio.Semaphore(32)

    async def post(path: str, body: dict[str, Any]) -> None:
        async with limit, session.post(url + path, json=body) as response:
            if response.status not in (201, 409):
                raise RuntimeError(f"POST {path}: {response.status} {await response.text()}")

    await asyncio.gather(*(post(path, body) for path, body in objects))


async def _watch(agent: Agent, url: str, path: str, opened: asyncio.Event | None = None) -> None:
    assert agent.session is not None
    async with agent.session.get(url + path) as response:
        if response.status != 200:
            raise RuntimeError(f"watch {path}: {response.status} {await response.text()}")
        if opened is not None:
            opened.set()
        async for _line in response.content:
            pass


async def agents_costs(count: int, concurrency: int, seconds: float, idle: float) -> dict[str, Any]:
    top = Path(tempfile.mkdtemp(prefix="fleet-bench-"))
    process = _serve_one(top)
    try:
        config = yaml.safe_load((top / "admin.kubeconfig").read_text())
        url = config["clusters"][0]["cluster"]["server"]
        ca = CertificateAuthority.load(top / "data" / "ca.crt", top / "data" / "ca.key")
        admin_context = ssl.create_default_context(cadata=cert_pem(ca.cert).decode())
        cert, key = ca.issue_client("kubernetes-admin", ["system:masters"])
        (top / "admin.crt").write_bytes(cert)
        (top / "admin.key").write_bytes(key)
        admin_context.load_cert_chain(top / "admin.crt", top / "admin.key")
        crds = Path(__file__).resolve().parents[1] / "manifests" / "crds"
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=admin_context)) as session:
            objects: list[tuple[str, dict[str, Any]]] = []
            for crd_file in sorted(crds.glob("*.yaml")):
                for doc in yaml.safe_load_all(crd_file.read_text()):
                    if doc and doc.get("kind") == "CustomResourceDefinition":
                        objects.append(("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", doc))
            await _post_all(session, url, objects)
            await _post_all(session, url, [("/api/v1/namespaces", {"metadata": {"name": "karmada-cluster"}})])
            await asyncio.sleep(1)  # CRDs established
            names = [f"member{i}" for i in range(1, count + 1)]
            setup_started = time.monotonic()
            everything = [item for name in names for item in _rbac(name)]
            for kind in ("/api/v1/namespaces", "/apis/rbac", "/apis/coordination", "/apis/cluster"):
                await _post_all(session, url, [o for o in everything if o[0].startswith(kind)])
            setup = time.monotonic() - setup_started
        agents = [Agent(name, ca, top) for name in names]
        for agent in agents:
            agent.open()
        watches: list[asyncio.Task[None]] = []
        opened: list[asyncio.Event] = []
        for agent in agents:
            for path in (
                f"/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-{agent.name}/works?watch=true&allowWatchBookmarks=true",
                f"/apis/cluster.karmada.io/v1alpha1/clusters?watch=true&fieldSelector=metadata.name%3D{agent.name}",
            ):
                event = asyncio.Event()
                opened.append(event)
                watches.append(asyncio.create_task(_watch(agent, url, path, event)))
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in opened)), 300)
        await asyncio.sleep(3)
        before = cpu_seconds(process.pid)
        await asyncio.sleep(idle)
        idle_cpu = cpu_seconds(process.pid) - before
        for agent in agents:  # each agent reads its Lease once, then renews it with the resourceVersion it got
            assert agent.session is not None
            path = f"/apis/coordination.k8s.io/v1/namespaces/karmada-cluster/leases/{agent.name}"
            async with agent.session.get(url + path) as response:
                agent.lease = await response.json()
        robin = itertools.cycle(agents)
        done = 0
        failed = 0
        deadline = time.monotonic() + seconds

        async def renew() -> None:
            nonlocal done, failed
            while time.monotonic() < deadline:
                agent = next(robin)
                lease = agent.lease
                assert lease is not None and agent.session is not None
                now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
                lease["spec"]["renewTime"] = now
                path = f"/apis/coordination.k8s.io/v1/namespaces/karmada-cluster/leases/{agent.name}"
                agent.lease = None  # no two renewals of one Lease at once
                async with agent.session.put(url + path, json=lease) as response:
                    body = await response.json()
                if response.status == 200:
                    done += 1
                    agent.lease = body
                else:
                    failed += 1
                    async with agent.session.get(url + path) as response:
                        agent.lease = await response.json()

        cpu_before = cpu_seconds(process.pid)
        started = time.monotonic()
        await asyncio.gather(*(renew() for _ in range(concurrency)))
        elapsed = time.monotonic() - started
        cpu = cpu_seconds(process.pid) - cpu_before
        result = {
            "agents": count,
            "watches": len(watches),
            "setup_s": round(setup, 1),
            "server_rss_mib": round(rss_mib(process.pid), 1),
            "idle_cpu_s_per_s_with_watches": round(idle_cpu / idle, 4),
            "renewals": done,
            "renewal_failures": failed,
            "renewals_per_s": round(done / elapsed, 1),
            "server_cpu_ms_per_renewal": round(cpu / max(done, 1) * 1000, 3),
            "server_cpu_share": round(cpu / elapsed, 2),
            "load": load(),
        }
        for task in watches:
            task.cancel()
        await asyncio.gather(*watches, return_exceptions=True)
        for agent in agents:
            if agent.session is not None:
                await agent.session.close()
        print(json.dumps(result), flush=True)
        return result
    finally:
        stop(process)


def _serve_one(top: Path) -> subprocess.Popen[str]:
    """The control-plane localkube (its CA in its data directory, for the agents' certificates)."""
    process = subprocess.Popen(
        [*LOCALKUBE, "--port", "0", "--data-dir", str(top / "data"), "--kubeconfig-out", str(top / "admin.kubeconfig")],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("localkube serving on "):
        process.kill()
        raise RuntimeError(f"localkube did not serve: {line!r}")
    return process


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,1000", help="fleet sizes for (a)")
    parser.add_argument("--idle-seconds", type=float, default=30)
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--skip-fleet", action="store_true")
    parser.add_argument("--skip-agents", action="store_true")
    args = parser.parse_args()
    print(json.dumps({"load_at_start": load(), "cpus": os.cpu_count()}), flush=True)
    if not args.skip_fleet:
        fleet_costs([int(s) for s in args.sizes.split(",")], args.idle_seconds)
    if not args.skip_agents:
        asyncio.run(agents_costs(args.agents, args.concurrency, args.seconds, min(args.idle_seconds, 20)))


if __name__ == "__main__":
    main()
