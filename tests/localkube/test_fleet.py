"""``localkube serve --clusters N`` / ``--fleet FILE``: the real program, the real
kubectl over TLS. Two clusters of one process are isolated (objects, client
certificates, service-account tokens, watches); a bad fleet file and a taken
port fail the start naming the cluster; SIGTERM stops them all."""

from __future__ import annotations

import json
import re
import select
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.programs import BIN_DIR, kubectl, program_env, run
from tests.servers import Kubectl

pytestmark = pytest.mark.slow
SERVING = re.compile(r"^localkube serving on (https://127\.0\.0\.1:\d+) as (\S+)$")


class FleetProcess:
    """``localkube serve`` with fleet flags, read until it says the whole fleet serves."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [str(BIN_DIR / "localkube"), "serve", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=program_env(),
        )
        self.urls: dict[str, str] = {}
        self.lines: list[str] = []

    def wait_serving(self, count: int, timeout: float = 30) -> dict[str, str]:
        assert self.process.stdout is not None
        # blocking reads, ended by a kill at the deadline (a select() beside a buffered
        # readline misses lines already buffered)
        timer = threading.Timer(timeout, self.process.kill)
        timer.start()
        try:
            for raw in self.process.stdout:
                line = raw.rstrip("\n")
                self.lines.append(line)
                match = SERVING.match(line)
                if match:
                    self.urls[match.group(2)] = match.group(1)
                elif line == f"localkube fleet serving {count} clusters":
                    return self.urls
        finally:
            timer.cancel()
        stderr = self.process.stderr.read() if self.process.stderr else ""
        raise AssertionError(f"the fleet did not serve: {self.lines} {stderr}")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
        code = self.process.wait()
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        return code


def _fails(args: list[str]) -> tuple[int, str, str]:
    result = run([str(BIN_DIR / "localkube"), "serve", *args], timeout=30)
    return result.returncode, result.stdout, result.stderr


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str], FleetProcess]]:
    top = tmp_path_factory.mktemp("fleet")
    fleet = FleetProcess(
        "--clusters", "2", "--port", "0", "--data-dir", str(top / "data"), "--kubeconfig-out", str(top / "kube")
    )
    try:
        urls = fleet.wait_serving(2)
        yield top, urls, fleet
    finally:
        fleet.stop()


def _kubectl(top: Path, name: str) -> Kubectl:
    return Kubectl(top / "kube" / f"{name}.kubeconfig", top / "cache")


def _config(top: Path, name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((top / "kube" / f"{name}.kubeconfig").read_text())
    return loaded


def _write(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(json.dumps(config))
    return path


def test_each_cluster_serves_as_announced_with_its_own_ca_and_files(
    two: tuple[Path, dict[str, str], FleetProcess],
) -> None:
    top, urls, fleet = two
    assert list(urls) == ["member1", "member2"] and urls["member1"] != urls["member2"]
    assert fleet.lines == [
        f"localkube serving on {urls['member1']} as member1",
        f"localkube serving on {urls['member2']} as member2",
        "localkube fleet serving 2 clusters",
    ]
    for name in urls:
        assert _config(top, name)["clusters"][0]["cluster"]["server"] == urls[name]
        assert {p.name for p in (top / "data" / name).iterdir()} == {"ca.crt", "ca.key", "sa.key", "state"}
    assert (top / "data/member1/ca.crt").read_bytes() != (top / "data/member2/ca.crt").read_bytes()
    assert (top / "data/member1/sa.key").read_bytes() != (top / "data/member2/sa.key").read_bytes()


def test_objects_are_separate(two: tuple[Path, dict[str, str], FleetProcess]) -> None:
    top, _, _ = two
    a, b = _kubectl(top, "member1"), _kubectl(top, "member2")
    a("create", "configmap", "only-in-a", "--from-literal=k=a")
    missing = b("get", "configmap", "only-in-a", check=False)
    assert missing.returncode == 1 and 'configmaps "only-in-a" not found' in missing.stderr
    b("create", "configmap", "only-in-a", "--from-literal=k=b")
    assert a("get", "configmap", "only-in-a", "-o", "jsonpath={.data.k}").stdout == "a"
    assert b("get", "configmap", "only-in-a", "-o", "jsonpath={.data.k}").stdout == "b"


def test_the_client_certificate_of_one_cluster_is_refused_by_the_other(
    two: tuple[Path, dict[str, str], FleetProcess],
) -> None:
    top, urls, _ = two
    crossed = _config(top, "member1")
    crossed["clusters"] = _config(top, "member2")["clusters"]  # B's address and CA, A's admin certificate
    # one request (--raw: no discovery, which kubectl retries for as long as the handshake fails)
    kubectl = Kubectl(_write(top / "crossed.kubeconfig", crossed), top / "cache")
    result = kubectl("get", "--raw", "/api/v1/namespaces", check=False)
    assert result.returncode == 1
    # Python's TLS cannot ask for a certificate without verifying it, so B ends the handshake
    # on A's (kube-apiserver would answer 401 after it); either way nothing of B is read
    # (kubectl says "Unable to connect to the server: EOF", or, when it retried on a connection
    # B reset, the GET with the reset of its previous attempt)
    assert "EOF" in result.stderr or "reset by peer" in result.stderr, result.stderr
    assert "Forbidden" not in result.stderr and "Unauthorized" not in result.stderr, result.stderr
    assert "default" not in result.stdout
    assert _config(top, "member2")["clusters"][0]["cluster"]["server"] == urls["member2"]


def test_a_service_account_token_of_one_cluster_is_refused_by_the_other(
    two: tuple[Path, dict[str, str], FleetProcess],
) -> None:
    top, _, _ = two
    a, b = _kubectl(top, "member1"), _kubectl(top, "member2")
    for admin in (a, b):  # the same account name in both
        admin("create", "serviceaccount", "robot")
    token = a("create", "token", "robot", "--duration=1h").stdout.strip()
    for name, expected in (("member1", 0), ("member2", 1)):
        config = _config(top, name)
        config["users"] = [{"name": "robot", "user": {"token": token}}]
        config["contexts"][0]["context"]["user"] = "robot"
        robot = Kubectl(_write(top / f"robot-{name}.kubeconfig", config), top / "cache")
        result = robot("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}", check=False)
        assert result.returncode == expected, result.stderr
        if expected:
            assert "Unauthorized" in result.stderr
        else:
            assert result.stdout == "system:serviceaccount:default:robot"


def test_a_watch_on_one_cluster_sees_nothing_written_to_the_other(
    two: tuple[Path, dict[str, str], FleetProcess],
) -> None:
    top, _, _ = two
    a, b = _kubectl(top, "member1"), _kubectl(top, "member2")
    a("create", "namespace", "watched")
    b("create", "namespace", "watched")
    command = [kubectl(), f"--kubeconfig={a.kubeconfig}", f"--cache-dir={top / 'cache'}", "get", "configmaps"]
    watch = subprocess.Popen(
        [*command, "-n", "watched", "--watch-only", "-o", "name"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=program_env(),
    )
    try:
        time.sleep(1.5)  # the watch is open (kubectl prints nothing until an event)
        for number in range(3):
            b("create", "configmap", f"in-b-{number}", "-n", "watched")
        a("create", "configmap", "in-a", "-n", "watched")
        assert watch.stdout is not None
        ready, _, _ = select.select([watch.stdout], [], [], 15)
        assert ready, "the watch on A saw nothing"
        # the first event A's watch delivers is A's own write: B's three came before it and are not there
        assert watch.stdout.readline().strip() == "configmap/in-a"
    finally:
        watch.kill()
        watch.communicate()


def test_sigterm_stops_every_cluster(tmp_path: Path) -> None:
    fleet = FleetProcess("--clusters", "2", "--port", "0", "--cluster-name-prefix", "edge")
    urls = fleet.wait_serving(2)
    assert list(urls) == ["edge1", "edge2"]
    assert fleet.stop() == 0
    for url in urls.values():
        port = int(url.rsplit(":", 1)[1])
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
            pass


def test_sigterm_while_the_fleet_starts_stops_what_started() -> None:
    fleet = FleetProcess("--clusters", "40", "--port", "0")
    assert fleet.process.stdout is not None
    assert SERVING.match(fleet.process.stdout.readline().rstrip("\n"))  # the first serves, the rest start
    assert fleet.stop() == 0


def test_a_fleet_file_serves_its_entries(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    fleet_file = tmp_path / "fleet.json"
    fleet_file.write_text(
        json.dumps(
            {
                "clusters": [
                    {"name": "east", "port": free, "kubeconfigOut": "east.kubeconfig", "nodeNamePrefix": "east"},
                    {"name": "west", "port": 0, "dataDir": str(tmp_path / "west")},
                ]
            }
        )
    )
    fleet = FleetProcess("--fleet", str(fleet_file), "--simulate-nodes", "2")
    try:
        urls = fleet.wait_serving(2)
        assert urls["east"] == f"https://127.0.0.1:{free}"
        east = Kubectl(tmp_path / "east.kubeconfig", tmp_path / "cache")  # relative to the file
        deadline = time.monotonic() + 10
        nodes = ""
        while time.monotonic() < deadline and nodes.count("east-") < 2:
            nodes = east("get", "nodes", "-o", "name").stdout
            time.sleep(0.2)
        assert nodes.split() == ["node/east-1", "node/east-2"]
        assert (tmp_path / "west" / "sa.key").exists()
    finally:
        assert fleet.stop() == 0


def test_a_taken_port_fails_the_start_naming_its_cluster(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        fleet_file = tmp_path / "fleet.json"
        fleet_file.write_text(json.dumps({"clusters": [{"name": "ok", "port": 0}, {"name": "busy", "port": port}]}))
        code, stdout, stderr = _fails(["--fleet", str(fleet_file)])
    assert code == 1
    assert stdout == "", "no cluster serves when one cannot"
    assert stderr.strip() == f"error: cluster busy: cannot listen on 127.0.0.1:{port}: Address already in use"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"clusters": [{"name": "a", "port": 0}, {"name": "b"}]}, 'clusters[1] ("b"): port: required, an integer'),
        ({"clusters": [{"name": "a", "port": 0, "data_dir": "/x"}]}, 'clusters[0] ("a"): data_dir: unknown field'),
    ],
)
def test_a_bad_fleet_file_names_the_entry_and_field(tmp_path: Path, document: Any, message: str) -> None:
    fleet_file = tmp_path / "fleet.json"
    fleet_file.write_text(json.dumps(document))
    code, stdout, stderr = _fails(["--fleet", str(fleet_file)])
    assert code == 1 and stdout == ""
    assert stderr.startswith(f"error: {fleet_file}: {message}"), stderr


def test_fleet_flags_that_conflict_are_refused(tmp_path: Path) -> None:
    fleet_file = tmp_path / "fleet.json"
    fleet_file.write_text(json.dumps({"clusters": [{"name": "a", "port": 0}]}))
    code, _, stderr = _fails(["--fleet", str(fleet_file), "--port", "7000"])
    assert code == 1 and "--port: not with --fleet" in stderr
    code, _, stderr = _fails(["--clusters", "0"])
    assert code == 1 and "--clusters: must be at least 1" in stderr


def test_help_says_many_clusters_per_process_is_for_simulation() -> None:
    result = run([str(BIN_DIR / "localkube"), "serve", "--help"])
    text = " ".join(result.stdout.split())
    assert "--fleet FILE" in text and "--clusters N" in text
    assert "for simulation" in text and "One process per cluster, the default, is what real clusters look like" in text


def test_large_objects_cross_the_small_tls_read_buffer(two: tuple[Path, dict[str, str], FleetProcess]) -> None:
    top, _, _ = two
    a = _kubectl(top, "member1")
    (top / "big.txt").write_text("x" * 900_000)  # many 16 KiB TLS records, far beyond one 32 KiB read
    a("create", "configmap", "big", f"--from-file=big={top / 'big.txt'}")
    assert a("get", "configmap", "big", "-o", "jsonpath={.data.big}").stdout == "x" * 900_000
