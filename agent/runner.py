"""One agent from its options to its end: the member client, the control-plane
credentials (retried with backoff until they load), the control-plane client,
then :class:`~agent.manager.Agent` until stopped.

A single ``karmada-agent`` runs this once (an exception ends the process, and
its kubelet restarts it); a fleet runs one per agent with
:meth:`AgentRunner.run_supervised`, which restarts that agent alone with
backoff. :meth:`AgentRunner.state` says what the agent is doing or waiting
for, for ``/readyz?verbose``.
"""

from __future__ import annotations

import asyncio
import logging

from agent.credentials import ControlPlaneCredentials, CredentialsError
from agent.fleet import Backoff, cluster_context, sleep_or_stop
from agent.manager import Agent
from agent.options import Options
from karmada.kube import ClusterConfig, ConfigError, KubeClient, KubeError
from karmada.kube.config import from_flags
from karmada.version import __version__

log = logging.getLogger("agent")


class AgentRunner:
    """Runs one agent; knows its state."""

    def __init__(
        self, options: Options, *, backoff: Backoff | None = None, startup: asyncio.Semaphore | None = None
    ) -> None:
        self.options = options
        self.startup = startup
        self.name = options.cluster_name
        self.backoff = backoff or Backoff()
        self.agent: Agent | None = None
        self.restarts = 0
        self._state = "starting"

    def ready(self) -> bool:
        """Registered, and, when leading, synced (the single agent's readiness)."""
        return self.agent is not None and self.agent.ready()

    def working(self) -> bool:
        """A fleet agent's readiness: registered, leading with caches synced, and its member answering."""
        return self.agent is not None and self.agent.working()

    def state(self) -> str:
        return self.agent.state() if self.agent is not None else self._state

    async def run_once(self, stop: asyncio.Event) -> None:
        """Run until ``stop``; exceptions (a bug, a kubeconfig that cannot be read) propagate."""
        try:
            member_config = from_flags(self.options.kubeconfig, self.options.context)
        except OSError as exc:
            raise ConfigError(f"cannot read {self.options.kubeconfig}: {exc.strerror}") from None
        async with KubeClient(member_config) as member:
            loaded = await self._credentials(member, stop)
            if loaded is None:
                return
            credentials, config = loaded
            async with KubeClient(config) as control_plane:
                log.info(
                    "karmada-agent %s for cluster %s, control plane %s",
                    __version__,
                    self.name,
                    control_plane.config.server,
                )
                self.agent = Agent(self.options, member, control_plane, credentials, startup=self.startup)
                try:
                    await self.agent.run(stop)
                finally:
                    self.agent = None

    async def _credentials(
        self, member: KubeClient, stop: asyncio.Event
    ) -> tuple[ControlPlaneCredentials, ClusterConfig] | None:
        backoff = Backoff(initial=1.0, maximum=10.0)
        while not stop.is_set():
            try:
                credentials = await ControlPlaneCredentials.load(
                    member,
                    self.options.karmada_kubeconfig,
                    self.options.karmada_context,
                    self.options.karmada_kubeconfig_namespace,
                )
                return credentials, credentials.config()
            except (CredentialsError, ConfigError, KubeError) as exc:
                reason = exc.message if isinstance(exc, KubeError) else str(exc)
                delay = backoff.next(0.0)
                self._state = f"control-plane credentials: {reason}"
                log.warning("control-plane credentials: %s; retrying in %.0fs", reason, delay)
                await sleep_or_stop(delay, stop)
        return None

    async def run_supervised(self, stop: asyncio.Event) -> None:
        """Run in this task, named in its log lines; any failure restarts this agent alone, with backoff."""
        loop = asyncio.get_running_loop()
        with cluster_context(self.name):
            while not stop.is_set():
                started = loop.time()
                try:
                    await self.run_once(stop)
                    return
                except ConfigError as exc:
                    reason = f"member kubeconfig: {exc}"
                    delay = self.backoff.next(loop.time() - started)
                    log.error("%s; retrying in %.0fs", reason, delay)
                except Exception as exc:
                    reason = f"failed: {exc!r}"
                    delay = self.backoff.next(loop.time() - started)
                    log.exception("agent failed; restarting it in %.0fs", delay)
                self.restarts += 1
                self._state = f"{reason}; restarting in {delay:.0f}s"
                await sleep_or_stop(delay, stop)
