"""The event-loop watchdog: a late wake-up is logged and counted, a punctual one is not."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from localkube.loop_stalls import LoopStalls, watched


@pytest.mark.parametrize(("late", "logged"), [(0.0, False), (0.99, False), (1.0, True), (7.5, True)])
def test_only_a_wake_up_later_than_the_threshold_is_a_stall(
    late: float, logged: bool, caplog: pytest.LogCaptureFixture
) -> None:
    stalls = LoopStalls(threshold=1.0)
    with caplog.at_level(logging.WARNING, logger="localkube.loop"):
        stalls.observe(late)
    assert stalls.stalls == int(logged)
    assert ("event loop stalled" in caplog.text) is logged


def test_a_blocked_loop_is_reported_once_it_runs_again(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        stalls = LoopStalls(tick=0.01, threshold=0.2)
        task = asyncio.get_running_loop().create_task(stalls.run())
        await asyncio.sleep(0.05)
        time.sleep(0.4)  # what a long synchronous step does to every other request
        await asyncio.sleep(0.05)
        task.cancel()
        assert stalls.stalls == 1 and stalls.longest >= 0.3

    with caplog.at_level(logging.WARNING, logger="localkube.loop"):
        asyncio.run(main())
    assert "event loop stalled for 0." in caplog.text


def test_watched_returns_the_work_result_and_stops_the_watchdog() -> None:
    async def main() -> int:
        async def work() -> int:
            await asyncio.sleep(0)
            return 7

        found = await watched(work())
        await asyncio.sleep(0)
        names = {t.get_name() for t in asyncio.all_tasks()}
        assert "localkube-loop-stalls" not in names
        return found

    assert asyncio.run(main()) == 7
