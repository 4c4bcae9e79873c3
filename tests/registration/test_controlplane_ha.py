"""Two control planes share the work through leader election; the standby takes
over when the leader dies. And register --dry-run changes nothing."""

from __future__ import annotations

import json

from tests.programs import BIN_DIR, Background
from tests.pullmode import PullMode, wait_for
from tests.servers import Plugin, ServerThread


def _holder(pull_mode: PullMode) -> str:
    lease = pull_mode.admin("get", "lease", "karmada-controlplane", "-n", "karmada-system", "-o", "json", check=False)
    return str(json.loads(lease.stdout)["spec"]["holderIdentity"]) if lease.returncode == 0 else ""


def test_standby_takes_over(pull_mode: PullMode, member1: ServerThread) -> None:
    first = wait_for(lambda: _holder(pull_mode), what="the fixture's control plane to lead")
    fast = [
        "--leader-elect-lease-duration=2s",
        "--leader-elect-renew-deadline=1.5s",
        "--leader-elect-retry-period=0.3s",
    ]
    standby = Background(
        [str(BIN_DIR / "karmada-controlplane"), f"--kubeconfig={pull_mode.kubeconfig}", *fast],
        pull_mode.workdir / "standby.log",
    ).start()
    try:
        assert pull_mode.controlplane is not None
        pull_mode.controlplane.kill()
        wait_for(lambda: _holder(pull_mode) not in ("", first), timeout=30, what="the standby to take the lease")
        # the new leader does the work: a registration is approved
        result = pull_mode.register(member1, "member1")
        assert "is joined successfully" in result.stdout
        assert "approved CSR" in standby.output()
    finally:
        standby.stop()
        pull_mode.start_controlplane()


def test_register_dry_run_creates_nothing(pull_mode: PullMode, member2: ServerThread) -> None:
    kubeconfig = member2.kubeconfig(pull_mode.workdir, "member2-admin", ["system:masters"])
    words = pull_mode.register_command()
    out = Plugin(kubeconfig)(*words, "--cluster-name", "member2", "--dry-run").stdout
    assert "deployment/karmada-agent would be created (dry run)" in out
    shown = Plugin(kubeconfig)(*words, "--cluster-name", "member2", "--dry-run", "-o", "yaml").stdout
    assert "kind: Deployment" in shown and "<redacted>" in shown and "--cluster-name=member2" in shown
    assert pull_mode.cluster("member2") is None
    member = pull_mode.member_admin(member2, "member2")
    assert member("get", "namespace", "karmada-system", check=False).returncode == 1
