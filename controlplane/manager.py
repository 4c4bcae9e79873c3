"""Wiring of the control plane: one API client, watch caches, controllers.

Only the elected leader runs controllers. While campaigning nothing is
cached; on election the caches list and watch, controllers start once they
are synced, and on lost leadership everything stops and the process
campaigns again, so a standby replica takes over within a lease duration
(at once after a clean shutdown, which releases the Lease). Background loops
(the health monitor) run under a :class:`~karmada.kube.supervise.Supervisor`:
one that fails is logged and restarted with backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import uuid
from typing import Any

from controlplane.agent_approver import AgentApprover
from controlplane.cluster_controller import ClusterController
from controlplane.cluster_health import HealthMonitor
from controlplane.options import Options
from karmada.api.keys import NAMESPACE_KARMADA_CLUSTER, SYSTEM_LABEL
from karmada.api.names import cluster_of_execution_space
from karmada.kube import EventRecorder, Informer, KubeClient, LeaderElector
from karmada.kube.controller import Controller
from karmada.kube.resources import CLUSTERS, CSRS, LEASES, NAMESPACES
from karmada.kube.supervise import Supervisor

log = logging.getLogger("controlplane")


class ControlPlane:
    """Everything ``karmada-controlplane`` runs against one API server."""

    def __init__(self, client: KubeClient, options: Options) -> None:
        self.client = client
        self.options = options
        self.identity = f"{socket.gethostname()}_{uuid.uuid4()}"
        self.supervisor: Supervisor | None = None  # the background loops while leading

    async def run(self, stop: asyncio.Event) -> None:
        """Lead (or campaign) until ``stop`` is set."""
        stopper = asyncio.get_running_loop().create_task(stop.wait())
        try:
            while not stop.is_set():
                if self.options.leader_elect:
                    elector = LeaderElector(
                        self.client,
                        self.options.leader_elect_resource_namespace,
                        self.options.leader_elect_resource_name,
                        self.identity,
                        lease_duration=self.options.leader_elect_lease_duration,
                        renew_deadline=self.options.leader_elect_renew_deadline,
                        retry_period=self.options.leader_elect_retry_period,
                    )
                    campaign = asyncio.get_running_loop().create_task(elector.run(self.lead))
                else:
                    campaign = asyncio.get_running_loop().create_task(self.lead())
                await asyncio.wait({campaign, stopper}, return_when=asyncio.FIRST_COMPLETED)
                if not campaign.done():
                    campaign.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await campaign
        finally:
            stopper.cancel()

    async def lead(self) -> None:
        """Run the enabled controllers until cancelled."""
        options = self.options
        recorder = EventRecorder(self.client, "karmada-controlplane")
        clusters = Informer(self.client, CLUSTERS, resync_period=60)
        informers = [clusters]
        controllers: list[Controller[str]] = []
        supervisor = self.supervisor = Supervisor()
        if "cluster" in options.controllers:
            namespaces = Informer(self.client, NAMESPACES, label_selector=f"{SYSTEM_LABEL}=true")
            leases = Informer(self.client, LEASES, namespace=NAMESPACE_KARMADA_CLUSTER)
            informers += [namespaces, leases]
            cluster_controller = ClusterController(
                self.client, clusters, namespaces, recorder, cleanup_check_interval=options.cleanup_check_interval
            )
            reconciler: Controller[str] = Controller("cluster", cluster_controller.reconcile)
            clusters.add_handler(lambda kind, obj, old: reconciler.enqueue(obj["metadata"]["name"]))

            def namespace_changed(kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
                owner = cluster_of_execution_space(obj["metadata"]["name"])
                if owner is not None and kind == "DELETED":
                    reconciler.enqueue(owner)

            namespaces.add_handler(namespace_changed)
            controllers.append(reconciler)
            monitor = HealthMonitor(
                self.client,
                clusters,
                leases,
                monitor_period=options.cluster_monitor_period,
                grace_period=options.cluster_monitor_grace_period,
                startup_grace_period=options.cluster_startup_grace_period,
            )
        if "agentcsrapproving" in options.controllers:
            csrs = Informer(self.client, CSRS)
            informers.append(csrs)
            approver = AgentApprover(self.client, csrs, recorder, options.cluster_monitor_grace_period)
            approving: Controller[str] = Controller("agentcsrapproving", approver.reconcile)
            csrs.add_handler(lambda kind, obj, old: approving.enqueue(obj["metadata"]["name"]))
            controllers.append(approving)
        try:
            for informer in informers:
                informer.start()
            for informer in informers:
                await informer.wait_synced(60)
            for controller in controllers:
                controller.start()
            if "cluster" in options.controllers:
                supervisor.start("cluster-health-monitor", monitor.run)
            log.info("controllers running: %s", ", ".join(options.controllers))
            await supervisor.wait()
        finally:
            await supervisor.stop()
            self.supervisor = None
            for controller in controllers:
                await controller.stop()
            for informer in informers:
                await informer.stop()
