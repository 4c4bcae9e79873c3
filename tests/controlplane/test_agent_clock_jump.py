"""A member whose clock jumps: its agent runs under a stepped wall clock
(:class:`karmada.sandbox.clock.SteppedClock`, libfaketime), an hour ahead and then back
to three minutes behind true time, as an NTP step would move it. Through both steps the
cluster stays Ready, untainted, and keeps its workload: the control plane judges the
agent's Lease by when its renewTime changes on its own clock, not by what the agent's clock
says (Karmada counts only a later renewTime, so the step back would look like silence).
Nor does a clock behind let a bootstrap token take the live cluster over: the agent approver
dates the Lease's last renewal by the API server's clock."""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from karmada.sandbox.clock import INSTALL_HINT, SteppedClock, library
from karmada.timestamps import parse_time, utcnow
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

GRACE = 8.0  # the monitor's grace period here: twice the other tests', so that load makes no flicker
WORKLOAD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: ticking, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: ticking}}
  template:
    metadata: {labels: {app: ticking}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: ticking, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: ticking}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
"""


@pytest.fixture(scope="module")
def clock(workdir: Path) -> SteppedClock:
    # libfaketime is a system package: CI installs it (.ci/run); a machine without it cannot
    # run this test, and the skip says what to install
    if library() is None:
        pytest.skip(INSTALL_HINT)
    return SteppedClock(workdir / "member1.clock")


@pytest.fixture(scope="module")
def bed(localkube: ServerThread, workdir: Path, member1: ServerThread, clock: SteppedClock) -> Iterator[PullMode]:
    pull_mode = PullMode(localkube, workdir).install()
    pull_mode.start_controlplane(f"--cluster-monitor-grace-period={GRACE:g}s")
    try:
        pull_mode.register(member1, "member1")
        pull_mode.start_agent(member1, "member1", env=clock.env())
        wait_for(lambda: pull_mode.ready("member1") == "True", timeout=60, what="member1 Ready")
        wait_for(lambda: pull_mode.taint_keys("member1") == [], what="no taints")
        yield pull_mode
    finally:
        pull_mode.stop()


def _renewed(pull_mode: PullMode) -> datetime.datetime:
    text = pull_mode.admin("get", "lease", "member1", "-n", "karmada-cluster", "-o", "jsonpath={.spec.renewTime}")
    return parse_time(text.stdout)


def _steady(pull_mode: PullMode, member: ServerThread, seconds: float) -> None:
    """For ``seconds``, the cluster is Ready, untainted, and the member holds the workload."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        cluster = pull_mode.cluster("member1") or {}
        ready = next(c for c in cluster["status"]["conditions"] if c["type"] == "Ready")
        assert ready["status"] == "True", ready
        assert pull_mode.taint_keys("member1") == []
        time.sleep(0.5)
    replicas = pull_mode.member_admin(member, "member1")("get", "deployment", "ticking", "-o", "json").stdout
    assert json.loads(replicas)["spec"]["replicas"] == 1


def test_a_clock_step_ahead_and_back_keeps_the_cluster_ready(
    bed: PullMode, member1: ServerThread, member2: ServerThread, clock: SteppedClock
) -> None:
    bed.admin("apply", "-f", "-", stdin=WORKLOAD)
    member = bed.member_admin(member1, "member1")
    wait_for(lambda: member("get", "deployment", "ticking", check=False).returncode == 0, what="the workload placed")

    clock.step(3600)
    wait_for(lambda: _renewed(bed) > utcnow() + datetime.timedelta(minutes=50), what="a renewal an hour ahead")
    _steady(bed, member1, 2 * GRACE)

    clock.step(-180)  # back past true time: within the certificates' 5 minutes of backdating
    wait_for(lambda: _renewed(bed) < utcnow() - datetime.timedelta(minutes=2), what="a renewal three minutes behind")
    _steady(bed, member1, 2 * GRACE)
    # its renewTime is three minutes old by the control plane's clock, but it is alive
    taken = bed.register(member2, "member1", check=False)
    assert taken.returncode == 1 and 'cluster "member1" has a live agent' in taken.stderr, taken.stderr
    assert "Traceback" not in bed.agents["member1"].output()
