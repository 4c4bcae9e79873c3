"""Shared watch caches: one :class:`Informer` per (resource, namespace, label selector)
in a process, however many controllers read it (client-go's shared informer factory).

Controllers ask the factory for the caches they read while they are set up; the
manager then starts every cache and waits until all are synced before any
controller runs. A cache asked for after :meth:`start` (a kind a new policy
selects, say) starts at once; its caller awaits ``wait_synced`` itself. All of
it runs on the event loop's one thread, so no locking is needed.

Leadership terms (:meth:`InformerFactory.term`): the control plane keeps one
factory for the life of its process and gives each term a view of it, an
:class:`InformerTerm`, which the term's controllers use as their factory. The
caches a term asks for during setup (before :meth:`InformerTerm.start`) keep
running when the term ends, so the next term finds them listed and watching
(controller-runtime's manager runs its caches apart from the election); each
term counts its own uses, and on its end removes every handler added to them
during the term (a new handler gets the cache's objects replayed as ``ADDED``,
see :mod:`karmada.kube.informer`). Caches a term asked for after its start (on
demand) are stopped with it; a kept cache the next term's setup does not ask
for is stopped at that term's start.
"""

from __future__ import annotations

from karmada.kube.client import KubeClient
from karmada.kube.informer import Handler, Informer
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

    def term(self) -> InformerTerm:
        """A view of this factory for one leadership term (see the module docstring)."""
        return InformerTerm(self)

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
            found = self._informers[key] = self._make(key, resource, namespace, label_selector, resync_period)
            if self._started:
                found.start()
        elif not found.running and resync_period and (not found.resync_period or resync_period < found.resync_period):
            found.resync_period = resync_period
        return found

    def existing(self, resource: Resource) -> Informer | None:
        """The synced cache of every ``resource`` object if some reader holds one, without
        becoming a reader (Karmada's ``IsInformerSynced`` before a lister): for controllers that
        read templates whose kind only the detector watches, so that the detector's release
        ends the watch. Callers read from the API when this is None."""
        found = self._informers.get((resource.group, resource.version, resource.plural, None, ""))
        return found if found is not None and found.synced else None

    def _make(
        self, key: Key, resource: Resource, namespace: str | None, label_selector: str, resync_period: float
    ) -> Informer:
        return Informer(
            self.client, resource, namespace=namespace, label_selector=label_selector, resync_period=resync_period
        )

    def __len__(self) -> int:
        return len(self._informers)

    async def release(self, informer: Informer) -> None:
        """One reader is done with ``informer`` (as asked for once); the last one stops the cache.

        For caches made on demand (the kinds a policy selects): when no policy selects
        a kind any more, its watch ends unless another controller still reads it."""
        key = self._key_of(informer)
        if key is None:
            return
        self._users[key] = self._users.get(key, 1) - 1
        if self._users[key] > 0:
            return
        del self._users[key]
        del self._informers[key]
        await self._drop(key, informer)

    def _key_of(self, informer: Informer) -> Key | None:
        return next((k for k, found in self._informers.items() if found is informer), None)

    async def _drop(self, key: Key, informer: Informer) -> None:
        """A cache nobody here reads any more."""
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


class InformerTerm(InformerFactory):
    """One leadership term's factory: its caches come from, and stay in, ``shared``.

    Made by :meth:`InformerFactory.term`; its :meth:`stop` ends the term (the shared
    factory's own ``stop`` stops the kept caches when the process ends). A term is a new
    object each time, so whatever a controller keeps per factory (the interpreters of
    :mod:`controlplane.interpreter`, say) is made afresh, with its handlers, each term.
    """

    def __init__(self, shared: InformerFactory) -> None:
        super().__init__(shared.client, shared.resync_period)
        self.shared = shared
        self._kept: set[Key] = set()  # asked for during setup: outlive the term
        self._handlers_before: dict[Key, tuple[Handler, ...]] = {}  # a cache's handlers when handed out

    def _make(
        self, key: Key, resource: Resource, namespace: str | None, label_selector: str, resync_period: float
    ) -> Informer:
        found = self.shared._informers.get(key)
        if found is None:
            found = self.shared._informers[key] = super()._make(key, resource, namespace, label_selector, resync_period)
        self._handlers_before[key] = found.handlers
        return found

    async def _drop(self, key: Key, informer: Informer) -> None:
        self._kept.discard(key)
        self._handlers_before.pop(key, None)
        if self.shared._informers.get(key) is informer:
            del self.shared._informers[key]
        await informer.stop()

    async def start(self, sync_timeout: float | None = 60.0) -> None:
        """Stop the kept caches this term's setup did not ask for, then start (or, for
        the kept ones, just await) the others."""
        self._kept = set(self._informers)
        for key, informer in list(self.shared._informers.items()):
            if key not in self._informers:
                del self.shared._informers[key]
                await informer.stop()
        await super().start(sync_timeout)

    async def stop(self) -> None:
        """End the term: remove the handlers it added, stop the caches it made on demand."""
        self._started = False
        for key, informer in self._informers.items():
            before = self._handlers_before.get(key, ())
            for handler in informer.handlers:
                if handler not in before:
                    informer.remove_handler(handler)
            if key not in self._kept:
                if self.shared._informers.get(key) is informer:
                    del self.shared._informers[key]
                await informer.stop()
        self._informers.clear()
        self._users.clear()
        self._kept.clear()
        self._handlers_before.clear()
