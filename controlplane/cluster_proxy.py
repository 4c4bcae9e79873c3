"""The cluster proxy served from ``karmada-controlplane --cluster-proxy-bind-address``
(one replica: the sandbox) or from ``karmada-cluster-proxy`` (a host install's
Deployment of one replica beside two control-plane replicas, see
:mod:`controlplane.proxy_program`): :class:`~karmada.clusterproxy.server.ClusterProxy`
over HTTPS.

Inside the control plane it runs outside the leader election: a tunnel is a
long-lived connection, and tying it to the Lease would drop every member's
tunnel at each leader change. It needs no lease because it writes nothing: it
reads Clusters (one watch), the Secrets of Push members, and asks the API
server to review tokens and access. It must run in one process per control
plane: an agent's tunnel and a caller's request have to meet in the same one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import ssl
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiohttp import web

from controlplane.push_members import access_key, member_config
from karmada.clusterproxy.server import ClusterProxy, ProxySettings, server_context
from karmada.health_server import parse_bind_address
from karmada.kube import Informer, KubeClient
from karmada.kube.resources import CLUSTERS, SECRETS

log = logging.getLogger("controlplane.cluster_proxy")
Obj = dict[str, Any]


SECRET_RECHECK = 30.0  # seconds a Push member's client is used before its Secrets are read again


class PushMembers:
    """Clients of Push members with their impersonator token. A request reuses its cluster's
    client without reading its Secrets again for :data:`SECRET_RECHECK` seconds (a proxied
    request must not cost two GETs); a changed Cluster or Secret makes a new client."""

    def __init__(self, control_plane: KubeClient, clock: Callable[[], float] = time.monotonic) -> None:
        self.control_plane = control_plane
        self.clock = clock
        # name -> (the Cluster's access key, the Secrets' versions, client, when the Secrets were read)
        self._clients: dict[str, tuple[tuple[object, ...], tuple[str, ...], KubeClient, float]] = {}

    async def client(self, cluster: Obj) -> KubeClient:
        spec = cluster.get("spec") or {}
        name = cluster["metadata"]["name"]
        refs = [spec.get("secretRef") or {}, spec.get("impersonatorSecretRef") or {}]
        if not refs[1].get("name"):
            raise ValueError(f"Push cluster {name} has no spec.impersonatorSecretRef: `kubectl karmada join` sets it")
        if not refs[0].get("name"):
            raise ValueError(f"Push cluster {name} has no spec.secretRef")
        cluster_key: tuple[object, ...] = (
            str(cluster["metadata"].get("uid")),
            *access_key(cluster),
            str(refs[1].get("namespace")),
            str(refs[1]["name"]),
        )
        known = self._clients.get(name)
        if known is not None and known[0] == cluster_key and self.clock() - known[3] < SECRET_RECHECK:
            return known[2]
        access, impersonator = [
            await self.control_plane.get(SECRETS, ref["name"], ref.get("namespace") or "karmada-cluster")
            for ref in refs
        ]
        versions = tuple(str(secret["metadata"].get("resourceVersion")) for secret in (access, impersonator))
        if known is not None and known[:2] == (cluster_key, versions):
            self._clients[name] = (cluster_key, versions, known[2], self.clock())
            return known[2]
        # as Karmada: the member's CA from the cluster's Secret, the token of its impersonator; member_config
        # checks each Secret belongs to this Cluster before a token leaves
        config = member_config(cluster, access)
        impersonating = member_config(cluster, impersonator)
        config = dataclasses.replace(config, credentials=impersonating.credentials)
        if known is not None:
            await known[2].close()
        client = KubeClient(config)
        self._clients[name] = (cluster_key, versions, client, self.clock())
        return client

    async def close(self) -> None:
        for entry in self._clients.values():
            await entry[2].close()
        self._clients.clear()


def check_tls_files(options: Any) -> str | None:
    """One line naming the flag and the file that cannot be used, or None."""
    try:
        server_context(
            options.cluster_proxy_tls_cert_file,
            options.cluster_proxy_tls_private_key_file,
            options.cluster_proxy_client_ca_file,
        )
    except (OSError, ssl.SSLError) as exc:
        for flag, path in (
            ("--cluster-proxy-tls-cert-file", options.cluster_proxy_tls_cert_file),
            ("--cluster-proxy-tls-private-key-file", options.cluster_proxy_tls_private_key_file),
            ("--cluster-proxy-client-ca-file", options.cluster_proxy_client_ca_file),
        ):
            if not os.access(path, os.R_OK):
                return f"{flag} {path}: cannot be read"
        return f"the cluster proxy's TLS files cannot be used: {exc}"
    return None


@contextlib.asynccontextmanager
async def serve_cluster_proxy(
    client: KubeClient,
    bind_address: str,
    cert_file: str,
    key_file: str,
    client_ca_file: str,
    response_timeout: float = 30.0,
) -> AsyncIterator[ClusterProxy | None]:
    """Serve the cluster proxy while the block runs (None when ``bind_address`` is empty or 0)."""
    address = parse_bind_address(bind_address) if bind_address else None
    if address is None:
        yield None
        return
    ssl_context = server_context(cert_file, key_file, client_ca_file)
    clusters = Informer(client, CLUSTERS)
    clusters.start()
    members = PushMembers(client)
    proxy = ClusterProxy(client, clusters.get, members.client, ProxySettings(response_timeout=response_timeout))
    # a caller that hangs up cancels its handler, which resets its tunnel stream (a quiet watch
    # would otherwise hold the stream and the agent's connection to its member until the next event)
    runner = web.AppRunner(
        proxy.application(), access_log=None, handle_signals=False, shutdown_timeout=1.0, handler_cancellation=True
    )
    await runner.setup()
    host, port = address
    site = web.TCPSite(runner, host, port, ssl_context=ssl_context)
    await site.start()
    log.info("cluster proxy serving on %s", bind_address)
    try:
        yield proxy
    finally:
        await proxy.hub.close()
        await runner.cleanup()
        await clusters.stop()
        await members.close()
