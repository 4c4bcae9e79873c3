"""The service-account signing key belongs to one server: kept in its data
directory across restarts, never shared with another server of the process."""

from __future__ import annotations

import base64
import json
import shutil
import stat
from pathlib import Path

import pytest

from localkube.server import ServerConfig
from localkube.tokens import KEY_FILE, TokenSigner
from tests.servers import Kubectl, ServerThread


def _token_kubeconfig(server: ServerThread, token: str, path: Path) -> Path:
    ca = base64.b64encode(server.server.ca_pem()).decode()
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "l", "cluster": {"server": server.url, "certificate-authority-data": ca}}],
                "users": [{"name": "robot", "user": {"token": token}}],
                "contexts": [{"name": "l", "context": {"cluster": "l", "user": "robot", "namespace": "default"}}],
                "current-context": "l",
            }
        )
    )
    return path


def _whoami(server: ServerThread, token: str, tmp_path: Path, name: str) -> tuple[int, str]:
    robot = Kubectl(_token_kubeconfig(server, token, tmp_path / f"{name}.kubeconfig"), tmp_path / "cache")
    result = robot("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}", check=False)
    return result.returncode, result.stdout + result.stderr


def _robot_token(server: ServerThread, tmp_path: Path) -> str:
    admin = Kubectl(server.kubeconfig(tmp_path), tmp_path / "cache")
    admin("create", "serviceaccount", "robot")
    token: str = admin("create", "token", "robot", "--duration=1h").stdout.strip()
    return token


def test_a_token_issued_before_a_restart_authenticates_after(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = ServerThread(ServerConfig(data_dir=data)).start()
    try:
        token = _robot_token(first, tmp_path)
        assert _whoami(first, token, tmp_path, "first") == (0, "system:serviceaccount:default:robot")
    finally:
        first.stop()
    key = data / KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(data.stat().st_mode) == 0o700
    before = key.read_bytes()
    again = ServerThread(ServerConfig(data_dir=data)).start()
    try:
        assert _whoami(again, token, tmp_path, "again") == (0, "system:serviceaccount:default:robot")
    finally:
        again.stop()
    assert key.read_bytes() == before, "the key is loaded, not made again"


def test_two_servers_of_one_process_reject_each_others_tokens(tmp_path: Path) -> None:
    data = tmp_path / "a"
    a = ServerThread(ServerConfig(data_dir=data)).start()
    try:
        token = _robot_token(a, tmp_path)
    finally:
        a.stop()
    # b holds the very same objects (the robot with its uid) and only the key differs: the key decides
    twin = tmp_path / "b"
    shutil.copytree(data, twin)
    (twin / KEY_FILE).unlink()
    a = ServerThread(ServerConfig(data_dir=data)).start()
    b = ServerThread(ServerConfig(data_dir=twin)).start()
    memory = ServerThread(ServerConfig()).start()
    try:
        assert _whoami(a, token, tmp_path, "a") == (0, "system:serviceaccount:default:robot")
        code, output = _whoami(b, token, tmp_path, "b")
        assert code != 0 and "Unauthorized" in output
        assert (twin / KEY_FILE).read_bytes() != (data / KEY_FILE).read_bytes()
        # no data directory: a random key of its own, still not the other servers'
        memory_token = _robot_token(memory, tmp_path / "memory")
        code, output = _whoami(a, memory_token, tmp_path, "a-memory")
        assert code != 0 and "Unauthorized" in output
        assert _whoami(memory, memory_token, tmp_path, "memory") == (0, "system:serviceaccount:default:robot")
    finally:
        memory.stop()
        b.stop()
        a.stop()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"not base64 at all!", "not a base64 service-account key"),
        (base64.b64encode(b"short"), "at least 32 bytes"),
    ],
)
def test_a_damaged_key_file_is_refused_by_name(tmp_path: Path, content: bytes, problem: str) -> None:
    (tmp_path / KEY_FILE).write_bytes(content)
    with pytest.raises(ValueError, match=problem) as caught:
        TokenSigner.load_or_create(tmp_path)
    assert str(tmp_path / KEY_FILE) in str(caught.value)
