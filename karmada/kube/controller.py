"""The reconcile loop every controller runs: keys from a de-duplicating work
queue, ``workers`` tasks calling ``reconcile(key)``.

``reconcile`` is level-triggered and idempotent: it reads caches, converges
the server towards what it wants and returns ``None`` when done, or a number
of seconds after which to look again. An exception is logged (one line,
without the object's data) and the key comes back with exponential backoff,
so one bad object never stops the others from being served.

Each controller's queue exports the work-queue metrics under the controller's
name, and each reconcile counts in controller-runtime's
``controller_runtime_reconcile_total{controller,result}`` (success, error,
requeue_after), ``_errors_total`` and ``_time_seconds``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable
from typing import Any, Generic, TypeVar

from karmada import metrics
from karmada.kube.client import KubeError
from karmada.kube.informer import Informer
from karmada.kube.ratelimit import BASE_DELAY, MAX_DELAY
from karmada.kube.workqueue import ShutDown, WorkQueue

K = TypeVar("K", bound=Hashable)
Obj = dict[str, Any]
log = logging.getLogger("karmada.kube.controller")


class Controller(Generic[K]):
    """Run ``reconcile`` for queued keys until :meth:`stop`."""

    def __init__(
        self,
        name: str,
        reconcile: Callable[[K], Awaitable[float | None]],
        *,
        workers: int = 1,
        base_delay: float = BASE_DELAY,
        max_delay: float = MAX_DELAY,
    ) -> None:
        self.name = name
        self.reconcile = reconcile
        self.workers = workers
        self.queue: WorkQueue[K] = WorkQueue(base_delay=base_delay, max_delay=max_delay, name=name)
        self._tasks: list[asyncio.Task[None]] = []

    def enqueue(self, key: K) -> None:
        self.queue.add(key)

    def watches(
        self, informer: Informer, keys: Callable[[str, Obj, Obj | None], Iterable[K]]
    ) -> Callable[[str, Obj, Obj | None], None]:
        """Reconcile the keys ``keys`` maps each event of ``informer`` to (controller-runtime's
        For/Owns/Watches: the object itself, its owner, or whatever depends on it).

        Returns the handler added, for ``informer.remove_handler`` when the watch ends."""

        def handler(kind: str, obj: Obj, old: Obj | None) -> None:
            for key in keys(kind, obj, old):
                self.queue.add(key)

        informer.add_handler(handler)
        return handler

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._worker(), name=f"{self.name}-{i}") for i in range(self.workers)]

    async def stop(self, grace: float = 5.0, *, drain: bool = True) -> None:
        """Finish the keys already queued or in flight (for ``grace`` seconds at most), then stop.

        Without ``drain`` (a lost Lease: another leader may write already) the workers are
        cancelled at once, a reconcile in flight included; so they are too when the drain
        itself is cancelled."""
        try:
            if drain:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(grace):
                        await self.queue.shutdown(drain=True)
        finally:
            await self.queue.shutdown()
            tasks, self._tasks = self._tasks, []
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks)

    async def _worker(self) -> None:
        while True:
            try:
                key = await self.queue.get()
            except ShutDown:
                return
            started = time.perf_counter()
            result = "error"
            try:
                again = await self.reconcile(key)
            except asyncio.CancelledError:
                result = ""
                raise
            except KubeError as exc:
                delay = self.queue.add_rate_limited(key)
                log.warning("%s: %s: %s (%s); retrying in %.2fs", self.name, key, exc.reason, exc.message, delay)
            except Exception:
                delay = self.queue.add_rate_limited(key)
                log.exception("%s: %s failed; retrying in %.2fs", self.name, key, delay)
            else:
                result = "success" if again is None else "requeue_after"
                self.queue.forget(key)
                if again is not None:
                    self.queue.add_after(key, again)
            finally:
                self.queue.done(key)
                if result:  # a cancelled reconcile did not finish: not counted
                    metrics.RECONCILE_TIME.labels(self.name).observe(time.perf_counter() - started)
                    metrics.RECONCILE_TOTAL.labels(self.name, result).inc()
                    if result == "error":
                        metrics.RECONCILE_ERRORS.labels(self.name).inc()
