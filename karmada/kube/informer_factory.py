"""Shared watch caches: one :class:`Informer` per (resource, namespace, label selector)
in a process, however many controllers read it (client-go's shared informer factory).

Controllers ask the factory for the caches they read while they are set up; the
manager then starts every cache and waits until all are synced before any
controller runs. A cache asked for after :meth:`start` (a kind a new policy
selects, say) starts at once; its caller awaits ``wait_synced`` itself. All of
it runs on the event loop's one thread, so no locking is needed.
"""

from __future__ import annotations

from karmada.kube.client import KubeClient
from karmada.kube.informer import Informer
from karmada.kube.resources import Resource

Key = tuple[str, str, str, str | None, str]


class InformerFactory:
    """Hands out shared informers and starts and stops them together."""

    def __init__(self, client: KubeClient, resync_period: float = 0.0) -> None:
        self.client = client
        # the base resync period (Karmada's --resync-period) of a cache asked for without one
        self.resync_period = resync_period
        self._informers: dict[Key, Informer] = {}
        self._users: dict[Key, int] = {}  # how many times each cache was asked for and not released
        self._started = False

    def informer(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str = "",
        resync_period: float = 0.0,
    ) -> Informer:
        """The cache of ``resource`` (in ``namespace``, matching ``label_selector``), shared.

        Asked for twice before :meth:`start` with different resync periods, the cache
        resyncs at the shorter one (a running cache keeps the period it started with).
        """
        key = (resource.group, resource.version, resource.plural, namespace, label_selector)
        resync_period = resync_period or self.resync_period
        self._users[key] = self._users.get(key, 0) + 1
        found = self._informers.get(key)
        if found is None:
            found = Informer(
                self.client,
                resource,
                namespace=namespace,
                label_selector=label_selector,
                resync_period=resync_period,
            )
            self._informers[key] = found
            if self._started:
                found.start()
        elif not self._started and resync_period and (not found.resync_period or resync_period < found.resync_period):
            found.resync_period = resync_period
        return found

    def __len__(self) -> int:
        return len(self._informers)

    async def release(self, informer: Informer) -> None:
        """One reader is done with ``informer`` (as asked for once); the last one stops the cache.

        For caches made on demand (the kinds a policy selects): when no policy selects
        a kind any more, its watch ends unless another controller still reads it."""
        key = next((k for k, found in self._informers.items() if found is informer), None)
        if key is None:
            return
        self._users[key] = self._users.get(key, 1) - 1
        if self._users[key] > 0:
            return
        del self._users[key]
        del self._informers[key]
        await informer.stop()

    async def start(self, sync_timeout: float | None = 60.0) -> None:
        """Start every cache and wait until each has listed its objects."""
        self._started = True
        for informer in list(self._informers.values()):
            informer.start()
        for informer in list(self._informers.values()):
            await informer.wait_synced(sync_timeout)

    async def stop(self) -> None:
        self._started = False
        for informer in self._informers.values():
            await informer.stop()
        self._informers.clear()
        self._users.clear()
