"""Supervised background tasks: the one way the agent and the control plane
run their long-running loops (health monitor, status, certificate rotation).

A :class:`Supervisor` owns named tasks on the running loop. A task that raises
is logged with its traceback; a task that returns, although it is meant to run
until cancelled, is logged too: never a silent stop. Then, chosen per task:

- ``restart=True``: it starts again after an exponential backoff (``initial_backoff``
  doubling to ``max_backoff``; back to the start once a run lasted
  ``max_backoff`` without failing, as a crash loop's backoff is reset);
- ``restart=False``: the group fails: :meth:`Supervisor.wait` raises
  :class:`TaskFailed`, so the caller stops (in the end the process exits and
  its own supervisor, kubelet or systemd, restarts it).

:meth:`Supervisor.wait` is what a ``lead()`` awaits instead of waiting forever;
:meth:`Supervisor.stop` (or leaving ``async with``) cancels every task and
waits for them to finish.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from types import TracebackType

log = logging.getLogger("karmada.kube.supervise")


class TaskFailed(Exception):
    """A task that must not be restarted failed or stopped."""

    def __init__(self, name: str, cause: BaseException | None) -> None:
        super().__init__(f"{name} failed: {cause!r}" if cause else f"{name} stopped")
        self.name = name
        self.cause = cause


class Supervisor:
    """A group of supervised tasks (see the module docstring)."""

    def __init__(self, *, initial_backoff: float = 1.0, max_backoff: float = 60.0) -> None:
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.restarts: dict[str, int] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._failure: asyncio.Future[TaskFailed] | None = None

    @property
    def names(self) -> list[str]:
        """The tasks still supervised."""
        return [name for name, task in self._tasks.items() if not task.done()]

    def start(self, name: str, run: Callable[[], Awaitable[None]], *, restart: bool = True) -> None:
        """Run ``run()`` as task ``name`` until :meth:`stop`."""
        if name in self._tasks and not self._tasks[name].done():
            raise ValueError(f"task {name} is already running")
        self.restarts[name] = 0
        task = asyncio.get_running_loop().create_task(self._keep(name, run, restart), name=name)
        task.add_done_callback(lambda done: self._ended(name, done))
        self._tasks[name] = task

    def _failed(self) -> asyncio.Future[TaskFailed]:
        if self._failure is None:
            self._failure = asyncio.get_running_loop().create_future()
        return self._failure

    def _ended(self, name: str, task: asyncio.Task[None]) -> None:
        # only a BaseException outside Exception (SystemExit...) ends _keep by itself
        if not task.cancelled() and task.exception() is not None and not self._failed().done():
            self._failed().set_result(TaskFailed(name, task.exception()))

    async def _keep(self, name: str, run: Callable[[], Awaitable[None]], restart: bool) -> None:
        loop = asyncio.get_running_loop()
        delay = self.initial_backoff
        while True:
            started = loop.time()
            failure: Exception | None = None
            try:
                await run()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failure = exc
            if loop.time() - started >= self.max_backoff:
                delay = self.initial_backoff
            what = "failed" if failure is not None else "stopped although it should run until cancelled"
            if not restart:
                log.error("%s %s", name, what, exc_info=failure)
                if not self._failed().done():
                    self._failed().set_result(TaskFailed(name, failure))
                return
            log.error("%s %s; restarting in %.3gs", name, what, delay, exc_info=failure)
            await asyncio.sleep(delay)
            self.restarts[name] += 1
            delay = min(delay * 2, self.max_backoff)

    async def wait(self) -> None:
        """Until cancelled; raises :class:`TaskFailed` when a task that is not restarted ends."""
        failure = await asyncio.shield(self._failed())
        raise failure

    async def wait_until(self, stop: asyncio.Event | None) -> None:
        """Until ``stop`` is set (returns) or cancelled; raises :class:`TaskFailed` as :meth:`wait`."""
        loop = asyncio.get_running_loop()
        failed = loop.create_task(self.wait())
        waits: set[asyncio.Task[None]] = {failed}
        if stop is not None:
            waits.add(loop.create_task(self._stopped(stop)))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waits:
                task.cancel()
        if failed.done() and not failed.cancelled():
            failed.result()

    @staticmethod
    async def _stopped(stop: asyncio.Event) -> None:
        await stop.wait()

    async def stop(self) -> None:
        """Cancel every task and wait until all have finished."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)  # their outcome was read by _ended
        self._tasks.clear()

    async def __aenter__(self) -> Supervisor:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.stop()
