"""Wiring of the control plane: one API client, shared watch caches, the controllers
of :mod:`controlplane.controllers` that ``--controllers`` enables, and the
feature-gated ones (``GATED``) whose gate is on.

Only the elected leader runs controllers. Each leadership term (:meth:`ControlPlane.lead`)
sets the controllers up on a term of the process's one
:class:`~karmada.kube.informer_factory.InformerFactory`, starts the caches they
asked for, and starts the controllers once those are synced; on lost leadership
the controllers stop and the process campaigns again, so a standby replica
takes over within a lease duration (at once after a clean shutdown, which
releases the Lease). Background loops (the health monitor) run under a
:class:`~karmada.kube.supervise.Supervisor`: one that fails is logged and
restarted with backoff.

The caches outlive a term: they start with the first term and keep watching
while the process campaigns again, and the next term's controllers get their
objects replayed as ``ADDED`` instead of listing them. A leader that steps down
because a saturated API server delayed its renewal would otherwise relist
every Work, Cluster and binding on re-election, loading that API server more
and losing the next renewal too. Only the handlers (removed at the end of each
term) and the caches a term made on demand (stopped with it) are per term. A
standby that never led caches nothing: which caches to keep is decided by the
controllers' setup, which runs on election, and a fleet's standbys would
otherwise double the watches the API server serves.

How a term ends decides how it stops. A clean shutdown (``stop`` set: SIGTERM) lets
the controllers finish what is queued, within one grace period for all, while the
Lease is still renewed, then releases it. A lost Lease (another holder, or no
renewal within the renew deadline) stops everything at once, as Karmada's
controller manager exits on ``OnStoppedLeading``: a :class:`~karmada.kube.fence.WriteFence`
on the client refuses every write from the moment the elector gives the term up
(or its renew deadline passes), then every worker and background loop is
cancelled together, without draining.

Readiness (``/readyz``): a standby replica is ready; a leader is ready once its
caches are synced, and not while it lists them after an election.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import uuid

from controlplane.context import Context
from controlplane.controllers import enabled, setup_of
from controlplane.options import Options
from karmada.kube import EventRecorder, KubeClient, LeaderElector
from karmada.kube.election_thread import run_elected
from karmada.kube.fence import WriteFence
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.supervise import Supervisor

log = logging.getLogger("controlplane")


class ControlPlane:
    """Everything ``karmada-controlplane`` runs against one API server."""

    def __init__(self, client: KubeClient, options: Options) -> None:
        self.client = client
        self.options = options
        self.identity = f"{socket.gethostname()}_{uuid.uuid4()}"
        self.supervisor: Supervisor | None = None  # the background loops while leading
        self.leading = False
        self.synced = False
        # the caches kept across leadership terms, while run() runs
        self.informers: InformerFactory | None = None
        self._stop: asyncio.Event | None = None  # run()'s: set, a term drains and ends
        self._fence: WriteFence | None = None  # the campaign's: the next term's writes stop with its Lease

    def ready(self) -> bool:
        """Standby, or leading with every shared cache synced."""
        return not self.leading or self.synced

    async def run(self, stop: asyncio.Event) -> None:
        """Lead (or campaign) until ``stop`` is set."""
        stopper = asyncio.get_running_loop().create_task(stop.wait())
        self.informers = InformerFactory(self.client, self.options.resync_period)
        self._stop = stop
        try:
            while not stop.is_set():
                if self.options.leader_elect:
                    self._fence = WriteFence(
                        f"{self.options.leader_elect_resource_namespace}/{self.options.leader_elect_resource_name}"
                    )
                    # the election on a thread and connections of its own (Karmada's leader-election
                    # client, client-go's goroutine): renewals wait neither behind the controllers'
                    # requests in one pool nor behind a controller step that holds this loop
                    campaign = asyncio.get_running_loop().create_task(
                        run_elected(self.client.config, self._elector, self.lead)
                    )
                else:
                    campaign = asyncio.get_running_loop().create_task(self.lead())
                await asyncio.wait({campaign, stopper}, return_when=asyncio.FIRST_COMPLETED)
                if not campaign.done() and not self.synced:
                    campaign.cancel()  # campaigning or listing: nothing to finish
                # running: lead() saw stop, drains and returns, the elector then releases the Lease
                with contextlib.suppress(asyncio.CancelledError):
                    await campaign
        finally:
            self._stop = self._fence = None
            stopper.cancel()
            await self.informers.stop()
            self.informers = None

    def _elector(self, client: KubeClient) -> LeaderElector:
        return LeaderElector(
            client,
            self.options.leader_elect_resource_namespace,
            self.options.leader_elect_resource_name,
            self.identity,
            lease_duration=self.options.leader_elect_lease_duration,
            renew_deadline=self.options.leader_elect_renew_deadline,
            retry_period=self.options.leader_elect_retry_period,
            fence=self._fence,
        )

    async def lead(self) -> None:
        """Run the enabled controllers until cancelled (one leadership term: stop at once) or
        until run()'s ``stop`` is set (drain, then return)."""
        # called outside run() (tests), a term keeps its caches for itself
        shared = (
            self.informers if self.informers is not None else InformerFactory(self.client, self.options.resync_period)
        )
        context = Context(
            self.client,
            shared.term(),
            EventRecorder(self.client, "karmada-controlplane"),
            self.options,
        )
        names = enabled(self.options)
        # one setup may serve several names (the Push clusters' three): it runs once
        controllers = [c for setup in dict.fromkeys(map(setup_of, names)) for c in setup(context)]
        supervisor = self.supervisor = Supervisor()
        self.leading, self.synced = True, False
        fence = self.client.fence = self._fence
        drain = False  # only a term ended by run()'s stop finishes its work; a cancelled or failed one stops
        try:
            await context.informers.start(sync_timeout=60)
            self.synced = True
            for controller in controllers:
                controller.start()
            for name, loop in context.background:
                supervisor.start(name, loop)
            log.info(
                "controllers running: %s (%d shared caches)",
                ", ".join(names),
                len(context.informers),
            )
            await supervisor.wait_until(self._stop)
            drain = True
        finally:
            self.leading = self.synced = False
            if not drain and not (self._stop is not None and self._stop.is_set()):  # not a shutdown while listing
                log.warning("leadership lost: stopping every controller at once, without draining")
            # all together: no worker writes on while another one drains
            await asyncio.gather(supervisor.stop(), *(c.stop(drain=drain) for c in controllers), return_exceptions=True)
            self.supervisor = None
            await context.recorder.close(grace=2.0 if drain else 0.0)
            await context.informers.stop()
            if shared is not self.informers:
                await shared.stop()
            if self.client.fence is fence:
                self.client.fence = None
            log.info("leadership term ended: every controller stopped (%s)", "drained" if drain else "not drained")
