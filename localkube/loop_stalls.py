"""A watchdog for the event loop: one task per process that sleeps a short tick
and logs when it woke much later than asked, so a saturated or blocked server
says so in its log ("event loop stalled for 2.4s") instead of only answering
late."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger("localkube.loop")

TICK = 0.25  # seconds between checks
THRESHOLD = 1.0  # a wake-up this much later than asked is logged
T = TypeVar("T")


class LoopStalls:
    """Counts and logs the loop's late wake-ups while :meth:`run` runs."""

    def __init__(self, tick: float = TICK, threshold: float = THRESHOLD) -> None:
        self.tick = tick
        self.threshold = threshold
        self.stalls = 0
        self.longest = 0.0

    def observe(self, late: float) -> None:
        """One wake-up ``late`` seconds after it was due."""
        if late < self.threshold:
            return
        self.stalls += 1
        self.longest = max(self.longest, late)
        log.warning("event loop stalled for %.1fs (requests waited that long for their turn)", late)

    async def run(self) -> None:
        """Watch until cancelled."""
        while True:
            due = time.monotonic() + self.tick
            await asyncio.sleep(self.tick)
            self.observe(time.monotonic() - due)


async def watched(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` with the loop watched."""
    watchdog = asyncio.get_running_loop().create_task(LoopStalls().run(), name="localkube-loop-stalls")
    try:
        return await work
    finally:
        watchdog.cancel()
