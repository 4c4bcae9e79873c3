"""Who is calling the cluster proxy, as the Karmada API server would say.

Two ways, kube-apiserver's own: a client certificate the TLS layer verified
against the API server's client CA (user from the common name, groups from the
organizations), or a bearer token the API server recognises (a TokenReview).
Reviews are kept for :data:`TOKEN_TTL` seconds, keyed by a hash of the token,
so a ``watch`` or a burst of ``get``\\ s costs one review; no token is kept or
logged.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from karmada.kube import KubeClient, KubeError
from karmada.kube.resources import TOKEN_REVIEWS
from karmada.tunnel.wire import Caller

TOKEN_TTL = 10.0
MAX_CACHED = 4096


class AuthenticationError(Exception):
    """The caller's credentials are not good (401), or could not be checked (503 with ``unavailable``)."""

    def __init__(self, message: str, unavailable: bool = False) -> None:
        super().__init__(message)
        self.unavailable = unavailable


def caller_of_certificate(peercert: dict[str, Any] | None) -> Caller | None:
    """User and groups of a verified client certificate (``ssl``'s decoded form), or None."""
    if not peercert:
        return None
    user = ""
    groups: list[str] = []
    for rdn in peercert.get("subject") or ():
        for key, value in rdn:
            if key == "commonName":
                user = value
            elif key == "organizationName":
                groups.append(value)
    if not user:
        return None
    return Caller(user, (*groups, "system:authenticated"))


def bearer_token(authorization: str) -> str:
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


class TokenAuthenticator:
    """Bearer tokens checked by the Karmada API server's TokenReview."""

    def __init__(self, client: KubeClient, ttl: float = TOKEN_TTL) -> None:
        self.client = client
        self.ttl = ttl
        self._cache: dict[str, tuple[float, Caller | None]] = {}

    async def authenticate(self, token: str) -> Caller:
        key = hashlib.sha256(token.encode()).hexdigest()
        now = time.monotonic()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            caller = cached[1]
        else:
            caller = await self._review(token)
            if len(self._cache) >= MAX_CACHED:
                self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
            self._cache[key] = (now + self.ttl, caller)
        if caller is None:
            raise AuthenticationError("Unauthorized")
        return caller

    async def _review(self, token: str) -> Caller | None:
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        try:
            answer = await self.client.create(TOKEN_REVIEWS, review)
        except KubeError as exc:
            raise AuthenticationError(f"cannot review the token: {exc.message}", unavailable=True) from None
        status = answer.get("status") or {}
        if not status.get("authenticated"):
            return None
        user = status.get("user") or {}
        extra = tuple(
            sorted((str(k), tuple(str(v) for v in values or ())) for k, values in (user.get("extra") or {}).items())
        )
        return Caller(
            str(user.get("username") or ""), tuple(user.get("groups") or ()), str(user.get("uid") or ""), extra
        )
