"""Service-account tokens (TokenRequest) and their authentication.

Tokens are JWTs signed with a per-server HMAC key (HS256): clients never
verify them, and the server accepts one only while its ServiceAccount (same
uid) exists and the token has not expired.

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

from localkube.auth import Identity, with_authenticated
from localkube.errors import bad_request, field_invalid, invalid, not_found
from localkube.private_files import narrow, write_private

if TYPE_CHECKING:
    from localkube.store import Store

Obj = dict[str, Any]

KEY_FILE = "sa.key"
KEY_BYTES = 32


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenSigner:
    """The signing key of one server: signs the tokens it issues, verifies those it is shown."""

    def __init__(self, key: bytes) -> None:
        if len(key) < KEY_BYTES:
            raise ValueError(f"a service-account key has at least {KEY_BYTES} bytes")
        self._key = key

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
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        return f"{header}.{payload}.{self._sign(f'{header}.{payload}')}", now + lifetime

    def verify(self, store: Store, token: str) -> Identity | None:
        """The ServiceAccount a token of this server proves, or None."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        if not hmac.compare_digest(self._sign(f"{parts[0]}.{parts[1]}"), parts[2]):
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
