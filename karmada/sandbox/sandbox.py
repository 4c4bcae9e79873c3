"""Bringing the sandbox up, reporting on it and taking it down.

``up`` starts the control plane's localkube and one localkube per member
(simulated nodes and workloads on by default), installs Karmada
(``init``), starts ``karmada-controlplane``, then for every member runs the
real pull-mode flow: a bootstrap token, ``register`` (discovery with JWS and CA
pin, the agent's CSR, the member-side objects), and starts the agent with
the command line of the agent Deployment register created (there is no
kubelet to run it), reading its credentials from the Secret register wrote.
It returns once every Cluster is Ready. Everything runs in the background;
``sandbox.json`` in the directory records the processes for ``status`` and
``down``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from karmada.install import InitOptions, init
from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.kubeconfig import merge_kubeconfigs
from karmada.kube.resources import CLUSTERS, DEPLOYMENTS, SECRETS
from karmada.pki import BootstrapToken
from karmada.pki.pins import pins_for
from karmada.registration.identity import validate_agent_cluster_name
from karmada.registration.member import AGENT_NAME, KUBECONFIG_SECRET, AgentSettings
from karmada.registration.register import RegisterOptions, register
from karmada.registration.tokens import create_token, delete_token
from karmada.sandbox import DEFAULT_DIR
from karmada.sandbox.processes import ProcessRecord, python_module, start, stop, wait_for_line

STATE_FILE = "sandbox.json"
CONTROL_PLANE = "karmada-apiserver"
READY_MARKER = "localkube serving on "


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


@dataclass
class Sandbox:
    """A running sandbox as recorded in its directory."""

    directory: Path
    processes: list[ProcessRecord]
    members: list[str]

    @classmethod
    def load(cls, directory: Path) -> Sandbox | None:
        path = directory / STATE_FILE
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        return cls(directory, [ProcessRecord(**p) for p in data["processes"]], list(data["members"]))

    def save(self) -> None:
        state = {"processes": [p.to_dict() for p in self.processes], "members": self.members}
        (self.directory / STATE_FILE).write_text(json.dumps(state, indent=2))

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


def _localkube(directory: Path, name: str, extra: list[str]) -> tuple[ProcessRecord, Path]:
    data = directory / name
    kubeconfig = data / "admin.kubeconfig"
    args = [*python_module("localkube"), "serve", "--port", "0", "--data-dir", str(data), "--kubeconfig-out"]
    record = start(name, [*args, str(kubeconfig), *extra], directory / "logs" / f"{name}.log")
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
    directory.mkdir(parents=True, exist_ok=True)
    _check_directory(directory)
    began = time.monotonic()
    sandbox = Sandbox(directory, [], list(options.members))
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
    servers: dict[str, tuple[ProcessRecord, Path]] = {CONTROL_PLANE: _localkube(directory, CONTROL_PLANE, [])}
    simulation = [
        f"--simulate-nodes={options.nodes_per_member}",
        f"--node-cpu={options.node_cpu}",
        f"--node-memory={options.node_memory}",
        f"--node-pods={options.node_pods}",
    ]
    if options.simulate_workloads:
        simulation.append("--simulate-workloads")
    for member in options.members:
        servers[member] = _localkube(directory, member, [*simulation, f"--node-name-prefix={member}"])
    sandbox.processes.extend(record for record, _ in servers.values())
    sandbox.save()
    for name, (record, _) in servers.items():
        line = await asyncio.to_thread(wait_for_line, record, READY_MARKER, 30)
        say(f"{name}: {line.split(READY_MARKER, 1)[1].strip()}")
    control_plane_kubeconfig = servers[CONTROL_PLANE][1]
    config = from_kubeconfig(control_plane_kubeconfig)
    async with KubeClient(config) as client:
        await init(client, InitOptions(), lambda line: None)
        say("karmada: CRDs, namespaces and bootstrap RBAC installed")
        controlplane = start(
            "karmada-controlplane",
            [*python_module("controlplane"), f"--kubeconfig={control_plane_kubeconfig}"],
            directory / "logs" / "karmada-controlplane.log",
        )
        sandbox.processes.append(controlplane)
        sandbox.save()
        await asyncio.gather(
            *(_join(sandbox, client, config.server, name, servers[name][1], options, say) for name in options.members)
        )
        _write_kubeconfigs(sandbox, control_plane_kubeconfig, {m: servers[m][1] for m in options.members})
        await _wait_ready(client, options.members, options.ready_timeout, sandbox)


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
    credentials.write_bytes(base64.b64decode(secret["data"][KUBECONFIG_SECRET]))
    credentials.chmod(0o600)
    command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    args = [
        *python_module("agent"),
        *(
            f"--karmada-kubeconfig={credentials}" if arg.startswith("--karmada-kubeconfig=") else arg
            for arg in command[1:]
        ),
        f"--kubeconfig={member_kubeconfig}",
    ]
    record = start(f"karmada-agent-{name}", args, sandbox.directory / "logs" / f"karmada-agent-{name}.log")
    sandbox.processes.append(record)
    sandbox.save()
    say(f"{name}: registered (token, CSR approved) and its agent started")


def _write_kubeconfigs(sandbox: Sandbox, control_plane: Path, members: dict[str, Path]) -> None:
    def renamed(path: Path, name: str) -> dict[str, Any]:
        data: dict[str, Any] = yaml.safe_load(path.read_text())
        data["clusters"][0]["name"] = name
        data["users"][0]["name"] = f"{name}-admin"
        data["contexts"] = [{"name": name, "context": {"cluster": name, "user": f"{name}-admin"}}]
        data["current-context"] = name
        return data

    sandbox.karmada_config.write_text(yaml.safe_dump(renamed(control_plane, CONTROL_PLANE), sort_keys=False))
    merged = merge_kubeconfigs([renamed(path, name) for name, path in members.items()])
    sandbox.members_config.write_text(yaml.safe_dump(merged, sort_keys=False))
    for path in (sandbox.karmada_config, sandbox.members_config):
        path.chmod(0o600)


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
    """Stop every process (agents first, API servers last) and remove the sandbox's files."""

    def rank(record: ProcessRecord) -> int:
        if record.name.startswith("karmada-agent"):
            return 0
        return 1 if record.name == "karmada-controlplane" else 2

    for record in sorted(sandbox.processes, key=rank):
        if stop(record):
            say(f"stopped {record.name} (pid {record.pid})")
    for name in [CONTROL_PLANE, *sandbox.members, "logs"]:
        _remove_tree(sandbox.directory / name)
    for path in (sandbox.karmada_config, sandbox.members_config, sandbox.directory / STATE_FILE):
        path.unlink(missing_ok=True)


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
