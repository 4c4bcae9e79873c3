"""Stopping localkube leaves no connection behind, even one still in its TLS handshake
(the leak that made later tests fail with an unraisable ResourceWarning)."""

from __future__ import annotations

import asyncio
import gc
import warnings

from localkube.server import LocalKube, ServerConfig


async def test_a_connection_mid_handshake_is_closed_on_stop() -> None:
    server = LocalKube(ServerConfig(port=0))
    await server.start()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)  # TCP only, no TLS hello
    await asyncio.sleep(0.05)  # the server has accepted it
    await server.stop()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
        await asyncio.sleep(0)
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert await reader.read() == b""  # the server side is gone
    writer.close()
    await writer.wait_closed()
