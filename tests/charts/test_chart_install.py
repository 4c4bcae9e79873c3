"""charts/karmada-py installed as Helm would, in the sandbox: its hooks' commands run as
the hooks' own ServiceAccount (a token of karmada-init, so the chart's RBAC is what is
tested), its objects applied with the real kubectl, and the test playing the kubelet
(``tests.kubelet``). Karmada then answers at the advertised address with its API, the
webhook and the control plane connected. ``helm install`` itself needs a cluster that runs
Jobs, which localkube does not."""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from localkube.simulation import SimulationConfig
from tests.charts.chart import HOOK_KINDS, render
from tests.kubelet import HostKubelet, free_node_port
from tests.programs import BIN_DIR, free_port, program_env
from tests.pullmode import FAST_CONTROLPLANE, wait_for
from tests.servers import Kubectl, ServerThread, start_server

Obj = dict[str, Any]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture
def host() -> Iterator[ServerThread]:
    simulation = SimulationConfig(nodes=1, node_prefix="host", workloads=True, shutdown_seconds=0.2)
    yield from start_server(port=0, simulation=simulation)


def _service_account_kubeconfig(host: Kubectl, admin_config: Path, path: Path) -> Path:
    """A kubeconfig of the hooks' ServiceAccount: the rights the chart gives them, no more."""
    token = host("create", "token", "karmada-init", "-n", "karmada-system").stdout.strip()
    config = yaml.safe_load(admin_config.read_text())
    config["users"] = [{"name": "karmada-init", "user": {"token": token}}]
    config["contexts"][0]["context"]["user"] = "karmada-init"
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def _run_hook(job: Obj, kubeconfig: Path) -> str:
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[0] == "kubectl-karmada"
    args = [str(BIN_DIR / command[0]), *command[1:], f"--kubeconfig={kubeconfig}"]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120, env=program_env(), check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_the_charts_hooks_and_objects_make_a_working_karmada(host: ServerThread, tmp_path: Path) -> None:
    admin_config = host.kubeconfig(tmp_path, "host-admin", ["system:masters"])
    host_kubectl = Kubectl(admin_config, tmp_path / "cache")
    node_port, webhook_port, proxy_port = free_node_port(), free_port(), free_node_port()
    while proxy_port == node_port:
        proxy_port = free_node_port()
    values = [
        "apiserver.advertiseAddress=127.0.0.1",
        f"apiserver.nodePort={node_port}",
        f"clusterProxy.nodePort={proxy_port}",
        f"webhookURL=https://127.0.0.1:{webhook_port}",
        "hooks.timeout=60s",
    ]
    result = render(*values)
    assert result.returncode == 0, result.stderr
    objects = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    hooks = [o for o in objects if o["kind"] in HOOK_KINDS and o["kind"] != "Job"]
    jobs = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Job"}
    release = [o for o in objects if o["kind"] not in HOOK_KINDS]

    host_kubectl("create", "namespace", "karmada-system")  # helm install --create-namespace
    host_kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(hooks))  # pre-install, weight -10
    hook_config = _service_account_kubeconfig(host_kubectl, admin_config, tmp_path / "karmada-init.kubeconfig")
    out = _run_hook(jobs["karmada-init-certs"], hook_config)
    assert "secret/karmada-cert -n karmada-system applied" in out and "namespace/" not in out

    host_kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(release))  # the release's objects
    kubelet = HostKubelet(host_kubectl, tmp_path / "kubelet", node_port, webhook_port)
    try:
        kubelet.run_apiserver()
        kubelet.run_component("karmada-webhook")
        out = _run_hook(jobs["karmada-init-api"], hook_config)  # post-install
        assert "11 CustomResourceDefinitions established" in out
        kubelet.run_component("karmada-controlplane", *FAST_CONTROLPLANE)

        secret = json.loads(
            host_kubectl("get", "secret", "karmada-admin-config", "-n", "karmada-system", "-o", "json").stdout
        )
        config = tmp_path / "karmada.config"
        config.write_bytes(base64.b64decode(secret["data"]["karmada.config"]))
        karmada = Kubectl(config, tmp_path / "cache")
        assert (
            yaml.safe_load(config.read_text())["clusters"][0]["cluster"]["server"] == f"https://127.0.0.1:{node_port}"
        )
        info = json.loads(karmada("get", "configmap", "cluster-info", "-n", "kube-public", "-o", "json").stdout)
        assert f"server: https://127.0.0.1:{node_port}" in info["data"]["kubeconfig"]
        # the webhook is in the path, and the control plane works against this API server
        bad = """\
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: bad, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: nginx}]
  placement:
    clusterAffinities: [{affinityName: a}]
    clusterAffinity: {clusterNames: [m1]}
"""
        refused = karmada("apply", "-f", "-", stdin=bad, check=False)
        assert "clusterAffinities cannot co-exist with clusterAffinity" in refused.stderr, refused.stderr
        wait_for(
            lambda: karmada("get", "lease", "-n", "karmada-system", "-o", "name", check=False).stdout.strip() != "",
            timeout=60,
            what="the control plane's leader Lease",
        )
        # the cluster proxy: published with the API server's CA, serving at that address with a
        # certificate from it, authenticating the admin's client certificate (no such cluster: 404)
        proxy_url = f"https://127.0.0.1:{proxy_port}"
        published = json.loads(
            karmada("get", "configmap", "karmada-cluster-proxy", "-n", "karmada-system", "-o", "json").stdout
        )["data"]
        ca = base64.b64decode(
            yaml.safe_load(config.read_text())["clusters"][0]["cluster"]["certificate-authority-data"]
        )
        assert published == {"server": proxy_url, "ca.crt": ca.decode()}
        kubelet.run_component("karmada-cluster-proxy", f"--cluster-proxy-bind-address=127.0.0.1:{proxy_port}")
        path = "/apis/cluster.karmada.io/v1alpha1/clusters/nowhere/proxy/api"

        def answered() -> str | None:
            result = karmada("get", "--raw", path, "--server", proxy_url, check=False)
            return result.stderr if "NotFound" in result.stderr else None

        wait_for(answered, timeout=30, what="the cluster proxy to answer")
    finally:
        kubelet.stop()

    # a second run of the certs hook (helm upgrade) keeps every certificate
    before = host_kubectl("get", "secret", "karmada-cert", "-n", "karmada-system", "-o", "json").stdout
    _run_hook(jobs["karmada-init-certs"], hook_config)
    after = host_kubectl("get", "secret", "karmada-cert", "-n", "karmada-system", "-o", "json").stdout
    assert json.loads(before)["data"] == json.loads(after)["data"]
    # the hooks' ServiceAccount may not touch what is not theirs
    can = host_kubectl(
        "auth",
        "can-i",
        "delete",
        "deployments",
        "-n",
        "karmada-system",
        "--as=system:serviceaccount:karmada-system:karmada-init",
        check=False,
    )
    assert can.stdout.strip() == "no"
