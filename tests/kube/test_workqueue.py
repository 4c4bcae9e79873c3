"""The work queue against client-go's ``util/workqueue`` semantics: delays, de-duplication,
one worker per key, rate limiting and a draining shutdown.

Delays are small and real; the tests assert orders and counts, never durations."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
from collections.abc import Callable

import pytest

from karmada.kube import ShutDown, WorkQueue
from karmada.kube.ratelimit import ItemBackoff, TokenBucket

WAIT = 5.0  # a bound for "soon", far above every delay used here


async def take(queue: WorkQueue[str], count: int) -> list[str]:
    """``count`` keys in the order workers get them (each done at once)."""
    keys = []
    for _ in range(count):
        key = await asyncio.wait_for(queue.get(), WAIT)
        queue.done(key)
        keys.append(key)
    return keys


async def until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.005)


async def test_add_after_wakes_at_the_earliest_deadline_not_an_older_later_one() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add_after("late", 30)
    await asyncio.sleep(0)  # the queue is now waiting for "late"
    queue.add_after("soon", 0.01)
    assert await take(queue, 1) == ["soon"]
    assert queue.waiting() == 1
    await queue.shutdown()


@pytest.mark.parametrize(
    ("adds", "expected"),
    [
        pytest.param([("a", 0.15), ("b", 0.05), ("c", 0.1), ("d", 0)], ["d", "b", "c", "a"], id="by-deadline"),
        pytest.param([("a", 0.1), ("a", 0.03), ("b", 0.06), ("a", 0.2)], ["a", "b"], id="earlier-deadline-wins"),
        pytest.param([("a", 0.03), ("a", 60), ("b", 0.06)], ["a", "b"], id="later-deadline-ignored"),
        pytest.param([("a", 0), ("a", 0), ("b", 0), ("a", 0)], ["a", "b"], id="added-twice-queued-once"),
        pytest.param([("a", 0), ("a", 0.03)], ["a", "a"], id="queued-and-delayed-is-processed-twice"),
        pytest.param([("x", 0.09), ("y", 0.06), ("x", 0.03), ("z", 0)], ["z", "x", "y"], id="moved-before-others"),
    ],
)
async def test_delays_table(adds: list[tuple[str, float]], expected: list[str]) -> None:
    queue: WorkQueue[str] = WorkQueue()
    for key, delay in adds:
        queue.add_after(key, delay)
        await asyncio.sleep(0)  # the queue waits for the earliest deadline so far
    assert await take(queue, len(expected)) == expected
    # nothing else is pending: each key waited in the delayed set once
    assert (len(queue), queue.waiting(), queue.processing()) == (0, 0, 0)
    await queue.shutdown()


async def test_a_key_waits_in_the_delayed_set_once() -> None:
    queue: WorkQueue[str] = WorkQueue()
    for _ in range(1000):
        queue.add_after("a", 60)
    assert queue.waiting() == 1
    queue.add_after("a", 0.01)  # earlier: moves the one entry
    assert queue.waiting() == 1
    assert await take(queue, 1) == ["a"]
    assert queue.waiting() == 0
    await queue.shutdown()


async def test_moving_deadlines_keeps_the_heap_bounded() -> None:
    queue: WorkQueue[int] = WorkQueue()
    for step in range(10_000):
        queue.add_after(step % 10, 1000 - step * 0.05)  # always earlier: each move leaves a stale entry
    assert queue.waiting() == 10
    assert len(queue._heap) <= 2 * 10 + 64 + 1
    await queue.shutdown()


async def test_a_key_in_flight_is_never_handed_to_a_second_worker() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    first = await queue.get()
    queue.add("a")  # changed while a worker holds it
    queue.add("b")
    assert await asyncio.wait_for(queue.get(), WAIT) == "b"  # a second worker gets b, not a
    assert len(queue) == 0
    queue.done("b")
    queue.add_after("a", 0.01)  # a delayed add that fires while a is still held
    await asyncio.wait_for(until(lambda: queue.waiting() == 0), WAIT)
    assert len(queue) == 0
    queue.done(first)  # now a comes back, once
    assert len(queue) == 1
    assert await take(queue, 1) == ["a"]
    assert len(queue) == 0
    await queue.shutdown()


async def test_workers_under_churn_hold_each_key_alone_and_miss_no_change() -> None:
    queue: WorkQueue[int] = WorkQueue()
    rng = random.Random(8)
    holding: set[int] = set()
    overlaps: list[int] = []
    last_added: dict[int, int] = {}
    last_seen: dict[int, int] = {}
    clock = 0

    async def worker() -> None:
        while True:
            try:
                key = await queue.get()
            except ShutDown:
                return
            if key in holding:
                overlaps.append(key)
            holding.add(key)
            seen = clock
            for _ in range(rng.randint(0, 3)):
                await asyncio.sleep(0)
            holding.discard(key)
            last_seen[key] = seen
            queue.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(4)]
    for _ in range(2000):
        clock += 1
        key = rng.randrange(10)
        last_added[key] = clock
        queue.add(key)
        if rng.random() < 0.5:
            await asyncio.sleep(0)
    await queue.shutdown(drain=True)
    await asyncio.gather(*workers)
    assert overlaps == []
    # every key was processed after its last change
    assert all(last_seen[key] >= when for key, when in last_added.items())


async def test_a_cancelled_worker_passes_its_wake_up_on() -> None:
    queue: WorkQueue[str] = WorkQueue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await asyncio.sleep(0)  # both wait
    queue.add("a")
    first.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await first
    assert await asyncio.wait_for(second, WAIT) == "a"
    await queue.shutdown()


def test_per_item_backoff_doubles_from_5ms_to_1000s_and_forget_frees_it() -> None:
    backoff: ItemBackoff[str] = ItemBackoff()
    delays = [backoff.when("x") for _ in range(25)]
    assert delays[:4] == [0.005, 0.01, 0.02, 0.04]
    assert all(later == min(earlier * 2, 1000.0) for earlier, later in itertools.pairwise(delays))
    assert delays[-1] == 1000.0
    for _ in range(5000):  # no overflow however often a key fails
        assert backoff.when("x") == 1000.0
    assert backoff.when("y") == 0.005  # per key
    backoff.forget("x")
    assert backoff.failures("x") == 0 and backoff.when("x") == 0.005
    backoff.forget("x")
    backoff.forget("y")
    assert len(backoff) == 0  # forgotten keys leave nothing behind


def test_overall_bucket_allows_a_burst_of_100_then_10_per_second() -> None:
    now = [0.0]
    bucket = TokenBucket(qps=10, burst=100, clock=lambda: now[0])
    assert [bucket.reserve() for _ in range(100)] == [0.0] * 100
    assert [round(bucket.reserve(), 6) for _ in range(3)] == [0.1, 0.2, 0.3]
    now[0] += 1.0  # ten tokens later: the debt of three is paid, seven saved
    assert [bucket.reserve() for _ in range(7)] == [0.0] * 7
    assert round(bucket.reserve(), 6) == 0.1
    now[0] += 1000.0  # never more than the burst saved up
    assert [bucket.reserve() for _ in range(100)] == [0.0] * 100
    assert bucket.reserve() > 0


async def test_rate_limited_adds_use_the_larger_limit_and_forget_resets() -> None:
    queue: WorkQueue[str] = WorkQueue(base_delay=0.001, max_delay=0.004, qps=10, burst=2)
    assert [queue.add_rate_limited("k") for _ in range(2)] == [0.001, 0.002]
    assert queue.add_rate_limited("k") > 0.004  # the shared bucket is empty: its wait is longer
    assert queue.failures("k") == 3
    queue.forget("k")
    assert queue.failures("k") == 0
    assert await take(queue, 1) == ["k"]  # three rate-limited adds, one delayed entry
    assert queue.waiting() == 0
    await queue.shutdown()


async def test_shutdown_with_drain_waits_for_queued_and_in_flight_keys() -> None:
    queue: WorkQueue[str] = WorkQueue()
    for key in ("a", "b", "c"):
        queue.add(key)
    queue.add_after("later", 60)
    held = await queue.get()
    queue.add("a")  # dirty while held: processed again before the queue is drained
    drain = asyncio.create_task(queue.shutdown(drain=True))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not drain.done() and queue.shutting_down
    queue.add("new")  # refused while shutting down
    queue.add_after("new", 0.01)
    assert (len(queue), queue.waiting()) == (2, 0)  # b, c; the delayed key is dropped
    assert [await queue.get(), await queue.get()] == ["b", "c"]
    queue.done(held)  # a comes back (it was changed while held)
    queue.done("b")
    assert await queue.get() == "a"
    queue.done("c")
    for _ in range(5):
        await asyncio.sleep(0)
    assert not drain.done()  # a is still in flight
    queue.done("a")
    await asyncio.wait_for(drain, WAIT)
    with pytest.raises(ShutDown):
        await queue.get()


async def test_shutdown_wakes_idle_workers() -> None:
    queue: WorkQueue[str] = WorkQueue()
    waiting = [asyncio.create_task(queue.get()) for _ in range(3)]
    await asyncio.sleep(0)
    await asyncio.wait_for(queue.shutdown(drain=True), WAIT)  # nothing in flight: returns at once
    for task in waiting:
        with pytest.raises(ShutDown):
            await asyncio.wait_for(task, WAIT)
