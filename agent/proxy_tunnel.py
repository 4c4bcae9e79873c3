"""The agent's cluster-proxy tunnel (``--cluster-proxy-server``), while it leads.

Proxied requests go to the member with the credentials of the ServiceAccount
``karmada-agent-impersonator`` that ``register`` creates beside the agent: it may
impersonate users, groups, service accounts, UIDs and extras and do nothing
else, so a request reaches the member only as its caller. Its token comes from
the TokenRequest API and is renewed before it expires. An agent installed
without that account (started by hand, or registered by an older version)
logs a warning and uses its own member credentials, impersonating all the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Callable

from karmada.kube import ClusterConfig, Credentials, KubeClient, KubeError
from karmada.kube.objects import service_account_token
from karmada.registration.member import PROXY_IMPERSONATOR
from karmada.tunnel.dialer import TunnelDialer

log = logging.getLogger("agent.proxy_tunnel")

TOKEN_SECONDS = 3600
RENEW_AFTER = 0.8  # of the token's life


class ProxyTunnel:
    def __init__(
        self,
        server: str,
        cluster: str,
        namespace: str,
        member: KubeClient,
        control_plane: Callable[[], ClusterConfig],
    ) -> None:
        self.server = server
        self.cluster = cluster
        self.namespace = namespace
        self.member = member
        self.control_plane = control_plane
        self.dialer: TunnelDialer | None = None

    async def _token(self) -> str | None:
        """A token of the impersonator account; None when the account is missing."""
        try:
            return await service_account_token(self.member, self.namespace, PROXY_IMPERSONATOR, TOKEN_SECONDS)
        except KubeError as exc:
            if exc.status != 404:
                raise
            return None

    async def run(self) -> None:
        token = await self._token()
        if token is None:
            log.warning(
                "ServiceAccount %s/%s not found in the member: the cluster proxy uses the agent's own member "
                "credentials (still impersonating each caller); register the cluster again to narrow them",
                self.namespace,
                PROXY_IMPERSONATOR,
            )
            config = self.member.config
        else:
            config = dataclasses.replace(self.member.config, credentials=Credentials(token=token))
        async with KubeClient(config) as client:
            self.dialer = TunnelDialer(self.server, self.cluster, self.control_plane, client)
            renewal = asyncio.get_running_loop().create_task(self._renew(client)) if token else None
            try:
                await self.dialer.run()
            finally:
                if renewal is not None:
                    renewal.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await renewal

    async def _renew(self, client: KubeClient) -> None:
        delay = TOKEN_SECONDS * RENEW_AFTER
        while True:
            await asyncio.sleep(delay)
            try:
                token = await self._token()
            except KubeError as exc:
                log.warning("cannot renew the cluster proxy's member token: %s; retrying in 30s", exc.message)
                delay = 30.0
                continue
            if token is not None:
                client.set_token(token)  # streams open now (a `logs -f`) go on
            delay = TOKEN_SECONDS * RENEW_AFTER
