"""The work-queue metrics of a ``karmada-agent --fleet`` process, where every
agent has its own queue under the same name (``execution``, ...): each series
is the process's sum over those queues, not the last queue's value."""

from __future__ import annotations

import asyncio
import itertools

from karmada import metrics
from karmada.kube.workqueue import WorkQueue

_names = itertools.count()


def sample(metric: str, name: str) -> float:
    return metrics.REGISTRY.get_sample_value(metric, {"name": name}) or 0.0


def shared_name() -> str:
    """A name of this test alone (the registry lives as long as the process), shared by its queues."""
    return f"fleet-execution-{next(_names)}"


def depth(name: str) -> float:
    return sample("workqueue_depth", name)


async def test_depth_is_the_sum_over_the_queues_of_a_name() -> None:
    name = shared_name()
    first: WorkQueue[str] = WorkQueue(name=name)
    second: WorkQueue[str] = WorkQueue(name=name)
    first.add("a")
    first.add("b")
    second.add("c")
    assert depth(name) == 3
    await first.get()
    assert depth(name) == 2, "a key taken from one queue leaves the other's in the sum"
    held = await second.get()
    second.add(held)  # dirty while held: not queued yet
    assert depth(name) == 1
    second.done(held)
    assert depth(name) == 2
    # an agent that starts later (a fleet's agents start at their own pace) adds to the sum, resets nothing
    third: WorkQueue[str] = WorkQueue(name=name)
    assert depth(name) == 2
    third.add("d")
    assert depth(name) == 3
    for queue in (first, second, third):
        await queue.shutdown()


async def test_a_queue_shut_down_takes_its_keys_out_of_the_depth() -> None:
    name = shared_name()
    stopped: WorkQueue[str] = WorkQueue(name=name)
    running: WorkQueue[str] = WorkQueue(name=name)
    running.add("c")
    stopped.add("a")
    stopped.add("b")
    assert depth(name) == 3
    await stopped.shutdown()
    assert depth(name) == 1, "only the running queue's key"
    await stopped.get()  # its workers may still take what was queued: the sum does not move again
    assert depth(name) == 1
    await stopped.shutdown()
    assert depth(name) == 1
    await running.get()
    assert depth(name) == 0
    await running.shutdown()


async def test_adds_retries_and_durations_count_every_queue() -> None:
    """Counters and histograms summed by themselves before: this keeps them so."""
    name = shared_name()
    queues: list[WorkQueue[str]] = [WorkQueue(name=name), WorkQueue(name=name)]
    for index, queue in enumerate(queues):
        for number in range(index + 1):
            queue.add(f"k{number}")
        queue.add_rate_limited("failed")
    assert sample("workqueue_adds_total", name) == 3
    assert sample("workqueue_retries_total", name) == 2
    for queue in queues:
        key = await queue.get()
        await asyncio.sleep(0)
        queue.done(key)
    assert sample("workqueue_queue_duration_seconds_count", name) == 2
    assert sample("workqueue_work_duration_seconds_count", name) == 2
    for queue in queues:
        await queue.shutdown()
