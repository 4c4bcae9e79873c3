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
Karmada's default ``:8080`` can serve only one of them on a shared host.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

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
READY_MARKER = "localkube serving on "
CONTROLLER_MANAGER = "karmada-controlplane"
WEBHOOK_READY_MARKER = " serving on https://"


def metrics_port_name(program: str) -> str:
    """The key of ``program``'s metrics port in ``ports.json``."""
    return f"{program}-metrics"


def agent_name(member: str) -> str:
    return f"karmada-agent-{member}"


def _metrics_flag(sandbox: Sandbox, program: str, say: Callable[[str], None]) -> str:
    port = sandbox.ports[metrics_port_name(program)]
    say(f"{program}: metrics on http://127.0.0.1:{port}/metrics")
    return f"--metrics-bind-address=127.0.0.1:{port}"


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
    ready_timeout: float = 180.0
    webhook: bool = True  # start karmada-webhook and register it (the API server calls it if it can)
    controlplane_args: list[str] = field(default_factory=list)  # extra karmada-controlplane flags
    push_members: set[str] = field(default_factory=set)  # joined in Push mode (no agent); the rest register


@dataclass
class Sandbox:
    """A running sandbox as recorded in its directory."""

    directory: Path
    processes: list[ProcessRecord]
    members: list[str]
    ports: dict[str, int] = field(default_factory=dict)

    @classmethod
    def load(cls, directory: Path) -> Sandbox | None:
        path = directory / STATE_FILE
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        processes = [ProcessRecord(**p) for p in data["processes"]]
        return cls(directory, processes, list(data["members"]), dict(data.get("ports") or {}))

    def save(self) -> None:
        state = {"processes": [p.to_dict() for p in self.processes], "members": self.members, "ports": self.ports}
        write_private(self.directory / STATE_FILE, json.dumps(state, indent=2).encode())
        write_private(self.directory / PORTS_FILE, json.dumps(self.ports, indent=2).encode())

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


def _any_free_port(taken: set[int]) -> int:
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in taken:
            return port


def choose_ports(names: list[str], remembered: dict[str, int], say: Callable[[str], None]) -> dict[str, int]:
    """A port per API server: the remembered one while it is free, else a new one."""
    ports: dict[str, int] = {}
    for name in names:
        port = remembered.get(name)
        if port and port not in ports.values() and _port_free(port):
            ports[name] = port
            continue
        ports[name] = _any_free_port(set(ports.values()) | set(remembered.values()))
        if port:
            say(f"{name}: port {port} is taken by another program; using {ports[name]}")
    return ports


def _localkube(sandbox: Sandbox, name: str, extra: list[str]) -> tuple[ProcessRecord, Path]:
    data = private_directory(sandbox.directory / name)
    kubeconfig = data / "admin.kubeconfig"
    port = str(sandbox.ports[name])
    args = [*python_module("localkube"), "serve", "--port", port, "--data-dir", str(data), "--kubeconfig-out"]
    log = sandbox.directory / "logs" / f"{name}.log"
    record = start(name, [*args, str(kubeconfig), *extra], log, sandbox.run_dir)
    return record, kubeconfig


async def up(options: SandboxOptions, say: Callable[[str], None]) -> Sandbox:
    """Start everything and wait until every member is Ready."""
    for name in options.members:
        problems = validate_agent_cluster_name(name)
        if problems:
            raise SandboxError(f'invalid member name "{name}": {problems[0]}')
    if len(set(options.members)) != len(options.members):
        raise SandboxError("member names must be unique")
    directory = options.directory
    private_directory(directory)
    _check_directory(directory)
    began = time.monotonic()
    programs = [CONTROLLER_MANAGER, WEBHOOK, *(agent_name(m) for m in options.members)]
    names = [CONTROL_PLANE, *options.members, WEBHOOK, *(metrics_port_name(p) for p in programs)]
    ports = choose_ports(names, _remembered_ports(directory), say)
    sandbox = Sandbox(directory, [], list(options.members), ports)
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
    servers: dict[str, tuple[ProcessRecord, Path]] = {CONTROL_PLANE: _localkube(sandbox, CONTROL_PLANE, [])}
    simulation = [
        f"--simulate-nodes={options.nodes_per_member}",
        f"--node-cpu={options.node_cpu}",
        f"--node-memory={options.node_memory}",
        f"--node-pods={options.node_pods}",
    ]
    if options.simulate_workloads:
        simulation.append("--simulate-workloads")
    for member in options.members:
        servers[member] = _localkube(sandbox, member, [*simulation, f"--node-name-prefix={member}"])
    sandbox.processes.extend(record for record, _ in servers.values())
    sandbox.save()
    for name, (record, _) in servers.items():
        line = await asyncio.to_thread(wait_for_line, record, READY_MARKER, 30)
        say(f"{name}: {line.split(READY_MARKER, 1)[1].strip()}")
    control_plane_kubeconfig = servers[CONTROL_PLANE][1]
    config = from_kubeconfig(control_plane_kubeconfig)
    init_options = InitOptions()
    if options.webhook:
        init_options = await _start_webhook(sandbox, control_plane_kubeconfig, say)
    async with KubeClient(config) as client:
        await init(client, init_options, lambda line: None)
        say("karmada: CRDs, namespaces and bootstrap RBAC installed")
        if options.webhook:
            say(f"karmada: webhook configurations point at {init_options.webhook_url}")
        controlplane = start(
            "karmada-controlplane",
            [
                *python_module("controlplane"),
                f"--kubeconfig={control_plane_kubeconfig}",
                _metrics_flag(sandbox, CONTROLLER_MANAGER, say),
                *options.controlplane_args,
            ],
            directory / "logs" / "karmada-controlplane.log",
            sandbox.run_dir,
        )
        sandbox.processes.append(controlplane)
        sandbox.save()
        await asyncio.gather(
            *(
                _join_push(client, name, servers[name][1], say)
                if name in options.push_members
                else _join(sandbox, client, config.server, name, servers[name][1], options, say)
                for name in options.members
            )
        )
        _write_kubeconfigs(sandbox, control_plane_kubeconfig, {m: servers[m][1] for m in options.members})
        await _wait_ready(client, options.members, options.ready_timeout, sandbox)


async def _start_webhook(sandbox: Sandbox, kubeconfig: Path, say: Callable[[str], None]) -> InitOptions:
    """Certificates first (init reuses them for the configurations' CA bundle), then karmada-webhook on loopback."""
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
    await asyncio.to_thread(wait_for_line, record, WEBHOOK_READY_MARKER, 30)
    url = f"https://127.0.0.1:{port}"
    say(f"{WEBHOOK}: serving on {url}")
    return InitOptions(webhook_url=url, webhook_cert_dir=cert_dir)


async def _join(
    sandbox: Sandbox,
    control_plane: KubeClient,
    server: str,
    name: str,
    member_kubeconfig: Path,
    options: SandboxOptions,
    say: Callable[[str], None],
) -> None:
    """Token, register, agent: the same flow a user runs by hand."""
    token: BootstrapToken = await create_token(control_plane, ttl_seconds=3600, description=f"sandbox: {name}")
    member_config = from_kubeconfig(member_kubeconfig)
    settings = AgentSettings(cluster_name=name, cluster_api_endpoint=member_config.server)
    register_options = RegisterOptions(
        endpoint=server.removeprefix("https://"),
        token=token,
        ca_hashes=pins_for(control_plane.config.ca_pem),
        settings=settings,
        discovery_timeout=30,
        discovery_interval=0.5,
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
    credentials = sandbox.directory / name / "karmada-agent.kubeconfig"
    write_private(credentials, base64.b64decode(secret["data"][KUBECONFIG_SECRET]))
    command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    args = [
        *python_module("agent"),
        *(
            f"--karmada-kubeconfig={credentials}" if arg.startswith("--karmada-kubeconfig=") else arg
            for arg in command[1:]
        ),
        f"--kubeconfig={member_kubeconfig}",
        _metrics_flag(sandbox, agent_name(name), say),
    ]
    log = sandbox.directory / "logs" / f"karmada-agent-{name}.log"
    record = start(agent_name(name), args, log, sandbox.run_dir)
    sandbox.processes.append(record)
    sandbox.save()
    say(f"{name}: registered (token, CSR approved) and its agent started")


async def _join_push(control_plane: KubeClient, name: str, member_kubeconfig: Path, say: Callable[[str], None]) -> None:
    """``kubectl karmada join``: the control plane works this member itself."""
    member_config = from_kubeconfig(member_kubeconfig)
    async with KubeClient(member_config) as member:
        await join(control_plane, member, member_config, JoinOptions(cluster_name=name), lambda line: None)
    say(f"{name}: joined in push mode (no agent)")


def _write_kubeconfigs(sandbox: Sandbox, control_plane: Path, members: dict[str, Path]) -> None:
    def renamed(path: Path, name: str) -> dict[str, Any]:
        data: dict[str, Any] = yaml.safe_load(path.read_text())
        data["clusters"][0]["name"] = name
        data["users"][0]["name"] = f"{name}-admin"
        data["contexts"] = [{"name": name, "context": {"cluster": name, "user": f"{name}-admin"}}]
        data["current-context"] = name
        return data

    write_private(
        sandbox.karmada_config, yaml.safe_dump(renamed(control_plane, CONTROL_PLANE), sort_keys=False).encode()
    )
    merged = merge_kubeconfigs([renamed(path, name) for name, path in members.items()])
    write_private(sandbox.members_config, yaml.safe_dump(merged, sort_keys=False).encode())


async def _wait_ready(client: KubeClient, members: list[str], timeout: float, sandbox: Sandbox) -> None:
    deadline = time.monotonic() + timeout
    while True:
        ready = set()
        for name in members:
            cluster = await client.get_or_none(CLUSTERS, name)
            conditions = ((cluster or {}).get("status") or {}).get("conditions") or []
            if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
                ready.add(name)
        if ready == set(members):
            return
        dead = [p.name for p in sandbox.processes if not p.alive()]
        if dead:
            raise SandboxError(f"{', '.join(dead)} stopped; see the logs in {sandbox.directory / 'logs'}")
        if time.monotonic() > deadline:
            missing = ", ".join(sorted(set(members) - ready))
            raise SandboxError(f"{missing} not Ready after {timeout:g}s; see the logs in {sandbox.directory / 'logs'}")
        await asyncio.sleep(0.3)


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
    for path in (sandbox.karmada_config, sandbox.members_config, sandbox.directory / STATE_FILE):
        path.unlink(missing_ok=True)


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
