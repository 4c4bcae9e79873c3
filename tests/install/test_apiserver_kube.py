"""The kube layout's objects and etcd's PKI (``karmada.install.apiserver_kube``): plain
functions, checked by tables."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from karmada.images import ETCD_VERSION, KUBE_VERSION
from karmada.install import apiserver_kube as kube
from karmada.install.apiserver_localkube import ApiserverOptions, service

Obj = dict[str, Any]
NOW = datetime.datetime(2026, 12, 3, tzinfo=datetime.UTC)
WORKLOAD_CONTROLLERS = ("deployment", "replicaset", "job", "statefulset", "daemonset", "cronjob", "*")


def _container(obj: Obj) -> Obj:
    (container,) = obj["spec"]["template"]["spec"]["containers"]
    return dict(container)


def _flag(obj: Obj, name: str) -> str:
    (value,) = [a.split("=", 1)[1] for a in _container(obj)["command"] if a.startswith(f"--{name}=")]
    return str(value)


def _items(obj: Obj, volume: str) -> list[str]:
    (found,) = [v for v in obj["spec"]["template"]["spec"]["volumes"] if v["name"] == volume]
    return [item["key"] for item in found["secret"]["items"]]


@pytest.mark.parametrize(
    ("options", "etcd", "apiserver", "manager"),
    [
        (
            kube.KubeOptions(),
            f"registry.k8s.io/etcd:{ETCD_VERSION}",
            f"registry.k8s.io/kube-apiserver:{KUBE_VERSION}",
            f"registry.k8s.io/kube-controller-manager:{KUBE_VERSION}",
        ),
        (
            kube.KubeOptions(registry="mirror.example/k8s/", kube_version="v1.35.1"),
            f"mirror.example/k8s/etcd:{ETCD_VERSION}",
            "mirror.example/k8s/kube-apiserver:v1.35.1",
            "mirror.example/k8s/kube-controller-manager:v1.35.1",
        ),
        (
            kube.KubeOptions(etcd_image="e:1", apiserver_image="a:1", controller_manager_image="c:1"),
            "e:1",
            "a:1",
            "c:1",
        ),
    ],
    ids=["pinned", "mirror", "named"],
)
def test_images(options: kube.KubeOptions, etcd: str, apiserver: str, manager: str) -> None:
    assert _container(kube.etcd_statefulset(options))["image"] == etcd
    assert _container(kube.apiserver_deployment(options))["image"] == apiserver
    assert _container(kube.controller_manager_deployment(options))["image"] == manager


@pytest.mark.parametrize(
    ("etcd", "apiservers", "message"),
    [(2, 1, "not 2"), (4, 1, "not 4"), (0, 1, "not 0"), (1, 0, "at least 1, not 0")],
)
def test_bad_replica_counts_are_refused(etcd: int, apiservers: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        kube.KubeOptions(etcd_replicas=etcd, apiserver_replicas=apiservers)


@pytest.mark.parametrize("members", [1, 3, 5])
def test_every_member_is_named_in_etcd_and_the_api_server(members: int) -> None:
    options = kube.KubeOptions(etcd_replicas=members)
    names = [f"etcd-{n}.etcd.karmada-system.svc.cluster.local" for n in range(members)]
    etcd = kube.etcd_statefulset(options)
    assert etcd["spec"]["replicas"] == members and etcd["spec"]["podManagementPolicy"] == "Parallel"
    assert _flag(etcd, "initial-cluster") == ",".join(f"etcd-{n}=https://{name}:2380" for n, name in enumerate(names))
    assert _flag(kube.apiserver_deployment(options), "etcd-servers") == ",".join(f"https://{n}:2379" for n in names)
    assert set(names) <= set(kube.etcd_sans(options))


def test_etcd_talks_tls_to_clients_and_peers() -> None:
    etcd = kube.etcd_statefulset(kube.KubeOptions())
    for flag in ("client-cert-auth", "peer-client-cert-auth"):
        assert _flag(etcd, flag) == "true"
    assert _flag(etcd, "listen-peer-urls").startswith("https://")
    assert _items(etcd, "etcd-pki") == ["etcd-ca.crt", "etcd-server.crt", "etcd-server.key"]


@pytest.mark.parametrize(("size", "storage_class"), [("5Gi", None), ("20Gi", "ssd")])
def test_etcd_volume(size: str, storage_class: str | None) -> None:
    etcd = kube.etcd_statefulset(kube.KubeOptions(storage_size=size, storage_class_name=storage_class))
    (claim,) = etcd["spec"]["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "etcd-data"
    assert claim["spec"]["resources"]["requests"]["storage"] == size
    assert claim["spec"].get("storageClassName") == storage_class


def test_the_api_server_sees_no_signing_or_admin_key() -> None:
    apiserver = kube.apiserver_deployment(kube.KubeOptions(apiserver_replicas=2))
    assert apiserver["spec"]["replicas"] == 2
    assert not {"ca.key", "karmada.key"} & set(_items(apiserver, "karmada-pki"))
    assert _items(apiserver, "etcd-client") == ["etcd-ca.crt", "etcd-client.crt", "etcd-client.key"]
    assert _flag(apiserver, "enable-bootstrap-token-auth") == "true"
    assert _flag(apiserver, "authorization-mode") == "Node,RBAC"
    # the Service both layouts share targets the port by name
    assert service(ApiserverOptions())["spec"]["ports"][0]["targetPort"] == _container(apiserver)["ports"][0]["name"]
    affinity = apiserver["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    assert affinity["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"] == "kubernetes.io/hostname"


@pytest.mark.parametrize("deployment", [kube.apiserver_deployment, kube.controller_manager_deployment])
def test_a_rollout_replaces_one_pod_at_a_time(deployment: Any) -> None:
    # one pod per node: a surge pod would never schedule on a host with no spare node
    strategy = deployment(kube.KubeOptions(apiserver_replicas=2))["spec"]["strategy"]
    assert strategy == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}


def test_the_controller_manager_runs_no_workload_controller() -> None:
    manager = kube.controller_manager_deployment(kube.KubeOptions())
    controllers = _flag(manager, "controllers").split(",")
    assert {"namespace", "garbagecollector", "serviceaccount-token", "csrsigning", "bootstrapsigner"} <= set(
        controllers
    )
    assert not set(WORKLOAD_CONTROLLERS) & set(controllers)
    assert "ca.key" in _items(manager, "karmada-pki") and "karmada.key" not in _items(manager, "karmada-pki")
    assert _items(manager, "karmada-config") == ["karmada.config"]
    assert kube.controller_manager_config_secret_name() == "kube-controller-manager-config"


@pytest.mark.parametrize("obj", kube.host_objects(kube.KubeOptions()), ids=lambda o: o["metadata"]["name"])
def test_every_object_is_in_karmada_system_and_hardened(obj: Obj) -> None:
    assert obj["metadata"]["namespace"] == "karmada-system"
    if obj["kind"] == "Service":
        return
    pod = obj["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["automountServiceAccountToken"] is False
    container = _container(obj)
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert container["resources"]["limits"]["memory"] and container["livenessProbe"]


def test_host_objects_order_and_high_availability() -> None:
    assert [(o["kind"], o["metadata"]["name"]) for o in kube.host_objects(kube.KubeOptions())] == [
        ("Service", "etcd"),
        ("StatefulSet", "etcd"),
        ("Deployment", "karmada-apiserver"),
        ("Deployment", "kube-controller-manager"),
    ]
    ha = kube.high_availability()
    assert (ha.etcd_replicas, ha.apiserver_replicas) == (3, 2)


# ---- etcd's PKI


def _sans(pem: bytes) -> set[str]:
    ext = x509.load_pem_x509_certificate(pem).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return set(ext.get_values_for_type(x509.DNSName)) | {str(ip) for ip in ext.get_values_for_type(x509.IPAddress)}


def test_a_new_pki_serves_and_dials_peers_for_every_member() -> None:
    options = kube.KubeOptions(etcd_replicas=3)
    pki = kube.ensure_etcd_pki(None, options, NOW)
    server = x509.load_pem_x509_certificate(pki.server_cert)
    usages = server.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert set(usages) == {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH}
    assert _sans(pki.server_cert) == set(kube.etcd_sans(options))
    server.verify_directly_issued_by(x509.load_pem_x509_certificate(pki.ca_cert))
    assert "BEGIN" not in repr(pki)


@pytest.mark.parametrize(
    ("later", "replicas", "kept"),
    [
        (datetime.timedelta(days=1), 1, {"ca_cert", "server_cert", "client_cert"}),
        (datetime.timedelta(days=1), 3, {"ca_cert", "client_cert"}),  # new member names
        (datetime.timedelta(days=340), 1, {"ca_cert"}),  # leaves within 30 days of their end
        (datetime.timedelta(days=3640), 1, set()),  # the CA too
    ],
    ids=["same", "more-members", "leaves-due", "ca-due"],
)
def test_ensure_keeps_what_still_fits(later: datetime.timedelta, replicas: int, kept: set[str]) -> None:
    first = kube.ensure_etcd_pki(None, kube.KubeOptions(), NOW)
    again = kube.ensure_etcd_pki(first, kube.KubeOptions(etcd_replicas=replicas), NOW + later)
    same = {name for name in ("ca_cert", "server_cert", "client_cert") if getattr(first, name) == getattr(again, name)}
    assert same == kept


def test_the_secret_round_trips_and_bad_secrets_give_none() -> None:
    pki = kube.ensure_etcd_pki(None, kube.KubeOptions(), NOW)
    secret = kube.etcd_secret(pki)
    assert secret["metadata"]["name"] == "etcd-cert"
    assert kube.etcd_pki_from_secret(secret) == pki
    for broken in ("missing", "not-base64", "not-pem"):
        data = dict(secret["data"])
        if broken == "missing":
            del data["etcd-client.key"]
        else:
            data["etcd-server.crt"] = "@@@" if broken == "not-base64" else "aGVsbG8="
        assert kube.etcd_pki_from_secret({**secret, "data": data}) is None, broken
    assert kube.etcd_pki_from_secret(None) is None
