"""A leader frozen past its Lease (SIGSTOP) and thawed (SIGCONT) while its controllers
are busy writes nothing once the standby leads: localkube's per-user write counter
(each control plane has a client certificate of its own) stays where it was when
the standby took the Lease, while the standby does the rest of the work."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from localkube.metrics import parse_user_writes
from tests.controlplane.test_leadership_terms import EXECUTION_SPACE, MEMBER, add_ready_cluster
from tests.factories import deployment_list
from tests.programs import BIN_DIR, Background
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
COUNT = 120
LEASE = ["--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=0.5s"]


def _holder(env: PullMode) -> str:
    lease = env.admin("get", "lease", "karmada-controlplane", "-n", "karmada-system", "-o", "json", check=False)
    return str(json.loads(lease.stdout)["spec"].get("holderIdentity") or "") if lease.returncode == 0 else ""


def _writes(server: ServerThread, user: str) -> int:
    return parse_user_writes(server.run_sync(server.server.metrics.render)).get(user, 0)


def _settled_writes(server: ServerThread, user: str, still: int = 3) -> int:
    """The user's write count once it held still for ``still`` seconds in a row (the user is
    frozen: what still lands are requests it sent before, answered late by a loaded server,
    some of them queued for a seat of its flow control)."""
    last, unchanged = _writes(server, user), 0
    for _ in range(60):
        time.sleep(1.0)
        now = _writes(server, user)
        unchanged = unchanged + 1 if now == last else 0
        if unchanged >= still:
            return now
        last = now
    raise AssertionError(f"{user} kept writing while frozen")


def _works(env: PullMode, prefix: str) -> int:
    out = env.admin("get", "works", "-n", EXECUTION_SPACE, "-o", "name", timeout=60).stdout
    return sum(1 for line in out.splitlines() if f"/{prefix}-" in line)


def _deployments(prefix: str) -> str:
    return json.dumps(deployment_list(prefix, COUNT, "lost-lease"))


POLICY = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "PropagationPolicy",
    "metadata": {"name": "lost-lease", "namespace": "default"},
    "spec": {
        "resourceSelectors": [
            {"apiVersion": "apps/v1", "kind": "Deployment", "labelSelector": {"matchLabels": {"test": "lost-lease"}}}
        ],
        "placement": {"clusterAffinity": {"clusterNames": [MEMBER]}},
    },
}


def _control_plane(server: ServerThread, workdir: Path, user: str) -> Background:
    kubeconfig = server.kubeconfig(workdir, user, ["system:masters"])
    # Karmada's cluster monitor grace period: the member, without an agent, stays Ready throughout
    args = [str(BIN_DIR / "karmada-controlplane"), f"--kubeconfig={kubeconfig}", *LEASE]
    return Background(args, workdir / f"{user}.log").start()


def test_a_thawed_leader_writes_nothing_after_the_standby_took_its_lease(
    localkube: ServerThread, workdir: Path
) -> None:
    env = PullMode(localkube, workdir).install()
    add_ready_cluster(env)
    env.admin("apply", "-f", "-", stdin=json.dumps(POLICY))
    first = _control_plane(localkube, workdir, "controlplane-first")
    second: Background | None = None
    try:
        leader = wait_for(lambda: _holder(env), timeout=30, what="the first control plane to lead")
        second = _control_plane(localkube, workdir, "controlplane-second")
        env.admin("apply", "-f", "-", stdin=_deployments("before"), timeout=120)
        wait_for(lambda: _works(env, "before") >= 10, timeout=120, interval=0.2, what="propagation under way")

        first.signal(signal.SIGSTOP)  # frozen mid-propagation, its queues full
        wait_for(lambda: _holder(env) not in ("", leader), timeout=60, what="the standby to take the Lease")
        # nothing of it can land from here on, once the requests it sent before it froze (and the
        # server had not answered yet, on a loaded machine) are answered: its count stops moving
        frozen_at = _settled_writes(localkube, "controlplane-first")
        # more work while it is frozen: its caches hear of it when it thaws
        env.admin("apply", "-f", "-", stdin=_deployments("after"), timeout=120)
        first.signal(signal.SIGCONT)

        wait_for(
            lambda: "leadership term ended" in first.output(), timeout=60, what="the thawed leader to stop its term"
        )
        wait_for(lambda: _works(env, "before") == COUNT, timeout=180, interval=1, what="every earlier Work")
        wait_for(lambda: _works(env, "after") == COUNT, timeout=180, interval=1, what="every later Work")
        assert "leadership term ended: every controller stopped (not drained)" in first.output()
        assert _writes(localkube, "controlplane-first") == frozen_at, "the old leader wrote after losing its Lease"
        assert _holder(env) not in ("", leader)
        assert _writes(localkube, "controlplane-second") > 0
    finally:
        if second is not None:
            second.stop()
        if first.running:
            first.signal(signal.SIGCONT)  # a frozen process ignores SIGTERM until thawed
        first.stop()
