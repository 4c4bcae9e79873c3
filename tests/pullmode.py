"""A pull-mode Karmada for tests: a control-plane localkube with Karmada
installed (``kubectl karmada init``), ``karmada-controlplane`` as a process,
member localkubes, and helpers that register a member through the real
token + register flow and run its agent as the Deployment would.

Timing knobs are shrunk (seconds instead of Karmada's tens of seconds) so
health transitions can be observed quickly; the logic is the same.
"""

from __future__ import annotations

import base64
import json
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.programs import BIN_DIR, Background
from tests.servers import Kubectl, Plugin, ServerThread

FAST_CONTROLPLANE = [
    "--cluster-monitor-period=0.5s",
    "--cluster-monitor-grace-period=4s",
    "--cluster-startup-grace-period=6s",
    "--leader-elect-retry-period=0.5s",
    "--cleanup-check-interval=0.5s",
    # Push clusters' status, as FAST_AGENT for pull ones
    "--cluster-status-update-frequency=0.5s",
    "--cluster-lease-duration=2s",
    "--cluster-success-threshold=1s",
    "--cluster-failure-threshold=1s",
]
FAST_AGENT = [
    "--cluster-status-update-frequency=0.5s",
    "--cluster-lease-duration=2s",
    "--cluster-success-threshold=1s",
    "--cluster-failure-threshold=1s",
    "--leader-elect-retry-period=0.5s",
]


def wait_for(check: Callable[[], Any], timeout: float = 20, interval: float = 0.2, what: str = "condition") -> Any:
    """Poll ``check`` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


class PullMode:
    """The control plane side plus helpers to join members."""

    def __init__(self, control_plane: ServerThread, workdir: Path) -> None:
        self.server = control_plane
        self.workdir = workdir
        self.kubeconfig = control_plane.kubeconfig(workdir, "karmada-admin", ["system:masters"])
        self.admin = Kubectl(self.kubeconfig, workdir / "cache")
        self.plugin = Plugin(self.kubeconfig)
        self.controlplane: Background | None = None
        self.agents: dict[str, Background] = {}

    def install(self) -> PullMode:
        self.plugin("init", "--apiserver", "external")
        return self

    def start_controlplane(self, *extra: str) -> Background:
        args = [str(BIN_DIR / "karmada-controlplane"), f"--kubeconfig={self.kubeconfig}", *FAST_CONTROLPLANE, *extra]
        self.controlplane = Background(args, self.workdir / "controlplane.log").start()
        return self.controlplane

    def register_command(self, ttl: str = "1h") -> list[str]:
        line = self.plugin("token", "create", "--print-register-command", "--ttl", ttl).stdout
        words = shlex.split(line)
        assert words[:3] == ["kubectl", "karmada", "register"]
        return words[2:]

    def register(self, member: ServerThread, name: str, *extra: str, check: bool = True) -> Any:
        """``kubectl karmada register`` as printed by ``token create``, run against the member."""
        member_kubeconfig = member.kubeconfig(self.workdir, f"{name}-admin", ["system:masters"])
        args = [*self.register_command(), "--cluster-name", name, "--agent-rollout-timeout=0", *extra]
        return Plugin(member_kubeconfig)(*args, check=check)

    def join(self, member: ServerThread, name: str, *extra: str, check: bool = True) -> Any:
        """``kubectl karmada join`` (Push mode) against the control plane, with the member's admin kubeconfig."""
        member_kubeconfig = member.kubeconfig(self.workdir, f"{name}-admin", ["system:masters"])
        return self.plugin("join", name, "--cluster-kubeconfig", str(member_kubeconfig), *extra, check=check)

    def add_member(self, member: ServerThread, name: str, mode: str) -> None:
        """``mode`` "pull": register and start the agent; "push": join."""
        if mode == "push":
            self.join(member, name)
        else:
            self.register(member, name)
            self.start_agent(member, name)

    def member_admin(self, member: ServerThread, name: str) -> Kubectl:
        return Kubectl(member.kubeconfig(self.workdir, f"{name}-admin", ["system:masters"]), self.workdir / "cache")

    def agent_kubeconfig(self, member: ServerThread, name: str) -> Path:
        """The agent's control-plane kubeconfig, as register stored it in the member."""
        secret = json.loads(
            self.member_admin(member, name)(
                "get", "secret", "karmada-kubeconfig", "-n", "karmada-system", "-o", "json"
            ).stdout
        )
        path = self.workdir / f"{name}-agent.kubeconfig"
        path.write_bytes(base64.b64decode(secret["data"]["karmada-kubeconfig"]))
        return path

    def agent_command(self, member: ServerThread, name: str) -> list[str]:
        """The Deployment's command, pointed at files instead of the in-cluster mount."""
        deployment = json.loads(
            self.member_admin(member, name)(
                "get", "deploy", "karmada-agent", "-n", "karmada-system", "-o", "json"
            ).stdout
        )
        command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
        assert command[0] == "karmada-agent" and f"--cluster-name={name}" in command
        kubeconfig_flag = f"--karmada-kubeconfig={self.agent_kubeconfig(member, name)}"
        args = [str(BIN_DIR / "karmada-agent")]
        args += [kubeconfig_flag if arg.startswith("--karmada-kubeconfig=") else arg for arg in command[1:]]
        member_kubeconfig = member.kubeconfig(self.workdir, f"{name}-admin", ["system:masters"])
        return [*args, f"--kubeconfig={member_kubeconfig}"]

    def start_agent(
        self, member: ServerThread, name: str, *extra: str, env: dict[str, str] | None = None
    ) -> Background:
        args = [*self.agent_command(member, name), *FAST_AGENT, *extra]
        agent = Background(args, self.workdir / f"{name}-agent.log", env)
        self.agents[name] = agent.start()
        return agent

    def cluster(self, name: str) -> dict[str, Any] | None:
        result = self.admin("get", "cluster", name, "-o", "json", check=False)
        return json.loads(result.stdout) if result.returncode == 0 else None

    def ready(self, name: str) -> str | None:
        cluster = self.cluster(name) or {}
        for condition in (cluster.get("status") or {}).get("conditions") or []:
            if condition["type"] == "Ready":
                return str(condition["status"])
        return None

    def taint_keys(self, name: str) -> list[str]:
        cluster = self.cluster(name) or {}
        return [t["key"] for t in (cluster.get("spec") or {}).get("taints") or []]

    def stop(self) -> None:
        for agent in self.agents.values():
            agent.stop()
        if self.controlplane is not None:
            self.controlplane.stop()
