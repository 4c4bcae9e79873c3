"""Bootstrap tokens as kubeadm and Karmada make them: ``<id>.<secret>`` (6 and
16 characters of ``[a-z0-9]``), stored as Secret ``kube-system/bootstrap-token-<id>``
of type ``bootstrap.kubernetes.io/token``. The API server authenticates one as
user ``system:bootstrap:<id>`` in ``system:bootstrappers`` plus its extra groups.

The token secret is a credential: ``str()`` and ``repr()`` show only the id.
"""

from __future__ import annotations

import base64
import datetime
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

TOKEN_PATTERN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
ID_PATTERN = re.compile(r"^[a-z0-9]{6}$")
ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
SECRET_TYPE = "bootstrap.kubernetes.io/token"
SECRET_PREFIX = "bootstrap-token-"
NAMESPACE = "kube-system"
DEFAULT_GROUP = "system:bootstrappers:karmada:default-cluster-token"
DEFAULT_USAGES = ("signing", "authentication")
DEFAULT_TTL = datetime.timedelta(hours=24)
GROUP_PATTERN = re.compile(r"^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$")


class InvalidToken(ValueError):
    """A token, id or token Secret that does not have the bootstrap-token shape."""


@dataclass(frozen=True)
class BootstrapToken:
    """One token; the secret half is kept out of ``repr``."""

    id: str
    secret: str = field(repr=False)

    @classmethod
    def generate(cls) -> BootstrapToken:
        """A fresh random token."""
        return cls(
            "".join(secrets.choice(ALPHABET) for _ in range(6)),
            "".join(secrets.choice(ALPHABET) for _ in range(16)),
        )

    @classmethod
    def parse(cls, text: str) -> BootstrapToken:
        """``abcdef.0123456789abcdef``; InvalidToken otherwise (without echoing the secret)."""
        match = TOKEN_PATTERN.match(text.strip())
        if not match:
            raise InvalidToken('the token must have the form "[a-z0-9]{6}.[a-z0-9]{16}"')
        return cls(match.group(1), match.group(2))

    @property
    def value(self) -> str:
        """The full ``id.secret`` string, for the command line of ``register``."""
        return f"{self.id}.{self.secret}"

    @property
    def secret_name(self) -> str:
        return SECRET_PREFIX + self.id

    def __str__(self) -> str:
        return f"{self.id}.<redacted>"


def token_secret(
    token: BootstrapToken,
    *,
    ttl: datetime.timedelta | None = DEFAULT_TTL,
    usages: tuple[str, ...] = DEFAULT_USAGES,
    groups: tuple[str, ...] = (DEFAULT_GROUP,),
    description: str = "",
    now: datetime.datetime | None = None,
) -> dict[str, Any]:
    """The Secret that makes ``token`` valid; ``ttl`` None or zero never expires."""
    for group in groups:
        if not GROUP_PATTERN.match(group):
            raise InvalidToken(f'group "{group}" must match {GROUP_PATTERN.pattern}')
    for usage in usages:
        if usage not in ("signing", "authentication"):
            raise InvalidToken(f'usage "{usage}" is not one of signing, authentication')
    data = {"token-id": token.id, "token-secret": token.secret}
    if ttl:
        expires = (now or datetime.datetime.now(datetime.UTC)) + ttl
        data["expiration"] = expires.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if description:
        data["description"] = description
    for usage in usages:
        data[f"usage-bootstrap-{usage}"] = "true"
    if groups:
        data["auth-extra-groups"] = ",".join(groups)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": token.secret_name, "namespace": NAMESPACE},
        "type": SECRET_TYPE,
        "stringData": data,
    }


@dataclass(frozen=True)
class TokenRecord:
    """What ``token list`` shows of one stored token (never its secret)."""

    id: str
    expires: str
    usages: tuple[str, ...]
    groups: tuple[str, ...]
    description: str

    def ttl(self, now: datetime.datetime | None = None) -> str:
        """Time left as kubeadm prints it (``23h``, ``<forever>``, ``<invalid>``)."""
        if not self.expires:
            return "<forever>"
        expiry = datetime.datetime.fromisoformat(self.expires.replace("Z", "+00:00"))
        left = expiry - (now or datetime.datetime.now(datetime.UTC))
        if left.total_seconds() <= 0:
            return "<invalid>"
        hours, rest = divmod(int(left.total_seconds()), 3600)
        if hours >= 1:
            return f"{hours}h"
        return f"{max(rest // 60, 1)}m"


def token_record(secret: dict[str, Any]) -> TokenRecord | None:
    """The token a Secret holds, or None when it is not a bootstrap-token Secret."""
    if secret.get("type") != SECRET_TYPE:
        return None
    data = {key: base64.b64decode(value).decode() for key, value in (secret.get("data") or {}).items()}
    token_id = data.get("token-id", "")
    if not ID_PATTERN.match(token_id) or secret["metadata"]["name"] != SECRET_PREFIX + token_id:
        return None
    usages = tuple(u for u in ("authentication", "signing") if data.get(f"usage-bootstrap-{u}") == "true")
    groups = tuple(g for g in data.get("auth-extra-groups", "").split(",") if g)
    return TokenRecord(token_id, data.get("expiration", ""), usages, groups, data.get("description", ""))
