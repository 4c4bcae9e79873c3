"""The kube layout's objects and etcd's PKI (``karmada.install.apiserver_kube``): plain
functions, checked by tables."""

from __future__ import annotations

import base64
import contextlib
import datetime
import json
from collections.abc import Callable
from typing import Any

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from karmada.images import ETCD_VERSION, KUBE_VERSION
from karmada.install import apiserver_kube as kube
from karmada.install.apiserver_localkube import ApiserverOptions, service
from tests.install.keys import UNSUPPORTED_CURVE_KEY

Obj = dict[str, Any]
NOW = datetime.datetime(2026, 12, 3, tzinfo=datetime.UTC)
FIELDS = ("ca_cert", "ca_key", "server_cert", "server_key", "client_cert", "client_key")
SECRET_KEYS = ("etcd-ca.crt", "etcd-ca.key", "etcd-server.crt", "etcd-server.key", "etcd-client.crt", "etcd-client.key")
NEEDED = (
    "namespace", "garbagecollector", "serviceaccount-token", "bootstrapsigner", "tokencleaner", "csrsigning",
    "csrcleaner", "clusterrole-aggregation",
)  # fmt: skip
NEVER = (
    "deployment", "replicaset", "job", "statefulset", "daemonset", "cronjob", "endpoint", "endpointslice",
    "nodelifecycle", "*",
)  # fmt: skip
Workload = Callable[[kube.KubeOptions], Obj]
WORKLOADS: list[Workload] = [kube.etcd_statefulset, kube.apiserver_deployment, kube.controller_manager_deployment]


def _container(obj: Obj) -> Obj:
    (container,) = obj["spec"]["template"]["spec"]["containers"]
    return dict(container)


def _flag(obj: Obj, name: str) -> str:
    (value,) = [a.split("=", 1)[1] for a in _container(obj)["command"] if a.startswith(f"--{name}=")]
    return str(value)


def _items(obj: Obj, volume: str) -> list[str]:
    (found,) = [v for v in obj["spec"]["template"]["spec"]["volumes"] if v["name"] == volume]
    return [item["key"] for item in found["secret"]["items"]]


def _cert(pem: bytes) -> x509.Certificate:
    return x509.load_pem_x509_certificate(pem)


# ---- options


def _images(registry: str = "registry.k8s.io", kube_version: str = KUBE_VERSION) -> tuple[str, str, str]:
    return (
        f"{registry}/etcd:{ETCD_VERSION}",
        f"{registry}/kube-apiserver:{kube_version}",
        f"{registry}/kube-controller-manager:{kube_version}",
    )


M = "mirror.example/k8s"


@pytest.mark.parametrize(
    ("options", "images"),
    [
        (kube.KubeOptions(), _images()),
        (kube.KubeOptions(registry=M + "/"), _images(M)),
        (kube.KubeOptions(registry=M), _images(M)),
        (kube.KubeOptions(kube_version="v1.35.1"), _images(kube_version="v1.35.1")),
        (kube.KubeOptions(registry=M, etcd_image="e:1"), ("e:1", *_images(M)[1:])),
        (kube.KubeOptions(apiserver_image="a:1"), (_images()[0], "a:1", _images()[2])),
        (kube.KubeOptions(kube_version="v9", controller_manager_image="c:1"), (*_images(kube_version="v9")[:2], "c:1")),
    ],
    ids=["pinned", "mirror-slash", "mirror", "kube-version", "etcd-named", "apiserver-named", "manager-named"],
)
def test_images(options: kube.KubeOptions, images: tuple[str, str, str]) -> None:
    assert tuple(options.image(n) for n in ("etcd", "kube-apiserver", "kube-controller-manager")) == images
    assert tuple(_container(w(options))["image"] for w in WORKLOADS) == images


@pytest.mark.parametrize(
    ("etcd", "apiservers", "message"),
    [(1, 1, None), (3, 2, None), (5, 7, None), (0, 1, "not 0"), (2, 1, "not 2"), (4, 1, "not 4"),
     (1, 0, "at least 1, not 0")],
)  # fmt: skip
def test_replica_counts(etcd: int, apiservers: int, message: str | None) -> None:
    with pytest.raises(ValueError, match=message) if message else contextlib.nullcontext():
        options = kube.KubeOptions(etcd_replicas=etcd, apiserver_replicas=apiservers)
        assert (options.etcd_replicas, options.apiserver_replicas) == (etcd, apiservers)


# ---- etcd


@pytest.mark.parametrize(("members", "domain"), [(1, "cluster.local"), (3, "cluster.local"), (5, "corp.internal")])
def test_every_member_is_named_in_etcd_and_the_api_server(members: int, domain: str) -> None:
    options = kube.KubeOptions(etcd_replicas=members, cluster_domain=domain)
    names = [f"etcd-{n}.etcd.karmada-system.svc.{domain}" for n in range(members)]
    etcd = kube.etcd_statefulset(options)
    assert etcd["spec"]["replicas"] == members and etcd["spec"]["podManagementPolicy"] == "Parallel"
    assert _flag(etcd, "initial-cluster") == ",".join(f"etcd-{n}=https://{name}:2380" for n, name in enumerate(names))
    assert _flag(kube.apiserver_deployment(options), "etcd-servers") == ",".join(f"https://{n}:2379" for n in names)
    service_names = ["etcd", "etcd.karmada-system", "etcd.karmada-system.svc", f"etcd.karmada-system.svc.{domain}"]
    assert kube.etcd_sans(options) == [*service_names, *names, "localhost", "127.0.0.1"]


def test_etcd_talks_tls_to_clients_and_peers() -> None:
    etcd = kube.etcd_statefulset(kube.KubeOptions(etcd_replicas=3))
    files = {"trusted-ca-file": "etcd-ca.crt", "cert-file": "etcd-server.crt", "key-file": "etcd-server.key"}
    for peer in ("", "peer-"):  # clients and peers alike: TLS, and a certificate of etcd's CA to connect
        assert _flag(etcd, f"{peer}client-cert-auth") == "true"
        assert {f: _flag(etcd, peer + f) for f in files} == {f: f"/etc/etcd/pki/{n}" for f, n in files.items()}
    for flag in ("listen-client-urls", "listen-peer-urls", "advertise-client-urls", "initial-advertise-peer-urls"):
        assert _flag(etcd, flag).startswith("https://")
    assert etcd["spec"]["serviceName"] == kube.etcd_service(kube.KubeOptions())["metadata"]["name"] == "etcd"
    assert kube.etcd_service(kube.KubeOptions())["spec"]["clusterIP"] == "None"


@pytest.mark.parametrize(("size", "storage_class"), [("5Gi", None), ("20Gi", "ssd"), ("1Gi", "")])
def test_etcd_volume(size: str, storage_class: str | None) -> None:
    etcd = kube.etcd_statefulset(kube.KubeOptions(storage_size=size, storage_class_name=storage_class))
    (claim,) = etcd["spec"]["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "etcd-data"
    assert claim["spec"]["resources"]["requests"]["storage"] == size
    assert ("storageClassName" in claim["spec"]) == (storage_class is not None)
    assert claim["spec"].get("storageClassName") == storage_class
    assert "etcd-data" in {m["name"] for m in _container(etcd)["volumeMounts"]}


# ---- kube-apiserver and kube-controller-manager


@pytest.mark.parametrize("replicas", [1, 2, 3])
def test_the_api_server_sees_no_signing_or_admin_key(replicas: int) -> None:
    apiserver = kube.apiserver_deployment(kube.KubeOptions(apiserver_replicas=replicas))
    assert apiserver["metadata"]["name"] == "karmada-apiserver" and apiserver["spec"]["replicas"] == replicas
    assert not {"ca.key", "karmada.key"} & set(_items(apiserver, "karmada-pki"))
    assert _items(apiserver, "etcd-client") == ["etcd-ca.crt", "etcd-client.crt", "etcd-client.key"]
    assert _flag(apiserver, "enable-bootstrap-token-auth") == "true"
    assert _flag(apiserver, "authorization-mode") == "Node,RBAC"
    (port,) = _container(apiserver)["ports"]
    # the Service both layouts share targets the port by name
    assert port["name"] == "https" == service(ApiserverOptions())["spec"]["ports"][0]["targetPort"]
    assert _flag(apiserver, "secure-port") == str(port["containerPort"])
    affinity = apiserver["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    (term,) = affinity["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert term["labelSelector"]["matchLabels"] == apiserver["spec"]["template"]["metadata"]["labels"]


@pytest.mark.parametrize("workload", WORKLOADS, ids=["etcd", "apiserver", "manager"])
def test_every_file_a_flag_names_is_mounted(workload: Workload) -> None:
    obj = workload(kube.KubeOptions())
    volumes = {v["name"]: v for v in obj["spec"]["template"]["spec"]["volumes"]}
    mounted = {
        f"{m['mountPath']}/{key}"
        for m in _container(obj)["volumeMounts"]
        if "secret" in volumes.get(m["name"], {})
        for key in _items(obj, m["name"])
    }
    named = {a.split("=", 1)[1] for a in _container(obj)["command"] if "=/etc/" in a}
    assert named and named <= mounted


@pytest.mark.parametrize(("controller", "runs"), [(c, True) for c in NEEDED] + [(c, False) for c in NEVER])
def test_the_controller_manager_runs_what_karmada_needs_and_no_workload_controller(controller: str, runs: bool) -> None:
    controllers = _flag(kube.controller_manager_deployment(kube.KubeOptions()), "controllers").split(",")
    assert (controller in controllers) == runs


def test_the_controller_manager_signs_with_the_ca_key_only() -> None:
    manager = kube.controller_manager_deployment(kube.KubeOptions())
    assert "ca.key" in _items(manager, "karmada-pki") and "karmada.key" not in _items(manager, "karmada-pki")
    (config,) = [v for v in manager["spec"]["template"]["spec"]["volumes"] if v["name"] == "karmada-config"]
    name = kube.controller_manager_config_secret_name()
    assert config["secret"]["secretName"] == name == "kube-controller-manager-config"
    assert _items(manager, "karmada-config") == ["karmada.config"]
    assert _flag(manager, "kubeconfig") == "/etc/karmada/config/karmada.config"


@pytest.mark.parametrize("deployment", [kube.apiserver_deployment, kube.controller_manager_deployment])
def test_a_rollout_replaces_one_pod_at_a_time(deployment: Workload) -> None:
    # one pod per node: a surge pod would never schedule on a host with no spare node
    strategy = deployment(kube.KubeOptions(apiserver_replicas=2))["spec"]["strategy"]
    assert strategy == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}


# ---- every workload


@pytest.mark.parametrize("workload", WORKLOADS, ids=["etcd", "apiserver", "manager"])
@pytest.mark.parametrize("options", [kube.KubeOptions(), kube.high_availability()], ids=["single", "ha"])
def test_every_container_is_hardened(workload: Workload, options: kube.KubeOptions) -> None:
    obj = workload(options)
    pod = obj["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    assert pod["automountServiceAccountToken"] is False
    security = _container(obj)["securityContext"]
    assert security["readOnlyRootFilesystem"] is True and security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    assert _container(obj)["resources"]["limits"]["memory"]


@pytest.mark.parametrize(
    ("workload", "probe", "path", "port", "scheme"),
    [
        (kube.etcd_statefulset, "startupProbe", "/readyz", "metrics", "HTTP"),
        (kube.etcd_statefulset, "livenessProbe", "/livez", "metrics", "HTTP"),
        (kube.etcd_statefulset, "readinessProbe", "/readyz", "metrics", "HTTP"),
        (kube.apiserver_deployment, "startupProbe", "/livez", "https", "HTTPS"),
        (kube.apiserver_deployment, "livenessProbe", "/livez", "https", "HTTPS"),
        (kube.apiserver_deployment, "readinessProbe", "/readyz", "https", "HTTPS"),
        (kube.controller_manager_deployment, "livenessProbe", "/healthz", "https", "HTTPS"),
    ],
)
def test_probes(workload: Workload, probe: str, path: str, port: str, scheme: str) -> None:
    container = _container(workload(kube.KubeOptions()))
    assert container[probe]["httpGet"] == {"path": path, "port": port, "scheme": scheme}
    assert port in {p["name"] for p in container["ports"]}


def test_host_objects_order_and_high_availability() -> None:
    ha = kube.high_availability()
    assert (ha.etcd_replicas, ha.apiserver_replicas) == (3, 2)
    objects = kube.host_objects(ha)
    assert [(o["kind"], o["metadata"]["name"], o["metadata"]["namespace"]) for o in objects] == [
        ("Service", "etcd", "karmada-system"),
        ("StatefulSet", "etcd", "karmada-system"),
        ("Deployment", "karmada-apiserver", "karmada-system"),
        ("Deployment", "kube-controller-manager", "karmada-system"),
    ]
    assert [o["spec"]["replicas"] for o in objects[1:]] == [3, 2, 2]


# ---- etcd's PKI


@pytest.fixture(scope="module")
def pki() -> kube.EtcdPKI:
    return kube.ensure_etcd_pki(None, kube.KubeOptions(), NOW)


def _sans(pem: bytes) -> tuple[list[str], list[str]]:
    ext = _cert(pem).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return ext.get_values_for_type(x509.DNSName), [str(ip) for ip in ext.get_values_for_type(x509.IPAddress)]


def _usages(pem: bytes) -> set[x509.ObjectIdentifier]:
    return set(_cert(pem).extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)


@pytest.mark.parametrize("members", [1, 3, 5])
def test_a_new_pki_serves_and_dials_peers_for_every_member(members: int) -> None:
    options = kube.KubeOptions(etcd_replicas=members)
    pki = kube.ensure_etcd_pki(None, options, NOW)
    ca, server, client = _cert(pki.ca_cert), _cert(pki.server_cert), _cert(pki.client_cert)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    for leaf in (server, client):
        leaf.verify_directly_issued_by(ca)
    assert _usages(pki.server_cert) == {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH}
    assert _usages(pki.client_cert) == {ExtendedKeyUsageOID.CLIENT_AUTH}
    dns, ips = _sans(pki.server_cert)
    assert set(dns) | set(ips) == set(kube.etcd_sans(options)) and ips == ["127.0.0.1"]
    assert {f"etcd-{n}.etcd.karmada-system.svc.cluster.local" for n in range(members)} | {"localhost"} <= set(dns)
    assert client.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "karmada-etcd-client"


@pytest.mark.parametrize(
    ("later", "replicas", "kept"),
    [
        (datetime.timedelta(0), 1, set(FIELDS)),
        (datetime.timedelta(days=1), 1, set(FIELDS)),
        (datetime.timedelta(days=1), 3, set(FIELDS) - {"server_cert", "server_key"}),  # new member names
        (datetime.timedelta(days=340), 1, {"ca_cert", "ca_key"}),  # leaves within 30 days of their end
        (datetime.timedelta(days=3650), 1, set()),  # ten years on: the CA too
    ],
    ids=["same", "next-day", "more-members", "leaves-due", "ten-years"],
)
def test_ensure_keeps_what_still_fits(
    pki: kube.EtcdPKI, later: datetime.timedelta, replicas: int, kept: set[str]
) -> None:
    stored = kube.etcd_pki_from_secret(json.loads(json.dumps(kube.etcd_secret(pki))))
    again = kube.ensure_etcd_pki(stored, kube.KubeOptions(etcd_replicas=replicas), NOW + later)
    assert {name for name in FIELDS if getattr(pki, name) == getattr(again, name)} == kept
    for leaf in (again.server_cert, again.client_cert):
        _cert(leaf).verify_directly_issued_by(_cert(again.ca_cert))
    dns, ips = _sans(again.server_cert)
    assert set(dns) | set(ips) == set(kube.etcd_sans(kube.KubeOptions(etcd_replicas=replicas)))


def test_the_secret_round_trips(pki: kube.EtcdPKI) -> None:
    secret = kube.etcd_secret(pki)
    assert (secret["metadata"]["name"], secret["metadata"]["namespace"]) == ("etcd-cert", "karmada-system")
    assert sorted(secret["data"]) == sorted(SECRET_KEYS)
    assert base64.b64decode(secret["data"]["etcd-ca.crt"]) == pki.ca_cert
    assert kube.etcd_pki_from_secret(secret) == pki
    assert kube.etcd_pki_from_secret(json.loads(json.dumps(secret))) == pki


@pytest.mark.parametrize("broken", ["missing", "not-base64", "not-pem"])
@pytest.mark.parametrize("key", SECRET_KEYS)
def test_a_broken_secret_gives_none(pki: kube.EtcdPKI, key: str, broken: str) -> None:
    secret = kube.etcd_secret(pki)
    if broken == "missing":
        del secret["data"][key]
    else:
        secret["data"][key] = "%%% not base64 %%%" if broken == "not-base64" else base64.b64encode(b"hello").decode()
    assert kube.etcd_pki_from_secret(secret) is None


@pytest.mark.parametrize("secret", [None, {}, {"data": None}, {"data": {}}])
def test_no_secret_gives_none(secret: Obj | None) -> None:
    assert kube.etcd_pki_from_secret(secret) is None


@pytest.mark.parametrize("key", ["etcd-ca.key", "etcd-server.key", "etcd-client.key"])
def test_a_key_on_an_unsupported_curve_gives_none(pki: kube.EtcdPKI, key: str) -> None:
    secret = kube.etcd_secret(pki)
    secret["data"][key] = base64.b64encode(UNSUPPORTED_CURVE_KEY).decode()
    assert kube.etcd_pki_from_secret(secret) is None


def test_pem_never_shows_in_a_repr(pki: kube.EtcdPKI) -> None:
    for text in (repr(pki), str(pki), repr([pki])):
        assert "BEGIN" not in text and "PRIVATE" not in text
