"""The sandbox keeps its programs running: a dead one is restarted by its
supervisor, ``status`` names what is down (exit code 1), ``down`` leaves no
process behind, and the control plane's port survives ``down`` and ``up``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.pullmode import wait_for
from tests.servers import Kubectl, Plugin

SMALL = ["--members", "1", "--nodes-per-member", "1", "--no-simulate-workloads"]


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie), as ps reports it on Linux and macOS."""
    result = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, check=False)
    return result.returncode == 0 and not result.stdout.strip().startswith("Z")


def _states(directory: Path) -> dict[str, dict[str, Any]]:
    return {path.stem: json.loads(path.read_text()) for path in (directory / "run").glob("*.json")}


def _server(kubeconfig: Path) -> str:
    return str(yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"])


def test_a_dead_agent_is_restarted_and_down_leaves_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "sandbox"
    plugin = Plugin(None)
    where = ["--dir", str(directory)]
    pids: set[int] = set()
    try:
        plugin("local", "up", *where, *SMALL, timeout=50)
        karmada = Kubectl(directory / "karmada.config", tmp_path / "cache")
        secrets = json.loads(karmada("get", "secrets", "-n", "kube-system", "-o", "json").stdout)["items"]
        assert not [s for s in secrets if s.get("type") == "bootstrap.kubernetes.io/token"], "tokens are used up"
        before = _states(directory)["karmada-agent-member1"]
        # the agent dies, and cannot start again for a while (its member's kubeconfig is missing)
        credentials = directory / "member1" / "admin.kubeconfig"
        hidden = credentials.with_name("hidden.kubeconfig")
        credentials.rename(hidden)
        os.kill(before["pid"], signal.SIGKILL)

        def reported_down() -> Any:
            result = plugin("local", "status", *where, check=False)
            return result if result.returncode == 1 else None

        status = wait_for(reported_down, timeout=20, interval=0.2, what="status to report the agent down")
        assert "error: not running: karmada-agent-member1 (restarting (exited with status" in status.stderr
        assert "karmada-apiserver" not in status.stderr, "only the dead process is named"
        hidden.rename(credentials)
        wait_for(
            lambda: plugin("local", "status", *where, check=False).returncode == 0,
            timeout=30,
            interval=0.5,
            what="the agent to be back",
        )
        after = _states(directory)["karmada-agent-member1"]
        assert after["supervisor"] == before["supervisor"] and after["pid"] != before["pid"]
        assert after["restarts"] >= 1 and _running(after["pid"])
        agent_row = next(
            line
            for line in plugin("local", "status", *where).stdout.splitlines()
            if line.startswith("karmada-agent-member1")
        )
        assert "running (restarts: " in agent_row
        for state in _states(directory).values():
            pids |= {state["supervisor"], state["pid"]}
    finally:
        plugin("local", "down", *where)
    assert pids and not [pid for pid in pids if _running(pid)], "down stopped the restarted agent too"


@pytest.mark.timeout(120)  # two whole sandbox start-ups, ~15s each on an idle machine
def test_up_down_up_keeps_the_control_plane_port(tmp_path: Path) -> None:
    directory = tmp_path / "sandbox"
    plugin = Plugin(None)
    where = ["--dir", str(directory)]
    try:
        plugin("local", "up", *where, *SMALL, timeout=50)
        first = _server(directory / "karmada.config")
        plugin("local", "down", *where)
        assert (directory / "ports.json").exists() and not (directory / "karmada.config").exists()
        plugin("local", "up", *where, *SMALL, timeout=50)
        assert _server(directory / "karmada.config") == first
        assert plugin("local", "status", *where).returncode == 0
    finally:
        plugin("local", "down", *where)
