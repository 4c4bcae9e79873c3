"""The cluster proxy in a host install, as data: its certificate's names and issuer, the
Secret that keeps it across runs (reissued when its names change or it nears expiry), the
Deployment that runs ``karmada-cluster-proxy`` (its flags, mounts and hardening), the
Service, the URL init advertises and publishes, and ``--cluster-proxy=false``; the Secret,
Deployment and Service accepted by a server-side dry run."""

from __future__ import annotations

import asyncio
import base64
import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from controlplane.proxy_program import build_parser
from karmada.install import cluster_proxy
from karmada.install import dedicated as dedicated_module
from karmada.install.apiserver_localkube import ApiserverOptions, certificate_sans, new_pki
from karmada.install.cluster_proxy import ProxyOptions
from karmada.install.dedicated import DedicatedOptions, component_workloads, host_objects, secret_names
from tests.servers import Kubectl

Obj = dict[str, Any]
SERVICE_DNS = [
    "karmada-cluster-proxy",
    "karmada-cluster-proxy.karmada-system",
    "karmada-cluster-proxy.karmada-system.svc",
    "karmada-cluster-proxy.karmada-system.svc.cluster.local",
    "localhost",
]
NOW = datetime.datetime(2026, 3, 1, tzinfo=datetime.UTC)


@pytest.fixture(scope="module")
def ca() -> tuple[bytes, bytes]:
    pki = new_pki(["192.0.2.10"])
    return pki.ca_cert, pki.ca_key


def _proxy_objects(options: DedicatedOptions) -> dict[str, Obj]:
    return {o["kind"]: o for o in component_workloads(options) if o["metadata"]["name"] == cluster_proxy.NAME}


# ---- the certificate


@pytest.mark.parametrize(
    ("hosts", "extra", "dns", "ips"),
    [
        (["192.0.2.10"], [], [], ["192.0.2.10"]),
        (["192.0.2.10", "proxy.example"], [], ["proxy.example"], ["192.0.2.10"]),  # the advertised URL's host too
        (
            ["192.0.2.10", "192.0.2.10"],
            ["Extra.Example", "10.1.2.3", " "],
            ["extra.example"],
            ["192.0.2.10", "10.1.2.3"],
        ),
        (["[2001:db8:0::2]"], [], [], ["2001:db8::2"]),
        (["127.0.0.1"], ["localhost"], [], []),  # loopback once
    ],
)
def test_the_certificate_names_the_service_loopback_the_advertised_addresses_and_the_extra_sans(
    ca: tuple[bytes, bytes], hosts: list[str], extra: list[str], dns: list[str], ips: list[str]
) -> None:
    sans = cluster_proxy.subject_alt_names(hosts, extra)
    cert_pem, _ = cluster_proxy.serving_pair(None, *ca, sans, NOW)
    assert certificate_sans(cert_pem) == (SERVICE_DNS + dns, ["127.0.0.1", *ips])


def test_the_certificate_is_a_server_certificate_from_the_api_servers_ca(ca: tuple[bytes, bytes]) -> None:
    cert_pem, _ = cluster_proxy.serving_pair(None, *ca, cluster_proxy.subject_alt_names(["192.0.2.10"]), NOW)
    cert = x509.load_pem_x509_certificate(cert_pem)
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(ca[0]))
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "karmada-cluster-proxy"
    assert list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.SERVER_AUTH
    ]
    assert cert.not_valid_after_utc == NOW + datetime.timedelta(days=365)
    assert cluster_proxy.subject_alt_names([], cluster_domain="corp.internal")[3] == (
        "karmada-cluster-proxy.karmada-system.svc.corp.internal"
    )


def test_the_secret_holds_the_pair_and_the_client_ca(ca: tuple[bytes, bytes]) -> None:
    cert, key = cluster_proxy.serving_pair(None, *ca, ["localhost"], NOW)
    secret = cluster_proxy.secret(cert, key, ca[0])
    assert secret["metadata"] == {
        "name": "karmada-cluster-proxy-cert",
        "namespace": "karmada-system",
        "labels": {"app": "karmada-cluster-proxy"},
    }
    assert secret["type"] == "kubernetes.io/tls"
    decoded = {k: base64.b64decode(v) for k, v in secret["data"].items()}
    assert decoded == {"tls.crt": cert, "tls.key": key, "ca.crt": ca[0]}


@pytest.mark.parametrize(
    ("change", "kept"),
    [
        ("nothing", True),
        ("a day later", True),
        ("the same names in another order", True),
        ("another advertised address", False),
        ("29 days before it expires", False),
        ("another CA", False),
        ("a Secret without a certificate", False),
        ("no Secret", False),
    ],
)
def test_a_rerun_keeps_the_certificate_unless_its_names_change_or_it_nears_expiry(
    ca: tuple[bytes, bytes], change: str, kept: bool
) -> None:
    sans = cluster_proxy.subject_alt_names(["192.0.2.10"], ["proxy.example"])
    first = cluster_proxy.serving_pair(None, *ca, sans, NOW)
    stored: Obj | None = cluster_proxy.secret(*first, ca[0])
    signer, now, wanted = ca, NOW, sans
    if change == "a day later":
        now = NOW + datetime.timedelta(days=1)
    elif change == "the same names in another order":
        wanted = list(reversed(sans))
    elif change == "another advertised address":
        wanted = cluster_proxy.subject_alt_names(["192.0.2.11"], ["proxy.example"])
    elif change == "29 days before it expires":
        now = NOW + datetime.timedelta(days=365 - 29)
    elif change == "another CA":
        other = new_pki([])
        signer = (other.ca_cert, other.ca_key)
    elif change == "a Secret without a certificate":
        stored = {"data": {"tls.crt": base64.b64encode(b"not PEM").decode(), "tls.key": ""}}
    elif change == "no Secret":
        stored = None
    again = cluster_proxy.serving_pair(stored, *signer, wanted, now)
    assert (again == first) is kept
    x509.load_pem_x509_certificate(again[0]).verify_directly_issued_by(x509.load_pem_x509_certificate(signer[0]))


# ---- the objects


def test_the_deployment_runs_the_proxy_program_with_its_certificate_and_the_control_planes_identity() -> None:
    deployment = _proxy_objects(DedicatedOptions())["Deployment"]
    assert deployment["metadata"]["labels"] == {"app": "karmada-cluster-proxy"}
    spec = deployment["spec"]
    # one process: every tunnel and every request meet in it; a rollout never runs two
    assert (spec["replicas"], spec["strategy"]) == (1, {"type": "Recreate"})
    assert spec["selector"]["matchLabels"] == spec["template"]["metadata"]["labels"] == {"app": "karmada-cluster-proxy"}
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == [
        "karmada-cluster-proxy",
        "--kubeconfig=/etc/karmada/config/karmada.config",
        "--health-probe-bind-address=:10358",
        "--metrics-bind-address=:8080",
        "--cluster-proxy-bind-address=:8443",
        "--cluster-proxy-tls-cert-file=/etc/karmada/cluster-proxy/tls.crt",
        "--cluster-proxy-tls-private-key-file=/etc/karmada/cluster-proxy/tls.key",
        "--cluster-proxy-client-ca-file=/etc/karmada/cluster-proxy/ca.crt",
    ]
    args = build_parser().parse_args(container["command"][1:])  # the program's own parser accepts them
    assert args.cluster_proxy_bind_address == ":8443"
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {
        "https": 8443,
        "health": 10358,
        "metrics": 8080,
    }
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"]["port"] == "health"
    assert container["volumeMounts"] == [
        {"name": "tmp", "mountPath": "/tmp"},
        {"name": "karmada-config", "mountPath": "/etc/karmada/config", "readOnly": True},
        {"name": "cluster-proxy-cert", "mountPath": "/etc/karmada/cluster-proxy", "readOnly": True},
    ]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["karmada-config"]["secret"]["secretName"] == "karmada-controlplane-config"
    assert volumes["cluster-proxy-cert"]["secret"] == {
        "secretName": "karmada-cluster-proxy-cert",
        "defaultMode": 0o440,
        "items": [{"key": k, "path": k} for k in ("tls.crt", "tls.key", "ca.crt")],
    }
    # hardened as the control plane: no token of the host, read-only root, non-root
    assert pod["automountServiceAccountToken"] is False and "serviceAccountName" not in pod
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    controlplane = next(
        o for o in component_workloads(DedicatedOptions()) if o["metadata"]["name"] == "karmada-controlplane"
    )
    assert container["image"] == controlplane["spec"]["template"]["spec"]["containers"][0]["image"]
    assert not any("cluster-proxy" in a for a in controlplane["spec"]["template"]["spec"]["containers"][0]["command"])


@pytest.mark.parametrize(
    ("options", "service_type", "node_port"),
    [
        (DedicatedOptions(), "NodePort", 32444),
        (DedicatedOptions(cluster_proxy=ProxyOptions(node_port=30444)), "NodePort", 30444),
        (DedicatedOptions(apiserver=ApiserverOptions(service_type="LoadBalancer")), "LoadBalancer", None),
        (DedicatedOptions(apiserver=ApiserverOptions(service_type="ClusterIP")), "ClusterIP", None),
    ],
    ids=["default", "node-port", "loadbalancer", "clusterip"],
)
def test_the_service_is_of_the_api_servers_type(
    options: DedicatedOptions, service_type: str, node_port: int | None
) -> None:
    service = _proxy_objects(options)["Service"]
    assert service["spec"]["type"] == service_type
    assert service["spec"]["selector"] == {"app": "karmada-cluster-proxy"}
    (port,) = service["spec"]["ports"]
    assert (port["port"], port["targetPort"], port.get("nodePort")) == (8443, "https", node_port)


def test_off_deploys_no_proxy_but_deinit_still_knows_its_objects() -> None:
    off = DedicatedOptions(cluster_proxy=ProxyOptions(enabled=False))
    assert not [o for o in host_objects(off) if "cluster-proxy" in o["metadata"]["name"]]
    assert {(o["kind"], o["metadata"]["name"]) for o in host_objects(DedicatedOptions())} >= {
        ("Deployment", "karmada-cluster-proxy"),
        ("Service", "karmada-cluster-proxy"),
    }
    # deinit deletes the default layout's workloads and every Secret init may have written
    assert "karmada-cluster-proxy-cert" in secret_names(kube=False) and "karmada-cluster-proxy-cert" in secret_names(
        kube=True
    )


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://proxy.example", None),
        ("https://proxy.example:443/", None),
        ("https://[2001:db8::1]:8443", None),
        ("http://proxy.example", "want https://HOST[:PORT]"),
        ("https://proxy.example/apis", "want https://HOST[:PORT]"),
        ("proxy.example:8443", "want https://HOST[:PORT]"),
        ("https://proxy.example:99999", "bad port"),
    ],
)
def test_the_advertised_url_is_https_host_and_port(url: str, problem: str | None) -> None:
    if problem is None:
        assert cluster_proxy.check_url(url) == url.rstrip("/")
        ProxyOptions(advertise_url=url)
    else:
        with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("]", r"\]")):
            ProxyOptions(advertise_url=url)


# ---- what init advertises and stores (the host's answers stood in for)


class _Host:
    """The few reads init makes of the host here: Secrets stored, a Service's status."""

    def __init__(self, objects: dict[str, Obj] | None = None) -> None:
        self.objects = objects or {}

    async def get_or_none(self, resource: Any, name: str, namespace: str | None = None) -> Obj | None:
        return self.objects.get(name)

    async def get(self, resource: Any, name: str, namespace: str | None = None) -> Obj:
        return self.objects[name]


def _url(options: DedicatedOptions, host: _Host | None = None) -> str | None:
    said: list[str] = []
    return asyncio.run(dedicated_module._cluster_proxy_url(host or _Host(), options, "192.0.2.10", said.append))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "url"),
    [
        (DedicatedOptions(), "https://192.0.2.10:32444"),
        (DedicatedOptions(cluster_proxy=ProxyOptions(node_port=30001)), "https://192.0.2.10:30001"),
        (DedicatedOptions(cluster_proxy=ProxyOptions(advertise_url="https://proxy.example/")), "https://proxy.example"),
        (
            DedicatedOptions(
                apiserver=ApiserverOptions(service_type="ClusterIP"),
                cluster_proxy=ProxyOptions(advertise_url="https://10.0.0.9:8443"),
            ),
            "https://10.0.0.9:8443",
        ),
        (DedicatedOptions(cluster_proxy=ProxyOptions(enabled=False)), None),
    ],
    ids=["node-port", "another-node-port", "given", "clusterip-given", "off"],
)
def test_the_advertised_url(options: DedicatedOptions, url: str | None) -> None:
    assert _url(options) == url


def test_a_load_balancers_proxy_is_advertised_at_its_own_ingress() -> None:
    service = {"status": {"loadBalancer": {"ingress": [{"hostname": "lb.example"}]}}}
    options = DedicatedOptions(apiserver=ApiserverOptions(service_type="LoadBalancer"))
    assert _url(options, _Host({"karmada-cluster-proxy": service})) == "https://lb.example:8443"


def test_a_clusterip_proxy_needs_an_address() -> None:
    with pytest.raises(ValueError, match="--cluster-proxy-advertise-address"):
        _url(DedicatedOptions(apiserver=ApiserverOptions(service_type="ClusterIP")))


def _credentials(options: DedicatedOptions, host: _Host, proxy_url: str | None) -> dedicated_module.Credentials:
    coroutine = dedicated_module._credentials(host, "https://192.0.2.10:32443", "192.0.2.10", options, proxy_url)  # type: ignore[arg-type]
    return asyncio.run(coroutine)


def test_init_writes_the_proxys_secret_and_keeps_it_on_a_rerun() -> None:
    options = DedicatedOptions(extra_sans=("karmada.example",))
    first = _credentials(options, _Host(), "https://proxy.example:8443")
    secret = first.secret("karmada-cluster-proxy-cert")
    cert = base64.b64decode(secret["data"]["tls.crt"])
    assert base64.b64decode(secret["data"]["ca.crt"]) == first.pki.ca_cert
    dns, ips = certificate_sans(cert)
    assert {"proxy.example", "karmada.example", "karmada-cluster-proxy.karmada-system.svc"} <= set(dns)
    assert "192.0.2.10" in ips
    stored = _Host({s["metadata"]["name"]: s for s in first.secrets})
    again = _credentials(options, stored, "https://proxy.example:8443")
    assert again.secret("karmada-cluster-proxy-cert") == secret
    # another advertised URL: the same CA, a new certificate naming it
    moved = _credentials(options, stored, "https://proxy2.example:8443").secret("karmada-cluster-proxy-cert")
    assert moved["data"]["tls.crt"] != secret["data"]["tls.crt"]
    assert "proxy2.example" in certificate_sans(base64.b64decode(moved["data"]["tls.crt"]))[0]
    # off: no Secret written
    off = _credentials(DedicatedOptions(cluster_proxy=ProxyOptions(enabled=False)), stored, None)
    assert "karmada-cluster-proxy-cert" not in [s["metadata"]["name"] for s in off.secrets]


# ---- accepted by the API server (server-side dry run, real kubectl)


def test_the_proxys_objects_are_accepted_by_a_server_side_dry_run(
    admin: Kubectl, workdir: Path, ca: tuple[bytes, bytes]
) -> None:
    cert, key = cluster_proxy.serving_pair(None, *ca, cluster_proxy.subject_alt_names(["192.0.2.10"]), NOW)
    objects = [cluster_proxy.secret(cert, key, ca[0]), *_proxy_objects(DedicatedOptions()).values()]
    objects.append(_proxy_objects(DedicatedOptions(apiserver=ApiserverOptions(service_type="LoadBalancer")))["Service"])
    admin("create", "namespace", "karmada-system", check=False)
    path = workdir / "cluster-proxy.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False), encoding="utf-8")
    result = admin("apply", "--server-side", "--dry-run=server", "--validate=strict", "-o", "name", "-f", str(path))
    assert sorted(result.stdout.split()) == [
        "deployment.apps/karmada-cluster-proxy",
        "secret/karmada-cluster-proxy-cert",
        "service/karmada-cluster-proxy",
        "service/karmada-cluster-proxy",
    ]
