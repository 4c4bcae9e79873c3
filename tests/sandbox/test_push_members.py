"""``kubectl karmada local up --push-members N`` / ``--member NAME:push``:
members joined in push mode next to registered ones, the static-weight
example split over both, and ``local status`` naming each member's mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.pullmode import wait_for
from tests.servers import Kubectl, Plugin

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "static-weight"


def test_a_sandbox_with_a_push_and_a_pull_member(tmp_path: Path) -> None:
    directory = tmp_path / "sandbox"
    plugin = Plugin(None)
    try:
        up = plugin("local", "up", "--dir", str(directory), "--members", "2", "--push-members", "1", timeout=150)
        assert "all 2 members Ready" in up.stdout
        karmada = Kubectl(directory / "karmada.config", tmp_path / "cache")
        modes = {
            c["metadata"]["name"]: c["spec"]["syncMode"]
            for c in json.loads(karmada("get", "clusters", "-o", "json").stdout)["items"]
        }
        assert modes == {"member1": "Push", "member2": "Pull"}
        status = plugin("local", "status", "--dir", str(directory)).stdout
        rows = {line.split()[0]: line.split() for line in status.splitlines() if line.startswith("member")}
        assert rows["member1"][2] == "Push" and rows["member2"][2] == "Pull"
        assert "karmada-agent-member1" not in status and "karmada-agent-member2" in status
        karmada("apply", "-f", str(EXAMPLE))
        members = Kubectl(directory / "members.config", tmp_path / "cache")

        def replicas(context: str) -> str:
            result = members(
                "--context", context, "get", "deploy", "nginx", "-o", "jsonpath={.status.readyReplicas}", check=False
            )
            return str(result.stdout)

        wait_for(lambda: replicas("member1") == "2", timeout=40, what="2 ready in member1 (push)")
        wait_for(lambda: replicas("member2") == "4", timeout=40, what="4 ready in member2 (pull)")
        karmada("rollout", "status", "deploy/nginx", "--timeout=40s", timeout=50)
    finally:
        plugin("local", "down", "--dir", str(directory))


def test_push_members_out_of_range_is_refused(tmp_path: Path) -> None:
    refused = Plugin(None)(
        "local", "up", "--dir", str(tmp_path / "s"), "--members", "1", "--push-members", "2", check=False
    )
    assert refused.returncode == 1 and "--push-members: 2 is not between 0 and the 1 members" in refused.stderr
    assert not (tmp_path / "s" / "sandbox.json").exists()
