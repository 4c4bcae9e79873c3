"""The credentials requests carry, kept fresh as client-go keeps them.

- A static token or client certificate: as configured.
- A token file (``tokenFile``, the in-cluster service-account token): read
  at first use, again once ``token_file_period`` has passed (client-go's
  ``CachedFileTokenSource`` re-reads once a minute), and after a 401; a file
  that cannot be read keeps the last token, as client-go does.
- An exec credential plugin: run at first use, again once the credential's
  ``status.expirationTimestamp`` has passed, and after a 401, once per burst:
  a 401 to a request sent with credentials that were replaced meanwhile
  does not run the plugin again (client-go's exec authenticator).

One :class:`Authenticator` per :class:`~karmada.kube.client.KubeClient`, used
from any task of its loop; refreshes are serialised by a lock, so requests
that fail together run the plugin (or read the file) once. Tokens are never
logged.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from dataclasses import dataclass

from karmada.kube.config import Credentials

log = logging.getLogger("karmada.kube.auth")


class CredentialError(Exception):
    """The credentials cannot be obtained (plugin failed, token file unreadable)."""


@dataclass(frozen=True)
class Issued:
    """What requests authenticate with right now."""

    token: str | None = None
    cert_pem: bytes | None = None
    key_pem: bytes | None = None


class Authenticator:
    """The current :class:`Issued` credentials of one :class:`Credentials`."""

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials
        self.refreshes = 0
        self._issued: Issued | None = None
        self._fresh_until: float | None = None  # loop time; None: until a 401
        self._expires: datetime.datetime | None = None  # an exec credential's expirationTimestamp
        self._lock = asyncio.Lock()

    @property
    def refreshable(self) -> bool:
        return self.credentials.exec_config is not None or self.credentials.token_file is not None

    @property
    def issued(self) -> Issued:
        """The credentials last obtained (static ones without a refresh)."""
        if self._issued is None:
            creds = self.credentials
            return Issued(creds.token, creds.client_cert_pem, creds.client_key_pem)
        return self._issued

    def _stale(self) -> bool:
        if not self.refreshable:
            return False
        if self._issued is None:
            return True
        if self._expires is not None and datetime.datetime.now(datetime.UTC) >= self._expires:
            return True
        return self._fresh_until is not None and asyncio.get_running_loop().time() >= self._fresh_until

    async def current(self) -> Issued:
        """Fresh credentials: refreshed first when due."""
        if not self._stale():
            return self.issued
        async with self._lock:
            if self._stale():
                await self._refresh()
        return self.issued

    async def unauthorized(self, token: str | None) -> bool:
        """A request sent with ``token`` got 401: refresh unless that already happened
        since; whether the credentials to use now differ from ``token``."""
        if not self.refreshable:
            return False
        async with self._lock:
            if self.issued.token == token:
                try:
                    await self._refresh()
                except CredentialError as exc:
                    log.warning("refreshing credentials after 401 Unauthorized failed: %s", exc)
                    return False
        return self.issued.token != token

    async def _refresh(self) -> None:
        creds = self.credentials
        self.refreshes += 1
        if creds.exec_config is not None:
            self._issued, self._expires = await run_exec_plugin(creds)
            return
        assert creds.token_file is not None
        try:
            token = creds.token_file.read_text().strip()
        except OSError as exc:
            if self._issued is None:
                raise CredentialError(f"cannot read token file {creds.token_file}: {exc.strerror}") from None
            log.warning("cannot re-read token file %s (%s); keeping the last token", creds.token_file, exc.strerror)
            token = self._issued.token or ""
        if not token:
            raise CredentialError(f"token file {creds.token_file} is empty")
        self._issued = Issued(token, creds.client_cert_pem, creds.client_key_pem)
        self._fresh_until = asyncio.get_running_loop().time() + creds.token_file_period


async def run_exec_plugin(credentials: Credentials) -> tuple[Issued, datetime.datetime | None]:
    """Run the exec credential plugin once (via kubernetes_asyncio, imported only when
    a kubeconfig needs it): its token or client certificate and expiry."""
    from kubernetes_asyncio.config.config_exception import ConfigException
    from kubernetes_asyncio.config.exec_provider import ExecProvider
    from kubernetes_asyncio.config.kube_config import ConfigNode

    try:
        status = await ExecProvider(ConfigNode("exec", credentials.exec_config)).run()
    except ConfigException as exc:
        raise CredentialError(f"exec credential plugin: {exc}") from None
    if not isinstance(status, dict):
        raise CredentialError("exec credential plugin: status is not an object")
    token = status.get("token") or None
    cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
    if not token and not cert:
        raise CredentialError("exec credential plugin returned neither a token nor a client certificate")
    if bool(cert) != bool(key):
        raise CredentialError("exec credential plugin returned only one of client certificate and key")
    expires = None
    if status.get("expirationTimestamp"):
        try:
            expires = datetime.datetime.fromisoformat(str(status["expirationTimestamp"]).replace("Z", "+00:00"))
        except ValueError:
            raise CredentialError("exec credential plugin: expirationTimestamp is not an RFC 3339 time") from None
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=datetime.UTC)
    issued = Issued(
        token or credentials.token,
        cert.encode() if cert else credentials.client_cert_pem,
        key.encode() if key else credentials.client_key_pem,
    )
    return issued, expires
