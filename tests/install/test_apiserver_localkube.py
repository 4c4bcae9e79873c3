"""localkube as karmada-apiserver, as data: the serving certificate's names, the Secret
that keeps the PKI across runs of init, the Service for each type, the StatefulSet's
command and hardening, the admin kubeconfig, and every object accepted by a server-side
dry run with the real kubectl."""

from __future__ import annotations

import base64
import datetime
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from karmada.images import IMAGE
from karmada.install.apiserver_localkube import (
    ApiserverOptions,
    ApiserverPKI,
    admin_kubeconfig,
    apiserver_objects,
    certificate_sans,
    ensure_pki,
    new_pki,
    pki_from_secret,
    pki_secret,
    reissue_serving,
    subject_alt_names,
)
from tests.install.keys import UNSUPPORTED_CURVE_KEY
from tests.servers import Kubectl

Obj = dict[str, Any]
SERVICE_DNS = [
    "karmada-apiserver",
    "karmada-apiserver.karmada-system",
    "karmada-apiserver.karmada-system.svc",
    "karmada-apiserver.karmada-system.svc.cluster.local",
    "localhost",
]


@pytest.fixture(scope="module")
def pki() -> ApiserverPKI:
    return new_pki(["192.0.2.10"], ["karmada.example.com"])


def _cert(pem: bytes) -> x509.Certificate:
    return x509.load_pem_x509_certificate(pem)


def _by_kind(objects: list[Obj], kind: str) -> Obj:
    (found,) = [o for o in objects if o["kind"] == kind]
    return found


# ---- subject alternative names


@pytest.mark.parametrize(
    ("hosts", "extra", "dns", "ips"),
    [
        ([], [], [], []),
        (["192.0.2.10"], [], [], ["192.0.2.10"]),
        (["192.0.2.10", "198.51.100.7"], [], [], ["192.0.2.10", "198.51.100.7"]),
        (["2001:db8::1"], [], [], ["2001:db8::1"]),
        (["[2001:db8:0::2]"], [], [], ["2001:db8::2"]),  # bracketed and long forms are canonicalised
        (["karmada.example.com"], [], ["karmada.example.com"], []),  # a host name advertised is a DNS SAN
        (["192.0.2.10"], ["api.example.com", "10.1.2.3"], ["api.example.com"], ["192.0.2.10", "10.1.2.3"]),
        (["127.0.0.1"], ["localhost", "LOCALHOST", " "], [], []),  # loopback and duplicates once, blanks dropped
        ([], ["Api.Example.COM"], ["api.example.com"], []),
    ],
)
def test_the_serving_certificate_names_the_service_loopback_and_what_was_asked(
    hosts: list[str], extra: list[str], dns: list[str], ips: list[str]
) -> None:
    cert_dns, cert_ips = certificate_sans(new_pki(hosts, extra).serving_cert)
    assert cert_dns == SERVICE_DNS + dns
    assert cert_ips == ["127.0.0.1", *ips]


def test_sans_in_order_once_each() -> None:
    names = subject_alt_names(["192.0.2.10", "karmada-apiserver"], ["192.0.2.10", "x.example"])
    assert names == [*SERVICE_DNS, "127.0.0.1", "192.0.2.10", "x.example"]
    assert (
        subject_alt_names([], [], cluster_domain="corp.internal")[3]
        == "karmada-apiserver.karmada-system.svc.corp.internal"
    )


def test_the_certificates_say_who_they_are(pki: ApiserverPKI) -> None:
    ca, serving, admin = _cert(pki.ca_cert), _cert(pki.serving_cert), _cert(pki.admin_cert)
    assert ca.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "karmada"
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    for leaf in (serving, admin):
        leaf.verify_directly_issued_by(ca)
        assert leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    assert serving.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "karmada-apiserver"
    assert list(serving.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.SERVER_AUTH
    ]
    assert admin.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:admin"
    assert [a.value for a in admin.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["system:masters"]
    assert list(admin.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.CLIENT_AUTH
    ]


def test_certificates_are_backdated_five_minutes() -> None:
    now = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    pki = new_pki([], now=now)
    for pem in (pki.ca_cert, pki.serving_cert, pki.admin_cert):
        assert _cert(pem).not_valid_before_utc == now - datetime.timedelta(minutes=5)
    assert _cert(pki.ca_cert).not_valid_after_utc == now + datetime.timedelta(days=3650)
    assert _cert(pki.serving_cert).not_valid_after_utc == now + datetime.timedelta(days=365)


def test_keys_never_show_in_a_repr(pki: ApiserverPKI) -> None:
    assert "PRIVATE" not in repr(pki) and "PRIVATE" not in str(pki)


# ---- the Secret and running init again


def test_the_secret_round_trips(pki: ApiserverPKI) -> None:
    secret = pki_secret(pki)
    assert (secret["metadata"]["name"], secret["metadata"]["namespace"]) == ("karmada-cert", "karmada-system")
    assert set(secret["data"]) == {
        "ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "karmada.crt", "karmada.key", "sa.key", "sa.pub",
    }  # fmt: skip
    assert pki_from_secret(secret) == pki
    assert pki_from_secret(json.loads(json.dumps(secret))) == pki  # as read back from the API


@pytest.mark.parametrize("key", ["ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "karmada.crt", "sa.key"])
def test_a_secret_missing_a_key_gives_none(pki: ApiserverPKI, key: str) -> None:
    secret = pki_secret(pki)
    del secret["data"][key]
    assert pki_from_secret(secret) is None


@pytest.mark.parametrize(
    "value",
    [base64.b64encode(b"not pem").decode(), "%%% not base64 %%%", base64.b64encode(UNSUPPORTED_CURVE_KEY).decode()],
    ids=["not-pem", "not-base64", "unsupported-curve"],
)
def test_a_secret_with_a_broken_value_gives_none(pki: ApiserverPKI, value: str) -> None:
    for key in ("ca.crt", "sa.key"):
        secret = pki_secret(pki)
        secret["data"][key] = value
        assert pki_from_secret(secret) is None


@pytest.mark.parametrize("secret", [None, {}, {"data": None}, {"data": {}}])
def test_no_secret_gives_none(secret: Obj | None) -> None:
    assert pki_from_secret(secret) is None


def test_reissuing_the_serving_certificate_keeps_the_ca(pki: ApiserverPKI) -> None:
    renewed = reissue_serving(pki, ["203.0.113.9"], ["new.example.com"])
    assert (renewed.ca_cert, renewed.ca_key, renewed.admin_cert, renewed.admin_key, renewed.sa_key) == (
        pki.ca_cert, pki.ca_key, pki.admin_cert, pki.admin_key, pki.sa_key,
    )  # fmt: skip
    assert renewed.serving_cert != pki.serving_cert and renewed.serving_key != pki.serving_key
    _cert(renewed.serving_cert).verify_directly_issued_by(_cert(pki.ca_cert))
    dns, ips = certificate_sans(renewed.serving_cert)
    assert "new.example.com" in dns and "karmada.example.com" not in dns
    assert "203.0.113.9" in ips and "192.0.2.10" not in ips


def test_running_init_again_with_the_same_names_changes_nothing(pki: ApiserverPKI) -> None:
    stored = pki_from_secret(pki_secret(pki))
    assert ensure_pki(stored, ["192.0.2.10"], ["karmada.example.com"]) == pki
    assert ensure_pki(stored, ["192.0.2.10"], ["KARMADA.example.com", "localhost"]) == pki  # the same set


def test_running_init_again_with_other_names_reissues_only_the_serving_certificate(pki: ApiserverPKI) -> None:
    renewed = ensure_pki(pki_from_secret(pki_secret(pki)), ["192.0.2.11"], ["karmada.example.com"])
    assert renewed.ca_cert == pki.ca_cert and renewed.sa_key == pki.sa_key and renewed.admin_cert == pki.admin_cert
    assert renewed.serving_cert != pki.serving_cert
    assert "192.0.2.11" in certificate_sans(renewed.serving_cert)[1]


def test_expiring_certificates_are_renewed_from_the_kept_ca() -> None:
    then = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=350)
    old = new_pki(["192.0.2.10"], now=then)  # leaves end in 15 days, the CA in 9 years
    renewed = ensure_pki(old, ["192.0.2.10"])
    assert renewed.ca_cert == old.ca_cert and renewed.sa_key == old.sa_key
    assert renewed.serving_cert != old.serving_cert and renewed.admin_cert != old.admin_cert
    assert _cert(renewed.admin_cert).not_valid_after_utc > datetime.datetime.now(datetime.UTC) + datetime.timedelta(
        days=300
    )


def test_an_expiring_ca_or_none_gives_a_new_pki() -> None:
    then = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=3640)
    old = new_pki([], now=then)
    assert ensure_pki(old, []).ca_cert != old.ca_cert
    assert _cert(ensure_pki(None, ["192.0.2.10"]).serving_cert)


def test_a_serving_certificate_of_another_ca_is_reissued(pki: ApiserverPKI) -> None:
    other = new_pki(["192.0.2.10"], ["karmada.example.com"])
    mixed = ApiserverPKI(
        pki.ca_cert, pki.ca_key, other.serving_cert, other.serving_key, pki.admin_cert, pki.admin_key, pki.sa_key
    )
    fixed = ensure_pki(mixed, ["192.0.2.10"], ["karmada.example.com"])
    _cert(fixed.serving_cert).verify_directly_issued_by(_cert(pki.ca_cert))


# ---- the Service


@pytest.mark.parametrize(
    ("options", "service_type", "port", "node_port"),
    [
        (ApiserverOptions(), "NodePort", 5443, 32443),  # karmadactl init's
        (ApiserverOptions(service_type="ClusterIP"), "ClusterIP", 5443, None),
        (ApiserverOptions(service_type="LoadBalancer"), "LoadBalancer", 5443, None),
        (ApiserverOptions(service_type="NodePort", node_port=31000), "NodePort", 5443, 31000),
        (ApiserverOptions(service_type="ClusterIP", node_port=31000), "ClusterIP", 5443, None),
        (ApiserverOptions(service_type="LoadBalancer", port=443), "LoadBalancer", 443, None),
    ],
)
def test_the_service_for_each_type(
    pki: ApiserverPKI, options: ApiserverOptions, service_type: str, port: int, node_port: int | None
) -> None:
    objects = apiserver_objects(pki, options)
    service = _by_kind(objects, "Service")
    assert (service["metadata"]["name"], service["metadata"]["namespace"]) == ("karmada-apiserver", "karmada-system")
    assert service["spec"]["type"] == service_type
    (entry,) = service["spec"]["ports"]
    assert entry["port"] == port and entry.get("nodePort") == node_port
    statefulset = _by_kind(objects, "StatefulSet")
    template = statefulset["spec"]["template"]
    assert (
        service["spec"]["selector"] == template["metadata"]["labels"] == statefulset["spec"]["selector"]["matchLabels"]
    )
    (container,) = template["spec"]["containers"]
    (container_port,) = container["ports"]
    assert entry["targetPort"] == container_port["name"] and container_port["containerPort"] == port
    assert f"--port={port}" in container["command"]


# ---- the StatefulSet


def _flags(command: list[str]) -> dict[str, str]:
    return dict(arg.removeprefix("--").split("=", 1) for arg in command[2:])


def test_the_statefulset_runs_localkube_with_the_mounted_pki(pki: ApiserverPKI) -> None:
    objects = apiserver_objects(pki)
    assert [o["kind"] for o in objects] == ["Secret", "Service", "StatefulSet"]
    statefulset = _by_kind(objects, "StatefulSet")
    spec = statefulset["spec"]
    assert spec["replicas"] == 1 and spec["serviceName"] == "karmada-apiserver"
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == IMAGE
    assert container["command"][:2] == ["localkube", "serve"]
    flags = _flags(container["command"])
    assert flags == {
        "host": "0.0.0.0",
        "port": "5443",
        "data-dir": "/var/lib/karmada-apiserver/data",
        "tls-cert-file": "/etc/karmada/pki/apiserver.crt",
        "tls-private-key-file": "/etc/karmada/pki/apiserver.key",
        "client-ca-file": "/etc/karmada/pki/ca.crt",
        "cluster-signing-cert-file": "/etc/karmada/pki/ca.crt",
        "cluster-signing-key-file": "/etc/karmada/pki/ca.key",
        "service-account-signing-key-file": "/etc/karmada/pki/sa.key",
        "service-account-key-file": "/etc/karmada/pki/sa.pub",
    }
    assert not any("simulate" in arg for arg in container["command"])
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["pki"] == {"name": "pki", "mountPath": "/etc/karmada/pki", "readOnly": True}
    assert flags["data-dir"].startswith(mounts["data"]["mountPath"] + "/")  # a directory localkube owns
    (claim,) = spec["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "data"
    assert claim["spec"]["resources"]["requests"]["storage"] == "5Gi" and "storageClassName" not in claim["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    projected = {item["path"] for item in volumes["pki"]["secret"]["items"]}
    assert volumes["pki"]["secret"]["secretName"] == pki_secret(pki)["metadata"]["name"]
    # every file a flag names is projected; the admin's key is not in the server's volume
    assert {v.rsplit("/", 1)[1] for k, v in flags.items() if v.startswith("/etc/karmada/pki/")} == projected
    assert "karmada.key" not in projected


def test_the_statefulset_is_hardened_and_probed(pki: ApiserverPKI) -> None:
    pod = _by_kind(apiserver_objects(pki), "StatefulSet")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 65532
    assert pod["securityContext"]["fsGroup"] == 65532  # the volume is writable by that user
    assert pod["automountServiceAccountToken"] is False
    (container,) = pod["containers"]
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True and security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz"), ("startupProbe", "/livez")):
        assert container[probe]["httpGet"] == {"path": path, "port": "https", "scheme": "HTTPS"}
    assert container["resources"]["requests"]["cpu"] and container["resources"]["limits"]["memory"]
    assert "/tmp" in {m["mountPath"] for m in container["volumeMounts"]}


def test_options_reach_the_statefulset(pki: ApiserverPKI) -> None:
    options = ApiserverOptions(
        image="registry.example/karmada-py:9",
        storage_size="20Gi",
        storage_class_name="fast",
        resources={"requests": {"cpu": "1"}, "limits": {"memory": "4Gi"}},
        extra_args=("--watch-history=5000", "-v"),
    )
    spec = _by_kind(apiserver_objects(pki, options), "StatefulSet")["spec"]
    (container,) = spec["template"]["spec"]["containers"]
    assert container["image"] == "registry.example/karmada-py:9"
    assert container["command"][-2:] == ["--watch-history=5000", "-v"]
    assert container["resources"] == {"requests": {"cpu": "1"}, "limits": {"memory": "4Gi"}}
    (claim,) = spec["volumeClaimTemplates"]
    assert claim["spec"]["storageClassName"] == "fast"
    assert claim["spec"]["resources"]["requests"]["storage"] == "20Gi"


# ---- the kubeconfig


def test_the_admin_kubeconfig_is_karmadactl_inits(pki: ApiserverPKI) -> None:
    config = yaml.safe_load(admin_kubeconfig(pki, "https://192.0.2.10:32443"))
    assert config["current-context"] == "karmada-apiserver"
    (cluster,) = config["clusters"]
    (user,) = config["users"]
    (context,) = config["contexts"]
    assert cluster["name"] == "karmada-apiserver" and cluster["cluster"]["server"] == "https://192.0.2.10:32443"
    assert "tls-server-name" not in cluster["cluster"]
    assert base64.b64decode(cluster["cluster"]["certificate-authority-data"]) == pki.ca_cert
    assert user["name"] == "karmada-admin"
    assert base64.b64decode(user["user"]["client-certificate-data"]) == pki.admin_cert
    assert base64.b64decode(user["user"]["client-key-data"]) == pki.admin_key
    assert context == {
        "name": "karmada-apiserver",
        "context": {"cluster": "karmada-apiserver", "user": "karmada-admin"},
    }
    named = yaml.safe_load(admin_kubeconfig(pki, "https://10.0.0.1:5443", "karmada-apiserver.karmada-system.svc"))
    assert named["clusters"][0]["cluster"]["tls-server-name"] == "karmada-apiserver.karmada-system.svc"


# ---- accepted by the API server (server-side dry run, real kubectl)


def _dry_run(admin: Kubectl, workdir: Path, objects: list[Obj]) -> Any:
    admin("create", "namespace", "karmada-system", check=False)
    path = workdir / "apiserver.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False), encoding="utf-8")
    return admin(
        "apply", "--server-side", "--dry-run=server", "--validate=strict", "-o", "name", "-f", str(path), check=False
    )


OPTION_CASES = [
    ApiserverOptions(),
    ApiserverOptions(service_type="ClusterIP", storage_class_name="standard"),
    ApiserverOptions(service_type="LoadBalancer", port=443, extra_args=("--watch-history=5000",)),
]
OPTION_IDS = ["nodeport", "clusterip", "loadbalancer"]


@pytest.mark.parametrize("options", OPTION_CASES, ids=OPTION_IDS)
def test_every_object_is_accepted_by_a_server_side_dry_run(
    admin: Kubectl, workdir: Path, pki: ApiserverPKI, options: ApiserverOptions
) -> None:
    result = _dry_run(admin, workdir, apiserver_objects(pki, options))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "secret/karmada-cert",
        "service/karmada-apiserver",
        "statefulset.apps/karmada-apiserver",
    ]
    nothing = admin("get", "secrets,services,statefulsets", "-n", "karmada-system", "-o", "json")
    assert [o["metadata"]["name"] for o in json.loads(nothing.stdout)["items"]] == []
