"""Run one coroutine per item with at most ``limit`` in flight, results in item order.

Controllers write many objects per reconcile (a binding's Works, one per target
cluster); one after another, each write waits a full round trip to the API
server, so 1,000 Works took minutes while neither side was busy. A bound keeps
the connection pool and the API server from being flooded by one key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def map_bounded(limit: int, function: Callable[[T], Awaitable[R]], items: Iterable[T]) -> list[R]:
    """``[await function(item) for item in items]``, at most ``limit`` at once.

    The first exception cancels the calls still running and propagates (as
    ``asyncio.gather``); callers that want every outcome catch inside ``function``.
    """
    gate = asyncio.Semaphore(max(1, limit))

    async def one(item: T) -> R:
        async with gate:
            return await function(item)

    tasks = [asyncio.ensure_future(one(item)) for item in items]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
