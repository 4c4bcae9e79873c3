"""What every long-running program here shares: one-line logs on stderr and
running an asyncio main until SIGTERM or SIGINT asks it to stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(verbosity: int) -> None:
    """``--v`` style verbosity: 0-1 warnings and info of our own, 2+ info, 4+ debug."""
    level = logging.DEBUG if verbosity >= 4 else logging.INFO if verbosity >= 1 else logging.WARNING
    logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)
    # library chatter (connection pools) stays quiet below debug
    logging.getLogger("aiohttp").setLevel(logging.WARNING if verbosity < 4 else logging.DEBUG)


def run_until_stopped(main: Callable[[asyncio.Event], Coroutine[Any, Any, int]]) -> int:
    """Run ``main(stop)``; SIGTERM/SIGINT set ``stop``. Returns main's exit code."""

    async def runner() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        return await main(stop)

    try:
        return asyncio.run(runner())
    except KeyboardInterrupt:
        return 130
