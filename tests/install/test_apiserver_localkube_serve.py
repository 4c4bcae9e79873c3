"""The test plays the kubelet: the Secret's files where the StatefulSet mounts them (mapped
into a temporary directory), the container's command run as it is (only the paths, the
listen address and the port changed), then the real kubectl with the admin kubeconfig,
the serving certificate checked for the Service's name, and a restart that keeps the
objects on the "volume"."""

from __future__ import annotations

import http.client
import json
import os
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from karmada.install.apiserver_localkube import (
    ApiserverPKI,
    admin_kubeconfig,
    apiserver_objects,
    new_pki,
)
from tests.kubelet import Pod, pod_of
from tests.servers import Kubectl

Obj = dict[str, Any]
SERVICE_NAME = "karmada-apiserver.karmada-system.svc"
LOOPBACK = {"--host": "127.0.0.1", "--port": "0"}
pytestmark = pytest.mark.slow


def _kubelet(objects: list[Obj], root: Path) -> Pod:
    (secret,) = [o for o in objects if o["kind"] == "Secret"]
    (statefulset,) = [o for o in objects if o["kind"] == "StatefulSet"]
    claims = frozenset(c["metadata"]["name"] for c in statefulset["spec"]["volumeClaimTemplates"])
    secrets = {secret["metadata"]["name"]: secret}
    return pod_of(statefulset["spec"]["template"], secrets, root, claims=claims, flags=LOOPBACK)


@pytest.fixture(scope="module")
def pki() -> ApiserverPKI:
    return new_pki(["192.0.2.10"], ["karmada.example.com"])


@pytest.fixture(scope="module")
def pod(pki: ApiserverPKI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pod]:
    root = tmp_path_factory.mktemp("pod")
    pod = _kubelet(apiserver_objects(pki), root)
    try:
        yield pod
    finally:
        pod.release()


def _kubectl(pki: ApiserverPKI, url: str, directory: Path, server_name: str = SERVICE_NAME) -> Kubectl:
    port = url.rsplit(":", 1)[1]
    path = directory / f"karmada-apiserver-{port}-{server_name}.config"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(admin_kubeconfig(pki, f"https://127.0.0.1:{port}", tls_server_name=server_name))
    return Kubectl(path, directory / "cache")


def _anonymous_get(pki: ApiserverPKI, url: str, path: str) -> tuple[int, str]:
    """A probe as the kubelet sends it: HTTPS, no client certificate (verified here, though)."""
    context = ssl.create_default_context(cadata=pki.ca_cert.decode())
    host, port = url.removeprefix("https://").rsplit(":", 1)
    connection = http.client.HTTPSConnection(host, int(port), context=context, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def test_the_container_command_serves_the_admin_and_keeps_its_objects(
    pki: ApiserverPKI, pod: Pod, tmp_path: Path
) -> None:
    program, url = pod.serve()
    try:
        kubectl = _kubectl(pki, url, tmp_path)
        namespaces = json.loads(kubectl("get", "ns", "-o", "json").stdout)
        assert "default" in {n["metadata"]["name"] for n in namespaces["items"]}
        who = json.loads(kubectl("auth", "whoami", "-o", "json").stdout)["status"]["userInfo"]
        assert who["username"] == "system:admin"
        assert "system:masters" in who["groups"]
        kubectl("create", "configmap", "kept", "-n", "default", "--from-literal=answer=42")
        # the probes: /livez and /readyz answer a caller without credentials
        assert _anonymous_get(pki, url, "/livez")[0] == 200
        assert _anonymous_get(pki, url, "/readyz")[0] == 200
        # the serving certificate is checked: a name it does not carry is refused
        wrong = _kubectl(pki, url, tmp_path, server_name="not-karmada.example.com")
        refused = wrong("get", "ns", check=False)
        assert refused.returncode != 0 and "certificate" in refused.stderr, refused.stderr
        # tokens of service accounts are signed with the given key and accepted
        kubectl("create", "serviceaccount", "robot", "-n", "default")
        token = kubectl("create", "token", "robot", "-n", "default").stdout.strip()
        config = yaml.safe_load(kubectl.kubeconfig.read_text())
        config["users"][0]["user"] = {"token": token}
        (tmp_path / "robot.config").write_text(yaml.safe_dump(config))
        robot = Kubectl(tmp_path / "robot.config", tmp_path / "cache")
        who = json.loads(robot("auth", "whoami", "-o", "json").stdout)["status"]["userInfo"]
        assert who["username"] == "system:serviceaccount:default:robot"
    finally:
        program.stop()
    assert not program.running

    program, url = pod.serve()  # the same "volume", another port
    try:
        kubectl = _kubectl(pki, url, tmp_path)
        kept = json.loads(kubectl("get", "configmap", "kept", "-n", "default", "-o", "json").stdout)
        assert kept["data"] == {"answer": "42"}
    finally:
        program.stop()
    data_dirs = [local for mount_path, local in pod.mounts.items() if mount_path.startswith("/var/lib/")]
    assert data_dirs and any(p.is_file() for p in data_dirs[0].rglob("*"))  # the journal is on the volume
