"""``kubectl karmada local up|status|down`` as a newcomer runs it."""

from __future__ import annotations

import json
import stat
import urllib.request
from pathlib import Path

from tests.programs import kubectl
from tests.pullmode import wait_for
from tests.sandbox.processes import probe_port
from tests.servers import Kubectl, Plugin


def _mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.lstat().st_mode)
    except FileNotFoundError:  # a temporary file renamed meanwhile
        return None


def test_up_status_down(tmp_path: Path) -> None:
    directory = tmp_path / "sandbox"
    plugin = Plugin(None)
    try:
        up = plugin("local", "up", "--dir", str(directory), "--members", "2", "--nodes-per-member", "2", timeout=120)
        assert "all 2 members Ready" in up.stdout
        wider = [
            p for p in [directory, *directory.rglob("*")] if _mode(p) not in (None, 0o700 if p.is_dir() else 0o600)
        ]
        assert wider == [], "every directory of the sandbox is 0700 and every file 0600"
        karmada = Kubectl(directory / "karmada.config", tmp_path / "cache")
        lines = karmada("get", "clusters").stdout.splitlines()
        assert [line.split()[0] for line in lines[1:]] == ["member1", "member2"]
        assert all(line.split()[3] == "True" for line in lines[1:])
        config = json.loads(karmada("config", "view", "-o", "json").stdout)
        assert config["current-context"] == "karmada-apiserver"
        members = Kubectl(directory / "members.config", tmp_path / "cache")
        contexts = members("config", "get-contexts", "-o", "name").stdout.split()
        assert contexts == ["member1", "member2"]
        nodes = members("--context", "member2", "get", "nodes", "-o", "name").stdout.split()
        assert nodes == ["node/member2-1", "node/member2-2"]
        cluster = json.loads(karmada("get", "cluster", "member1", "-o", "json").stdout)
        assert cluster["status"]["nodeSummary"] == {"totalNum": 2, "readyNum": 2}
        assert cluster["status"]["resourceSummary"]["allocatable"]["cpu"] == "16"
        # a workload in a member shows up in the resource summary as allocated
        members("--context", "member1", "create", "deployment", "web", "--image=nginx", "--replicas=2")
        members("--context", "member1", "set", "resources", "deployment/web", "--requests=cpu=500m")
        members("--context", "member1", "rollout", "status", "deployment/web", "--timeout=30s", timeout=40)

        def allocated() -> object:
            summary = json.loads(karmada("get", "cluster", "member1", "-o", "json").stdout)["status"]["resourceSummary"]
            # two 500m pods, plus the (simulated) pod of the agent Deployment that register created
            return (summary.get("allocated") or {}).get("cpu") == "1100m"

        wait_for(allocated, timeout=30, interval=1, what="the pods counted as allocated")
        status = plugin("local", "status", "--dir", str(directory)).stdout
        assert "karmada-agent-member1" in status and "running" in status and "member2" in status
        state = json.loads((directory / "sandbox.json").read_text())
        agent_args = " ".join(state["processes"][-1]["args"])
        assert "--cluster-name=member" in agent_args, "the agent's cluster name is on its command line"
        probes = {m: probe_port(state, f"karmada-agent-{m}") for m in ("member1", "member2")}
        assert len(set(probes.values())) == 2, f"each agent its own probe port, not both on :10357: {probes}"
        for member, port in probes.items():
            with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                f"http://127.0.0.1:{port}/readyz?verbose", timeout=5
            ) as answer:
                assert answer.status == 200, member
        again = plugin("local", "up", "--dir", str(directory), check=False)
        assert again.returncode == 1 and "already running" in again.stderr
    finally:
        down = plugin("local", "down", "--dir", str(directory))
    assert "sandbox stopped and removed" in down.stdout
    assert not (directory / "karmada.config").exists() and not (directory / "sandbox.json").exists()
    assert kubectl()


def test_refuses_to_overwrite_a_kubeconfig(tmp_path: Path) -> None:
    (tmp_path / "karmada.config").write_text("apiVersion: v1\nkind: Config\n")
    refused = Plugin(None)("local", "up", "--dir", str(tmp_path), check=False)
    assert refused.returncode == 1 and "refusing to overwrite" in refused.stderr
    assert (tmp_path / "karmada.config").read_text() == "apiVersion: v1\nkind: Config\n"
