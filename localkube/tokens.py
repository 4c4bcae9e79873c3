"""Service-account tokens (TokenRequest) and their authentication.

Tokens are JWTs signed with a per-server HMAC key (HS256): clients never
verify them, and the server accepts one only while its ServiceAccount (same
uid) exists and the token has not expired. With a private key given
(``--service-account-signing-key-file``, RSA or ECDSA, as kube-apiserver's) they
are RS256 or ES256/384/512 JWTs with kube's ``kid`` (the key's SHA-256), and a
token verifies with any of the public keys given (``--service-account-key-file``,
during a key rotation the old ones too).

The key is the server's own (:class:`TokenSigner`), like a cluster's
service-account key: two servers in one process never accept each other's
tokens, and with a data directory the key is generated at the first start,
kept there (``sa.key``, 0600) and loaded again, so a restarted server accepts
the tokens it issued before.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from localkube.auth import Identity, with_authenticated
from localkube.errors import bad_request, field_invalid, invalid, not_found
from localkube.private_files import narrow, write_private

if TYPE_CHECKING:
    from localkube.store import Store

Obj = dict[str, Any]

KEY_FILE = "sa.key"
KEY_BYTES = 32

SigningKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
VerifyingKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
# curve -> (JWT alg, hash, bytes of r and of s)
_CURVES: dict[str, tuple[str, type[hashes.HashAlgorithm], int]] = {
    "secp256r1": ("ES256", hashes.SHA256, 32),
    "secp384r1": ("ES384", hashes.SHA384, 48),
    "secp521r1": ("ES512", hashes.SHA512, 66),
}


class UnsupportedKeyError(ValueError):
    """A key type service-account tokens cannot be signed or verified with."""


def jwt_algorithm(key: SigningKey | VerifyingKey) -> str:
    """``RS256`` for RSA, ``ES256``/``ES384``/``ES512`` for the NIST curves; anything else is refused."""
    if isinstance(key, rsa.RSAPrivateKey | rsa.RSAPublicKey):
        if key.key_size < 2048:
            raise UnsupportedKeyError(f"an RSA key of {key.key_size} bits is too small (at least 2048)")
        return "RS256"
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) and key.curve.name in _CURVES:
        return _CURVES[key.curve.name][0]
    name = getattr(getattr(key, "curve", None), "name", None) or type(key).__name__
    raise UnsupportedKeyError(f"a {name} key cannot sign service-account tokens (RSA or ECDSA P-256/384/521 can)")


def key_id(key: VerifyingKey) -> str:
    """kube's ``kid``: the unpadded base64url SHA-256 of the key's DER SubjectPublicKeyInfo."""
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return _b64(hashlib.sha256(der).digest())


def _curve_parameters(key: ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) -> tuple[hashes.HashAlgorithm, int]:
    _, hash_type, size = _CURVES[key.curve.name]
    return hash_type(), size


def _signature(key: SigningKey, signed: bytes) -> bytes:
    if isinstance(key, rsa.RSAPrivateKey):
        return key.sign(signed, padding.PKCS1v15(), hashes.SHA256())
    hash_algorithm, size = _curve_parameters(key)
    r, s = decode_dss_signature(key.sign(signed, ec.ECDSA(hash_algorithm)))
    return r.to_bytes(size, "big") + s.to_bytes(size, "big")  # JWS: r || s, not DER


def _verifies(key: VerifyingKey, signed: bytes, signature: bytes) -> bool:
    try:
        if isinstance(key, rsa.RSAPublicKey):
            key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
            return True
        hash_algorithm, size = _curve_parameters(key)
        if len(signature) != 2 * size:
            return False
        r, s = int.from_bytes(signature[:size], "big"), int.from_bytes(signature[size:], "big")
        key.verify(encode_dss_signature(r, s), signed, ec.ECDSA(hash_algorithm))
        return True
    except (InvalidSignature, ValueError):
        return False


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenSigner:
    """The signing key of one server: signs the tokens it issues, verifies those it is shown
    (an HMAC ``key``; see :meth:`asymmetric` for a private key and its public keys)."""

    def __init__(self, key: bytes) -> None:
        if len(key) < KEY_BYTES:
            raise ValueError(f"a service-account key has at least {KEY_BYTES} bytes")
        self._key = key
        self._private: SigningKey | None = None
        self._public: list[tuple[str, VerifyingKey]] = []

    @classmethod
    def asymmetric(cls, private: SigningKey, public: list[VerifyingKey] | None = None) -> TokenSigner:
        """Tokens signed with ``private`` and verified with ``public`` (default: its own public key);
        :class:`UnsupportedKeyError` for a key type JWTs here cannot use."""
        jwt_algorithm(private)
        signer = cls(secrets.token_bytes(KEY_BYTES))  # the HMAC key signs nothing then
        signer._private = private
        signer._public = [(jwt_algorithm(key), key) for key in (public or [private.public_key()])]
        return signer

    @property
    def verifies_own_tokens(self) -> bool:
        """Whether a token this signer issues passes its own verification."""
        if self._private is None:
            return True
        own = key_id(self._private.public_key())
        return any(key_id(key) == own for _, key in self._public)

    @classmethod
    def in_memory(cls) -> TokenSigner:
        """A random key that lives as long as the server (no data directory)."""
        return cls(secrets.token_bytes(KEY_BYTES))

    @classmethod
    def load_or_create(cls, data_dir: Path) -> TokenSigner:
        """The key kept in ``data_dir`` (which must already be private), made at the first start."""
        path = data_dir / KEY_FILE
        if path.exists():
            narrow(path)
            text = path.read_bytes().strip()
            try:
                key = base64.b64decode(text, validate=True)
            except ValueError as exc:
                raise ValueError(f"{path}: not a base64 service-account key") from exc
            if len(key) < KEY_BYTES:
                raise ValueError(f"{path}: a service-account key has at least {KEY_BYTES} bytes")
            return cls(key)
        signer = cls.in_memory()
        write_private(path, base64.b64encode(signer._key) + b"\n")
        return signer

    def _sign(self, signed: str) -> str:
        return _b64(hmac.new(self._key, signed.encode(), hashlib.sha256).digest())

    def issue(self, namespace: str, name: str, uid: str, audiences: list[str], lifetime: int) -> tuple[str, int]:
        now = int(time.time())
        claims = {
            "iss": "https://kubernetes.default.svc.cluster.local",
            "sub": f"system:serviceaccount:{namespace}:{name}",
            "aud": audiences,
            "iat": now,
            "nbf": now,
            "exp": now + lifetime,
            "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
        }
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        if self._private is not None:
            fields = {"alg": jwt_algorithm(self._private), "kid": key_id(self._private.public_key())}
            header = _b64(json.dumps(fields, separators=(",", ":")).encode())
            signature = _b64(_signature(self._private, f"{header}.{payload}".encode()))
            return f"{header}.{payload}.{signature}", now + lifetime
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
        return f"{header}.{payload}.{self._sign(f'{header}.{payload}')}", now + lifetime

    def _signed_by_us(self, parts: list[str]) -> bool:
        if self._private is None:
            return hmac.compare_digest(self._sign(f"{parts[0]}.{parts[1]}"), parts[2])
        try:
            header = json.loads(_unb64(parts[0]))
            signature = _unb64(parts[2])
        except ValueError:
            return False
        if not isinstance(header, dict):
            return False
        signed = f"{parts[0]}.{parts[1]}".encode()
        alg = header.get("alg")
        return any(key_alg == alg and _verifies(key, signed, signature) for key_alg, key in self._public)

    def verify(self, store: Store, token: str) -> Identity | None:
        """The ServiceAccount a token of this server proves, or None."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        if not self._signed_by_us(parts):
            return None
        try:
            claims: dict[str, Any] = json.loads(_unb64(parts[1]))
        except ValueError:
            return None
        if not isinstance(claims, dict) or int(claims.get("exp", 0)) <= time.time():
            return None
        info = claims.get("kubernetes.io") or {}
        namespace = info.get("namespace", "")
        account = info.get("serviceaccount") or {}
        stored = store.get("/serviceaccounts", namespace, account.get("name", ""))
        if stored is None or stored["metadata"].get("uid") != account.get("uid"):
            return None
        return with_authenticated(
            f"system:serviceaccount:{namespace}:{account['name']}",
            ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"],
            account.get("uid", ""),
        )


async def token_request(
    store: Store, signer: TokenSigner, namespace: str, name: str, read_body: Callable[[], Awaitable[Any]]
) -> Obj:
    """``POST serviceaccounts/{name}/token``: the TokenRequest with a signed token
    (``read_body`` decodes the request's body, read only once the account is known)."""
    account = store.get("/serviceaccounts", namespace, name)
    if account is None:
        raise not_found("serviceaccounts", "", name)
    body = await read_body()
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise bad_request("TokenRequest must be an object")
    spec = body.get("spec") or {}
    lifetime = int(spec.get("expirationSeconds") or 3600)
    if lifetime < 600:
        raise invalid(
            "TokenRequest",
            "authentication.k8s.io",
            name,
            [field_invalid("spec.expirationSeconds", lifetime, "may not specify a duration less than 10 minutes")],
        )
    audiences = list(spec.get("audiences") or ["https://kubernetes.default.svc.cluster.local"])
    token, expires = signer.issue(namespace, name, account["metadata"]["uid"], audiences, lifetime)
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
        "spec": {
            "audiences": audiences,
            "expirationSeconds": lifetime,
            "boundObjectRef": spec.get("boundObjectRef"),
        },
        "status": {
            "token": token,
            "expirationTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires)),
        },
    }
