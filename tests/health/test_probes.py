"""/healthz and /readyz of the real programs, started against localkube: the
control plane is not ready while its caches cannot sync (Karmada's CRDs not
installed yet) and becomes ready once they are; an agent is not ready while
its Cluster is not found, and is once registered and synced; the webhook once
it serves HTTPS."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from karmada.install.webhook import load_or_create
from tests.programs import BIN_DIR, Background, free_port, run
from tests.pullmode import FAST_CONTROLPLANE, PullMode, wait_for
from tests.servers import ServerThread

pytestmark = pytest.mark.slow


def status(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0  # not listening (yet)


def test_controlplane_is_ready_only_once_its_caches_sync(localkube: ServerThread, workdir: Path) -> None:
    env = PullMode(localkube, workdir)  # no init yet: no Karmada CRDs, so no cache can list
    port = free_port()
    controlplane = Background(
        [
            str(BIN_DIR / "karmada-controlplane"),
            f"--kubeconfig={env.kubeconfig}",
            "--leader-elect=false",
            f"--health-probe-bind-address=127.0.0.1:{port}",
            *FAST_CONTROLPLANE,
        ],
        workdir / "unsynced-controlplane.log",
    ).start()
    try:
        wait_for(lambda: status(port, "/healthz") == 200, what="/healthz")
        assert status(port, "/readyz") == 500
        env.install()  # the CRDs appear; the caches list and sync
        wait_for(lambda: status(port, "/readyz") == 200, timeout=40, what="/readyz after init")
        assert controlplane.running
    finally:
        controlplane.stop()


def test_agent_is_ready_once_registered_and_synced(
    localkube: ServerThread, workdir: Path, member1: ServerThread
) -> None:
    env = PullMode(localkube, workdir).install()
    env.start_controlplane()
    try:
        env.register(member1, "member1")
        wrong, right = free_port(), free_port()
        # this agent's credentials name member1; a Cluster "nosuch" is never found
        stray = env.start_agent(
            member1, "member1", "--cluster-name=nosuch", f"--health-probe-bind-address=127.0.0.1:{wrong}"
        )
        wait_for(lambda: status(wrong, "/healthz") == 200, what="the stray agent's /healthz")
        agent = env.start_agent(member1, "member1", f"--health-probe-bind-address=127.0.0.1:{right}")
        wait_for(lambda: status(right, "/readyz") == 200, timeout=30, what="the agent's /readyz")
        assert status(wrong, "/readyz") == 500
        assert stray.running and agent.running
        stray.stop()
    finally:
        env.stop()


def test_webhook_is_ready_once_it_serves_https(tmp_path: Path) -> None:
    cert_dir = tmp_path / "certs"
    load_or_create(cert_dir)
    probe, secure = free_port(), free_port()
    webhook = Background(
        [
            str(BIN_DIR / "karmada-webhook"),
            "--bind-address=127.0.0.1",
            f"--secure-port={secure}",
            f"--cert-dir={cert_dir}",
            "--kubeconfig=/nonexistent/kubeconfig",
            f"--health-probe-bind-address=127.0.0.1:{probe}",
        ],
        tmp_path / "webhook.log",
    ).start()
    try:
        wait_for(lambda: status(probe, "/readyz") == 200, what="the webhook's /readyz")
        assert status(probe, "/healthz") == 200
        assert "serving on https://" in webhook.output()  # ready came after the HTTPS site listened
    finally:
        webhook.stop()


@pytest.mark.parametrize("program", ["karmada-controlplane", "karmada-agent", "karmada-webhook"])
def test_a_bad_probe_address_is_refused_naming_the_flag(program: str) -> None:
    extra = ["--cluster-name=x"] if program == "karmada-agent" else []
    result = run([str(BIN_DIR / program), *extra, "--health-probe-bind-address=10357"])
    assert result.returncode == 2
    assert "--health-probe-bind-address" in result.stderr and "want host:port" in result.stderr
