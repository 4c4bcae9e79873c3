"""``kubectl karmada init`` / ``deinit`` against a real (local) API server."""

from __future__ import annotations

import json

import pytest

from tests.servers import Kubectl, Plugin


def test_init_installs_everything_and_is_idempotent(plugin: Plugin, admin: Kubectl) -> None:
    first = plugin("init", "--apiserver", "external")
    assert "11 CustomResourceDefinitions established" in first.stdout
    assert "kubectl karmada token create --print-register-command" in first.stdout
    again = plugin("init", "--apiserver", "external")
    assert again.returncode == 0
    crds = json.loads(admin("get", "crd", "-o", "json").stdout)["items"]
    karmada = [c for c in crds if c["spec"]["group"].endswith("karmada.io")]
    assert len(karmada) == 11
    for crd in karmada:
        assert any(c["type"] == "Established" and c["status"] == "True" for c in crd["status"]["conditions"])
    assert admin("get", "namespace", "karmada-system", "karmada-cluster", "-o", "name").stdout.split() == [
        "namespace/karmada-system",
        "namespace/karmada-cluster",
    ]
    binding = json.loads(admin("get", "clusterrolebinding", "system:karmada:agent-bootstrap", "-o", "json").stdout)
    assert binding["roleRef"]["name"] == "system:karmada:agent-bootstrapper"
    assert binding["subjects"][0]["name"] == "system:bootstrappers:karmada:default-cluster-token"
    assert admin("get", "clusters").stderr.strip() == "No resources found"
    assert admin("get", "deployment", "-n", "karmada-system", "-o", "name").stdout == ""


def test_init_deploy_then_deinit(plugin: Plugin, admin: Kubectl) -> None:
    # a Cluster made before --deploy registers karmada-webhook, whose pods never run here (no
    # kubelet): its Cluster webhook fails closed, so deinit must still remove this Cluster
    plugin("init", "--apiserver", "external")
    admin(
        "apply",
        "-f",
        "-",
        stdin='{"apiVersion":"cluster.karmada.io/v1alpha1","kind":"Cluster",'
        '"metadata":{"name":"gone-soon"},"spec":{"syncMode":"Pull"}}',
    )
    plugin("init", "--apiserver", "external", "--deploy", "--controlplane-image", "registry.example/karmada-py:1.0")
    deployment = json.loads(admin("get", "deploy", "karmada-controlplane", "-n", "karmada-system", "-o", "json").stdout)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example/karmada-py:1.0"
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "karmada-controlplane"
    refused = admin("label", "cluster", "gone-soon", "a=b", check=False)
    assert 'failed calling webhook "cluster.karmada.io"' in refused.stderr, refused.stderr
    out = plugin("deinit").stdout
    assert "Karmada removed." in out
    assert "cluster.karmada.io" not in admin("get", "crd", "-o", "name").stdout
    assert admin("get", "namespace", "karmada-system", check=False).returncode == 1
    assert admin("get", "clusterrolebinding", "system:karmada:agent-bootstrap", check=False).returncode == 1
    # cluster-info belonged to the server, not to init: it stays
    assert admin("get", "configmap", "cluster-info", "-n", "kube-public", "-o", "name").stdout.strip()


def test_errors_are_one_clear_line(plugin: Plugin) -> None:
    missing = Plugin(None)("init", "--kubeconfig", "/nonexistent/kubeconfig", check=False)
    assert missing.returncode == 1
    assert missing.stderr.strip() == "error: cannot read kubeconfig /nonexistent/kubeconfig: No such file or directory"
    bad = plugin("init", "--apiserver", "external", "--timeout", "soon", check=False)
    assert bad.returncode == 2 and 'invalid duration "soon"' in bad.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--etcd-replicas", "3"], "error: --etcd-replicas is for --apiserver kube"),
        (["--kube-image-registry", "mirror.example"], "error: --kube-image-registry is for --apiserver kube"),
        (["--apiserver", "kube", "--deploy"], "error: --deploy is for --apiserver external"),
        (["--apiserver", "external", "--only", "certs"], "error: --only is for --apiserver localkube or kube"),
        (["--apiserver", "kube", "--karmada-apiserver-replicas", "0"], "at least 1, not 0"),
        (["--apiserver", "kube", "--etcd-replicas", "2"], "invalid choice: 2 (choose from 1, 3, 5)"),
        (["--apiserver", "etcd"], "invalid choice: 'etcd'"),
        (
            ["--apiserver", "external", "--cluster-proxy-node-port", "30444"],
            "error: --cluster-proxy-node-port is for --apiserver localkube or kube",
        ),
        (
            ["--apiserver", "external", "--cluster-proxy-advertise-address", "https://proxy.example"],
            "error: --cluster-proxy-advertise-address is for --apiserver localkube or kube",
        ),
        (["--cluster-proxy-node-port", "8443"], "error: --cluster-proxy-node-port 8443 is outside 30000-32767"),
        (["--cluster-proxy-node-port", "32443"], "error: --cluster-proxy-node-port 32443 is karmada-apiserver's"),
        (["--cluster-proxy-advertise-address", "http://proxy.example"], "want https://HOST[:PORT]"),
        (
            ["--apiserver-service-type", "ClusterIP", "--apiserver-advertise-address", "10.0.0.7"],
            "error: a ClusterIP Service needs --cluster-proxy-advertise-address for the cluster proxy",
        ),
        (
            ["--cluster-proxy=false", "--cluster-proxy-node-port", "30444"],
            "error: --cluster-proxy-node-port is for the cluster proxy, which --cluster-proxy=false leaves out",
        ),
        (["--cluster-proxy=maybe"], 'invalid boolean "maybe"'),
    ],
    ids=[
        "etcd-replicas",
        "registry",
        "deploy",
        "only-external",
        "apiserver-replicas",
        "even-etcd",
        "choice",
        "proxy-node-port-external",
        "proxy-url-external",
        "proxy-node-port-range",
        "proxy-node-port-taken",
        "proxy-url",
        "proxy-clusterip",
        "proxy-off-and-node-port",
        "proxy-boolean",
    ],
)
def test_flags_of_another_choice_are_refused(plugin: Plugin, args: list[str], message: str) -> None:
    result = plugin("init", *args, check=False)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
