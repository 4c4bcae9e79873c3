"""charts/karmada-py renders, with the real helm, the same objects ``init`` deploys into
a host (``karmada.install.dedicated.host_objects``) for the same choices, plus the two
hooks that run ``init --only certs`` and ``init --only api``; the rendered objects pass
a server-side dry run; bad values fail with a message naming the value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from karmada.images import IMAGE, KUBE_VERSION
from karmada.install.apiserver_kube import KubeOptions
from karmada.install.apiserver_localkube import ApiserverOptions
from karmada.install.cluster_proxy import ProxyOptions
from karmada.install.dedicated import DedicatedOptions, host_objects, secret_names
from karmada.version import __version__
from kubectl_karmada.cli import build_parser
from tests.charts.chart import CHART, HOOK_KINDS, render
from tests.servers import Kubectl

Obj = dict[str, Any]


def rendered(*sets: str) -> list[Obj]:
    result = render(*sets)
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def _key(obj: Obj) -> tuple[str, str]:
    return obj["kind"], obj["metadata"]["name"]


CASES = {
    "localkube": ((), DedicatedOptions()),
    "localkube-loadbalancer-storageclass": (
        (
            "apiserver.serviceType=LoadBalancer",
            "apiserver.advertiseAddress=karmada.example",
            "clusterProxy.advertiseAddress=https://proxy.karmada.example:8443",
            "apiserver.storage.size=20Gi",
            "apiserver.storage.storageClassName=fast",
            "image=registry.example/karmada-py:dev",
        ),
        DedicatedOptions(
            apiserver=ApiserverOptions(
                image="registry.example/karmada-py:dev",
                service_type="LoadBalancer",
                storage_size="20Gi",
                storage_class_name="fast",
            ),
            controlplane_image="registry.example/karmada-py:dev",
            cluster_proxy=ProxyOptions(advertise_url="https://proxy.karmada.example:8443"),
        ),
    ),
    "localkube-no-cluster-proxy": (
        ("clusterProxy.enabled=false",),
        DedicatedOptions(cluster_proxy=ProxyOptions(enabled=False)),
    ),
    "kube": (("apiserver.mode=kube",), DedicatedOptions(kube=KubeOptions())),
    "kube-ha-mirror": (
        (
            "apiserver.mode=kube",
            "kube.etcdReplicas=3",
            "apiserver.replicas=2",
            "kube.imageRegistry=mirror.example/k8s/",
            "kube.imageTag=v1.35.0",
            "apiserver.nodePort=30443",
            "clusterProxy.nodePort=30444",
            "apiserver.storage.storageClassName=ssd",
        ),
        DedicatedOptions(
            apiserver=ApiserverOptions(node_port=30443, storage_class_name="ssd"),
            cluster_proxy=ProxyOptions(node_port=30444),
            kube=KubeOptions(
                registry="mirror.example/k8s/",
                kube_version="v1.35.0",
                etcd_replicas=3,
                apiserver_replicas=2,
                storage_class_name="ssd",
            ),
        ),
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_the_chart_renders_what_init_deploys(case: str) -> None:
    sets, options = CASES[case]
    chart = {_key(o): o for o in rendered(*sets) if o["kind"] not in HOOK_KINDS}
    wanted = {_key(o): o for o in host_objects(options) if o["kind"] != "Namespace"}  # helm --create-namespace
    assert sorted(chart) == sorted(wanted)
    for key, obj in wanted.items():
        assert chart[key] == obj, key


def test_the_chart_versions_are_the_package_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["version"] == chart["appVersion"] == __version__
    (deployment,) = [o for o in rendered() if _key(o) == ("Deployment", "karmada-controlplane")]
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == IMAGE


def _jobs(*sets: str) -> dict[str, Obj]:
    return {o["metadata"]["name"]: o for o in rendered(*sets) if o["kind"] == "Job"}


@pytest.mark.parametrize(
    ("sets", "flags"),
    [
        (
            (),
            [
                "--apiserver=localkube",
                "--apiserver-service-type=NodePort",
                "--apiserver-node-port=32443",
                "--cluster-proxy=true",
                "--cluster-proxy-node-port=32444",
            ],
        ),
        (
            ("clusterProxy.enabled=false", "clusterProxy.nodePort=30444"),
            ["--cluster-proxy=false"],
        ),
        (
            (
                "apiserver.mode=kube",
                "kube.etcdReplicas=3",
                "apiserver.advertiseAddress=10.0.0.7",
                "apiserver.certExternalDNS={karmada.example,k.example}",
                "webhookURL=https://webhook.example:8443",
                "clusterProxy.advertiseAddress=https://proxy.example",
            ),
            [
                "--cluster-proxy-advertise-address=https://proxy.example",
                "--apiserver=kube",
                "--apiserver-advertise-address=10.0.0.7",
                "--cert-external-dns=karmada.example,k.example",
                "--etcd-replicas=3",
                "--webhook-url=https://webhook.example:8443",
            ],
        ),
    ],
    ids=["default", "no-cluster-proxy", "kube"],
)
def test_the_hooks_run_init_steps_with_the_values_flags(sets: tuple[str, ...], flags: list[str]) -> None:
    jobs = _jobs(*sets)
    assert sorted(jobs) == ["karmada-init-api", "karmada-init-certs"]
    for step, hook in (("certs", "pre-install,pre-upgrade"), ("api", "post-install,post-upgrade")):
        job = jobs[f"karmada-init-{step}"]
        assert job["metadata"]["annotations"]["helm.sh/hook"] == hook
        pod = job["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == "karmada-init"
        command = pod["containers"][0]["command"]
        assert command[:3] == ["kubectl-karmada", "init", f"--only={step}"]
        assert set(flags) <= set(command), command
        args = build_parser().parse_args(command[1:])  # the real parser accepts every flag
        assert args.only == step and args.apiserver == ("kube" if "--apiserver=kube" in flags else "localkube")
        assert args.cluster_proxy is ("--cluster-proxy=false" not in flags)
        if not args.cluster_proxy:  # init refuses the proxy's other flags without it
            assert not [a for a in command if a.startswith("--cluster-proxy-")], command


def test_the_hooks_rights_are_the_namespaces_secrets_and_reading_nodes() -> None:
    objects = {_key(o): o for o in rendered() if o["kind"] in HOOK_KINDS}
    role = objects[("Role", "karmada-init")]
    assert role["metadata"]["namespace"] == "karmada-system"
    assert {r["resources"][0] for r in role["rules"]} == {
        "secrets",
        "services",
        "statefulsets",
        "persistentvolumeclaims",
    }
    (named,) = [r for r in role["rules"] if r.get("resourceNames")]
    assert named["verbs"] == ["get", "patch", "update"]
    assert set(named["resourceNames"]) == set(secret_names(kube=True))
    assert objects[("ClusterRole", "karmada-py-init")]["rules"] == [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}
    ]


@pytest.mark.parametrize(
    ("sets", "namespace", "message"),
    [
        ((), "default", "install into the namespace karmada-system"),
        (("apiserver.mode=etcd",), "karmada-system", 'apiserver.mode must be localkube or kube, not "etcd"'),
        (("kube.etcdReplicas=2",), "karmada-system", "kube.etcdReplicas must be 1, 3 or 5"),
        (
            ("apiserver.serviceType=ClusterIP",),
            "karmada-system",
            "a ClusterIP Service needs apiserver.advertiseAddress",
        ),
        (
            ("apiserver.serviceType=LoadBalancer",),
            "karmada-system",
            "a LoadBalancer Service needs apiserver.advertiseAddress",
        ),
        (
            ("apiserver.serviceType=LoadBalancer", "apiserver.advertiseAddress=karmada.example"),
            "karmada-system",
            "a LoadBalancer Service needs clusterProxy.advertiseAddress",
        ),
        (
            ("apiserver.serviceType=ClusterIP", "apiserver.advertiseAddress=10.0.0.7"),
            "karmada-system",
            "a ClusterIP Service needs clusterProxy.advertiseAddress",
        ),
    ],
    ids=["namespace", "mode", "etcd-replicas", "clusterip", "loadbalancer", "proxy-loadbalancer", "proxy-clusterip"],
)
def test_bad_values_fail_naming_the_value(sets: tuple[str, ...], namespace: str, message: str) -> None:
    result = render(*sets, namespace=namespace)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr


@pytest.mark.parametrize("case", ["localkube", "kube-ha-mirror"])
def test_the_rendered_chart_passes_a_server_side_dry_run(admin: Kubectl, workdir: Path, case: str) -> None:
    admin("create", "namespace", "karmada-system", check=False)
    path = workdir / f"{case}.yaml"
    path.write_text(render(*CASES[case][0]).stdout)
    result = admin("apply", "--server-side", "--dry-run=server", "--validate=strict", "-o", "name", "-f", str(path))
    assert len(result.stdout.splitlines()) == len(rendered(*CASES[case][0])), result.stdout


def test_kube_version_default_matches_init() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["kube"]["imageTag"] == KUBE_VERSION
