"""The agent rides out a control-plane outage: its API server stops (as in a
restart or a network cut) and comes back on the same address with its data;
the agent keeps running and resumes its heartbeat without being restarted."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from localkube.process import LocalKubeProcess
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread


class ProcessServer:
    """A LocalKubeProcess seen through the ServerThread interface PullMode uses."""

    def __init__(self, process: LocalKubeProcess) -> None:
        self.process = process

    @property
    def url(self) -> str:
        return self.process.url

    def kubeconfig(self, directory: Path, user: str = "", groups: Any = None) -> Path:
        return self.process.kubeconfig


def test_agent_survives_a_control_plane_outage(tmp_path: Path, member1: ServerThread) -> None:
    data = tmp_path / "control-plane"
    server = LocalKubeProcess(tmp_path / "admin.kubeconfig", data_dir=data, log=tmp_path / "cp.log")
    server.start()
    port = int(server.url.rsplit(":", 1)[1])
    pull_mode = PullMode(ProcessServer(server), tmp_path)  # type: ignore[arg-type]
    try:
        pull_mode.install()
        pull_mode.start_controlplane()
        pull_mode.register(member1, "member1")
        agent = pull_mode.start_agent(member1, "member1")
        wait_for(lambda: pull_mode.ready("member1") == "True", what="member1 Ready")

        def renew_time() -> str:
            lease = pull_mode.admin("get", "lease", "member1", "-n", "karmada-cluster", "-o", "json")
            return str(json.loads(lease.stdout)["spec"]["renewTime"])

        server.stop()
        time.sleep(3)  # the agent's requests fail meanwhile
        assert agent.running, "no crash while the control plane is away"
        server = LocalKubeProcess(tmp_path / "admin.kubeconfig", data_dir=data, port=port, log=tmp_path / "cp.log")
        server.start()
        pull_mode.server = ProcessServer(server)  # type: ignore[assignment]
        before = wait_for(renew_time, what="the control plane back")
        wait_for(lambda: renew_time() != before, timeout=30, what="the heartbeat to resume")
        assert agent.running
        assert "Traceback" not in agent.output()
        wait_for(lambda: pull_mode.ready("member1") == "True", what="still Ready")
    finally:
        pull_mode.stop()
        server.stop()
