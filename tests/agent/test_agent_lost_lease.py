"""An agent whose leader-election Lease is taken stops its term at once, as the control
plane does: nothing drained, then it campaigns again and leads once the Lease is free."""

from __future__ import annotations

import datetime
import json

import pytest

from karmada.kube.leaderelection import micro_time
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]
LEASE = ("--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s")
NAMESPACE, NAME = "karmada-es-member1", "karmada-agent-member1"


def _holder(env: PullMode) -> str:
    lease = env.admin("get", "lease", NAME, "-n", NAMESPACE, "-o", "json", check=False)
    return str(json.loads(lease.stdout)["spec"].get("holderIdentity") or "") if lease.returncode == 0 else ""


def test_an_agent_that_loses_its_lease_stops_at_once(pull_mode: PullMode, member1: ServerThread) -> None:
    pull_mode.register(member1, "member1")
    agent = pull_mode.start_agent(member1, "member1", *LEASE)
    leader = wait_for(lambda: _holder(pull_mode), timeout=60, what="the agent to lead")
    wait_for(lambda: "agent for cluster member1 running" in agent.output(), timeout=60, what="its term")
    taken = {
        "spec": {
            "holderIdentity": "intruder",
            "leaseDurationSeconds": 3,
            "renewTime": micro_time(datetime.datetime.now(datetime.UTC)),
        }
    }
    pull_mode.admin("patch", "lease", NAME, "-n", NAMESPACE, "--type=merge", "-p", json.dumps(taken))
    wait_for(
        lambda: "leadership of cluster member1 lost: stopping at once, without draining" in agent.output(),
        timeout=30,
        what="the agent to stop its term",
    )
    # the intruder never renews: the agent leads again once its Lease has expired
    wait_for(lambda: _holder(pull_mode) == leader, timeout=30, what="the agent to lead again")
