"""Bootstrap tokens, CA pins, the cluster-info JWS, CSRs: the exact formats
kubeadm, Karmada and kube-controller-manager use."""

from __future__ import annotations

import base64
import datetime
import subprocess
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from karmada.pki import (
    BootstrapToken,
    InvalidToken,
    ca_cert_hash,
    certificate_info,
    client_csr,
    detached_jws,
    jws_matches,
    new_ec_key,
    parse_pins,
    pin_matches,
    random_suffix,
    token_secret,
)
from karmada.pki.bootstrap_tokens import token_record
from karmada.pki.certificates import csr_subject

CONTENT = "Hello from the other side. I must have called a thousand times."


@pytest.mark.parametrize(
    ("content", "token_id", "secret", "expected"),
    [
        (
            CONTENT,
            "joshua",
            "my voice is my passcode",
            "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8",
        ),
        (
            "",
            "joshua",
            "my voice is my passcode",
            "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk",
        ),
        (
            CONTENT,
            "joshua",
            "",
            "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..UfkqvDGiIFxrMnFseDj9LYJOLNrvjW8aHhF71mvvAs8",
        ),
    ],
)
def test_detached_jws_vectors(content: str, token_id: str, secret: str, expected: str) -> None:
    assert detached_jws(content, token_id, secret) == expected
    assert jws_matches(expected, content, token_id, secret)
    assert not jws_matches(expected, content + " ", token_id, secret)


def _self_signed_ca(tmp_path: Path) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    (tmp_path / "ca.crt").write_bytes(pem)
    return pem


def test_ca_pin_equals_the_openssl_recipe(tmp_path: Path) -> None:
    pem = _self_signed_ca(tmp_path)
    recipe = (
        f"openssl x509 -pubkey -noout -in {tmp_path / 'ca.crt'}"
        " | openssl pkey -pubin -outform der | sha256sum | cut -d' ' -f1"
    )
    expected = subprocess.run(["sh", "-c", recipe], capture_output=True, text=True, check=True).stdout.strip()
    assert ca_cert_hash(pem) == f"sha256:{expected}"
    assert pin_matches(pem, [f"sha256:{'0' * 64}", f"sha256:{expected}"])
    assert not pin_matches(pem, [f"sha256:{'0' * 64}"])


@pytest.mark.parametrize(
    ("flags", "result"),
    [
        (["sha256:" + "A" * 64], ["sha256:" + "a" * 64]),
        (["sha256:" + "1" * 64 + ",sha256:" + "2" * 64], ["sha256:" + "1" * 64, "sha256:" + "2" * 64]),
        (["sha256:" + "1" * 64, "sha256:" + "2" * 64], ["sha256:" + "1" * 64, "sha256:" + "2" * 64]),
    ],
)
def test_parse_pins(flags: list[str], result: list[str]) -> None:
    assert parse_pins(flags) == result


@pytest.mark.parametrize("bad", ["sha1:" + "1" * 40, "sha256:" + "1" * 63, "sha256:" + "g" * 64, "1" * 64])
def test_parse_pins_names_the_bad_pin(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid CA pin"):
        parse_pins([bad])


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("abcdef.0123456789abcdef", True),
        (" abcdef.0123456789abcdef\n", True),
        ("ABCDEF.0123456789abcdef", False),
        ("abcde.0123456789abcdef", False),
        ("abcdef.0123456789abcde", False),
        ("abcdef0123456789abcdef", False),
    ],
)
def test_token_parsing(text: str, ok: bool) -> None:
    if ok:
        token = BootstrapToken.parse(text)
        assert (token.id, token.secret) == ("abcdef", "0123456789abcdef")
        assert "0123456789abcdef" not in repr(token) and "0123456789abcdef" not in str(token)
    else:
        with pytest.raises(InvalidToken) as caught:
            BootstrapToken.parse(text)
        assert "0123456789abcdef" not in str(caught.value)


def test_generated_tokens_and_their_secret() -> None:
    token = BootstrapToken.generate()
    assert BootstrapToken.parse(token.value) == token
    now = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    secret = token_secret(token, now=now, description="for member1")
    assert secret["metadata"] == {"name": f"bootstrap-token-{token.id}", "namespace": "kube-system"}
    assert secret["type"] == "bootstrap.kubernetes.io/token"
    assert secret["stringData"] == {
        "token-id": token.id,
        "token-secret": token.secret,
        "expiration": "2026-01-03T03:04:05Z",
        "description": "for member1",
        "usage-bootstrap-signing": "true",
        "usage-bootstrap-authentication": "true",
        "auth-extra-groups": "system:bootstrappers:karmada:default-cluster-token",
    }
    assert "expiration" not in token_secret(token, ttl=None)["stringData"]
    with pytest.raises(InvalidToken, match="group"):
        token_secret(token, groups=("admins",))
    stored = {
        "metadata": secret["metadata"],
        "type": secret["type"],
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in secret["stringData"].items()},
    }
    record = token_record(stored)
    assert record is not None and record.id == token.id
    assert record.usages == ("authentication", "signing")
    assert record.ttl(now) == "24h" and record.ttl(now + datetime.timedelta(days=2)) == "<invalid>"
    assert record.ttl(now + datetime.timedelta(hours=23, minutes=30)) == "30m"


def test_client_csr_and_certificate_facts() -> None:
    key = new_ec_key()
    csr = client_csr(key, "system:karmada:agent:member1", ["system:karmada:agents"])
    assert csr_subject(csr) == ("system:karmada:agent:member1", ("system:karmada:agents",), False)
    request = x509.load_pem_x509_csr(csr)
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(request.subject)
        .issuer_name(request.subject)
        .public_key(request.public_key())
        .serial_number(7)
        .not_valid_before(now - datetime.timedelta(hours=8))
        .not_valid_after(now + datetime.timedelta(hours=2))
        .sign(key, hashes.SHA256())
    )
    info = certificate_info(cert.public_bytes(serialization.Encoding.PEM))
    assert info.common_name == "system:karmada:agent:member1"
    assert info.organizations == ("system:karmada:agents",)
    assert info.remaining_fraction(now) == pytest.approx(0.2, abs=0.01)
    suffix = random_suffix()
    assert len(suffix) == 5 and suffix.isalnum()
