"""The reconcile loop's shutdown: in-flight and queued keys finish, within a grace period."""

from __future__ import annotations

import asyncio

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
