"""The idle cost of one agent, with ``--agents`` of them in one ``karmada-agent --fleet`` process.

One control-plane localkube (in this process, in memory) with Karmada installed and
``karmada-controlplane`` running; ``--agents`` member localkubes (3
simulated nodes each, as the sandbox's) served by one helper process
(``--serve-members``); each member registered with the real flow (a
bootstrap token, ``register``, its CSR approved by the control plane),
``--concurrency`` at a time; then one ``karmada-agent --fleet`` process with
Karmada's default timings (status every 10 s, Lease renewed every 10 s,
leader election retried every 2 s) runs all the agents, each reading its
credentials from the Secret register wrote in its member.

Once every cluster is Ready and the fleet's ``/readyz`` passes,
``karmada-controlplane`` is stopped (so the control plane's request counts
are the agents' alone; an idle agent does not depend on it) and, after
``--settle`` seconds, for ``--seconds``:

- CPU seconds (``/proc/<pid>/stat``) and RSS of the agent process, total and
  per agent;
- requests per second each agent sends to the control plane and to its
  member, by verb and resource (the API servers' ``apiserver_request_total``),
  and the non-resource ones (health probe, version, discovery: the agent's
  ``rest_client_requests_total`` by host, minus the resource requests).

``--profile FILE`` then records the agent process with py-spy for another
``--seconds`` (collapsed stacks, ``py-spy record --format raw``; py-spy must
be installed) and prints the functions that hold most samples.

Run: ``python -m benchmarks.agent_fleet_bench [--agents 100] [--seconds 60] [--profile out.txt]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from karmada.install import InitOptions, init
from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.resources import CLUSTERS
from karmada.pki.pins import pins_for
from karmada.registration.member import AgentSettings
from karmada.registration.register import RegisterOptions, register
from karmada.registration.tokens import create_token, delete_token
from localkube.metrics import parse_request_totals
from localkube.server import LocalKube, ServerConfig
from localkube.simulation import SimulationConfig

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
BIN_DIR = Path(sys.executable).parent


# -- the members' helper process ---------------------------------------------------


async def serve_members(count: int, directory: Path) -> None:
    """``count`` member localkubes in this process until SIGTERM; ``directory/members.json`` lists them."""
    servers = []
    listing = []
    for index in range(1, count + 1):
        name = f"member{index}"
        simulation = SimulationConfig(nodes=3, node_prefix=name, workloads=True)
        # in memory, as the control plane's: a journal would fsync every node heartbeat
        server = LocalKube(ServerConfig(port=0, simulation=simulation))
        await server.start()
        kubeconfig = directory / name / "admin.kubeconfig"
        server.write_kubeconfig(kubeconfig)
        servers.append(server)
        listing.append({"name": name, "url": server.url, "kubeconfig": str(kubeconfig)})
    (directory / "members.json").write_text(json.dumps(listing))
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print(f"serving {count} members", flush=True)
    await stop.wait()
    for server in servers:
        await server.stop()


# -- measuring ----------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mib(pid: int) -> float:
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE / 2**20


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return 0, ""


def rest_requests_by_host(metrics: str) -> Counter[tuple[str, str]]:
    """(host, method) -> count, from ``rest_client_requests_total`` of a client's /metrics."""
    found: Counter[tuple[str, str]] = Counter()
    for line in metrics.splitlines():
        if not line.startswith("rest_client_requests_total{"):
            continue
        body, value = line.rsplit(" ", 1)
        labels = dict(
            part.split("=", 1) for part in body[len("rest_client_requests_total{") : -1].split(",") if "=" in part
        )
        found[(labels["host"].strip('"'), labels["method"].strip('"'))] += int(float(value))
    return found


def resource_requests(text: str) -> Counter[tuple[str, str]]:
    """(verb, resource[/subresource]) -> count from an API server's /metrics."""
    found: Counter[tuple[str, str]] = Counter()
    for labels, count in parse_request_totals(text).items():
        verb, _group, resource, subresource, _code = labels
        found[(verb, f"{resource}/{subresource}" if subresource else resource)] += count
    return found


class Snapshot:
    def __init__(self, when: float, cpu: float, rss: float) -> None:
        self.when, self.cpu, self.rss = when, cpu, rss
        self.control_plane: Counter[tuple[str, str]] = Counter()
        self.members: Counter[tuple[str, str]] = Counter()
        self.client: Counter[tuple[str, str]] = Counter()


async def snapshot(
    pid: int, control_plane: LocalKube, members: list[KubeClient], metrics_port: int, hosts: dict[str, str]
) -> Snapshot:
    taken = Snapshot(time.monotonic(), cpu_seconds(pid), rss_mib(pid))
    taken.control_plane = resource_requests(control_plane.metrics.render())
    pages = await asyncio.gather(*(client.raw_text("/metrics") for client in members))
    for page in pages:
        taken.members.update(resource_requests(page))
    _, text = await asyncio.to_thread(fetch, f"http://127.0.0.1:{metrics_port}/metrics")
    for (host, method), count in rest_requests_by_host(text).items():
        taken.client[(hosts.get(host, "member"), method)] += count
    return taken


# -- the run ------------------------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def register_all(
    control_plane: KubeClient, members: list[dict[str, Any]], concurrency: int
) -> tuple[float, float]:
    """Register every member (real token + CSR flow), ``concurrency`` at a time; (seconds, slowest)."""
    gate = asyncio.Semaphore(concurrency)
    slowest = 0.0

    async def one(member: dict[str, Any]) -> None:
        nonlocal slowest
        async with gate:
            started = time.monotonic()
            token = await create_token(control_plane, ttl_seconds=3600, description=f"bench: {member['name']}")
            settings = AgentSettings(cluster_name=member["name"], cluster_api_endpoint=member["url"])
            options = RegisterOptions(
                endpoint=control_plane.config.server.removeprefix("https://"),
                token=token,
                ca_hashes=pins_for(control_plane.config.ca_pem),
                settings=settings,
                discovery_timeout=60,
                discovery_interval=0.5,
                rollout_timeout=0,
            )
            async with KubeClient(from_kubeconfig(Path(member["kubeconfig"]))) as client:
                try:
                    await register(client, options, lambda line: None)
                finally:
                    await delete_token(control_plane, token.id)
            slowest = max(slowest, time.monotonic() - started)

    started = time.monotonic()
    await asyncio.gather(*(one(member) for member in members))
    return time.monotonic() - started, slowest


async def ready_count(client: KubeClient, names: set[str]) -> int:
    listing = await client.list(CLUSTERS)
    count = 0
    for cluster in listing.get("items") or []:
        conditions = (cluster.get("status") or {}).get("conditions") or []
        if cluster["metadata"]["name"] in names and any(
            c.get("type") == "Ready" and c.get("status") == "True" for c in conditions
        ):
            count += 1
    return count


async def wait(check: Any, timeout: float, what: str, process: subprocess.Popen[bytes] | None = None) -> float:
    started = time.monotonic()
    while not await check():
        if process is not None and process.poll() is not None:
            raise SystemExit(f"the agent process exited ({process.returncode}) while waiting for {what}")
        if time.monotonic() - started > timeout:
            raise SystemExit(f"timed out after {timeout:g}s waiting for {what}")
        await asyncio.sleep(3)  # listing 100 Clusters with their status costs the API server
    return time.monotonic() - started


def start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)


def terminate(process: subprocess.Popen[bytes], timeout: float = 30) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


async def run(options: argparse.Namespace, directory: Path) -> dict[str, Any]:
    say = print
    # in memory: a journal would fsync every Lease renewal, a cost of the API server, not of the agents
    control_plane = LocalKube(ServerConfig(port=0))
    await control_plane.start()
    cp_kubeconfig = directory / "control-plane" / "admin.kubeconfig"
    control_plane.write_kubeconfig(cp_kubeconfig)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        async with KubeClient(from_kubeconfig(cp_kubeconfig)) as admin:
            await init(admin, InitOptions(), lambda line: None)
            controlplane = start(
                [str(BIN_DIR / "karmada-controlplane"), f"--kubeconfig={cp_kubeconfig}", "--metrics-bind-address=0"],
                directory / "karmada-controlplane.log",
            )
            processes.append(controlplane)
            members_dir = directory / "members"
            members_dir.mkdir()
            helper = start(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.agent_fleet_bench",
                    "--serve-members",
                    str(options.agents),
                    "--directory",
                    str(members_dir),
                ],
                directory / "members.log",
            )
            processes.append(helper)
            listing_file = members_dir / "members.json"

            async def members_up() -> bool:
                return listing_file.exists()

            took = await wait(members_up, 600, "the member localkubes", helper)
            members: list[dict[str, Any]] = json.loads(listing_file.read_text())
            say(f"{len(members)} member localkubes up in {took:.1f}s (helper RSS {rss_mib(helper.pid):.0f} MiB)")
            seconds, slowest = await register_all(admin, members, options.concurrency)
            say(f"registered {len(members)} members in {seconds:.1f}s (slowest {slowest:.1f}s)")

            fleet_file = directory / "fleet.json"
            entries = [
                {"cluster-name": m["name"], "kubeconfig": m["kubeconfig"], "cluster-api-endpoint": m["url"]}
                for m in members
            ]
            fleet_file.write_text(json.dumps({"agents": entries}))
            probe_port, metrics_port = free_port(), free_port()
            agent = start(
                [
                    str(BIN_DIR / "karmada-agent"),
                    f"--fleet={fleet_file}",
                    f"--health-probe-bind-address=127.0.0.1:{probe_port}",
                    f"--metrics-bind-address=127.0.0.1:{metrics_port}",
                    *options.agent_args,
                ],
                directory / "karmada-agent-fleet.log",
            )
            processes.append(agent)
            names = {m["name"] for m in members}

            async def all_ready() -> bool:
                return await ready_count(admin, names) == len(names)

            took = await wait(all_ready, 900, "every cluster Ready", agent)
            say(f"all {len(names)} clusters Ready {took:.1f}s after the fleet started")

            async def readyz() -> bool:
                return (await asyncio.to_thread(fetch, f"http://127.0.0.1:{probe_port}/readyz"))[0] == 200

            await wait(readyz, 120, "the fleet's /readyz", agent)
            # in a thread: this loop serves the control plane's API, which must not pause meanwhile
            await asyncio.to_thread(terminate, controlplane)
            say(f"karmada-controlplane stopped; settling {options.settle:g}s")
            await asyncio.sleep(options.settle)

            cp_host = control_plane.url.removeprefix("https://")
            hosts = {cp_host: "control-plane"}
            clients = [KubeClient(from_kubeconfig(Path(m["kubeconfig"]))) for m in members]
            try:
                before = await snapshot(agent.pid, control_plane, clients, metrics_port, hosts)
                await asyncio.sleep(options.seconds)
                after = await snapshot(agent.pid, control_plane, clients, metrics_port, hosts)
                profile: list[tuple[str, int]] = []
                if options.profile:
                    profile = await asyncio.to_thread(record_profile, agent.pid, options.profile, options.seconds)
            finally:
                await asyncio.gather(*(client.close() for client in clients))
            if agent.poll() is not None:
                raise SystemExit(f"the agent process exited ({agent.returncode}) during the measurement")
            code = await asyncio.to_thread(terminate, agent)
            return report(options, before, after, code, profile)
    finally:
        for process in reversed(processes):
            terminate(process)
        await control_plane.stop()


def record_profile(pid: int, path: str, seconds: float) -> list[tuple[str, int]]:
    """py-spy's collapsed stacks of ``pid`` for ``seconds``; the functions on most samples (self and below)."""
    py_spy = BIN_DIR / "py-spy"
    command = [
        str(py_spy),
        "record",
        "--pid",
        str(pid),
        "--duration",
        str(int(seconds)),
        "--format",
        "raw",
        "--rate",
        "100",
        "--nonblocking",
        "-o",
        path,
    ]
    subprocess.run(command, check=True, capture_output=True)
    inclusive: Counter[str] = Counter()
    total = 0
    for line in Path(path).read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        samples = int(count)
        total += samples
        for frame in set(stack.split(";")):
            inclusive[frame] += samples
    return [("<all samples>", total), *inclusive.most_common(40)]


def report(
    options: argparse.Namespace, before: Snapshot, after: Snapshot, code: int, profile: list[tuple[str, int]]
) -> dict[str, Any]:
    elapsed = after.when - before.when
    agents: int = options.agents
    cpu = after.cpu - before.cpu
    load = os.getloadavg()
    print()
    print(f"idle over {elapsed:.0f}s, {agents} agents in one process (load average {load[0]:.2f} {load[1]:.2f})")
    print(
        f"  agent process CPU: {cpu:.2f} s = {cpu / elapsed * 100:.1f}% of a core; per agent "
        f"{cpu / agents * 1000:.1f} ms CPU per {elapsed:.0f}s ({cpu / elapsed / agents * 1000:.2f} ms/s)"
    )
    print(f"  agent process RSS: {after.rss:.0f} MiB, {after.rss / agents:.2f} MiB per agent")

    def rates(name: str, later: Counter[tuple[str, str]], earlier: Counter[tuple[str, str]]) -> float:
        delta = {key: later[key] - earlier[key] for key in later if later[key] - earlier[key] > 0}
        total = float(sum(delta.values())) / elapsed / agents
        print(f"  requests/s per agent to {name} (resource requests, by verb and resource): {total:.3f}")
        for (verb, resource), count in sorted(delta.items(), key=lambda item: -item[1]):
            print(f"    {verb:<6} {resource:<28} {count / elapsed / agents:.3f}")
        return total

    cp_resource = rates("the control plane", after.control_plane, before.control_plane)
    member_resource = rates("its member", after.members, before.members)
    client = {key: after.client[key] - before.client[key] for key in after.client}
    cp_all = sum(v for (host, _), v in client.items() if host == "control-plane") / elapsed / agents
    member_all = sum(v for (host, _), v in client.items() if host == "member") / elapsed / agents
    print(
        "  all requests/s per agent, from the agent's rest_client_requests_total (incl. /readyz, /version, discovery):"
    )
    print(f"    to the control plane {cp_all:.3f} (non-resource {max(cp_all - cp_resource, 0):.3f})")
    print(f"    to its member        {member_all:.3f} (non-resource {max(member_all - member_resource, 0):.3f})")
    print(f"  the fleet exited {code} on SIGTERM")
    if profile:
        total = profile[0][1] or 1
        print(f"  py-spy, {total} samples at 100/s (share of samples that have the function on the stack):")
        for frame, samples in profile[1:]:
            print(f"    {samples / total * 100:5.1f}%  {frame}")
    return {
        "agents": agents,
        "seconds": elapsed,
        "cpu_s": cpu,
        "cpu_ms_per_agent_per_s": cpu / elapsed / agents * 1000,
        "rss_mib": after.rss,
        "rss_mib_per_agent": after.rss / agents,
        "control_plane_rps_per_agent": cp_all,
        "member_rps_per_agent": member_all,
        "load_average": load,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0, help="the idle window measured (60)")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds after Ready before measuring (20)")
    parser.add_argument("--concurrency", type=int, default=10, help="registrations at a time (10)")
    parser.add_argument("--profile", metavar="FILE", help="then record py-spy's collapsed stacks into FILE")
    parser.add_argument("--keep", action="store_true", help="keep the working directory (logs)")
    parser.add_argument("--agent-arg", dest="agent_args", action="append", default=[], help="extra agent flag")
    parser.add_argument("--serve-members", type=int, help=argparse.SUPPRESS)  # the helper process
    parser.add_argument("--directory", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve_members:
        asyncio.run(serve_members(options.serve_members, Path(options.directory)))
        return
    directory = Path(tempfile.mkdtemp(prefix="agent-fleet-bench-"))
    try:
        asyncio.run(run(options, directory))
    finally:
        if options.keep:
            print(f"kept {directory}")
        else:
            import shutil

            with contextlib.suppress(OSError):
                shutil.rmtree(directory)


if __name__ == "__main__":
    main()
