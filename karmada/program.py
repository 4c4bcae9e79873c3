"""What every long-running program here shares: one-line logs on stderr, small TLS read
buffers, and running an asyncio main until SIGTERM or SIGINT asks it to stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# asyncio gives every TLS connection a zeroed 256 KiB read buffer, and a program holds one
# connection per watch (an agent of a fleet, several per member). A TLS record carries at most
# 16 KiB, so 32 KiB loses nothing but a little batching (localkube's servers do the same).
TLS_READ_BUFFER = 32 * 1024


def setup_logging(verbosity: int) -> None:
    """``--v`` style verbosity: 0-1 warnings and info of our own, 2+ info, 4+ debug."""
    level = logging.DEBUG if verbosity >= 4 else logging.INFO if verbosity >= 1 else logging.WARNING
    logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)
    # library chatter (connection pools) stays quiet below debug
    logging.getLogger("aiohttp").setLevel(logging.WARNING if verbosity < 4 else logging.DEBUG)


def run_until_stopped(main: Callable[[asyncio.Event], Coroutine[Any, Any, int]]) -> int:
    """Run ``main(stop)``; SIGTERM/SIGINT set ``stop``. Returns main's exit code."""
    from asyncio import sslproto

    sslproto.SSLProtocol.max_size = TLS_READ_BUFFER  # a program sets it for its own process

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
