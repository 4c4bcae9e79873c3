"""The tunnel's HTTP/2 link over an in-memory carrier: bodies of any size, many
streams at once, a slow reader that holds only its own stream, resets, a closed
carrier, and an agent that tries to open a stream of its own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import hpack
import hyperframe.frame
import pytest

from karmada.tunnel.link import STREAM_WINDOW, Link, Stream, StreamReset
from tests.tunnel.carriers import End, pair

REQUEST = [(":method", "GET"), (":scheme", "https"), (":authority", "member1"), (":path", "/")]
Handler = Callable[[Stream], Awaitable[None]]


class Linked:
    def __init__(self, handler: Handler) -> None:
        self.control_end, self.agent_end = pair()
        self.control = Link(self.control_end, client=True, name="control")
        self.agent = Link(self.agent_end, client=False, handler=handler, name="agent")
        self.tasks = [asyncio.ensure_future(self.control.run()), asyncio.ensure_future(self.agent.run())]

    async def close(self) -> None:
        await self.control_end.close()
        await asyncio.wait(self.tasks, timeout=5)


@pytest.fixture
async def linked(request: pytest.FixtureRequest) -> AsyncIterator[Callable[[Handler], Linked]]:
    made: list[Linked] = []

    def make(handler: Handler) -> Linked:
        made.append(Linked(handler))
        return made[-1]

    yield make
    for one in made:
        await one.close()


async def body_of(stream: Stream) -> bytes:
    out = bytearray()
    while chunk := await asyncio.wait_for(stream.read(), 5):
        out += chunk
    return bytes(out)


async def echo(stream: Stream) -> None:
    """Answers with the request body, or with ``size`` bytes when the path says /size/N."""
    body = await body_of(stream)
    path = stream.header(":path")
    await stream.send_headers([(":status", "200")])
    if path.startswith("/size/"):
        await stream.write(b"x" * int(path.removeprefix("/size/")))
    else:
        await stream.write(body)
    await stream.end()


@pytest.mark.parametrize("size", [0, 1, 16_384, STREAM_WINDOW + 1, 3 * STREAM_WINDOW + 7])
async def test_a_body_of_any_size_arrives_whole(linked: Callable[[Handler], Linked], size: int) -> None:
    link = linked(echo)
    payload = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
    stream = await link.control.open([*REQUEST[:3], (":path", "/echo")])
    await stream.write(payload)
    await stream.end()
    assert (await stream.received_headers())[0] == (":status", "200")
    assert await body_of(stream) == payload


async def test_many_streams_at_once(linked: Callable[[Handler], Linked]) -> None:
    link = linked(echo)

    async def one(n: int) -> int:
        stream = await link.control.open([*REQUEST[:3], (":path", f"/size/{n * 1000}")], end_stream=True)
        await stream.received_headers()
        return len(await body_of(stream))

    sizes = await asyncio.gather(*(one(n) for n in range(200)))
    assert sizes == [n * 1000 for n in range(200)]
    assert not link.control.streams and not link.agent.streams  # every finished stream forgotten


async def test_a_reader_that_stops_holds_only_its_own_stream(linked: Callable[[Handler], Linked]) -> None:
    link = linked(echo)
    stuck = await link.control.open([*REQUEST[:3], (":path", f"/size/{10 * STREAM_WINDOW}")], end_stream=True)
    await stuck.received_headers()
    await stuck.read()  # one chunk, then nobody reads: its window closes
    await asyncio.sleep(0.1)
    for _ in range(20):
        other = await link.control.open([*REQUEST[:3], (":path", "/size/100000")], end_stream=True)
        await asyncio.wait_for(other.received_headers(), 5)
        assert len(await body_of(other)) == 100_000
    # what the stuck stream holds is bounded by its window, not by what the agent wanted to send
    queued: list[bytes | None] = list(stuck._data._queue)  # type: ignore[attr-defined]
    held = sum(len(chunk) for chunk in queued if chunk)
    assert held <= STREAM_WINDOW
    stuck.reset()


async def test_a_reset_reaches_the_agent_and_frees_the_stream(linked: Callable[[Handler], Linked]) -> None:
    seen: asyncio.Queue[str] = asyncio.Queue()

    async def endless(stream: Stream) -> None:
        await stream.send_headers([(":status", "200")])
        try:
            while True:
                await stream.write(b"line\n")
                await asyncio.sleep(0.01)
        except StreamReset:
            seen.put_nowait("reset")
            raise

    link = linked(endless)
    stream = await link.control.open(REQUEST, end_stream=True)
    await stream.received_headers()
    assert await stream.read()
    stream.reset()
    assert await asyncio.wait_for(seen.get(), 5) == "reset"
    assert not link.agent.streams


async def test_a_closed_carrier_fails_every_open_stream(linked: Callable[[Handler], Linked]) -> None:
    async def silent(stream: Stream) -> None:
        await asyncio.sleep(3600)

    link = linked(silent)
    streams = [await link.control.open(REQUEST, end_stream=True) for _ in range(3)]
    await link.agent_end.close()
    for stream in streams:
        with pytest.raises(StreamReset):
            await asyncio.wait_for(stream.received_headers(), 5)
    await asyncio.wait_for(link.control.closed.wait(), 5)
    with pytest.raises(StreamReset):
        await link.control.open(REQUEST)


async def test_a_failing_handler_resets_its_stream_only(linked: Callable[[Handler], Linked]) -> None:
    async def flaky(stream: Stream) -> None:
        if stream.header(":path") == "/boom":
            raise RuntimeError("a bug")
        await echo(stream)

    link = linked(flaky)
    boom = await link.control.open([*REQUEST[:3], (":path", "/boom")], end_stream=True)
    with pytest.raises(StreamReset):
        await asyncio.wait_for(boom.received_headers(), 5)
    fine = await link.control.open([*REQUEST[:3], (":path", "/size/10")], end_stream=True)
    await fine.received_headers()
    assert await body_of(fine) == b"x" * 10


async def test_the_agent_side_cannot_open_streams() -> None:
    """A hostile agent sending a request of its own on the tunnel (its server preface, then a
    HEADERS frame opening a stream): the control plane's end, the HTTP/2 client, refuses it as a
    protocol error and closes the link; no stream is created and nothing is served."""
    control_end, rogue_end = pair()
    control = Link(control_end, client=True, name="control")
    running = asyncio.ensure_future(control.run())
    block = hpack.Encoder().encode(
        [(":method", "GET"), (":scheme", "https"), (":authority", "x"), (":path", "/api/v1/secrets")]
    )
    headers = hyperframe.frame.HeadersFrame(1, block, flags=["END_HEADERS", "END_STREAM"])
    await rogue_end.send_bytes(hyperframe.frame.SettingsFrame(0).serialize() + headers.serialize())
    await asyncio.wait_for(running, 5)
    assert control.closed.is_set()
    assert control.handler is None and not control.streams


async def test_the_control_side_refuses_pushes_and_serves_nothing() -> None:
    """Even as a server, a link with no handler refuses every stream."""
    end_a, end_b = pair()
    server = Link(end_b, client=False, name="no-handler")
    client = Link(end_a, client=True, name="client")
    tasks = [asyncio.ensure_future(server.run()), asyncio.ensure_future(client.run())]
    try:
        stream = await client.open(REQUEST, end_stream=True)
        with pytest.raises(StreamReset):
            await asyncio.wait_for(stream.received_headers(), 5)
    finally:
        await end_a.close()
        await asyncio.wait(tasks, timeout=5)


def test_carriers_count_what_they_send() -> None:
    a, b = pair()
    assert isinstance(a, End) and a.peer is b and b.peer is a
