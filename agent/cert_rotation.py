"""Renewing the agent's client certificate before it expires, without a restart.

Every ``checking_interval`` the current certificate is examined; when the
share of its lifetime left is at most ``threshold`` a new ECDSA key and a CSR
with the same subject (``system:karmada:agent:<cluster>``, O
``system:karmada:agents``) and lifetime are sent with the agent's own
identity, which the control plane's approver grants through the
``selfclusteragent`` permission. The issued certificate is stored (Secret,
file) and only then does the control-plane client switch to it, at once
(Karmada needs a restart for this step). A store that fails is retried with
backoff (``store_backoff`` doubling to ``max_store_backoff``) with the same
certificate, never a new CSR; the running certificate keeps working meanwhile.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Awaitable, Callable

from agent.credentials import ControlPlaneCredentials
from karmada.kube import KubeClient, KubeError
from karmada.kube.resources import CSRS
from karmada.pki.validity import certificate_validity, remaining_fraction
from karmada.registration.identity import CertificateRefused, agent_csr, wait_for_certificate

log = logging.getLogger("agent.certrotation")


class CertificateRotator:
    """Watches the remaining lifetime of the agent's certificate and renews it."""

    def __init__(
        self,
        control_plane: KubeClient,
        member: KubeClient,
        credentials: ControlPlaneCredentials,
        *,
        checking_interval: float = 300.0,
        threshold: float = 0.2,
        approval_timeout: float = 300.0,
        store_backoff: float = 1.0,
        max_store_backoff: float = 60.0,
        on_rotated: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.control_plane = control_plane
        self.member = member
        self.credentials = credentials
        self.checking_interval = checking_interval
        self.threshold = threshold
        self.approval_timeout = approval_timeout
        self.store_backoff = store_backoff
        self.max_store_backoff = max_store_backoff
        self.on_rotated = on_rotated
        self.rotations = 0

    async def run(self) -> None:
        while True:
            try:
                await self.check()
            except (KubeError, TimeoutError, RotationError) as exc:
                log.warning("certificate rotation failed: %s; retrying in %.0fs", exc, self.checking_interval)
            await asyncio.sleep(self.checking_interval)

    def due(self) -> bool:
        cert = self.credentials.certificate_pem()
        if cert is None:
            return False
        return remaining_fraction(*certificate_validity(cert)) <= self.threshold

    async def check(self) -> bool:
        """Rotate when due; whether it did."""
        if not self.due():
            return False
        await self.rotate()
        return True

    async def rotate(self) -> None:
        cert = self.credentials.certificate_pem()
        if cert is None:
            raise RotationError("the agent's kubeconfig has no client certificate to renew")
        # cryptography loads only now: an agent that never rotates never pays its memory
        from karmada.pki.certificates import certificate_info, client_csr, key_pem, new_ec_key

        info = certificate_info(cert)
        key = new_ec_key()
        request = client_csr(key, info.common_name, list(info.organizations))
        # system:karmada:agent:<cluster> = rotation_csr_name(cluster): the only CSR the agent may read
        name = info.common_name
        body = agent_csr(name, request, max(600, int(info.lifetime.total_seconds())))
        try:
            await self.control_plane.create(CSRS, body)
        except KubeError as exc:
            if not exc.already_exists:
                raise
            await self.control_plane.delete(CSRS, name)  # the previous rotation's
            await self.control_plane.create(CSRS, body)
        log.info("requested a renewed certificate (CSR %s); %s left of the old one", name, _left(info.not_after))
        issued = await self._wait(name)
        await self._store(issued, key_pem(key))
        await self.control_plane.set_config(self.credentials.config())
        self.rotations += 1
        log.info("switched to the renewed certificate, valid until %s", certificate_info(issued).not_after)
        if self.on_rotated is not None:
            await self.on_rotated()

    async def _store(self, cert: bytes, key: bytes) -> None:
        delay = self.store_backoff
        while True:
            try:
                await self.credentials.store(self.member, cert, key)
                return
            except (KubeError, OSError) as exc:
                reason = exc.message if isinstance(exc, KubeError) else exc.strerror
                log.warning(
                    "storing the renewed certificate failed (%s); still using the current one, retrying in %.3gs",
                    reason,
                    delay,
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.max_store_backoff)

    async def _wait(self, name: str) -> bytes:
        try:
            return await wait_for_certificate(self.control_plane, name, self.approval_timeout)
        except CertificateRefused as exc:
            raise RotationError(str(exc)) from None


class RotationError(Exception):
    """The renewed certificate was refused."""


def _left(not_after: datetime.datetime) -> str:
    return str(not_after - datetime.datetime.now(datetime.UTC)).split(".")[0]
