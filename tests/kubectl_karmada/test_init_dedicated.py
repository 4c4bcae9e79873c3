"""``kubectl karmada init`` on a host cluster: a dedicated karmada-apiserver, the control
plane and karmada-webhook deployed into it and connected to it, then a member registered
and a Deployment propagated through that API server; and the kube layout (etcd,
kube-apiserver, kube-controller-manager) up to where its binaries would have to run.

The host is a localkube that simulates its workloads (so the Deployments and the
StatefulSet report ready as a real cluster's would). The test plays the kubelet and the
cluster's network: it runs each pod's command from the objects init applied, with their
Secrets as files, the API server on the advertised address and node port, and the
Service names the components' kubeconfigs use pointed at that address.
"""

from __future__ import annotations

import base64
import json
import shlex
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509

from karmada.install.dedicated import secret_names
from localkube.simulation import SimulationConfig
from tests.kubelet import APISERVER_SERVICE, HostKubelet, free_node_port
from tests.programs import BIN_DIR, Background, free_port, kubectl, program_env
from tests.pullmode import FAST_AGENT, FAST_CONTROLPLANE, wait_for
from tests.servers import Kubectl, Plugin, ServerThread, start_server

Obj = dict[str, Any]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(300),
]


@pytest.fixture
def host() -> Iterator[ServerThread]:
    # deleted pods exit at once: deinit's foreground deletion waits for them
    simulation = SimulationConfig(nodes=1, node_prefix="host", workloads=True, shutdown_seconds=0.2)
    yield from start_server(port=0, simulation=simulation)


@pytest.fixture
def member() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix="m1", workloads=True))


def _init(plugin: Plugin, *args: str) -> subprocess.Popen[str]:
    assert plugin.kubeconfig is not None
    command = [kubectl(), "karmada", "init", *args, f"--kubeconfig={plugin.kubeconfig}"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=program_env())


def _finish(process: subprocess.Popen[str], timeout: float = 90) -> str:
    out, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, out
    return out


def test_init_deploys_a_dedicated_apiserver_that_propagates_to_members(
    host: ServerThread, member: ServerThread, tmp_path: Path
) -> None:
    host_config = host.kubeconfig(tmp_path, "host-admin", ["system:masters"])
    host_kubectl = Kubectl(host_config, tmp_path / "cache")
    plugin = Plugin(host_config)
    node_port, webhook_port, proxy_port = free_node_port(), free_port(), free_node_port()
    while proxy_port == node_port:
        proxy_port = free_node_port()
    proxy_url = f"https://127.0.0.1:{proxy_port}"
    data = tmp_path / "karmada-data"
    args = [
        "--apiserver-advertise-address=127.0.0.1",
        f"--apiserver-node-port={node_port}",
        f"--cluster-proxy-node-port={proxy_port}",
        f"--webhook-url=https://127.0.0.1:{webhook_port}",
        f"--karmada-data={data}",
        "--timeout=60s",
    ]
    kubelet = HostKubelet(host_kubectl, tmp_path / "kubelet", node_port, webhook_port)
    process = _init(plugin, *args)
    try:
        kubelet.run_apiserver()
        kubelet.run_component("karmada-webhook")
        kubelet.run_component("karmada-controlplane", *FAST_CONTROLPLANE)
        kubelet.run_component("karmada-cluster-proxy", f"--cluster-proxy-bind-address=127.0.0.1:{proxy_port}")
        out = _finish(process)
        assert "statefulset/karmada-apiserver -n karmada-system ready" in out
        assert "deployment/karmada-cluster-proxy -n karmada-system available" in out
        assert f"configmap/karmada-cluster-proxy -n karmada-system applied (the cluster proxy at {proxy_url})" in out
        assert f"It carries --cluster-proxy-server {proxy_url}:" in out
        assert f"karmada-apiserver answers at https://127.0.0.1:{node_port}" in out
        assert "11 CustomResourceDefinitions established" in out
        assert "deployment/karmada-controlplane -n karmada-system available" in out

        config = data / "karmada.config"
        assert stat.S_IMODE(data.stat().st_mode) == 0o700 and stat.S_IMODE(config.stat().st_mode) == 0o600
        karmada = Kubectl(config, tmp_path / "cache")
        who = json.loads(karmada("auth", "whoami", "-o", "json").stdout)["status"]["userInfo"]
        assert who["username"] == "system:admin"
        # Karmada's API is in the dedicated server, not in the host
        assert "clusters.cluster.karmada.io" in karmada("get", "crd", "-o", "name").stdout
        assert "karmada.io" not in host_kubectl("get", "crd", "-o", "name").stdout
        # the components' identities: their own users, the control plane's rights only
        secret = json.loads(
            host_kubectl("get", "secret", "karmada-webhook-config", "-n", "karmada-system", "-o", "json").stdout
        )
        webhook_config = yaml.safe_load(base64.b64decode(secret["data"]["karmada.config"]))
        assert webhook_config["clusters"][0]["cluster"]["server"] == f"https://{APISERVER_SERVICE}:5443"
        can = karmada("auth", "can-i", "list", "secrets", "--as=system:karmada:karmada-webhook", check=False)
        assert can.stdout.strip() == "no"

        # the cluster proxy's address and CA, published for kubectl karmada logs/exec/get --live
        published = json.loads(
            karmada("get", "configmap", "karmada-cluster-proxy", "-n", "karmada-system", "-o", "json").stdout
        )["data"]
        assert published == {
            "server": proxy_url,
            "ca.crt": _secret_file(host_kubectl, "karmada-cert", "ca.crt").decode(),
        }

        # register a member through the advertised address and the CA in cluster-info, its agent
        # dialling the cluster proxy as init's closing message says
        line = Plugin(config)("token", "create", "--print-register-command").stdout
        words = shlex.split(line)
        assert words[3] == f"127.0.0.1:{node_port}" and "--discovery-token-ca-cert-hash" in words, words
        assert words[-2:] == ["--cluster-proxy-server", proxy_url]  # the printed command dials the proxy
        member_config = member.kubeconfig(tmp_path, "m1-admin", ["system:masters"])
        Plugin(member_config)(*words[2:], "--cluster-name", "m1", "--agent-rollout-timeout=0")
        kubelet.programs.append(_start_agent(member_config, tmp_path))
        wait_for(lambda: _ready(karmada, "m1"), timeout=60, what="cluster m1 Ready")
        karmada("apply", "-f", "-", stdin=_nginx_and_policy())
        member_kubectl = Kubectl(member_config, tmp_path / "cache")
        wait_for(
            lambda: member_kubectl("get", "deploy", "nginx", "-n", "default", check=False).returncode == 0,
            timeout=60,
            what="nginx in m1",
        )
        # the member, read through the proxy's tunnel as the admin
        through = "/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy/apis/apps/v1/namespaces/default/deployments"

        def proxied() -> bool:
            result = karmada("get", "--raw", through, "--server", proxy_url, check=False)
            return result.returncode == 0 and '"nginx"' in result.stdout

        wait_for(proxied, timeout=30, what="m1's Deployments through the cluster proxy")
        # karmada-webhook is in the path: a policy only it finds invalid is refused
        bad = _nginx_and_policy().replace(
            "    clusterAffinity:\n", "    clusterAffinities: [{affinityName: a}]\n    clusterAffinity:\n"
        )
        refused = karmada("apply", "-f", "-", stdin=bad, check=False)
        assert "clusterAffinities cannot co-exist with clusterAffinity" in refused.stderr, refused.stderr

        # the components roll when the Secrets they mount change
        for name in ("karmada-controlplane", "karmada-webhook"):
            template = json.loads(host_kubectl("get", "deploy", name, "-n", "karmada-system", "-o", "json").stdout)
            assert template["spec"]["template"]["metadata"]["annotations"]["karmada.io/pki-hash"]

        # init again converges: same CA, no roll of the API server's pod, the proxy's certificate kept
        hash_before = _pki_hash(host_kubectl)
        proxy_cert = _stored(host_kubectl, "secret", "karmada-cluster-proxy-cert")["data"]
        again = _finish(_init(plugin, *args))
        assert "deployment/karmada-webhook -n karmada-system available" in again
        assert _pki_hash(host_kubectl) == hash_before
        assert _stored(host_kubectl, "secret", "karmada-cluster-proxy-cert")["data"] == proxy_cert

        # --cluster-proxy=false removes what a run with it made, in the host and the Karmada API server
        off = _finish(
            _init(plugin, *[a for a in args if not a.startswith("--cluster-proxy-")], "--cluster-proxy=false")
        )
        for name in (
            "deployment/karmada-cluster-proxy",
            "service/karmada-cluster-proxy",
            "secret/karmada-cluster-proxy-cert",
        ):
            assert f"{name} -n karmada-system deleted (--cluster-proxy=false)" in off, off
        assert "configmap/karmada-cluster-proxy -n karmada-system deleted (--cluster-proxy=false)" in off
        assert "--cluster-proxy-server" not in off
        assert karmada("get", "configmap", "karmada-cluster-proxy", "-n", "karmada-system", check=False).returncode == 1
        assert (
            "karmada-cluster-proxy"
            not in host_kubectl("get", "deploy,svc", "-n", "karmada-system", "-o", "name").stdout
        )
        back = _finish(_init(plugin, *args))
        assert f"It carries --cluster-proxy-server {proxy_url}:" in back
        assert config.read_text() == (data / "karmada.config").read_text()

        # a restart of the API server's pod keeps the objects (its journal on the volume)
        kubelet.programs[0].stop()
        kubelet.run_apiserver()
        wait_for(lambda: karmada("get", "ns", "karmada-cluster", check=False).returncode == 0, timeout=30, what="kept")
    finally:
        if process.poll() is None:
            process.kill()
        if process.stdout is not None and not process.stdout.closed:
            print(process.communicate()[0])  # shown when the test fails
        kubelet.stop()

    out = plugin("deinit").stdout
    assert "statefulset/karmada-apiserver -n karmada-system deleted" in out
    for name in (
        "deployment/karmada-cluster-proxy",
        "service/karmada-cluster-proxy",
        "secret/karmada-cluster-proxy-cert",
    ):
        assert f"{name} -n karmada-system deleted" in out, out
    assert host_kubectl("get", "secret", "karmada-cert", "-n", "karmada-system", "-o", "name").stdout.strip()
    wait_for(lambda: host_kubectl("get", "deploy", "-n", "karmada-system", "-o", "name").stdout == "", what="gone")
    out = plugin("deinit", "--purge-data").stdout
    assert "secret/karmada-cert -n karmada-system deleted" in out
    assert "namespace/karmada-system deleted" in out
    assert host_kubectl("get", "namespace", "karmada-system", check=False).returncode == 1


def _pki_hash(host: Kubectl) -> str:
    statefulset = json.loads(
        host("get", "statefulset", "karmada-apiserver", "-n", "karmada-system", "-o", "json").stdout
    )
    return str(statefulset["spec"]["template"]["metadata"]["annotations"]["karmada.io/pki-hash"])


def _ready(karmada: Kubectl, name: str) -> bool:
    result = karmada("get", "cluster", name, "-o", "json", check=False)
    if result.returncode != 0:
        return False
    conditions = json.loads(result.stdout).get("status", {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _start_agent(member_config: Path, tmp_path: Path) -> Background:
    """The agent register deployed into the member, run as its Deployment would."""
    member = Kubectl(member_config, tmp_path / "cache")
    deployment = json.loads(member("get", "deploy", "karmada-agent", "-n", "karmada-system", "-o", "json").stdout)
    secret = json.loads(member("get", "secret", "karmada-kubeconfig", "-n", "karmada-system", "-o", "json").stdout)
    agent_config = tmp_path / "m1-agent.kubeconfig"
    agent_config.write_bytes(base64.b64decode(secret["data"]["karmada-kubeconfig"]))
    command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    args = [str(BIN_DIR / "karmada-agent")]
    args += [
        f"--karmada-kubeconfig={agent_config}" if a.startswith("--karmada-kubeconfig=") else a for a in command[1:]
    ]
    return Background([*args, f"--kubeconfig={member_config}", *FAST_AGENT], tmp_path / "m1-agent.log").start()


def _nginx_and_policy() -> str:
    return """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
        - name: nginx
          image: nginx:1.27
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx
  namespace: default
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: nginx
  placement:
    clusterAffinity:
      clusterNames: [m1]
    replicaScheduling:
      replicaSchedulingType: Duplicated
"""


def _stored(host: Kubectl, kind: str, name: str) -> Obj:
    return dict(json.loads(host("get", kind, name, "-n", "karmada-system", "-o", "json").stdout))


def _secret_file(host: Kubectl, secret: str, key: str) -> bytes:
    return base64.b64decode(_stored(host, "secret", secret)["data"][key])


def test_init_kube_deploys_etcd_kube_apiserver_and_a_controller_manager(host: ServerThread, tmp_path: Path) -> None:
    """Kubernetes' own API server cannot run here (no binaries, no containers): the host
    simulates the pods, so init gets as far as waiting for kube-apiserver to answer at the
    advertised address; everything it deployed before that is checked as stored."""
    host_config = host.kubeconfig(tmp_path, "host-admin", ["system:masters"])
    host_kubectl = Kubectl(host_config, tmp_path / "cache")
    plugin = Plugin(host_config)
    node_port = free_node_port()
    args = [
        "--apiserver=kube",
        "--etcd-replicas=3",
        "--karmada-apiserver-replicas=2",
        "--kube-image-registry=mirror.example/k8s",
        "--apiserver-advertise-address=127.0.0.1",
        f"--apiserver-node-port={node_port}",
        f"--karmada-data={tmp_path / 'data'}",
        "--timeout=3s",
    ]
    process = _init(plugin, *args)
    out, _ = process.communicate(timeout=90)
    assert process.returncode == 1, out
    for line in (
        "statefulset/etcd -n karmada-system ready",
        "deployment/karmada-apiserver -n karmada-system ready",
        f"error: timed out after 3s waiting for https://127.0.0.1:{node_port}/readyz",
    ):
        assert line in out, out
    assert not (tmp_path / "data" / "karmada.config").exists()

    etcd = _stored(host_kubectl, "statefulset", "etcd")
    assert etcd["spec"]["replicas"] == 3 and etcd["status"]["readyReplicas"] == 3
    (container,) = etcd["spec"]["template"]["spec"]["containers"]
    assert container["image"].startswith("mirror.example/k8s/etcd:")
    apiserver = _stored(host_kubectl, "deployment", "karmada-apiserver")
    assert apiserver["spec"]["replicas"] == 2
    (container,) = apiserver["spec"]["template"]["spec"]["containers"]
    assert container["image"].startswith("mirror.example/k8s/kube-apiserver:v")
    servers = [a for a in container["command"] if a.startswith("--etcd-servers=")]
    assert servers == [
        "--etcd-servers=" + ",".join(f"https://etcd-{n}.etcd.karmada-system.svc.cluster.local:2379" for n in range(3))
    ]
    manager = _stored(host_kubectl, "deployment", "kube-controller-manager")
    (container,) = manager["spec"]["template"]["spec"]["containers"]
    (controllers,) = [a.split("=", 1)[1].split(",") for a in container["command"] if a.startswith("--controllers=")]
    assert "garbagecollector" in controllers and "deployment" not in controllers and "replicaset" not in controllers

    stored = json.loads(host_kubectl("get", "secrets", "-n", "karmada-system", "-o", "json").stdout)["items"]
    assert sorted(s["metadata"]["name"] for s in stored) == sorted(secret_names(kube=True))

    # the controller manager's identity: kube's own user, signed by the API server's CA
    ca = x509.load_pem_x509_certificate(_secret_file(host_kubectl, "karmada-cert", "ca.crt"))
    config = yaml.safe_load(_secret_file(host_kubectl, "kube-controller-manager-config", "karmada.config"))
    assert config["clusters"][0]["cluster"]["server"] == f"https://{APISERVER_SERVICE}:5443"
    cert = x509.load_pem_x509_certificate(base64.b64decode(config["users"][0]["user"]["client-certificate-data"]))
    assert cert.subject.rfc4514_string() == "CN=system:kube-controller-manager"
    cert.verify_directly_issued_by(ca)
    # etcd's own CA, not the one that signs the agents' certificates
    etcd_ca = x509.load_pem_x509_certificate(_secret_file(host_kubectl, "etcd-cert", "etcd-ca.crt"))
    assert etcd_ca.subject != ca.subject
    served = x509.load_pem_x509_certificate(_secret_file(host_kubectl, "etcd-cert", "etcd-server.crt"))
    names = served.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "etcd-2.etcd.karmada-system.svc.cluster.local" in names.get_values_for_type(x509.DNSName)

    # init again converges to the same objects: every certificate kept
    kept = {name: _stored(host_kubectl, "secret", name)["data"] for name in ("etcd-cert", "karmada-cert")}
    again = _init(plugin, *args)
    out, _ = again.communicate(timeout=90)
    assert again.returncode == 1 and "statefulset/etcd -n karmada-system ready" in out, out
    assert {name: _stored(host_kubectl, "secret", name)["data"] for name in kept} == kept
    assert _stored(host_kubectl, "statefulset", "etcd")["metadata"]["generation"] == etcd["metadata"]["generation"]

    # etcd's size is fixed at its start: another would start a second cluster beside it
    resized = _init(plugin, *[a for a in args if a != "--etcd-replicas=3"], "--etcd-replicas=1")
    out, _ = resized.communicate(timeout=60)
    assert resized.returncode == 1
    assert "etcd in karmada-system has 3 member(s); --etcd-replicas 1 would start a second cluster" in out, out

    # one layout at a time
    refused = _init(plugin, "--apiserver-advertise-address=127.0.0.1", f"--apiserver-node-port={node_port}")
    out, _ = refused.communicate(timeout=60)
    assert refused.returncode == 1
    assert "karmada-apiserver already runs in karmada-system as --apiserver kube" in out, out

    out = plugin("deinit").stdout
    for name in ("deployment/kube-controller-manager", "deployment/karmada-apiserver", "statefulset/etcd"):
        assert f"{name} -n karmada-system deleted" in out, out
    assert len(json.loads(host_kubectl("get", "pvc", "-n", "karmada-system", "-o", "json").stdout)["items"]) == 3
    # the kept volumes still fix etcd's size
    resized = _init(plugin, *[a for a in args if a != "--etcd-replicas=3"])
    out, _ = resized.communicate(timeout=60)
    assert resized.returncode == 1 and "has 3 member(s); --etcd-replicas 1" in out, out
    out = plugin("deinit", "--purge-data").stdout
    for n in range(3):
        assert f"persistentvolumeclaim/etcd-data-etcd-{n} -n karmada-system deleted" in out, out
    assert "secret/etcd-cert -n karmada-system deleted" in out
    assert host_kubectl("get", "namespace", "karmada-system", check=False).returncode == 1
