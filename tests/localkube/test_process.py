"""``localkube serve`` as users run it: a separate process, killed without warning."""

from __future__ import annotations

import json
from pathlib import Path

from localkube.process import LocalKubeProcess
from tests.servers import Kubectl


def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = LocalKubeProcess(tmp_path / "admin.kubeconfig", data_dir=data, log=tmp_path / "localkube.log")
    server.start()
    kube = Kubectl(server.kubeconfig, tmp_path / "cache")
    try:
        kube("create", "namespace", "kept")
        for index in range(20):
            kube("create", "configmap", f"c{index}", "-n", "kept", f"--from-literal=i={index}")
        kube("delete", "configmap", "c0", "-n", "kept")
        last = json.loads(kube("get", "configmap", "c19", "-n", "kept", "-o", "json").stdout)
    finally:
        server.kill()
    again = LocalKubeProcess(tmp_path / "again.kubeconfig", data_dir=data)
    with again:
        kube = Kubectl(again.kubeconfig, tmp_path / "cache2")
        names = kube("get", "configmaps", "-n", "kept", "-o", "jsonpath={.items[*].metadata.name}").stdout.split()
        assert sorted(names) == sorted(["kube-root-ca.crt", *(f"c{i}" for i in range(1, 20))])
        restored = json.loads(kube("get", "configmap", "c19", "-n", "kept", "-o", "json").stdout)
        assert restored["metadata"]["uid"] == last["metadata"]["uid"]
        assert restored["metadata"]["resourceVersion"] == last["metadata"]["resourceVersion"]
        kube("create", "configmap", "after", "-n", "kept")
        after = kube("get", "configmap", "after", "-n", "kept", "-o", "jsonpath={.metadata.resourceVersion}").stdout
        assert int(after) > int(last["metadata"]["resourceVersion"]), "resourceVersion continues after a crash"
        # the CA survived too: the first admin credentials (and CA pin) still work
        old = Kubectl(server.kubeconfig, tmp_path / "cache3")
        name = old(f"--server={again.url}", "get", "namespace", "kept", "-o", "jsonpath={.metadata.name}").stdout
        assert name == "kept"


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    with LocalKubeProcess(tmp_path / "first.kubeconfig") as first:
        port = int(first.url.rsplit(":", 1)[1])
        clash = LocalKubeProcess(tmp_path / "second.kubeconfig", port=port, log=tmp_path / "second.log")
        try:
            clash.start(timeout=10)
        except RuntimeError as error:
            assert "did not start" in str(error)
        else:
            raise AssertionError("two servers on one port")
        assert "address already in use" in (tmp_path / "second.log").read_text().lower()
