"""``karmada-cluster-proxy``, the program a host install runs: against a control plane
with a member registered (``register --cluster-proxy-server``, its agent dialling the
proxy) and one joined in Push mode, driven by the real kubectl through
``proxy-config --cluster-proxy-server`` kubeconfigs; and its refusals of unusable files."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from localkube.simulation import SimulationConfig
from tests.programs import BIN_DIR, Background, free_port, kubectl, run
from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread, start_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def control_plane() -> Iterator[ServerThread]:
    yield from start_server(port=0)


@pytest.fixture(scope="module")
def pulled() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix="pulled"))


@pytest.fixture(scope="module")
def pushed() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix="pushed"))


def tls_files(control_plane: ServerThread, directory: Path) -> tuple[Path, Path, Path]:
    """A serving certificate for 127.0.0.1 from the control plane's CA, and that CA."""
    directory.mkdir(mode=0o700, exist_ok=True)
    cert, key = control_plane.run_sync(lambda: control_plane.server.ca.issue_server(["127.0.0.1"]))
    (directory / "tls.crt").write_bytes(cert)
    with os.fdopen(os.open(directory / "tls.key", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
        out.write(key)
    (directory / "ca.crt").write_bytes(control_plane.server.ca_pem())
    return directory / "tls.crt", directory / "tls.key", directory / "ca.crt"


def proxy_args(kubeconfig: Path, port: int, files: tuple[Path, Path, Path]) -> list[str]:
    cert, key, ca = files
    return [
        str(BIN_DIR / "karmada-cluster-proxy"),
        f"--kubeconfig={kubeconfig}",
        f"--cluster-proxy-bind-address=127.0.0.1:{port}",
        f"--cluster-proxy-tls-cert-file={cert}",
        f"--cluster-proxy-tls-private-key-file={key}",
        f"--cluster-proxy-client-ca-file={ca}",
        "--health-probe-bind-address=0",
        "--metrics-bind-address=0",
    ]


def test_the_program_proxies_pull_and_push_members(
    control_plane: ServerThread, pulled: ServerThread, pushed: ServerThread, tmp_path: Path
) -> None:
    pull_mode = PullMode(control_plane, tmp_path).install()
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    proxy = Background(
        proxy_args(pull_mode.kubeconfig, port, tls_files(control_plane, tmp_path / "pki")), tmp_path / "proxy.log"
    )
    try:
        proxy.start()
        pull_mode.start_controlplane()
        pull_mode.register(pulled, "pulled", f"--cluster-proxy-server={url}")
        assert f"--cluster-proxy-server={url}" in pull_mode.agent_command(pulled, "pulled")
        pull_mode.start_agent(pulled, "pulled")
        pull_mode.join(pushed, "pushed")
        for name in ("pulled", "pushed"):
            config = tmp_path / f"{name}.proxy.config"
            printed = pull_mode.plugin("proxy-config", name, "--cluster-proxy-server", url).stdout
            config.write_text(printed)
            member = Kubectl(config, tmp_path / "cache")

            def nodes(member: Kubectl = member) -> str | None:
                got = member("get", "nodes", "-o", "name", check=False)
                return got.stdout.strip() if got.returncode == 0 else None

            assert wait_for(nodes, timeout=40, what=f"{name}'s nodes through the proxy") == f"node/{name}-1"
        for name, member_server in (("pulled", pulled), ("pushed", pushed)):
            # a quiet watch whose caller hangs up is let go at once, not at the member's next event
            before = member_server.run_sync(lambda server=member_server: server.server.watch_count)
            config = tmp_path / f"{name}.proxy.config"
            command = [kubectl(), f"--kubeconfig={config}", "get", "configmaps", "-n", "kube-public", "-w"]
            with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as watch:

                def watching(server: ServerThread = member_server, before: int = before) -> bool:
                    return bool(server.run_sync(lambda: server.server.watch_count) > before)

                wait_for(watching, timeout=20, what=f"the watch to reach {name}")
                watch.kill()

            def released(server: ServerThread = member_server, before: int = before) -> bool:
                return bool(server.run_sync(lambda: server.server.watch_count) <= before)

            wait_for(released, timeout=5, what=f"{name}'s watch released after its caller went")
    finally:
        proxy.stop()
        pull_mode.stop()
    assert "tunnel of pulled open" in proxy.output()


@pytest.mark.parametrize("broken", ["cert", "key", "ca"])
def test_an_unusable_file_names_its_flag(control_plane: ServerThread, tmp_path: Path, broken: str) -> None:
    files = list(tls_files(control_plane, tmp_path / "pki"))
    index = {"cert": 0, "key": 1, "ca": 2}[broken]
    files[index] = tmp_path / "missing.pem"
    kubeconfig = control_plane.kubeconfig(tmp_path)
    result = run(proxy_args(kubeconfig, free_port(), (files[0], files[1], files[2])), timeout=30)
    flag = {"cert": "--cluster-proxy-tls-cert-file", "key": "--cluster-proxy-tls-private-key-file"}.get(
        broken, "--cluster-proxy-client-ca-file"
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"error: {flag} {tmp_path / 'missing.pem'}: cannot be read"


def test_the_tls_flags_are_required(control_plane: ServerThread, tmp_path: Path) -> None:
    result = run([str(BIN_DIR / "karmada-cluster-proxy"), f"--kubeconfig={control_plane.kubeconfig(tmp_path)}"])
    assert result.returncode == 2
    assert "the cluster proxy needs --cluster-proxy-tls-cert-file" in result.stderr
