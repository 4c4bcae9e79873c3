"""Two ends of an in-memory carrier: the tunnel's links without sockets."""

from __future__ import annotations

import asyncio


class End:
    def __init__(self) -> None:
        self.inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.peer: End | None = None
        self.closed = False
        self.sent = 0

    async def send_bytes(self, data: bytes) -> None:
        if self.closed or self.peer is None or self.peer.closed:
            raise ConnectionError("carrier closed")
        self.sent += len(data)
        self.peer.inbox.put_nowait(data)

    async def receive_bytes(self) -> bytes:
        data = await self.inbox.get()
        if data is None:
            raise ConnectionError("carrier closed")
        return data

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.inbox.put_nowait(None)
            if self.peer is not None:
                self.peer.inbox.put_nowait(None)


def pair() -> tuple[End, End]:
    a, b = End(), End()
    a.peer, b.peer = b, a
    return a, b
