"""``--controllers`` splits the agent's Work handling as Karmada's does: ``execution``
applies Works, ``workStatus`` reflects member objects into them; each runs alone."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.agent.flow import apply, condition, get_work, manifest_status, wait_condition, work
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": {}}


def test_execution_and_work_status_alone(pull_mode: PullMode, member1: ServerThread) -> None:
    pull_mode.register(member1, "member1")
    pull_mode.start_agent(member1, "member1", "--controllers=*,-workStatus")
    wait_for(lambda: pull_mode.ready("member1") == "True", what="member1 Ready")
    member = pull_mode.member_admin(member1, "member1")
    apply(pull_mode, work("applied-only", configmap("applied-only")))
    wait_condition(pull_mode, "applied-only", "Applied", "True")
    assert member("get", "cm", "applied-only", check=False).returncode == 0
    assert manifest_status(pull_mode, "applied-only") is None, "no status reflection without workStatus"

    pull_mode.agents["member1"].stop()
    pull_mode.start_agent(member1, "member1", "--controllers=*,-execution")
    # what an execution controller elsewhere created
    manifest = work("reflected-only", configmap("reflected-only"))["spec"]["workload"]["manifests"][0]
    member("create", "-f", "-", stdin=json.dumps(manifest))
    apply(pull_mode, work("reflected-only", configmap("reflected-only")))
    found = wait_for(lambda: manifest_status(pull_mode, "reflected-only"), timeout=30, what="status reflected")
    assert found["identifier"]["name"] == "reflected-only" and found["health"] == "Healthy"
    assert condition(pull_mode, "reflected-only", "Applied") is None, "nothing applied without execution"
    apply(pull_mode, work("not-applied", configmap("not-applied")))
    wait_for(lambda: get_work(pull_mode, "not-applied"), what="Work stored")
    time.sleep(1)  # time enough for an execution controller to have created it
    assert member("get", "cm", "not-applied", check=False).returncode == 1
