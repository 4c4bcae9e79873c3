"""Bootstrap tokens on a control plane: create, list, delete, and the
``register`` command line a new member runs."""

from __future__ import annotations

import datetime
import shlex

from karmada.kube import KubeClient, KubeError
from karmada.kube.resources import SECRETS
from karmada.pki import BootstrapToken, InvalidToken, token_secret
from karmada.pki.bootstrap_tokens import (
    DEFAULT_GROUP,
    DEFAULT_USAGES,
    ID_PATTERN,
    NAMESPACE,
    SECRET_TYPE,
    TokenRecord,
    token_record,
)
from karmada.pki.pins import pins_for


async def create_token(
    client: KubeClient,
    *,
    ttl_seconds: float = 86400,
    usages: tuple[str, ...] = DEFAULT_USAGES,
    groups: tuple[str, ...] = (DEFAULT_GROUP,),
    description: str = "",
    token: BootstrapToken | None = None,
) -> BootstrapToken:
    """Store a new bootstrap token (``ttl_seconds`` 0: never expires)."""
    token = token or BootstrapToken.generate()
    ttl = datetime.timedelta(seconds=ttl_seconds) if ttl_seconds > 0 else None
    secret = token_secret(token, ttl=ttl, usages=usages, groups=groups, description=description)
    try:
        await client.create(SECRETS, secret, NAMESPACE)
    except KubeError as exc:
        if exc.already_exists:
            raise InvalidToken(f"a bootstrap token with id {token.id} already exists") from None
        raise
    return token


async def list_tokens(client: KubeClient) -> list[TokenRecord]:
    """Every bootstrap token stored on the control plane, by id."""
    secrets = await client.list(SECRETS, NAMESPACE, fieldSelector=f"type={SECRET_TYPE}")
    records = [token_record(item) for item in secrets.get("items") or []]
    return sorted((r for r in records if r is not None), key=lambda r: r.id)


async def delete_token(client: KubeClient, id_or_token: str) -> str:
    """Delete one token given its id or the whole token; the id deleted."""
    token_id = id_or_token.split(".", 1)[0]
    if not ID_PATTERN.match(token_id):
        raise InvalidToken(f'"{token_id}" is not a bootstrap token id ([a-z0-9]{{6}})')
    try:
        await client.delete(SECRETS, f"bootstrap-token-{token_id}", NAMESPACE)
    except KubeError as exc:
        if exc.not_found:
            raise InvalidToken(f'bootstrap token "{token_id}" not found') from None
        raise
    return token_id


def register_command(
    parent: str, server: str, token: BootstrapToken, ca_pem: bytes | None, cluster_proxy_server: str = ""
) -> str:
    """``<parent> register <host:port> --token ... --discovery-token-ca-cert-hash sha256:...``, and
    ``--cluster-proxy-server URL`` when the control plane has a cluster proxy."""
    if not ca_pem:
        raise ValueError(
            "the kubeconfig has no certificate authority for the control plane, so no CA hash can be printed; "
            "use a kubeconfig with certificate-authority-data"
        )
    endpoint = server.removeprefix("https://").rstrip("/")
    pins = ",".join(pins_for(ca_pem))
    parts = [*shlex.split(parent), "register", endpoint, "--token", token.value, "--discovery-token-ca-cert-hash", pins]
    if cluster_proxy_server:
        parts += ["--cluster-proxy-server", cluster_proxy_server]
    return shlex.join(parts)
