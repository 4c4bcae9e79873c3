"""Wiring of the agent: two API clients (its member cluster, and the control
plane with its own certificate), then, while elected, the cluster-status
controller, certificate rotation and the cluster-proxy tunnel.

Start-up waits, with backoff, until the control plane answers and has this
cluster's Cluster object; an outage later is survived by every loop on its
own (caches reconnect, periodic loops retry next tick), never by crashing;
a loop that fails anyway is logged and restarted with backoff by the
:class:`~karmada.kube.supervise.Supervisor` it runs under.

A term ends as the control plane's does: on a clean shutdown (``stop`` set) the
execution controller finishes what is queued while the Lease is still renewed; on
a lost Lease a :class:`~karmada.kube.fence.WriteFence` on both clients (member and
control plane) refuses every write at once and every loop is cancelled without
draining, so two agents of one cluster never apply to its member together.

Readiness (``/readyz``): registered (the Cluster object found), and, while
leading, the caches of the Cluster and of the Works synced. An agent of a
fleet (:mod:`agent.fleet`) is ready only while it is doing its job:
registered, leading with its caches synced, and its member answering its
health probe; :meth:`Agent.state` says what it waits for otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import uuid

from agent.cert_rotation import CertificateRotator
from agent.cluster_spec import NotRegistered, ensure_cluster
from agent.credentials import ControlPlaneCredentials
from agent.options import Options
from agent.proxy_tunnel import ProxyTunnel
from karmada.api.names import execution_space
from karmada.kube import Informer, KubeClient, KubeError, LeaderElector
from karmada.kube.fence import WriteFence
from karmada.kube.resources import CLUSTERS
from karmada.kube.supervise import Supervisor
from karmada.members.cluster_status import ClusterStatusController
from karmada.members.execution import ExecutionController

log = logging.getLogger("agent")


class Agent:
    """One member cluster's agent."""

    def __init__(
        self,
        options: Options,
        member: KubeClient,
        control_plane: KubeClient,
        credentials: ControlPlaneCredentials,
        *,
        startup: asyncio.Semaphore | None = None,
    ) -> None:
        self.options = options
        self.startup = startup  # shared by the agents of a fleet: how many may start their caches at once
        self.member = member
        self.control_plane = control_plane
        self.credentials = credentials
        self.identity = f"{socket.gethostname()}_{uuid.uuid4()}"
        self.supervisor: Supervisor | None = None  # the background loops while leading
        self.registered = False
        self.leading = False
        self.synced = False
        self.waiting = "checking its Cluster on the control plane"  # why it is not registered yet
        self.status: ClusterStatusController | None = None  # while leading, with clusterStatus on
        self._stop: asyncio.Event | None = None  # run()'s: set, a term drains and ends
        self._fence: WriteFence | None = None  # the campaign's: the term's writes stop with its Lease

    def ready(self) -> bool:
        """Registered, and, when leading, synced."""
        return self.registered and (not self.leading or self.synced)

    def member_online(self) -> bool:
        """The last status probe found the member healthy (True before the first, or without clusterStatus)."""
        return self.status is None or self.status.member_healthy is not False

    def working(self) -> bool:
        """Doing its job: registered, leading with its caches synced, its member answering."""
        return self.registered and self.synced and self.member_online()

    def state(self) -> str:
        """What it is doing or waiting for, in a few words."""
        if not self.registered:
            return f"not registered: {self.waiting}"
        if not self.leading:
            namespace = self.options.leader_elect_resource_namespace or execution_space(self.options.cluster_name)
            return f"standby: campaigning for Lease {namespace}/karmada-agent-{self.options.cluster_name}"
        if not self.synced:
            return "leading, caches syncing"
        if not self.member_online():
            return "member cluster not reachable or not healthy"
        return "running"

    async def run(self, stop: asyncio.Event) -> None:
        stopper = asyncio.get_running_loop().create_task(stop.wait())
        self._stop = stop
        try:
            while not stop.is_set():
                work = asyncio.get_running_loop().create_task(self._campaign())
                await asyncio.wait({work, stopper}, return_when=asyncio.FIRST_COMPLETED)
                if not work.done() and not self.synced:
                    work.cancel()  # campaigning or listing: nothing to finish
                # running: lead() saw stop, drains and returns, the elector then releases the Lease
                with contextlib.suppress(asyncio.CancelledError):
                    await work
        finally:
            self._stop = None
            stopper.cancel()

    async def _campaign(self) -> None:
        await self._wait_for_registration()
        if not self.options.leader_elect:
            await self.lead()
            return
        namespace = self.options.leader_elect_resource_namespace or execution_space(self.options.cluster_name)
        lease = f"karmada-agent-{self.options.cluster_name}"
        self._fence = WriteFence(f"{namespace}/{lease}")
        # the election's own connections: renewals never queue behind the agent's own requests
        async with self.control_plane.companion() as election_client:
            elector = LeaderElector(
                election_client,
                namespace,
                lease,
                self.identity,
                lease_duration=self.options.leader_elect_lease_duration,
                renew_deadline=self.options.leader_elect_renew_deadline,
                retry_period=self.options.leader_elect_retry_period,
                fence=self._fence,
            )
            try:
                await elector.run(self.lead)
            finally:
                self._fence = None

    async def _wait_for_registration(self) -> None:
        delay = 1.0
        while True:
            try:
                await ensure_cluster(self.control_plane, self.member, self.options)
                self.registered = True
                return
            except NotRegistered as exc:
                self.waiting = str(exc)
                log.warning("%s; checking again in %.0fs", exc, delay)
            except KubeError as exc:
                # the member (cluster id) or the control plane (the Cluster) failed
                self.waiting = exc.message if exc.status == 0 else f"{exc.reason or exc.status}: {exc.message}"
                log.warning("registration check failed (%s); retrying in %.0fs", self.waiting, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 60.0)

    async def lead(self) -> None:
        """Run the enabled controllers until cancelled (stop at once) or until run()'s ``stop``
        is set (drain, then return)."""
        name = self.options.cluster_name
        fence = self._fence
        # registration writes between terms: the fence guards only a term's writes
        self.control_plane.fence = self.member.fence = fence
        drain = False
        cluster = Informer(self.control_plane, CLUSTERS, field_selector=f"metadata.name={name}")
        supervisor = self.supervisor = Supervisor()
        self.leading, self.synced = True, False
        status = ClusterStatusController(self.control_plane, self.member, cluster, self.options)
        if "clusterStatus" in self.options.controllers:
            self.status = status
        execution: ExecutionController | None = None
        try:
            # in a fleet only a few agents fill their caches at a time: a hundred starting at once
            # would delay each other's leader-election renewals past the renew deadline
            async with self.startup or contextlib.nullcontext():
                cluster.start()
                await cluster.wait_synced(60)
                if "clusterStatus" in self.options.controllers:
                    supervisor.start("cluster-status", status.run)
                enabled = self.options.controllers
                if "execution" in enabled or "workStatus" in enabled:
                    execution = ExecutionController(
                        self.control_plane,
                        self.member,
                        cluster,
                        name,
                        workers=self.options.concurrent_work_syncs,
                        resync_period=self.options.resync_period,
                        apply="execution" in enabled,
                        reflect="workStatus" in enabled,
                    )
                    await execution.start()
                self.synced = True
            if self.options.cluster_proxy_server:
                tunnel = ProxyTunnel(
                    self.options.cluster_proxy_server,
                    name,
                    self.options.karmada_kubeconfig_namespace,
                    self.member,
                    self.credentials.config,
                )
                supervisor.start("cluster-proxy-tunnel", tunnel.run)
            if "certRotation" in self.options.controllers:
                rotator = CertificateRotator(
                    self.control_plane,
                    self.member,
                    self.credentials,
                    checking_interval=self.options.cert_rotation_checking_interval,
                    threshold=self.options.cert_rotation_remaining_time_threshold,
                )
                supervisor.start("cert-rotation", rotator.run)
            log.info("agent for cluster %s running: %s", name, ", ".join(self.options.controllers))
            await supervisor.wait_until(self._stop)
            drain = True
        finally:
            self.leading = self.synced = False
            self.status = None
            if not drain and not (self._stop is not None and self._stop.is_set()):  # not a shutdown while listing
                log.warning("leadership of cluster %s lost: stopping at once, without draining", name)
            stops = [supervisor.stop()] + ([execution.stop(drain=drain)] if execution is not None else [])
            await asyncio.gather(*stops, return_exceptions=True)
            self.supervisor = None
            await cluster.stop()
            for client in (self.control_plane, self.member):
                if client.fence is fence:
                    client.fence = None
