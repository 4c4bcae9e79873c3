"""Bringing the sandbox up, reporting on it and taking it down.

``up`` starts the control plane's localkube and one localkube per member
(simulated nodes and workloads on by default), installs Karmada
(``init``), starts ``karmada-controlplane``, then for every member runs the
real pull-mode flow: a bootstrap token, ``register`` (discovery with JWS and CA
pin, the agent's CSR, the member-side objects), and starts the agent with
the command line of the agent Deployment register created (there is no
kubelet to run it), reading its credentials from the Secret register wrote.
It returns once every Cluster is Ready. Everything runs in the background,
each program under a supervisor that restarts it when it dies
(:mod:`karmada.sandbox.supervisor`); ``sandbox.json`` in the directory records
the processes for ``status`` and ``down``.

Ports: every API server gets a fixed port chosen at the first ``up`` and kept
in ``ports.json``, which ``down`` leaves in place: a restarted server (by its
supervisor, or by ``down`` then ``up``) answers where the kubeconfigs already
point. A remembered port that another program took meanwhile is replaced, and
``up`` says so. Each program's ``/metrics`` gets its own loopback port the same
way (``<program>-metrics`` in ``ports.json``; ``up`` prints each URL), since
Karmada's default ``:8080`` can serve only one of them on a shared host. So
does each agent process's ``/healthz`` and ``/readyz`` (``<program>-healthz``),
instead of the ``:10357`` of register's Deployment.

Many members (``members_per_process`` > 1, for simulation only): the members
are cut, in order, into groups of that many; each group is one ``localkube
serve --fleet FILE`` process (an independent API server per member, each on
its member's remembered port) and one ``karmada-agent --fleet FILE`` process
for the group's pull members (an agent per member, each with its own
credentials from its own registration). Fleet files are 0600 in the sandbox
directory. Grouped agents run with ``--leader-elect=false``: each simulated
agent is the only candidate for its Lease, and an election among one would
cost a Lease write every 2 s per cluster for nothing. Registration stays the
real flow per member, ``REGISTER_CONCURRENCY`` at a time; a group's agent
process starts once all of the group's members are registered.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import shutil
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from karmada.clusterproxy.endpoint import Endpoint, publish, write_serving_pair
from karmada.install import InitOptions, init
from karmada.install.webhook import load_or_create
from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.kubeconfig import merge_kubeconfigs
from karmada.kube.resources import CLUSTERS, DEPLOYMENTS, SECRETS
from karmada.pki import BootstrapToken
from karmada.pki.pins import pins_for
from karmada.private_files import private_directory, write_private
from karmada.registration.identity import validate_agent_cluster_name
from karmada.registration.join import JoinOptions, join
from karmada.registration.member import AGENT_NAME, KUBECONFIG_SECRET, AgentSettings
from karmada.registration.register import RegisterOptions, register
from karmada.registration.tokens import create_token, delete_token
from karmada.sandbox import DEFAULT_DIR
from karmada.sandbox.processes import ProcessRecord, python_module, start, stop, wait_for_line

STATE_FILE = "sandbox.json"
PORTS_FILE = "ports.json"
CONTROL_PLANE = "karmada-apiserver"
WEBHOOK = "karmada-webhook"
CLUSTER_PROXY = "karmada-cluster-proxy"
READY_MARKER = "localkube serving on "
FLEET_READY_MARKER = "localkube fleet serving "
REGISTER_CONCURRENCY = 8  # registrations in flight: each is a few requests and a CSR the control plane approves
PROGRESS_EVERY = 50  # beyond this many members, progress comes as counts every this many, not a line per member
AGENT_FLEET_FLAGS = ("cluster-name", "cluster-api-endpoint", "karmada-kubeconfig", "kubeconfig")
# flags of the Deployments' command line the sandbox sets itself for a grouped agent process
# grouped members simulate clusters (and agents) that would have machines of their own: on the
# sandbox's few cores they yield the CPU to the control plane, which is what is being run (at 10,
# twenty grouped processes of weight 110 still outweighed the API server's 1,024 and starved it)
SIMULATION_NICENESS = 19
SANDBOX_AGENT_FLEET_FLAGS = ("leader-elect", "metrics-bind-address", "health-probe-bind-address")
CONTROLLER_MANAGER = "karmada-controlplane"
WEBHOOK_READY_MARKER = " serving on https://"


def metrics_port_name(program: str) -> str:
    """The key of ``program``'s metrics port in ``ports.json``."""
    return f"{program}-metrics"


def probe_port_name(program: str) -> str:
    """The key of ``program``'s health-probe port (``/healthz``, ``/readyz``) in ``ports.json``."""
    return f"{program}-healthz"


def agent_name(member: str) -> str:
    return f"karmada-agent-{member}"


def default_ready_timeout(members: int) -> float:
    """How long ``up`` waits for Ready once every member registered: 180 s, plus half a
    second a member beyond 100 (the first status of each agent queues behind the others)."""
    return 180.0 + 0.5 * max(0, members - 100)


@dataclass(frozen=True)
class Group:
    """The processes serving some members: one API server process (``server``) and, unless
    every member is in push mode, one agent process (``agent``)."""

    server: str
    agent: str | None
    members: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"server": self.server, "agent": self.agent, "members": self.members}


def plan_groups(members: list[str], push: set[str], per_process: int) -> list[Group]:
    """Today's layout for 1 (a process of its own per member's server and agent, named as
    before); else ``ceil(len(members) / per_process)`` groups of consecutive members."""
    if per_process < 1:
        raise SandboxError(f"--members-per-process must be at least 1, not {per_process}")
    if per_process == 1:
        return [Group(m, None if m in push else agent_name(m), [m]) for m in members]
    groups = []
    for index in range(math.ceil(len(members) / per_process)):
        chunk = members[index * per_process : (index + 1) * per_process]
        pull = any(m not in push for m in chunk)
        groups.append(Group(f"localkube-group{index + 1}", f"karmada-agent-group{index + 1}" if pull else None, chunk))
    return groups


def _metrics_flag(sandbox: Sandbox, program: str, say: Callable[[str], None]) -> str:
    port = sandbox.ports[metrics_port_name(program)]
    say(f"{program}: metrics on http://127.0.0.1:{port}/metrics")
    return f"--metrics-bind-address=127.0.0.1:{port}"


def _probe_flag(sandbox: Sandbox, program: str, say: Callable[[str], None]) -> str:
    port = sandbox.ports[probe_port_name(program)]
    say(f"{program}: health probes on http://127.0.0.1:{port}/healthz")
    return f"--health-probe-bind-address=127.0.0.1:{port}"


class SandboxError(Exception):
    """The sandbox cannot be brought up or found; the message says why."""


@dataclass
class SandboxOptions:
    """What ``local up`` builds."""

    directory: Path = DEFAULT_DIR
    members: list[str] = field(default_factory=lambda: ["member1", "member2", "member3"])
    nodes_per_member: int = 3
    node_cpu: str = "8"
    node_memory: str = "32Gi"
    node_pods: int = 110
    simulate_workloads: bool = True
    ready_timeout: float | None = None  # None: default_ready_timeout(len(members))
    webhook: bool = True  # start karmada-webhook and register it (the API server calls it if it can)
    controlplane_args: list[str] = field(default_factory=list)  # extra karmada-controlplane flags
    push_members: set[str] = field(default_factory=set)  # joined in Push mode (no agent); the rest register
    members_per_process: int = 1  # > 1: members grouped into fleet processes (simulation only)
    register_concurrency: int = REGISTER_CONCURRENCY


@dataclass
class Sandbox:
    """A running sandbox as recorded in its directory."""

    directory: Path
    processes: list[ProcessRecord]
    members: list[str]
    ports: dict[str, int] = field(default_factory=dict)
    groups: list[Group] = field(default_factory=list)
    push_members: set[str] = field(default_factory=set)
    members_per_process: int = 1

    @classmethod
    def load(cls, directory: Path) -> Sandbox | None:
        path = directory / STATE_FILE
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        processes = [ProcessRecord(**p) for p in data["processes"]]
        members = list(data["members"])
        push = set(data.get("pushMembers") or [])
        groups = [Group(g["server"], g.get("agent"), list(g["members"])) for g in data.get("groups") or []]
        per_process = int(data.get("membersPerProcess") or 1)
        ports = dict(data.get("ports") or {})
        return cls(directory, processes, members, ports, groups or plan_groups(members, push, 1), push, per_process)

    def save(self) -> None:
        state = {
            "processes": [p.to_dict() for p in self.processes],
            "members": self.members,
            "pushMembers": sorted(self.push_members),
            "membersPerProcess": self.members_per_process,
            "groups": [g.to_dict() for g in self.groups],
            "ports": self.ports,
        }
        write_private(self.directory / STATE_FILE, json.dumps(state, indent=1).encode())
        write_private(self.directory / PORTS_FILE, json.dumps(self.ports, indent=2).encode())

    def group_of(self) -> dict[str, Group]:
        """Each member's group."""
        return {member: group for group in self.groups for member in group.members}

    def fleet_file(self, process: str) -> Path:
        return self.directory / f"{process}.fleet.json"

    @property
    def run_dir(self) -> Path:
        return self.directory / "run"

    @property
    def karmada_config(self) -> Path:
        return self.directory / "karmada.config"

    @property
    def members_config(self) -> Path:
        return self.directory / "members.config"


def _check_directory(directory: Path) -> None:
    existing = Sandbox.load(directory)
    if existing is not None and any(p.alive() for p in existing.processes):
        raise SandboxError(f"a sandbox is already running in {directory}; `kubectl karmada local down` stops it")
    for name in ("karmada.config", "members.config"):
        if (directory / name).exists() and existing is None:
            raise SandboxError(
                f"{directory / name} exists and was not written by a sandbox; refusing to overwrite it "
                "(choose another --dir)"
            )


def _remembered_ports(directory: Path) -> dict[str, int]:
    try:
        data = json.loads((directory / PORTS_FILE).read_text())
    except (FileNotFoundError, ValueError):
        return {}
    return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # as the server will bind: SO_REUSEADDR, so connections in TIME_WAIT do not count
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _any_free_port(*taken: set[int]) -> int:
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if not any(port in ports for ports in taken):
            return port


def choose_ports(names: list[str], remembered: dict[str, int], say: Callable[[str], None]) -> dict[str, int]:
    """A port per API server: the remembered one while it is free, else a new one
    (linear in the number of names: the ports in use are kept in a set)."""
    ports: dict[str, int] = {}
    used: set[int] = set()
    others = set(remembered.values())
    for name in names:
        port = remembered.get(name)
        if not (port and port not in used and _port_free(port)):
            chosen = _any_free_port(used, others)
            if port:
                say(f"{name}: port {port} is taken by another program; using {chosen}")
            port = chosen
        ports[name] = port
        used.add(port)
    return ports


def _localkube(sandbox: Sandbox, name: str, extra: list[str]) -> tuple[ProcessRecord, Path]:
    data = private_directory(sandbox.directory / name)
    kubeconfig = data / "admin.kubeconfig"
    port = str(sandbox.ports[name])
    args = [*python_module("localkube"), "serve", "--port", port, "--data-dir", str(data), "--kubeconfig-out"]
    log = sandbox.directory / "logs" / f"{name}.log"
    record = start(name, [*args, str(kubeconfig), *extra], log, sandbox.run_dir)
    return record, kubeconfig


def _localkube_fleet(sandbox: Sandbox, group: Group, extra: list[str]) -> tuple[ProcessRecord, dict[str, Path]]:
    """One ``localkube serve --fleet`` process for the group's members, each on its own port."""
    clusters, kubeconfigs = [], {}
    for member in group.members:
        data = private_directory(sandbox.directory / member)
        kubeconfigs[member] = data / "admin.kubeconfig"
        clusters.append(
            {
                "name": member,
                "port": sandbox.ports[member],
                "dataDir": str(data),
                "kubeconfigOut": str(kubeconfigs[member]),
                "nodeNamePrefix": member,
            }
        )
    fleet = sandbox.fleet_file(group.server)
    write_private(fleet, json.dumps({"clusters": clusters}, indent=1).encode())
    args = [*python_module("localkube"), "serve", "--fleet", str(fleet), *extra]
    log = sandbox.directory / "logs" / f"{group.server}.log"
    record = start(group.server, args, log, sandbox.run_dir, niceness=SIMULATION_NICENESS)
    return record, kubeconfigs


async def up(options: SandboxOptions, say: Callable[[str], None]) -> Sandbox:
    """Start everything and wait until every member is Ready."""
    for name in options.members:
        problems = validate_agent_cluster_name(name)
        if problems:
            raise SandboxError(f'invalid member name "{name}": {problems[0]}')
    if len(set(options.members)) != len(options.members):
        raise SandboxError("member names must be unique")
    groups = plan_groups(options.members, options.push_members, options.members_per_process)
    directory = options.directory
    private_directory(directory)
    _check_directory(directory)
    began = time.monotonic()
    programs = [CONTROLLER_MANAGER, WEBHOOK, *(g.agent for g in groups if g.agent)]
    names = [CONTROL_PLANE, *options.members, WEBHOOK, CLUSTER_PROXY, *(metrics_port_name(p) for p in programs)]
    # every agent process its own probe port: register's Deployment says :10357, one per host
    names += [probe_port_name(g.agent) for g in groups if g.agent]
    ports = choose_ports(names, _remembered_ports(directory), say)
    sandbox = Sandbox(
        directory, [], list(options.members), ports, groups, set(options.push_members), options.members_per_process
    )
    try:
        await _bring_up(sandbox, options, say)
    except BaseException:
        say("start-up failed; stopping what was started")
        down(sandbox, lambda _: None)
        raise
    say(f"all {len(options.members)} members Ready in {time.monotonic() - began:.1f}s")
    return sandbox


async def _bring_up(sandbox: Sandbox, options: SandboxOptions, say: Callable[[str], None]) -> None:
    directory = sandbox.directory
    began = time.monotonic()
    control_plane_record, control_plane_kubeconfig = _localkube(sandbox, CONTROL_PLANE, [])
    simulation = [
        f"--simulate-nodes={options.nodes_per_member}",
        f"--node-cpu={options.node_cpu}",
        f"--node-memory={options.node_memory}",
        f"--node-pods={options.node_pods}",
    ]
    if options.simulate_workloads:
        simulation.append("--simulate-workloads")
    kubeconfigs: dict[str, Path] = {}
    servers: list[tuple[Group, ProcessRecord]] = []
    for group in sandbox.groups:
        if options.members_per_process == 1:
            member = group.members[0]
            record, kubeconfigs[member] = _localkube(sandbox, member, [*simulation, f"--node-name-prefix={member}"])
        else:
            record, paths = _localkube_fleet(sandbox, group, simulation)
            kubeconfigs.update(paths)
        servers.append((group, record))
    sandbox.processes.extend([control_plane_record, *(record for _, record in servers)])
    sandbox.save()
    line = await asyncio.to_thread(wait_for_line, control_plane_record, READY_MARKER, 30)
    say(f"{CONTROL_PLANE}: {line.split(READY_MARKER, 1)[1].strip()}")
    init_options, webhook = InitOptions(), None
    if options.webhook:
        # it starts (its interpreter and imports) while the members' servers come up and init
        # runs: init applies the configurations that make the API server call it last, and
        # nothing else is written before it serves (awaited with init, below)
        init_options, webhook = _start_webhook(sandbox, control_plane_kubeconfig, say)
    for group, record in servers:
        if options.members_per_process == 1:
            line = await asyncio.to_thread(wait_for_line, record, READY_MARKER, 30)
            say(f"{group.server}: {line.split(READY_MARKER, 1)[1].strip()}")
        else:
            # certificates and simulated nodes for each of its clusters: give a big group its time
            await asyncio.to_thread(wait_for_line, record, FLEET_READY_MARKER, 30 + len(group.members))
            say(
                f"{group.server}: {len(group.members)} API servers ({group.members[0]} .. {group.members[-1]})"
                f" serving ({time.monotonic() - began:.0f}s)"
            )
    config = from_kubeconfig(control_plane_kubeconfig)
    async with KubeClient(config) as client:
        if webhook is None:
            await init(client, init_options, lambda line: None)
        else:
            await asyncio.gather(init(client, init_options, lambda line: None), _webhook_serving(webhook, say))
        say("karmada: CRDs, namespaces and bootstrap RBAC installed")
        if options.webhook:
            say(f"karmada: webhook configurations point at {init_options.webhook_url}")
        proxy_flags, proxy_endpoint = _cluster_proxy(sandbox)
        controlplane = start(
            "karmada-controlplane",
            [
                *python_module("controlplane"),
                f"--kubeconfig={control_plane_kubeconfig}",
                _metrics_flag(sandbox, CONTROLLER_MANAGER, say),
                *proxy_flags,
                *options.controlplane_args,
            ],
            directory / "logs" / "karmada-controlplane.log",
            sandbox.run_dir,
        )
        sandbox.processes.append(controlplane)
        sandbox.save()
        await publish(client, proxy_endpoint)
        say(f"karmada: cluster proxy on {proxy_endpoint.server} (kubectl karmada logs/exec, proxy-config)")
        progress = _Progress(len(sandbox.members), say)
        gate = asyncio.Semaphore(max(1, options.register_concurrency))

        async def member_joined(name: str) -> tuple[Path, list[str]] | None:
            """Push: joined. Pull: registered; its credentials and agent command line."""
            async with gate:
                if name in sandbox.push_members:
                    await _join_push(client, name, kubeconfigs[name])
                    progress.done(name, f"{name}: joined in push mode (no agent)")
                    return None
                registered = await _register(
                    client, config.server, name, kubeconfigs[name], sandbox.directory, proxy_endpoint.server
                )
                if options.members_per_process > 1:
                    progress.done(name, f"{name}: registered (token, CSR approved)")
                return registered

        async def group_joined(group: Group) -> None:
            joined = await asyncio.gather(*(member_joined(m) for m in group.members))
            registered = {m: j for m, j in zip(group.members, joined, strict=True) if j is not None}
            if group.agent is None:
                return
            if options.members_per_process == 1:
                name = group.members[0]
                credentials, command = registered[name]
                _start_agent(sandbox, name, credentials, command, kubeconfigs[name], say)
                progress.done(name, f"{name}: registered (token, CSR approved) and its agent started")
            else:
                _start_agent_fleet(sandbox, group, registered, kubeconfigs, say)
                say(f"{group.agent}: started for {len(registered)} members ({time.monotonic() - began:.0f}s)")

        await asyncio.gather(*(group_joined(g) for g in sandbox.groups))
        _write_kubeconfigs(sandbox, control_plane_kubeconfig, kubeconfigs)
        timeout = options.ready_timeout
        if timeout is None:
            timeout = default_ready_timeout(len(sandbox.members))
        await _wait_ready(client, sandbox.members, timeout, sandbox, say)


class _Progress:
    """Registration progress a user can follow at any size: a line per member up to
    ``PROGRESS_EVERY`` members, beyond that a count every ``PROGRESS_EVERY`` with the time."""

    def __init__(self, total: int, say: Callable[[str], None]) -> None:
        self.total = total
        self.say = say
        self.count = 0
        self.began = time.monotonic()

    def done(self, name: str, line: str) -> None:
        self.count += 1
        if self.total <= PROGRESS_EVERY:
            self.say(line)
        elif self.count % PROGRESS_EVERY == 0 or self.count == self.total:
            elapsed = time.monotonic() - self.began
            self.say(f"members registered: {self.count}/{self.total} ({elapsed:.0f}s)")


def _start_webhook(sandbox: Sandbox, kubeconfig: Path, say: Callable[[str], None]) -> tuple[InitOptions, ProcessRecord]:
    """Certificates first (init reuses them for the configurations' CA bundle), then karmada-webhook
    on loopback; :func:`_webhook_serving` waits until it serves."""
    cert_dir = sandbox.directory / WEBHOOK
    load_or_create(cert_dir)
    port = sandbox.ports[WEBHOOK]
    record = start(
        WEBHOOK,
        [
            *python_module("webhook"),
            _metrics_flag(sandbox, WEBHOOK, say),
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={cert_dir}",
            f"--kubeconfig={kubeconfig}",
            "--allow-no-execute-taint-policy=true",
        ],
        sandbox.directory / "logs" / f"{WEBHOOK}.log",
        sandbox.run_dir,
    )
    sandbox.processes.append(record)
    sandbox.save()
    return InitOptions(webhook_url=f"https://127.0.0.1:{port}", webhook_cert_dir=cert_dir), record


async def _webhook_serving(record: ProcessRecord, say: Callable[[str], None]) -> None:
    line = await asyncio.to_thread(wait_for_line, record, WEBHOOK_READY_MARKER, 30)
    say(f"{WEBHOOK}: serving on https://{line.split(WEBHOOK_READY_MARKER, 1)[1].strip()}")


def _cluster_proxy(sandbox: Sandbox) -> tuple[list[str], Endpoint]:
    """The control plane's cluster-proxy flags on loopback: a serving certificate from the
    Karmada API server's CA (which agents and kubeconfigs already trust) and its client CA."""
    ca_dir = sandbox.directory / CONTROL_PLANE
    ca_cert, ca_key = (ca_dir / "ca.crt").read_bytes(), (ca_dir / "ca.key").read_bytes()
    cert, key = write_serving_pair(ca_cert, ca_key, ["127.0.0.1", "localhost"], sandbox.directory / CLUSTER_PROXY)
    port = sandbox.ports[CLUSTER_PROXY]
    flags = [
        f"--cluster-proxy-bind-address=127.0.0.1:{port}",
        f"--cluster-proxy-tls-cert-file={cert}",
        f"--cluster-proxy-tls-private-key-file={key}",
        f"--cluster-proxy-client-ca-file={ca_dir / 'ca.crt'}",
    ]
    return flags, Endpoint(f"https://127.0.0.1:{port}", ca_cert)


async def _register(
    control_plane: KubeClient, server: str, name: str, member_kubeconfig: Path, directory: Path, proxy_server: str
) -> tuple[Path, list[str]]:
    """Token and register, the same flow a user runs by hand; the agent's credentials
    (written from the Secret register created) and the command line of its Deployment."""
    token: BootstrapToken = await create_token(control_plane, ttl_seconds=3600, description=f"sandbox: {name}")
    member_config = from_kubeconfig(member_kubeconfig)
    settings = AgentSettings(
        cluster_name=name, cluster_api_endpoint=member_config.server, cluster_proxy_server=proxy_server
    )
    register_options = RegisterOptions(
        endpoint=server.removeprefix("https://"),
        token=token,
        ca_hashes=pins_for(control_plane.config.ca_pem),
        settings=settings,
        discovery_timeout=30,
        discovery_interval=0.5,
        # the control plane approves within a few hundred milliseconds of its start: a read every
        # 0.1 s instead of register's 1 s (a few GETs more per member, once) returns that much sooner
        csr_interval=0.1,
        rollout_timeout=0,
    )
    async with KubeClient(member_config) as member:
        try:
            await register(member, register_options, lambda line: None)
        finally:
            # the token served this one registration: a leftover would let anyone who read it ask again
            await delete_token(control_plane, token.id)
        deployment = await member.get(DEPLOYMENTS, AGENT_NAME, settings.namespace)
        secret = await member.get(SECRETS, KUBECONFIG_SECRET, settings.namespace)
    credentials = directory / name / "karmada-agent.kubeconfig"
    write_private(credentials, base64.b64decode(secret["data"][KUBECONFIG_SECRET]))
    command: list[str] = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    return credentials, command[1:]


def _start_agent(
    sandbox: Sandbox, name: str, credentials: Path, command: list[str], kubeconfig: Path, say: Callable[[str], None]
) -> None:
    """The agent with the command line of the Deployment register created (no kubelet runs it)."""
    args = [
        *python_module("agent"),
        *(f"--karmada-kubeconfig={credentials}" if arg.startswith("--karmada-kubeconfig=") else arg for arg in command),
        f"--kubeconfig={kubeconfig}",
        _metrics_flag(sandbox, agent_name(name), say if len(sandbox.members) <= PROGRESS_EVERY else lambda _: None),
        # after the Deployment's :10357, which only one agent on the host could bind (the last flag wins)
        _probe_flag(sandbox, agent_name(name), say if len(sandbox.members) <= PROGRESS_EVERY else lambda _: None),
    ]
    log = sandbox.directory / "logs" / f"karmada-agent-{name}.log"
    record = start(agent_name(name), args, log, sandbox.run_dir)
    sandbox.processes.append(record)
    sandbox.save()


def _flag_name(arg: str) -> str:
    return arg.split("=", 1)[0].removeprefix("--")


def _start_agent_fleet(
    sandbox: Sandbox,
    group: Group,
    registered: dict[str, tuple[Path, list[str]]],
    kubeconfigs: dict[str, Path],
    say: Callable[[str], None],
) -> None:
    """One ``karmada-agent --fleet`` process for the group's pull members: each entry its
    member's name, endpoint and credentials; the rest of the Deployments' command line
    (the same for every member) once, for all of them."""
    assert group.agent is not None
    agents, shared = [], None
    for name, (credentials, command) in registered.items():
        flags = {_flag_name(arg): arg.split("=", 1)[1] for arg in command if "=" in arg}
        agents.append(
            {
                "cluster-name": name,
                "kubeconfig": str(kubeconfigs[name]),
                "karmada-kubeconfig": str(credentials),
                "cluster-api-endpoint": flags["cluster-api-endpoint"],
            }
        )
        rest = [arg for arg in command if _flag_name(arg) not in AGENT_FLEET_FLAGS]
        if shared is None:
            shared = rest
        elif rest != shared:
            raise SandboxError(f"{name}: its agent's command line differs from the rest of {group.agent}: {rest}")
    fleet = sandbox.fleet_file(group.agent)
    write_private(fleet, json.dumps({"agents": agents}, indent=1).encode())
    args = [
        *python_module("agent"),
        f"--fleet={fleet}",
        *(arg for arg in shared or [] if _flag_name(arg) not in SANDBOX_AGENT_FLEET_FLAGS),
        # each simulated agent is the only one of its cluster: an election among one candidate
        # would cost a Lease write every 2 s per cluster and decide nothing
        "--leader-elect=false",
        _metrics_flag(sandbox, group.agent, say),
        # the Deployment's :10357 is one port per host: every group but the first would serve no probes
        _probe_flag(sandbox, group.agent, say),
    ]
    log = sandbox.directory / "logs" / f"{group.agent}.log"
    record = start(group.agent, args, log, sandbox.run_dir, niceness=SIMULATION_NICENESS)
    sandbox.processes.append(record)
    sandbox.save()


async def _join_push(control_plane: KubeClient, name: str, member_kubeconfig: Path) -> None:
    """``kubectl karmada join``: the control plane works this member itself."""
    member_config = from_kubeconfig(member_kubeconfig)
    async with KubeClient(member_config) as member:
        await join(control_plane, member, member_config, JoinOptions(cluster_name=name), lambda line: None)


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: members.config at 1,000 members
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _write_kubeconfigs(sandbox: Sandbox, control_plane: Path, members: dict[str, Path]) -> None:
    """``karmada.config`` and ``members.config`` (a context per member, in member order): one
    read of each member's kubeconfig, one write, linear in the number of members."""

    def renamed(path: Path, name: str) -> dict[str, Any]:
        data: dict[str, Any] = yaml.load(path.read_text(), Loader=_Loader)  # a safe loader (libyaml when present)
        data["clusters"][0]["name"] = name
        data["users"][0]["name"] = f"{name}-admin"
        data["contexts"] = [{"name": name, "context": {"cluster": name, "user": f"{name}-admin"}}]
        data["current-context"] = name
        return data

    def dump(data: dict[str, Any]) -> bytes:
        return yaml.dump(data, Dumper=_Dumper, sort_keys=False).encode()

    write_private(sandbox.karmada_config, dump(renamed(control_plane, CONTROL_PLANE)))
    merged = merge_kubeconfigs([renamed(members[name], name) for name in sandbox.members])
    write_private(sandbox.members_config, dump(merged))


def ready_members(clusters: list[dict[str, Any]]) -> set[str]:
    """The names of the Clusters whose Ready condition is True."""
    return {
        cluster["metadata"]["name"]
        for cluster in clusters
        if any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in (cluster.get("status") or {}).get("conditions") or []
        )
    }


async def _wait_ready(
    client: KubeClient, members: list[str], timeout: float, sandbox: Sandbox, say: Callable[[str], None]
) -> None:
    """Poll with one LIST of Clusters (not a GET per member); at many members, less often
    and with a count of the Ready ones every ten seconds."""
    deadline = time.monotonic() + timeout
    wanted = set(members)
    interval = 0.1 if len(members) <= PROGRESS_EVERY else 1.0
    began = last_said = time.monotonic()
    while True:
        listed = await client.list(CLUSTERS)
        ready = ready_members(listed.get("items") or []) & wanted
        if ready == wanted:
            return
        dead = [p.name for p in sandbox.processes if not p.alive()]
        if dead:
            raise SandboxError(f"{', '.join(dead)} stopped; see the logs in {sandbox.directory / 'logs'}")
        if time.monotonic() > deadline:
            missing = sorted(wanted - ready)
            shown = ", ".join(missing[:20]) + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
            raise SandboxError(f"{shown} not Ready after {timeout:g}s; see the logs in {sandbox.directory / 'logs'}")
        if len(members) > PROGRESS_EVERY and time.monotonic() - last_said >= 10:
            last_said = time.monotonic()
            say(f"members Ready: {len(ready)}/{len(members)} ({last_said - began:.0f}s)")
        await asyncio.sleep(interval)


def down(sandbox: Sandbox, say: Callable[[str], None]) -> None:
    """Stop every process (agents first, API servers last) and remove the sandbox's files,
    but for the remembered ports."""

    def rank(record: ProcessRecord) -> int:
        if record.name.startswith("karmada-agent"):
            return 0
        return 1 if record.name in ("karmada-controlplane", WEBHOOK) else 2

    for level in range(3):
        for record in stop([r for r in sandbox.processes if rank(r) == level]):
            say(f"stopped {record.name} (pid {record.pid})")
    for name in [CONTROL_PLANE, *sandbox.members, WEBHOOK, "logs", "run"]:
        _remove_tree(sandbox.directory / name)
    for group in sandbox.groups:
        for process in (group.server, group.agent):
            if process is not None:
                sandbox.fleet_file(process).unlink(missing_ok=True)
    for path in (sandbox.karmada_config, sandbox.members_config, sandbox.directory / STATE_FILE):
        path.unlink(missing_ok=True)


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
