"""The reconcile loop's shutdown: in-flight and queued keys finish, within a grace period."""

from __future__ import annotations

import asyncio
import contextlib

from karmada.kube.controller import Controller


async def test_stop_lets_in_flight_and_queued_keys_finish() -> None:
    started = asyncio.Event()
    done: list[str] = []

    async def reconcile(key: str) -> None:
        started.set()
        await asyncio.sleep(0.05)
        done.append(key)

    controller: Controller[str] = Controller("drain", reconcile)
    controller.start()
    controller.enqueue("a")
    controller.enqueue("b")
    await started.wait()
    await controller.stop()
    assert done == ["a", "b"]  # neither was cancelled half-way


async def test_stop_cancels_what_outlives_the_grace_period() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def reconcile(key: str) -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    controller: Controller[str] = Controller("stuck", reconcile)
    controller.start()
    controller.enqueue("slow")
    await started.wait()
    async with asyncio.timeout(5):
        await controller.stop(grace=0.05)
    assert cancelled.is_set()


async def test_failed_keys_back_off_up_to_client_gos_limit() -> None:
    async def reconcile(key: str) -> None:
        return None

    controller: Controller[str] = Controller("limits", reconcile)
    delays = [controller.queue.add_rate_limited("k") for _ in range(40)]
    assert delays[0] == 0.005 and delays[1] == 0.01
    assert max(delays) == 1000.0


async def _stuck_controller(name: str) -> tuple[Controller[str], list[str], asyncio.Event]:
    """A controller with one reconcile hanging in flight and one key queued behind it."""
    started, cancelled = asyncio.Event(), asyncio.Event()
    done: list[str] = []

    async def reconcile(key: str) -> None:
        started.set()
        try:
            await asyncio.sleep(60 if key == "slow" else 0)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        done.append(key)

    controller: Controller[str] = Controller(name, reconcile)
    controller.start()
    controller.enqueue("slow")
    controller.enqueue("queued")
    await started.wait()
    return controller, done, cancelled


async def test_stop_without_draining_cancels_in_flight_and_runs_nothing_queued() -> None:
    controller, done, cancelled = await _stuck_controller("lost")
    await controller.stop(grace=60, drain=False)  # a lost Lease: no grace period is waited
    assert cancelled.is_set() and done == []


async def test_a_drain_cancelled_half_way_stops_the_workers() -> None:
    controller, done, cancelled = await _stuck_controller("interrupted")
    stopping = asyncio.create_task(controller.stop(grace=60))
    await asyncio.sleep(0)
    stopping.cancel()  # the Lease was lost while draining
    with contextlib.suppress(asyncio.CancelledError):
        await stopping
    assert cancelled.is_set() and done == []
