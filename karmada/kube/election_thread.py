"""Leader election on a thread of its own, for a process whose event loop may be busy.

asyncio never preempts: a step that holds the loop for seconds (a binding rendered for
1,000 clusters, thousands of handlers replayed at the start of a term) delays whatever
else is due by as much, the leader's Lease renewal included, and at Karmada's 10 s renew
deadline a busy leader steps down although its API server answers in milliseconds.
client-go's elector is a goroutine that the Go scheduler preempts. The equivalent here:
:func:`run_elected` runs the :class:`~karmada.kube.leaderelection.LeaderElector` on an
event loop in a daemon thread, with a client and connections of its own, while ``lead``
runs on the caller's loop, started and cancelled from the thread. The interpreter hands
the thread a turn every few milliseconds however long the caller's loop is busy.

Cancelling :func:`run_elected` cancels the election as cancelling
:meth:`LeaderElector.run` does: ``lead`` is cancelled and awaited, the Lease released,
and only then does it return.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from karmada.kube.client import KubeClient
from karmada.kube.config import ClusterConfig
from karmada.kube.leaderelection import LeaderElector

Lead = Callable[[], Coroutine[Any, Any, None]]


async def run_elected(config: ClusterConfig, elector_of: Callable[[KubeClient], LeaderElector], lead: Lead) -> None:
    """``elector_of(client).run(lead)`` with the elector on a thread of its own (its client
    made from ``config`` there) and ``lead`` on this loop; returns once leadership ended,
    raising what ``lead`` raised."""
    caller = asyncio.get_running_loop()
    started: concurrent.futures.Future[tuple[asyncio.AbstractEventLoop, asyncio.Task[None]]] = (
        concurrent.futures.Future()
    )
    ended: concurrent.futures.Future[None] = concurrent.futures.Future()

    async def elect() -> None:
        async with KubeClient(config) as client:
            task = asyncio.get_running_loop().create_task(elector_of(client).run(lambda: _on(caller, lead)))
            started.set_result((asyncio.get_running_loop(), task))
            await task

    def thread_main() -> None:
        try:
            asyncio.run(elect())
        except asyncio.CancelledError:
            ended.set_result(None)
        except BaseException as exc:  # lead's failure (or the elector's): raised on the caller's loop
            ended.set_exception(exc)
        else:
            ended.set_result(None)

    threading.Thread(target=thread_main, name="leader-election", daemon=True).start()
    try:
        await asyncio.shield(asyncio.wrap_future(ended))
    except asyncio.CancelledError:
        if not ended.done():
            loop, task = await asyncio.wrap_future(started)
            loop.call_soon_threadsafe(task.cancel)
            await _settled(ended)
        raise


async def _on(caller: asyncio.AbstractEventLoop, lead: Lead) -> None:
    """(On the election's loop) run ``lead`` on the caller's loop until it ends; cancelled,
    cancel it there and wait until it has finished."""
    finished: concurrent.futures.Future[asyncio.Task[None]] = concurrent.futures.Future()
    box: list[asyncio.Task[None]] = []

    def start() -> None:
        task = caller.create_task(lead(), name="lead")
        box.append(task)
        task.add_done_callback(finished.set_result)

    caller.call_soon_threadsafe(start)
    try:
        task = await asyncio.shield(asyncio.wrap_future(finished))
    except asyncio.CancelledError:
        # ``start`` was scheduled first, so the task exists when this runs on the caller's loop
        caller.call_soon_threadsafe(lambda: box[0].cancel())  # noqa: PLW0108 (box is filled there, not yet here)
        await _settled(finished)
        raise
    if not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]


async def _settled(future: concurrent.futures.Future[Any]) -> None:
    """Wait for ``future`` to finish, whatever it finishes with, even if cancelled meanwhile."""
    while not future.done():
        try:
            await asyncio.shield(asyncio.wrap_future(future))
        except asyncio.CancelledError:
            continue
        except BaseException:
            return
