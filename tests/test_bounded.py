"""karmada.bounded: order kept, at most ``limit`` in flight, the first failure cancels the rest."""

from __future__ import annotations

import asyncio

import pytest

from karmada.bounded import map_bounded


@pytest.mark.parametrize(("limit", "items", "peak"), [(1, 5, 1), (3, 10, 3), (16, 4, 4), (0, 3, 1)])
async def test_in_order_with_at_most_limit_in_flight(limit: int, items: int, peak: int) -> None:
    running = 0
    seen = 0

    async def work(item: int) -> int:
        nonlocal running, seen
        running += 1
        seen = max(seen, running)
        await asyncio.sleep(0.01 * (items - item))  # later items finish first
        running -= 1
        return item * 2

    assert await map_bounded(limit, work, range(items)) == [i * 2 for i in range(items)]
    assert seen == peak


async def test_first_failure_cancels_the_calls_still_running() -> None:
    finished: list[int] = []

    async def work(item: int) -> int:
        if item == 0:
            await asyncio.sleep(0.01)
            raise ValueError("boom")
        await asyncio.sleep(5)
        finished.append(item)
        return item

    with pytest.raises(ValueError, match="boom"):
        await asyncio.wait_for(map_bounded(4, work, range(8)), 2)
    assert finished == []


async def test_no_items() -> None:
    async def work(item: int) -> int:
        raise AssertionError("never called")

    assert await map_bounded(4, work, []) == []
