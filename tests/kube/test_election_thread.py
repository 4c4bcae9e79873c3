"""Leader election on a thread of its own (:func:`run_elected`): a caller's loop held for
longer than the renew deadline keeps its leadership, where an elector on that loop steps
down; cancelling steps down cleanly (``lead`` finished, the Lease released) and a failure
of ``lead`` is raised to the caller."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from karmada.kube import KubeClient, LeaderElector, from_kubeconfig
from karmada.kube.config import ClusterConfig
from karmada.kube.election_thread import run_elected
from karmada.kube.resources import LEASES
from tests.servers import ServerThread


@pytest.fixture
def config(localkube: ServerThread, workdir: Path) -> ClusterConfig:
    return from_kubeconfig(localkube.kubeconfig(workdir))


def _elector_of(name: str) -> Callable[[KubeClient], LeaderElector]:
    def elector(client: KubeClient) -> LeaderElector:
        return LeaderElector(client, "default", name, "me", lease_duration=2, renew_deadline=1, retry_period=0.2)

    return elector


class Term:
    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.stopped = False

    async def lead(self) -> None:
        self.started.set()
        try:
            await asyncio.Event().wait()
        finally:
            self.stopped = True


@pytest.mark.parametrize("threaded", [True, False], ids=["own-thread", "same-loop"])
async def test_a_loop_held_past_the_renew_deadline_keeps_the_lead_only_with_the_elector_on_its_own_thread(
    config: ClusterConfig, kube: KubeClient, threaded: bool
) -> None:
    name = "held-threaded" if threaded else "held-on-loop"
    term = Term()
    if threaded:
        campaign = asyncio.get_running_loop().create_task(run_elected(config, _elector_of(name), term.lead))
    else:
        campaign = asyncio.get_running_loop().create_task(_elector_of(name)(kube).run(term.lead))
    async with asyncio.timeout(10):
        await term.started.wait()
    time.sleep(3)  # a controller step that never yields, three renew deadlines long
    await asyncio.sleep(0.5)  # the elector on this loop gets its turn only now
    try:
        assert term.stopped is not threaded
        if threaded:
            lease = await kube.get(LEASES, name, "default")
            assert lease["spec"]["holderIdentity"] == "me"
    finally:
        campaign.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await campaign


async def test_cancelling_steps_down_after_lead_finished_and_releases_the_lease(
    config: ClusterConfig, kube: KubeClient
) -> None:
    term = Term()
    campaign = asyncio.get_running_loop().create_task(run_elected(config, _elector_of("cancelled"), term.lead))
    async with asyncio.timeout(10):
        await term.started.wait()
    campaign.cancel()
    with pytest.raises(asyncio.CancelledError):
        await campaign
    assert term.stopped  # finished before run_elected returned
    lease = await kube.get(LEASES, "cancelled", "default")
    assert lease["spec"]["holderIdentity"] == ""


async def test_a_failure_of_lead_is_raised_to_the_caller_after_stepping_down(
    config: ClusterConfig, kube: KubeClient
) -> None:
    async def lead() -> None:
        await asyncio.sleep(0.1)
        raise RuntimeError("a controller broke")

    fails: Coroutine[Any, Any, None] = run_elected(config, _elector_of("failing"), lead)
    with pytest.raises(RuntimeError, match="a controller broke"):
        async with asyncio.timeout(10):
            await fails
    lease = await kube.get(LEASES, "failing", "default")
    assert lease["spec"]["holderIdentity"] == ""
