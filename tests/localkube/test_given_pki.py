"""The PKI files given to ``localkube serve`` (--tls-cert-file ...): each is read and
checked once, and every problem is one line naming the flag and the file."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from localkube.given_pki import GivenFileError, load_given_pki
from localkube.pki import CertificateAuthority, cert_pem, key_pem, new_key


@dataclass
class Files:
    directory: Path

    def __call__(self, name: str) -> Path:
        return self.directory / name


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Files:
    directory = tmp_path_factory.mktemp("pki")
    ca = CertificateAuthority.create("given-ca")
    other = CertificateAuthority.create("other-ca")
    server_cert, server_key = ca.issue_server(["127.0.0.1"])
    written = {
        "ca.crt": cert_pem(ca.cert),
        "ca.key": key_pem(ca.key),
        "other.key": key_pem(other.key),
        "server.crt": server_cert,
        "server.key": server_key,
        "chain.crt": server_cert + cert_pem(ca.cert),
        "garbage": b"not a PEM file at all\n",
        "empty": b"",
        "encrypted.key": ca.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        ),
        "ed25519.key": ed25519.Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
        "sa.key": key_pem(new_key()),
        "other-sa.pub": new_key()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
        "hmac.key": base64.b64encode(b"k" * 32) + b"\n",
        "short-hmac.key": base64.b64encode(b"k" * 8) + b"\n",
        "bad-cert.crt": b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    }
    for name, data in written.items():
        (directory / name).write_bytes(data)
    return Files(directory)


# (keyword arguments of load_given_pki as file names, flag and file the message names, the problem)
BAD = [
    ({"tls_cert_file": "missing", "tls_private_key_file": "server.key"}, "--tls-cert-file missing", "cannot read it"),
    ({"tls_cert_file": "server.crt"}, "--tls-cert-file server.crt", "needs --tls-private-key-file too"),
    ({"tls_private_key_file": "server.key"}, "--tls-private-key-file server.key", "needs --tls-cert-file too"),
    (
        {"tls_cert_file": "garbage", "tls_private_key_file": "server.key"},
        "--tls-cert-file garbage",
        "holds no PEM certificate",
    ),
    (
        {"tls_cert_file": "bad-cert.crt", "tls_private_key_file": "server.key"},
        "--tls-cert-file bad-cert.crt",
        "holds a certificate that cannot be parsed",
    ),
    (
        {"tls_cert_file": "server.crt", "tls_private_key_file": "ca.key"},
        "--tls-private-key-file ca.key",
        "is not the key of the certificate in --tls-cert-file",
    ),
    (
        {"tls_cert_file": "server.crt", "tls_private_key_file": "garbage"},
        "--tls-private-key-file garbage",
        "holds no PEM private key that can be parsed",
    ),
    (
        {"tls_cert_file": "server.crt", "tls_private_key_file": "encrypted.key"},
        "--tls-private-key-file encrypted.key",
        "the private key is encrypted",
    ),
    ({"client_ca_file": "empty"}, "--client-ca-file empty", "holds no PEM certificate"),
    ({"client_ca_file": "missing"}, "--client-ca-file missing", "cannot read it"),
    ({"cluster_signing_cert_file": "ca.crt"}, "--cluster-signing-cert-file ca.crt", "needs --cluster-signing-key-file"),
    (
        {"cluster_signing_cert_file": "ca.crt", "cluster_signing_key_file": "other.key"},
        "--cluster-signing-key-file other.key",
        "is not the key of the certificate in --cluster-signing-cert-file",
    ),
    (
        {"cluster_signing_cert_file": "server.crt", "cluster_signing_key_file": "server.key"},
        "--cluster-signing-cert-file server.crt",
        "is not a CA certificate",
    ),
    (
        {"service_account_signing_key_file": "garbage"},
        "--service-account-signing-key-file garbage",
        "neither a PEM private key nor a localkube sa.key",
    ),
    (
        {"service_account_signing_key_file": "short-hmac.key"},
        "--service-account-signing-key-file short-hmac.key",
        "a localkube sa.key has at least 32 bytes",
    ),
    (
        {"service_account_signing_key_file": "ed25519.key"},
        "--service-account-signing-key-file ed25519.key",
        "an Ed25519 key is not supported (RSA or ECDSA)",
    ),
    (
        {"service_account_key_files": ["other-sa.pub"]},
        "--service-account-key-file other-sa.pub",
        "needs --service-account-signing-key-file too",
    ),
    (
        {"service_account_signing_key_file": "sa.key", "service_account_key_files": ["other-sa.pub"]},
        "--service-account-key-file other-sa.pub",
        "none of the keys given verifies the tokens that --service-account-signing-key-file",
    ),
    (
        {"service_account_signing_key_file": "sa.key", "service_account_key_files": ["garbage"]},
        "--service-account-key-file garbage",
        "holds no PEM public key, certificate or private key",
    ),
    (
        {"service_account_signing_key_file": "sa.key", "service_account_key_files": ["ed25519.key"]},
        "--service-account-key-file ed25519.key",
        "an Ed25519 key is not supported",
    ),
    (
        {"service_account_signing_key_file": "hmac.key", "service_account_key_files": ["other-sa.pub"]},
        "--service-account-key-file other-sa.pub",
        "has no public key",
    ),
]


@pytest.mark.parametrize(("names", "where", "problem"), BAD, ids=[f"{w}: {p}" for _, w, p in BAD])
def test_a_file_that_cannot_be_used_is_one_line_naming_flag_and_file(
    files: Files, names: dict[str, str | list[str]], where: str, problem: str
) -> None:
    arguments = {
        flag: [files(n) for n in name] if isinstance(name, list) else files(name) for flag, name in names.items()
    }
    with pytest.raises(GivenFileError) as error:
        load_given_pki(**arguments)  # type: ignore[arg-type]
    flag, name = where.split(" ")
    message = str(error.value)
    assert message.startswith(f"{flag} {files(name)}: "), message
    assert problem in message
    assert "\n" not in message
    assert "PRIVATE KEY" not in message


def test_nothing_given_is_nothing_loaded() -> None:
    given = load_given_pki()
    assert given.serving is None and given.signing_ca is None and given.token_signer is None
    assert given.client_ca == []


def test_a_given_bundle_and_keys_are_loaded(files: Files) -> None:
    bundle = files("bundle.crt")
    bundle.write_bytes(files("ca.crt").read_bytes() + cert_pem(CertificateAuthority.create("second").cert))
    given = load_given_pki(
        tls_cert_file=files("chain.crt"),
        tls_private_key_file=files("server.key"),
        client_ca_file=bundle,
        cluster_signing_cert_file=files("ca.crt"),
        cluster_signing_key_file=files("ca.key"),
        service_account_signing_key_file=files("sa.key"),
        service_account_key_files=[files("other-sa.pub"), files("sa.key")],
    )
    assert len(given.client_ca) == 2
    assert given.serving is not None and len(given.serving.chain) == 2
    assert given.signing_ca is not None and given.signing_ca.cert.subject.rfc4514_string() == "CN=given-ca"
    assert given.token_signer is not None and given.token_signer.verifies_own_tokens
    hmac = load_given_pki(service_account_signing_key_file=files("hmac.key"))
    assert hmac.token_signer is not None


def test_the_serving_ca_is_the_issuer_of_the_given_serving_certificate(files: Files) -> None:
    own = CertificateAuthority.create("own")
    given_ca = files("ca.crt").read_bytes()
    # the issuer as the chain's second certificate
    chain = load_given_pki(tls_cert_file=files("chain.crt"), tls_private_key_file=files("server.key"))
    assert [cert_pem(c) for c in chain.serving_ca(own)] == [given_ca]
    # the issuer as the cluster-signing CA
    signed = load_given_pki(
        tls_cert_file=files("server.crt"),
        tls_private_key_file=files("server.key"),
        cluster_signing_cert_file=files("ca.crt"),
        cluster_signing_key_file=files("ca.key"),
    )
    assert signed.signing_ca is not None
    assert [cert_pem(c) for c in signed.serving_ca(signed.signing_ca)] == [given_ca]
    # the issuer in the client CA bundle
    bundle = load_given_pki(
        tls_cert_file=files("server.crt"), tls_private_key_file=files("server.key"), client_ca_file=files("ca.crt")
    )
    assert [cert_pem(c) for c in bundle.serving_ca(own)] == [given_ca]
    # an issuer nowhere at hand; and no given serving certificate at all: localkube's own CA
    alone = load_given_pki(tls_cert_file=files("server.crt"), tls_private_key_file=files("server.key"))
    assert alone.serving_ca(own) == []
    assert load_given_pki().serving_ca(own) == [own.cert]


def test_given_files_are_only_read(files: Files) -> None:
    before = {path.name: (path.stat().st_mode, path.stat().st_mtime_ns) for path in files.directory.iterdir()}
    load_given_pki(
        cluster_signing_cert_file=files("ca.crt"),
        cluster_signing_key_file=files("ca.key"),
        service_account_signing_key_file=files("sa.key"),
    )
    after = {path.name: (path.stat().st_mode, path.stat().st_mtime_ns) for path in files.directory.iterdir()}
    assert after == before


def test_an_ecdsa_key_signs_tokens(files: Files) -> None:
    key = ec.generate_private_key(ec.SECP384R1())
    path = files("p384.key")
    path.write_bytes(key_pem(key))
    given = load_given_pki(service_account_signing_key_file=path)
    assert given.token_signer is not None
