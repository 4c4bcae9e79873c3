"""Leader election against a real localkube: never two leaders, even when the
API server stops answering one of them; a clean shutdown hands over at once."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from karmada.kube import KubeClient, LeaderElector, from_kubeconfig
from karmada.kube.resources import LEASES
from tests.faults import StallingRelay
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread


class Timeline:
    """When each candidate's ``lead()`` started and finished, on the loop's clock."""

    def __init__(self) -> None:
        self.events: list[tuple[float, str, str]] = []
        self.changed = asyncio.Event()

    def lead(self, who: str) -> Callable[[], Coroutine[Any, Any, None]]:
        async def lead() -> None:
            self._note(who, "start")
            try:
                await asyncio.Event().wait()
            finally:
                self._note(who, "stop")

        return lead

    def _note(self, who: str, what: str) -> None:
        self.events.append((asyncio.get_running_loop().time(), who, what))
        self.changed.set()

    def at(self, who: str, what: str) -> float | None:
        return next((t for t, w, e in self.events if (w, e) == (who, what)), None)

    async def wait(self, who: str, what: str, timeout: float) -> float:
        async with asyncio.timeout(timeout):
            while (when := self.at(who, what)) is None:
                self.changed.clear()
                await self.changed.wait()
        return when


async def until(check: Callable[[], bool], timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


async def _finish(*tasks: asyncio.Task[None]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _elector(client: KubeClient, name: str, identity: str) -> LeaderElector:
    return LeaderElector(client, "default", name, identity, lease_duration=2, renew_deadline=1, retry_period=0.2)


async def test_a_leader_cut_off_from_the_api_server_steps_down_before_another_takes_over(
    localkube: ServerThread, workdir: Path
) -> None:
    config = from_kubeconfig(localkube.kubeconfig(workdir))
    host, port = config.server.removeprefix("https://").rsplit(":", 1)
    relay = await StallingRelay(host, int(port)).start()
    timeline = Timeline()
    try:
        async with (
            KubeClient(dataclasses.replace(config, server=relay.url)) as through_relay,
            KubeClient(config) as direct,
        ):
            first = _elector(through_relay, "cut-off", "first")
            second = _elector(direct, "cut-off", "second")
            first_run = asyncio.create_task(first.run(timeline.lead("first")))
            await timeline.wait("first", "start", 5)
            second_run = asyncio.create_task(second.run(timeline.lead("second")))
            await until(lambda: second.observed_holder == "first", 5)
            relay.stall()  # the API server stops answering the leader; its requests hang
            took_over = await timeline.wait("second", "start", 10)
            stepped_down = timeline.at("first", "stop")
            assert stepped_down is not None and stepped_down < took_over, timeline.events
            assert not first.is_leader
            await asyncio.wait_for(first_run, 5)  # run() returned: leadership lost, no hang
            relay.resume()
            # campaigning again through the healed network, the first sees the new leader and waits
            first_run = asyncio.create_task(first.run(timeline.lead("first-again")))
            await until(lambda: first.observed_holder == "second", 5)
            assert timeline.at("first-again", "start") is None
            await _finish(first_run, second_run)
    finally:
        await relay.close()


async def test_a_clean_shutdown_releases_the_lease_so_the_standby_takes_over_at_once(kube: KubeClient) -> None:
    timeline = Timeline()
    # client-go's default durations: without a release the standby would wait 15 s
    leader = LeaderElector(kube, "default", "handover", "leader", retry_period=0.2)
    standby = LeaderElector(kube, "default", "handover", "standby", retry_period=0.2)
    leading = asyncio.create_task(leader.run(timeline.lead("leader")))
    await timeline.wait("leader", "start", 5)
    waiting = asyncio.create_task(standby.run(timeline.lead("standby")))
    await until(lambda: standby.observed_holder == "leader", 5)
    await _finish(leading)  # SIGTERM-like: the leader's task is cancelled
    assert timeline.at("leader", "stop") is not None
    await timeline.wait("standby", "start", 3)
    lease = await kube.get(LEASES, "handover", "default")
    assert (lease["spec"]["holderIdentity"], lease["spec"]["leaseTransitions"]) == ("standby", 1)
    await _finish(waiting)
    lease = await kube.get(LEASES, "handover", "default")
    # the record client-go's ReleaseOnCancel writes
    assert (lease["spec"]["holderIdentity"], lease["spec"]["leaseDurationSeconds"]) == ("", 1)
    assert lease["spec"]["leaseTransitions"] == 1
    restarted = LeaderElector(kube, "default", "handover", "restarted")
    assert await restarted.try_acquire_or_renew()


async def test_every_request_is_bounded_by_the_renew_deadline(localkube: ServerThread, workdir: Path) -> None:
    config = from_kubeconfig(localkube.kubeconfig(workdir))
    host, port = config.server.removeprefix("https://").rsplit(":", 1)
    relay = await StallingRelay(host, int(port)).start()
    try:
        async with KubeClient(dataclasses.replace(config, server=relay.url)) as client:
            elector = _elector(client, "bounded", "only")
            relay.stall()
            loop = asyncio.get_running_loop()
            started = loop.time()
            assert not await elector.try_acquire_or_renew()
            assert loop.time() - started < elector.lease_duration
    finally:
        await relay.close()


def test_durations_are_checked_as_client_go_checks_them(localkube: ServerThread, workdir: Path) -> None:
    kube = KubeClient(from_kubeconfig(localkube.kubeconfig(workdir)))
    with pytest.raises(ValueError, match="greater than the renew deadline"):
        LeaderElector(kube, "default", "x", "me", lease_duration=10, renew_deadline=10)
    with pytest.raises(ValueError, match="retry period"):
        LeaderElector(kube, "default", "x", "me", renew_deadline=2, retry_period=2)


def test_karmada_controlplane_releases_its_lease_on_sigterm_and_a_restart_leads_at_once(pull_mode: PullMode) -> None:
    def spec() -> dict[str, Any]:
        lease = pull_mode.admin(
            "get", "lease", "karmada-controlplane", "-n", "karmada-system", "-o", "json", check=False
        )
        return dict(json.loads(lease.stdout)["spec"]) if lease.returncode == 0 else {}

    first = wait_for(lambda: spec().get("holderIdentity"), what="the control plane to lead")
    assert pull_mode.controlplane is not None
    pull_mode.controlplane.stop()  # SIGTERM
    released = spec()
    assert (released["holderIdentity"], released["leaseDurationSeconds"]) == ("", 1)
    pull_mode.start_controlplane()
    # well inside the 15 s lease an unreleased Lease would make the new process wait
    second = wait_for(lambda: spec().get("holderIdentity"), timeout=8, what="the restarted control plane to lead")
    assert second != first


async def test_a_renewal_slower_than_the_retry_period_is_logged(
    kube: KubeClient, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    elector = _elector(kube, "slow-renewal", "only")
    assert await elector.try_acquire_or_renew()
    update = kube.update

    async def slow_update(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0.3)  # the retry period is 0.2 s
        return await update(*args, **kwargs)

    monkeypatch.setattr(kube, "update", slow_update)
    with caplog.at_level(logging.WARNING, logger="karmada.kube.leaderelection"):
        assert await elector.try_acquire_or_renew()
    assert "writing lease default/slow-renewal took 0.3s" in caplog.text
    monkeypatch.setattr(kube, "update", update)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="karmada.kube.leaderelection"):
        assert await elector.try_acquire_or_renew()
    assert "took" not in caplog.text
