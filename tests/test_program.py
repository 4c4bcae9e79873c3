"""The shared program runner (``karmada.program``)."""

from __future__ import annotations

import subprocess
import sys

RUNNER = """
import asyncio, ssl
from asyncio import sslproto
from karmada.program import run_until_stopped

async def main(stop):
    # the buffer a TLS connection of this process gets
    loop = asyncio.get_running_loop()
    protocol = sslproto.SSLProtocol(loop, asyncio.Protocol(), ssl.create_default_context(), None)
    return len(protocol._ssl_buffer) // 1024

raise SystemExit(run_until_stopped(main))
"""


def test_a_program_gives_its_tls_connections_32_kib_read_buffers_not_256() -> None:
    """asyncio's default is 256 KiB per connection; a fleet agent holds several per member."""
    ran = subprocess.run([sys.executable, "-c", RUNNER], capture_output=True, text=True, timeout=30, check=False)
    assert ran.returncode == 32, ran.stderr
