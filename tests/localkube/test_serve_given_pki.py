"""``localkube serve`` with a PKI it is given (as kube-apiserver and kube-controller-manager
take theirs): the real program in a subprocess, judged by the real kubectl. The files sit
in a read-only directory, as in a mounted Secret."""

from __future__ import annotations

import base64
import json
import os
import stat
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from localkube.pki import CertificateAuthority, cert_pem, key_pem, new_key
from localkube.process import LocalKubeProcess
from localkube.tokens import TokenSigner, key_id
from tests.programs import run
from tests.servers import Kubectl

ALICE_TOKEN = "alice-static-token-0123456789"


@dataclass
class GivenPKI:
    directory: Path
    serving_ca: CertificateAuthority
    client_ca: CertificateAuthority
    signing_ca: CertificateAuthority
    sa_key: rsa.RSAPrivateKey
    old_sa_key: ec.EllipticCurvePrivateKey

    def path(self, name: str) -> Path:
        return self.directory / name

    def flags(self) -> tuple[str, ...]:
        return (
            f"--tls-cert-file={self.path('tls.crt')}",
            f"--tls-private-key-file={self.path('tls.key')}",
            f"--client-ca-file={self.path('client-ca.crt')}",
            f"--cluster-signing-cert-file={self.path('signing.crt')}",
            f"--cluster-signing-key-file={self.path('signing.key')}",
            f"--service-account-signing-key-file={self.path('sa.key')}",
            f"--service-account-key-file={self.path('sa.pub')}",
            f"--service-account-key-file={self.path('sa-old.pub')}",
            f"--token-auth-file={self.path('tokens.csv')}",
        )


def _public_pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GivenPKI]:
    directory = tmp_path_factory.mktemp("secret")
    serving_ca = CertificateAuthority.create("serving-ca")
    client_ca = CertificateAuthority.create("client-ca")
    signing_ca = CertificateAuthority.create("signing-ca")
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    old_sa_key = new_key()
    tls_crt, tls_key = serving_ca.issue_server(["127.0.0.1", "localhost"])
    files = {
        "tls.crt": tls_crt + cert_pem(serving_ca.cert),  # the leaf, then its CA
        "tls.key": tls_key,
        "serving-ca.crt": cert_pem(serving_ca.cert),
        # two CAs in the bundle: the users' and the cluster-signing one (admin, CSRs)
        "client-ca.crt": cert_pem(client_ca.cert) + cert_pem(signing_ca.cert),
        "signing.crt": cert_pem(signing_ca.cert),
        "signing.key": key_pem(signing_ca.key),
        "sa.key": sa_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
        ),
        "sa.pub": _public_pem(sa_key),
        "sa-old.pub": _public_pem(old_sa_key),
        "tokens.csv": f'{ALICE_TOKEN},alice,alice-uid,"team-a,team-b"\n'.encode(),
    }
    for name, data in files.items():
        (directory / name).write_bytes(data)
        os.chmod(directory / name, 0o444)
    os.chmod(directory, 0o555)  # as read-only as a Secret mount
    try:
        yield GivenPKI(directory, serving_ca, client_ca, signing_ca, sa_key, old_sa_key)
    finally:
        os.chmod(directory, 0o755)


@pytest.fixture(scope="module")
def server(pki: GivenPKI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalKubeProcess]:
    work = tmp_path_factory.mktemp("serve")
    process = LocalKubeProcess(
        work / "admin.kubeconfig", data_dir=work / "data", extra_args=pki.flags(), log=work / "localkube.log"
    )
    with process:
        yield process


def _kubeconfig(path: Path, server: str, ca_file: Path, user: dict[str, str]) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "given", "cluster": {"server": server, "certificate-authority": str(ca_file)}}],
        "users": [{"name": "user", "user": user}],
        "contexts": [{"name": "given", "context": {"cluster": "given", "user": "user"}}],
        "current-context": "given",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def _client_kubeconfig(directory: Path, server: str, ca: CertificateAuthority, user: str, groups: list[str]) -> Path:
    cert, key = ca.issue_client(user, groups)
    (directory / f"{user}.crt").write_bytes(cert)
    (directory / f"{user}.key").write_bytes(key)
    credentials = {"client-certificate": str(directory / f"{user}.crt"), "client-key": str(directory / f"{user}.key")}
    return _kubeconfig(directory / f"{user}.kubeconfig", server, directory / "serving-ca.crt", credentials)


def _whoami(kube: Kubectl, *flags: str) -> dict[str, Any]:
    info: dict[str, Any] = json.loads(kube(*flags, "auth", "whoami", "-o", "json").stdout)["status"]["userInfo"]
    return info


@pytest.fixture
def client_dir(pki: GivenPKI, tmp_path: Path) -> Path:
    (tmp_path / "serving-ca.crt").write_bytes(pki.path("serving-ca.crt").read_bytes())
    return tmp_path


def test_a_client_certificate_of_the_given_client_ca_authenticates(
    server: LocalKubeProcess, pki: GivenPKI, client_dir: Path
) -> None:
    kubeconfig = _client_kubeconfig(client_dir, server.url, pki.client_ca, "carol", ["team-c"])
    info = _whoami(Kubectl(kubeconfig, client_dir / "cache"))
    assert info["username"] == "carol"
    assert info["groups"] == ["team-c", "system:authenticated"]
    # a certificate of any other CA is refused
    stranger = _client_kubeconfig(client_dir, server.url, CertificateAuthority.create("stranger"), "mallory", [])
    refused = Kubectl(stranger, client_dir / "cache")("auth", "whoami", check=False)
    assert refused.returncode != 0


def test_the_admin_kubeconfig_trusts_the_serving_ca_and_is_signed_by_the_cluster_ca(
    server: LocalKubeProcess, pki: GivenPKI, tmp_path: Path
) -> None:
    config = yaml.safe_load(server.kubeconfig.read_text())
    ca_data = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"])
    assert ca_data == cert_pem(pki.serving_ca.cert)
    admin_cert = x509.load_pem_x509_certificate(base64.b64decode(config["users"][0]["user"]["client-certificate-data"]))
    admin_cert.verify_directly_issued_by(pki.signing_ca.cert)
    admin = Kubectl(server.kubeconfig, tmp_path / "cache")
    assert _whoami(admin)["groups"][0] == "system:masters"
    # pods and joining clients are told the same CA
    root = admin("get", "configmap", "kube-root-ca.crt", "-n", "default", "-o", r"jsonpath={.data.ca\.crt}").stdout
    assert root.encode() == cert_pem(pki.serving_ca.cert)
    info = yaml.safe_load(
        admin("get", "configmap", "cluster-info", "-n", "kube-public", "-o", "jsonpath={.data.kubeconfig}").stdout
    )
    assert base64.b64decode(info["clusters"][0]["cluster"]["certificate-authority-data"]) == cert_pem(
        pki.serving_ca.cert
    )


def test_a_static_token_authenticates_with_its_groups(server: LocalKubeProcess, client_dir: Path) -> None:
    kubeconfig = _kubeconfig(client_dir / "token.kubeconfig", server.url, client_dir / "serving-ca.crt", {})
    kube = Kubectl(kubeconfig, client_dir / "cache")
    info = _whoami(kube, f"--token={ALICE_TOKEN}")
    assert info == {"username": "alice", "uid": "alice-uid", "groups": ["team-a", "team-b", "system:authenticated"]}
    assert kube("--token=not-in-the-file", "auth", "whoami", check=False).returncode != 0


def test_an_approved_csr_is_signed_by_the_cluster_signing_ca(
    server: LocalKubeProcess, pki: GivenPKI, tmp_path: Path
) -> None:
    key = new_key()
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "dave")]))
        .sign(key, hashes.SHA256())
    )
    csr = {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "dave"},
        "spec": {
            "request": base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode(),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"],
        },
    }
    admin = Kubectl(server.kubeconfig, tmp_path / "cache")
    admin("create", "-f", "-", stdin=json.dumps(csr))
    admin("certificate", "approve", "dave")
    deadline = time.monotonic() + 10
    issued = ""
    while not issued and time.monotonic() < deadline:
        issued = admin("get", "csr", "dave", "-o", "jsonpath={.status.certificate}").stdout
        if not issued:
            time.sleep(0.1)
    assert issued, "the approved CSR was not signed"
    cert = x509.load_pem_x509_certificate(base64.b64decode(issued))
    cert.verify_directly_issued_by(pki.signing_ca.cert)


def _b64decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def test_a_service_account_token_is_signed_by_the_given_key_and_verifies(
    server: LocalKubeProcess, pki: GivenPKI, client_dir: Path
) -> None:
    admin = Kubectl(server.kubeconfig, client_dir / "cache")
    token = admin("create", "token", "default", "-n", "default").stdout.strip()
    header, payload, signature = token.split(".")
    assert json.loads(_b64decode(header)) == {"alg": "RS256", "kid": key_id(pki.sa_key.public_key())}
    pki.sa_key.public_key().verify(
        _b64decode(signature), f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256()
    )
    kubeconfig = _kubeconfig(client_dir / "sa.kubeconfig", server.url, client_dir / "serving-ca.crt", {})
    kube = Kubectl(kubeconfig, client_dir / "cache")
    assert _whoami(kube, f"--token={token}")["username"] == "system:serviceaccount:default:default"
    # a token of the retired key (the second --service-account-key-file) still verifies
    uid = admin("get", "serviceaccount", "default", "-n", "default", "-o", "jsonpath={.metadata.uid}").stdout
    old, _ = TokenSigner.asymmetric(pki.old_sa_key).issue("default", "default", uid, ["api"], 3600)
    assert _whoami(kube, f"--token={old}")["username"] == "system:serviceaccount:default:default"
    stranger, _ = TokenSigner.asymmetric(new_key()).issue("default", "default", uid, ["api"], 3600)
    assert kube(f"--token={stranger}", "auth", "whoami", check=False).returncode != 0


def test_given_files_are_read_never_written_and_win_over_the_data_dir(server: LocalKubeProcess, pki: GivenPKI) -> None:
    for path in pki.directory.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o444, path
    assert server.data_dir is not None
    kept = sorted(p.name for p in server.data_dir.iterdir())
    assert not {"ca.crt", "ca.key", "sa.key"} & set(kept), kept


def _serve(*flags: str) -> tuple[int, str]:
    result = run([sys.executable, "-m", "localkube", "serve", "--port", "0", *flags], timeout=30)
    return result.returncode, result.stderr


def test_a_file_that_cannot_be_used_is_one_line_and_exit_code_2(pki: GivenPKI, tmp_path: Path) -> None:
    missing = tmp_path / "missing.crt"
    code, stderr = _serve(f"--tls-cert-file={missing}", f"--tls-private-key-file={pki.path('tls.key')}")
    assert (code, stderr) == (2, f"error: --tls-cert-file {missing}: cannot read it (No such file or directory)\n")
    code, stderr = _serve(f"--tls-cert-file={pki.path('tls.crt')}", f"--tls-private-key-file={pki.path('signing.key')}")
    assert (code, stderr) == (
        2,
        f"error: --tls-private-key-file {pki.path('signing.key')}: is not the key of the certificate"
        f" in --tls-cert-file {pki.path('tls.crt')}\n",
    )
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f"{ALICE_TOKEN},alice,a1\nbroken-line\n")
    code, stderr = _serve(f"--token-auth-file={tokens}")
    assert (code, stderr) == (
        2,
        f"error: --token-auth-file {tokens}: line 2: needs at least 3 columns (token, user name, user uid), found 1\n",
    )
    code, stderr = _serve("--clusters=2", f"--token-auth-file={tokens}")
    assert code == 2
    assert "--token-auth-file: not with --clusters or --fleet" in stderr
