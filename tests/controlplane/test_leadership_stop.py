"""How a leadership term stops: a lost Lease stops it at once (the write fence shut,
nothing drained, the Lease left to its new holder); a clean shutdown drains, then
releases the Lease. ``ControlPlane.run`` with leader election, in the test's loop."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from controlplane.manager import ControlPlane
from controlplane.options import Options
from karmada.kube import KubeClient, from_kubeconfig
from karmada.kube.fence import WriteFence
from karmada.kube.resources import LEASES
from tests.controlplane.test_leadership_terms import WAIT, take_the_lease, until
from tests.pullmode import PullMode
from tests.servers import ServerThread

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(120),
    # known leak, not this test's subject: the election thread's client sometimes leaves a TLS
    # socket to localkube unclosed when run_elected ends (an "unclosed socket" ResourceWarning)
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]
OPTIONS = Options(
    controllers=("namespace", "bindingStatus"),
    leader_elect_lease_duration=3.0,
    leader_elect_renew_deadline=2.0,
    leader_elect_retry_period=0.5,
)
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


async def _holder(client: KubeClient) -> str:
    lease = await client.get(LEASES, OPTIONS.leader_elect_resource_name, OPTIONS.leader_elect_resource_namespace)
    return str(lease["spec"].get("holderIdentity") or "")


async def _term(control_plane: ControlPlane) -> WriteFence:
    """Wait for a running term; the fence its writes go through."""
    await until(lambda: control_plane.leading and control_plane.synced, "a running term")
    fence = control_plane.client.fence
    assert fence is not None and fence.refusal("POST", CONFIGMAPS) is None  # held: writes go
    return fence


async def test_a_lost_lease_stops_the_term_at_once(
    localkube: ServerThread, workdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    env = PullMode(localkube, workdir).install()
    caplog.set_level(logging.INFO, "controlplane")
    async with KubeClient(from_kubeconfig(env.kubeconfig)) as client:
        control_plane = ControlPlane(client, OPTIONS)
        stop = asyncio.Event()
        running = asyncio.create_task(control_plane.run(stop))
        try:
            fence = await _term(control_plane)
            await take_the_lease(client, OPTIONS)
            await until(lambda: "leadership term ended" in caplog.text, "the term to end")
            assert fence.refusal("POST", CONFIGMAPS) is not None  # no write of the lost term goes out
            assert "leadership lost: stopping every controller at once, without draining" in caplog.text
            assert "every controller stopped (not drained)" in caplog.text
            assert client.fence is None  # between terms the fence is gone with the term
            assert await _holder(client) == "intruder"  # not released: it was not ours any more
            assert not running.done()  # campaigning again
        finally:
            stop.set()
            await asyncio.wait_for(running, WAIT)


async def test_a_clean_shutdown_drains_then_releases(
    localkube: ServerThread, workdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    env = PullMode(localkube, workdir).install()
    caplog.set_level(logging.INFO, "controlplane")
    async with KubeClient(from_kubeconfig(env.kubeconfig)) as client:
        control_plane = ControlPlane(client, OPTIONS)
        stop = asyncio.Event()
        running = asyncio.create_task(control_plane.run(stop))
        fence = await _term(control_plane)
        stop.set()  # SIGTERM
        await asyncio.wait_for(running, WAIT)
        assert "every controller stopped (drained)" in caplog.text
        assert "leadership lost" not in caplog.text
        assert fence.refusal("POST", CONFIGMAPS) is not None  # the term is over
        assert await _holder(client) == ""  # released: a standby leads at its next try
