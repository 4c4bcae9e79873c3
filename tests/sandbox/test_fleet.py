"""``kubectl karmada local up --members-per-process M``: members grouped into
``localkube serve --fleet`` and ``karmada-agent --fleet`` processes, each
member still its own API server, registration and agent; an example
propagated into members of both groups; ``status`` naming each member's
processes; a killed grouped process restarted by its supervisor with its
members back; ``down`` stopping the groups."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from karmada.sandbox.sandbox import SIMULATION_NICENESS, Group, SandboxError, default_ready_timeout, plan_groups
from tests.pullmode import wait_for
from tests.sandbox.processes import probe_port
from tests.servers import Kubectl, Plugin

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "duplicated"
SMALL = ["--nodes-per-member", "1"]


@pytest.mark.parametrize(
    ("members", "push", "per_process", "expected"),
    [
        (["a", "b"], set(), 1, [Group("a", "karmada-agent-a", ["a"]), Group("b", "karmada-agent-b", ["b"])]),
        (["a", "b"], {"a"}, 1, [Group("a", None, ["a"]), Group("b", "karmada-agent-b", ["b"])]),
        (
            ["a", "b", "c"],
            set(),
            2,
            [
                Group("localkube-group1", "karmada-agent-group1", ["a", "b"]),
                Group("localkube-group2", "karmada-agent-group2", ["c"]),
            ],
        ),
        (
            ["a", "b", "c"],
            {"c"},
            2,
            [Group("localkube-group1", "karmada-agent-group1", ["a", "b"]), Group("localkube-group2", None, ["c"])],
        ),
        (["a", "b", "c"], set(), 5, [Group("localkube-group1", "karmada-agent-group1", ["a", "b", "c"])]),
    ],
)
def test_plan_groups(members: list[str], push: set[str], per_process: int, expected: list[Group]) -> None:
    assert plan_groups(members, push, per_process) == expected


def test_plan_groups_refuses_zero() -> None:
    with pytest.raises(SandboxError, match="--members-per-process must be at least 1, not 0"):
        plan_groups(["a"], set(), 0)


@pytest.mark.parametrize(("members", "seconds"), [(1, 180.0), (100, 180.0), (101, 180.5), (1000, 630.0)])
def test_default_ready_timeout(members: int, seconds: float) -> None:
    assert default_ready_timeout(members) == seconds


def test_members_per_process_below_one_is_refused(tmp_path: Path) -> None:
    refused = Plugin(None)("local", "up", "--dir", str(tmp_path / "s"), "--members-per-process", "0", check=False)
    assert refused.returncode == 1 and "--members-per-process: 0 is not at least 1" in refused.stderr
    assert not (tmp_path / "s" / "sandbox.json").exists()


def _rows(status: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split() for line in status.splitlines() if line.startswith("member")}


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        # no proxy from the environment: the probes are on loopback
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _running(pid: int) -> bool:
    result = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, check=False)
    return result.returncode == 0 and not result.stdout.strip().startswith("Z")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_four_members_in_two_groups(tmp_path: Path) -> None:
    directory = tmp_path / "sandbox"
    plugin = Plugin(None)
    where = ["--dir", str(directory)]
    pids: list[int] = []
    try:
        up = plugin("local", "up", *where, "--members", "4", "--members-per-process", "2", *SMALL, timeout=200)
        assert "all 4 members Ready" in up.stdout
        state = json.loads((directory / "sandbox.json").read_text())
        names = [p["name"] for p in state["processes"]]
        assert sorted(n for n in names if "group" in n) == [
            "karmada-agent-group1",
            "karmada-agent-group2",
            "localkube-group1",
            "localkube-group2",
        ]
        assert not [n for n in names if n.startswith(("member", "karmada-agent-member"))], "no process per member"
        agent = next(p for p in state["processes"] if p["name"] == "karmada-agent-group1")
        assert "--leader-elect=false" in agent["args"]
        # the simulated clusters yield the CPU to the control plane (relative: the suite may run niced)
        priority = {p["name"]: os.getpriority(os.PRIO_PROCESS, p["pid"]) for p in state["processes"]}
        base = priority["karmada-controlplane"]
        assert {name: value - base for name, value in priority.items() if "group" in name} == {
            name: SIMULATION_NICENESS for name in priority if "group" in name
        }
        assert priority["karmada-apiserver"] == base
        fleet = json.loads((directory / "karmada-agent-group1.fleet.json").read_text())
        assert [a["cluster-name"] for a in fleet["agents"]] == ["member1", "member2"]
        for path in directory.glob("*.fleet.json"):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
        ports = json.loads((directory / "ports.json").read_text())
        assert len({ports[f"member{i}"] for i in range(1, 5)}) == 4, "a port per member, remembered"
        assert "karmada-agent-group1-metrics" in ports and "karmada-agent-group2-metrics" in ports
        # each group's agent process answers its probes on a port of its own, not both on :10357
        probes = {group: probe_port(state, f"karmada-agent-{group}") for group in ("group1", "group2")}
        assert len(set(probes.values())) == 2, probes
        assert probes == {group: ports[f"karmada-agent-{group}-healthz"] for group in probes}, "remembered"
        for group, members_of_group in (("group1", ["member1", "member2"]), ("group2", ["member3", "member4"])):
            assert _get(probes[group], "/healthz") == (200, "ok")
            _, verbose = _get(probes[group], "/readyz?verbose")
            named = {line.split()[0][3:] for line in verbose.splitlines() if line.startswith(("[+]", "[-]"))}
            assert set(members_of_group) <= named, f"{group}'s own agents: {verbose}"
            assert not named & {f"member{i}" for i in range(1, 5)} - set(members_of_group), verbose

        karmada = Kubectl(directory / "karmada.config", tmp_path / "cache")
        members = Kubectl(directory / "members.config", tmp_path / "cache")
        clusters = json.loads(karmada("get", "clusters", "-o", "json").stdout)["items"]
        assert sorted(c["metadata"]["name"] for c in clusters) == ["member1", "member2", "member3", "member4"]
        # each member is its own API server: its own nodes, and no other member's
        assert members("--context", "member3", "get", "nodes", "-o", "name").stdout.split() == ["node/member3-1"]

        # the Duplicated example, widened to all four members: a member of each group gets it
        karmada("apply", "-f", str(EXAMPLE))
        patch = {"spec": {"placement": {"clusterAffinity": {"clusterNames": [f"member{i}" for i in range(1, 5)]}}}}
        karmada("patch", "propagationpolicy", "nginx-propagation", "--type=merge", "-p", json.dumps(patch))

        def replicas(context: str) -> str:
            result = members(
                "--context", context, "get", "deploy", "nginx", "-o", "jsonpath={.status.readyReplicas}", check=False
            )
            return str(result.stdout)

        for context in ("member1", "member2", "member3", "member4"):

            def six_ready(c: str = context) -> bool:
                return replicas(c) == "6"

            wait_for(six_ready, timeout=60, what=f"6 ready in {context}")
        karmada("rollout", "status", "deploy/nginx", "--timeout=60s", timeout=70)

        status = plugin("local", "status", *where).stdout
        rows = _rows(status)
        assert rows["member1"][2:4] == ["Pull", "True"]
        assert rows["member1"][-2:] == ["localkube-group1", "karmada-agent-group1"]
        assert rows["member4"][-2:] == ["localkube-group2", "karmada-agent-group2"]
        pids = [p["pid"] for p in state["processes"]]
    finally:
        down = plugin("local", "down", *where)
    assert "stopped karmada-agent-group2" in down.stdout and "stopped localkube-group1" in down.stdout
    assert not list(directory.glob("*.fleet.json")) and not (directory / "member1").exists()
    wait_for(lambda: not any(_running(pid) for pid in pids), timeout=10, what="every supervisor gone")


def _state(directory: Path, name: str) -> dict[str, Any]:
    return dict(json.loads((directory / "run" / f"{name}.json").read_text()))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_killed_group_is_restarted_with_its_members(tmp_path: Path) -> None:
    """SIGKILL the process serving both members' API servers, then their agents' process:
    each comes back under its supervisor, on the same ports with the same credentials,
    and a Deployment propagated afterwards reaches both members."""
    directory = tmp_path / "sandbox"
    plugin = Plugin(None)
    where = ["--dir", str(directory)]
    try:
        plugin("local", "up", *where, "--members", "2", "--members-per-process", "2", *SMALL, timeout=150)
        karmada = Kubectl(directory / "karmada.config", tmp_path / "cache")
        members = Kubectl(directory / "members.config", tmp_path / "cache")
        karmada("apply", "-f", str(EXAMPLE))
        for round_, process in enumerate(("localkube-group1", "karmada-agent-group1")):
            before = _state(directory, process)
            os.kill(before["pid"], signal.SIGKILL)

            def restarted(name: str = process, old: int = before["pid"]) -> bool:
                state = _state(directory, name)
                return bool(state["state"] == "running" and state["pid"] != old and state["restarts"] == 1)

            wait_for(restarted, timeout=30, what=f"{process} restarted by its supervisor")
            karmada("scale", "deploy/nginx", f"--replicas={7 + round_}")
            for context in ("member1", "member2"):

                def scaled(c: str = context, want: str = str(7 + round_)) -> bool:
                    # check=False: a restarted API server refuses connections until it serves again
                    result = members(
                        "--context", c, "get", "deploy", "nginx", "-o", "jsonpath={.spec.replicas}", check=False
                    )
                    return str(result.stdout) == want

                wait_for(scaled, timeout=90, interval=1, what=f"{context} to get the new replicas after {process}")

            def all_ready() -> bool:
                rows = _rows(plugin("local", "status", *where, check=False).stdout)
                return all(rows.get(m, ["", "", "", ""])[3] == "True" for m in ("member1", "member2"))

            wait_for(all_ready, timeout=90, interval=1, what=f"both members Ready after {process} was killed")
        assert plugin("local", "status", *where).returncode == 0
    finally:
        plugin("local", "down", *where)
