"""Service-account tokens signed with a given private key (RS256, ES256...) and verified
with the given public keys, as kube-apiserver's --service-account-*-key-file make them."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from localkube.store import Store
from localkube.tokens import TokenSigner, UnsupportedKeyError, jwt_algorithm, key_id

RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())


def _store_with_account() -> Store:
    store = Store()
    store.put(
        "/serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot", "namespace": "ns", "uid": "u-1"}},
        "ADDED",
    )
    return store


def _header(token: str) -> dict[str, str]:
    part = token.split(".", maxsplit=1)[0]
    header: dict[str, str] = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return header


@pytest.mark.parametrize(
    ("key", "alg"),
    [
        (RSA_KEY, "RS256"),
        (EC_KEY, "ES256"),
        (ec.generate_private_key(ec.SECP384R1()), "ES384"),
        (ec.generate_private_key(ec.SECP521R1()), "ES512"),
    ],
    ids=["RSA", "P-256", "P-384", "P-521"],
)
def test_a_token_signed_with_a_private_key_verifies_with_its_public_key(
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey, alg: str
) -> None:
    store = _store_with_account()
    signer = TokenSigner.asymmetric(key)
    token, _ = signer.issue("ns", "robot", "u-1", ["https://kubernetes.default.svc.cluster.local"], 3600)
    assert _header(token) == {"alg": alg, "kid": key_id(key.public_key())}
    identity = signer.verify(store, token)
    assert identity is not None
    assert identity.user == "system:serviceaccount:ns:robot"
    # a server with only the public key accepts it; a server with another key does not
    assert TokenSigner.asymmetric(EC_KEY, [key.public_key()]).verify(store, token) is not None
    assert (
        TokenSigner.asymmetric(key, [ec.generate_private_key(ec.SECP256R1()).public_key()]).verify(store, token) is None
    )


def test_a_rotated_key_keeps_the_old_tokens_valid() -> None:
    store = _store_with_account()
    old, _ = TokenSigner.asymmetric(RSA_KEY).issue("ns", "robot", "u-1", ["a"], 3600)
    rotated = TokenSigner.asymmetric(EC_KEY, [RSA_KEY.public_key(), EC_KEY.public_key()])
    new, _ = rotated.issue("ns", "robot", "u-1", ["a"], 3600)
    assert rotated.verify(store, old) is not None
    assert rotated.verify(store, new) is not None
    assert rotated.verifies_own_tokens
    assert not TokenSigner.asymmetric(EC_KEY, [RSA_KEY.public_key()]).verifies_own_tokens


@pytest.mark.parametrize(
    "tamper",
    [
        lambda t: t[:-4] + ("AAAA" if not t.endswith("AAAA") else "BBBB"),
        lambda t: ".".join([t.split(".")[0], t.split(".")[1][:-2] + "xx", t.split(".")[2]]),
        lambda t: ".".join(["eyJhbGciOiJIUzI1NiJ9", *t.split(".")[1:]]),  # {"alg":"HS256"}
        lambda t: ".".join(["eyJhbGciOiJub25lIn0", t.split(".")[1], ""]),  # {"alg":"none"}
        lambda t: "not-a-jwt",
    ],
    ids=["signature", "payload", "HS256 header", "alg none", "garbage"],
)
def test_a_tampered_token_is_refused(tamper: object) -> None:
    store = _store_with_account()
    signer = TokenSigner.asymmetric(EC_KEY)
    token, _ = signer.issue("ns", "robot", "u-1", ["a"], 3600)
    assert callable(tamper)
    assert signer.verify(store, tamper(token)) is None


def test_the_hmac_signer_still_refuses_asymmetric_tokens() -> None:
    store = _store_with_account()
    token, _ = TokenSigner.asymmetric(EC_KEY).issue("ns", "robot", "u-1", ["a"], 3600)
    assert TokenSigner.in_memory().verify(store, token) is None
    hmac_token, _ = TokenSigner.in_memory().issue("ns", "robot", "u-1", ["a"], 3600)
    assert _header(hmac_token) == {"alg": "HS256", "typ": "JWT"}


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (ed25519.Ed25519PrivateKey.generate(), "cannot sign service-account tokens (RSA or ECDSA P-256/384/521 can)"),
        (ec.generate_private_key(ec.SECP256K1()), "a secp256k1 key cannot sign service-account tokens"),
        (rsa.generate_private_key(public_exponent=65537, key_size=1024), "an RSA key of 1024 bits is too small"),
    ],
    ids=["Ed25519", "secp256k1", "RSA-1024"],
)
def test_other_key_types_are_refused(key: object, message: str) -> None:
    with pytest.raises(UnsupportedKeyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        jwt_algorithm(key)  # type: ignore[arg-type]
