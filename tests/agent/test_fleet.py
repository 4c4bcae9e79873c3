"""Many agents in one ``karmada-agent --fleet`` process, with the real programs
over TLS: three members (each its own localkube, kept in a data directory so
it can be stopped and started again), registered with the real ``register``
flow, their agents as tasks of one process. All three clusters become Ready
and a Deployment lands in each; a member that goes away fails only its own
agent (the others stay Ready, renew their Leases and apply a new Work, and
``/readyz?verbose`` names the failed one) until it comes back; an entry whose
credentials are missing waits alone and starts once they appear; SIGTERM
stops the process cleanly."""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localkube.server import ServerConfig
from tests.programs import BIN_DIR, free_port, program_env
from tests.pullmode import FAST_AGENT, PullMode, wait_for
from tests.servers import ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

NAMES = ("member1", "member2", "member3")


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return 0, ""


class Members:
    """Member localkubes that can be stopped and started again on the same port, with their state."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.servers: dict[str, ServerThread] = {}
        self.ports: dict[str, int] = {}

    def start(self, name: str) -> ServerThread:
        port = self.ports.get(name, 0)
        server = ServerThread(ServerConfig(port=port, data_dir=self.directory / name)).start()
        self.ports[name] = int(server.url.rsplit(":", 1)[1])
        self.servers[name] = server
        return server

    def stop(self, name: str) -> None:
        self.servers.pop(name).stop()

    def stop_all(self) -> None:
        for name in list(self.servers):
            self.stop(name)


@pytest.fixture(scope="module")
def members(workdir: Path) -> Iterator[Members]:
    fleet = Members(workdir / "members")
    for name in NAMES:
        fleet.start(name)
    try:
        yield fleet
    finally:
        fleet.stop_all()


@pytest.fixture(scope="module")
def registered(pull_mode: PullMode, members: Members) -> dict[str, Path]:
    """Each member registered (token, CSR approved); its agent's control-plane kubeconfig."""
    kubeconfigs = {}
    for name in NAMES:
        pull_mode.register(members.servers[name], name)
        kubeconfigs[name] = pull_mode.agent_kubeconfig(members.servers[name], name)
    return kubeconfigs


class Fleet:
    """One ``karmada-agent --fleet`` process."""

    def __init__(self, workdir: Path, entries: list[dict[str, Any]], log_name: str) -> None:
        self.file = workdir / f"{log_name}.json"
        self.file.write_text(json.dumps({"agents": entries}))
        self.port, self.metrics_port = free_port(), free_port()
        self.log = workdir / f"{log_name}.log"
        args = [
            str(BIN_DIR / "karmada-agent"),
            f"--fleet={self.file}",
            f"--health-probe-bind-address=127.0.0.1:{self.port}",
            f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
            *FAST_AGENT,
        ]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=program_env())

    def readyz(self) -> tuple[int, str]:
        return get(self.port, "/readyz?verbose")

    def terminate(self, timeout: float = 15) -> int:
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError("the fleet did not stop within 15s of SIGTERM") from None

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def entry(pull_mode: PullMode, members: Members, name: str, karmada_kubeconfig: Path | None) -> dict[str, Any]:
    found: dict[str, Any] = {
        "cluster-name": name,
        "kubeconfig": str(members.servers[name].kubeconfig(pull_mode.workdir, f"{name}-admin", ["system:masters"])),
        "cluster-api-endpoint": members.servers[name].url,
    }
    if karmada_kubeconfig is not None:
        found["karmada-kubeconfig"] = str(karmada_kubeconfig)
    return found


def lease_renewed(pull_mode: PullMode, name: str) -> str:
    lease = json.loads(pull_mode.admin("get", "lease", name, "-n", "karmada-cluster", "-o", "json").stdout)
    return str(lease["spec"]["renewTime"])


def wait_renewed(pull_mode: PullMode, name: str) -> None:
    before = lease_renewed(pull_mode, name)
    wait_for(lambda: lease_renewed(pull_mode, name) != before, timeout=10, what=f"{name}'s Lease renewed")


def propagate(pull_mode: PullMode, name: str) -> None:
    pull_mode.admin("create", "deployment", name, "--image=nginx:1.25", "--replicas=1")
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
            "placement": {"clusterAffinity": {"clusterNames": list(NAMES)}},
        },
    }
    pull_mode.admin("apply", "-f", "-", stdin=json.dumps(policy))


def is_ready(pull_mode: PullMode, name: str) -> bool:
    return pull_mode.ready(name) == "True"


def landed(pull_mode: PullMode, members: Members, member: str, deployment: str) -> bool:
    kubectl = pull_mode.member_admin(members.servers[member], member)
    return bool(kubectl("get", "deployment", deployment, check=False).returncode == 0)


def test_a_fleet_of_three_runs_and_one_failing_member_stops_only_its_agent(
    pull_mode: PullMode, members: Members, registered: dict[str, Path]
) -> None:
    # member3's agent reads its credentials from the register Secret in its member, as in a Pod
    entries = [
        entry(pull_mode, members, "member1", registered["member1"]),
        entry(pull_mode, members, "member2", registered["member2"]),
        entry(pull_mode, members, "member3", None),
    ]
    fleet = Fleet(pull_mode.workdir, entries, "fleet")
    try:
        for name in NAMES:
            wait_for(functools.partial(is_ready, pull_mode, name), timeout=40, what=f"{name} Ready")
        wait_for(lambda: fleet.readyz()[0] == 200, timeout=20, what="the fleet's /readyz")
        assert "[+]member1 ok\n[+]member2 ok\n[+]member3 ok\n" in fleet.readyz()[1]
        propagate(pull_mode, "shop")
        for name in NAMES:
            wait_for(functools.partial(landed, pull_mode, members, name, "shop"), timeout=30, what=f"shop in {name}")
        status, metrics = get(fleet.metrics_port, "/metrics")
        assert status == 200
        for name in NAMES:  # one /metrics for the process, with every member's requests
            assert f'host="127.0.0.1:{members.ports[name]}"' in metrics

        members.stop("member3")
        wait_for(lambda: fleet.readyz()[0] == 500, timeout=20, what="/readyz failing")
        text = fleet.readyz()[1]
        assert "[+]member1 ok\n[+]member2 ok\n[-]member3 failed: member cluster not reachable" in text
        wait_for(lambda: pull_mode.ready("member3") != "True", timeout=20, what="member3 not Ready")
        for name in ("member1", "member2"):
            wait_renewed(pull_mode, name)
            assert pull_mode.ready(name) == "True"
        propagate(pull_mode, "cart")
        for name in ("member1", "member2"):
            wait_for(functools.partial(landed, pull_mode, members, name, "cart"), timeout=30, what=f"cart in {name}")

        members.start("member3")
        wait_for(lambda: pull_mode.ready("member3") == "True", timeout=40, what="member3 Ready again")
        wait_for(lambda: landed(pull_mode, members, "member3", "cart"), timeout=30, what="cart in member3")
        wait_for(lambda: fleet.readyz()[0] == 200, timeout=20, what="/readyz passing again")
        assert fleet.process.poll() is None
    finally:
        code = fleet.terminate()
    assert code == 0
    output = fleet.output()
    assert "karmada-agent" in output and "3 agents in this process" in output
    for name in NAMES:  # each agent's lines name its cluster
        assert f"agent [{name}]: agent for cluster {name} running" in output
    assert "Traceback" not in output


def test_an_agent_without_credentials_waits_alone_and_starts_once_they_appear(
    pull_mode: PullMode, members: Members, registered: dict[str, Path]
) -> None:
    missing = pull_mode.workdir / "member2-later.kubeconfig"
    entries = [
        entry(pull_mode, members, "member1", registered["member1"]),
        entry(pull_mode, members, "member2", missing),
    ]
    fleet = Fleet(pull_mode.workdir, entries, "fleet-credentials")
    try:
        wait_for(lambda: "[+]member1 ok" in fleet.readyz()[1], timeout=30, what="member1's agent working")
        status, text = fleet.readyz()
        assert status == 500
        assert f"[-]member2 failed: control-plane credentials: cannot read {missing}" in text
        wait_renewed(pull_mode, "member1")
        missing.write_bytes(registered["member2"].read_bytes())
        missing.chmod(0o600)
        wait_for(lambda: fleet.readyz()[0] == 200, timeout=30, what="member2's agent working once its file exists")
        wait_renewed(pull_mode, "member2")
    finally:
        code = fleet.terminate()
    assert code == 0
    assert "[member2]: control-plane credentials: cannot read" in fleet.output()
