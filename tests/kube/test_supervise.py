"""Supervised background tasks: a failure is logged with its traceback and
restarted with backoff, or ends the group; never a silent stop. And the
control plane runs its background loops under the supervisor."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from controlplane.manager import ControlPlane
from controlplane.options import Options
from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.supervise import Supervisor, TaskFailed
from tests.pullmode import PullMode
from tests.servers import ServerThread


class Flaky:
    """Raises ``failures`` times, then runs until cancelled."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.runs = 0
        self.running = asyncio.Event()

    async def run(self) -> None:
        self.runs += 1
        if self.runs <= self.failures:
            raise RuntimeError(f"broken run {self.runs}")
        self.running.set()
        await asyncio.Event().wait()


async def test_a_task_that_raises_twice_is_logged_and_restarted(caplog: pytest.LogCaptureFixture) -> None:
    flaky = Flaky(failures=2)
    async with Supervisor(initial_backoff=0.01, max_backoff=1) as supervisor:
        supervisor.start("flaky", flaky.run)
        await asyncio.wait_for(flaky.running.wait(), 5)
        assert (flaky.runs, supervisor.restarts["flaky"], supervisor.names) == (3, 2, ["flaky"])
    failures = [r for r in caplog.records if r.name == "karmada.kube.supervise" and r.levelno == logging.ERROR]
    assert [r.getMessage() for r in failures] == [
        "flaky failed; restarting in 0.01s",
        "flaky failed; restarting in 0.02s",
    ]
    assert all(r.exc_info and "broken run" in str(r.exc_info[1]) for r in failures)  # with the traceback
    assert supervisor.names == []  # stopped on leaving the block


async def test_backoff_doubles_up_to_the_maximum(caplog: pytest.LogCaptureFixture) -> None:
    flaky = Flaky(failures=4)
    async with Supervisor(initial_backoff=0.01, max_backoff=0.04) as supervisor:
        supervisor.start("flaky", flaky.run)
        await asyncio.wait_for(flaky.running.wait(), 5)
    delays = [r.args[-1] for r in caplog.records if r.name == "karmada.kube.supervise" and isinstance(r.args, tuple)]
    assert delays == [0.01, 0.02, 0.04, 0.04]


async def test_a_task_that_returns_is_not_a_silent_stop(caplog: pytest.LogCaptureFixture) -> None:
    calls = 0
    again = asyncio.Event()

    async def finishes() -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            again.set()

    async with Supervisor(initial_backoff=0.01) as supervisor:
        supervisor.start("short-lived", finishes)
        await asyncio.wait_for(again.wait(), 5)
    assert "short-lived stopped although it should run until cancelled; restarting in 0.01s" in caplog.messages


async def test_a_critical_task_that_fails_ends_wait_instead_of_hanging() -> None:
    async def lead(supervisor: Supervisor) -> None:
        supervisor.start("healthy", Flaky(failures=0).run)
        supervisor.start("critical", Flaky(failures=1).run, restart=False)
        await supervisor.wait()

    async with Supervisor() as supervisor:
        with pytest.raises(TaskFailed, match="critical failed") as caught:
            await asyncio.wait_for(lead(supervisor), 5)
    assert isinstance(caught.value.cause, RuntimeError)


async def test_the_control_plane_runs_its_health_monitor_supervised(localkube: ServerThread, workdir: Path) -> None:
    env = PullMode(localkube, workdir).install()  # Karmada's CRDs
    options = Options(leader_elect=False, cluster_monitor_period=0.1)
    async with KubeClient(from_kubeconfig(env.kubeconfig)) as client:
        control_plane = ControlPlane(client, options)
        leading = asyncio.create_task(control_plane.lead())
        async with asyncio.timeout(20):
            while control_plane.supervisor is None or not control_plane.supervisor.names:
                await asyncio.sleep(0.05)
        assert "cluster-health-monitor" in control_plane.supervisor.names  # beside the other background loops
        leading.cancel()
        with pytest.raises(asyncio.CancelledError):
            await leading
        assert control_plane.supervisor is None
