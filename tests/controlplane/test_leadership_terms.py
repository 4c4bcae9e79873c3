"""A leader that steps down and is elected again keeps its caches: the second term
lists none of the caches the first one set up (localkube's request counters say so),
and propagation works on: a template changed while nobody led is reconciled, and a
new Deployment and its policy reach their Work.

The control plane runs in the test's event loop (``ControlPlane.run`` with leader
election); the step-down is forced by another identity taking the Lease.
"""

from __future__ import annotations

import asyncio
import datetime
import inspect
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controlplane.detector import PROPAGATION_POLICIES
from controlplane.manager import ControlPlane
from controlplane.options import Options
from karmada.api.names import work_name
from karmada.kube import KubeClient, KubeError, from_kubeconfig
from karmada.kube.leaderelection import micro_time
from karmada.kube.resources import DEPLOYMENTS, LEASES, WORKS
from karmada.timestamps import now_time
from localkube.metrics import parse_request_totals
from tests.factories import cluster
from tests.pullmode import PullMode
from tests.servers import ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

Obj = dict[str, Any]
WAIT = 30.0
MEMBER = "member1"
EXECUTION_SPACE = f"karmada-es-{MEMBER}"
# some of the caches the controllers' setup asks for
WARM = ("works", "clusters", "resourcebindings", "clusterresourcebindings", "propagationpolicies", "leases")


def lists(server: ServerThread) -> Counter[str]:
    """LIST requests localkube answered so far, by resource."""
    counts: Counter[str] = Counter()
    for (verb, _group, resource, _subresource, _code), count in parse_request_totals(
        server.run_sync(server.server.metrics.render)
    ).items():
        if verb == "LIST":
            counts[resource] += count
    return counts


async def until(condition: Callable[[], Any], what: str, timeout: float = WAIT) -> None:
    """Poll ``condition`` (a plain or an async function) until it holds."""
    try:
        async with asyncio.timeout(timeout):
            while True:
                held = condition()
                if inspect.isawaitable(held):
                    held = await held
                if held:
                    return
                await asyncio.sleep(0.1)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def add_ready_cluster(env: PullMode) -> None:
    obj = cluster(MEMBER).to_dict()
    status = obj.pop("status")
    status["conditions"] = [
        {"type": "Ready", "status": "True", "reason": "ClusterReady", "message": "ok", "lastTransitionTime": now_time()}
    ]
    env.admin("apply", "-f", "-", stdin=json.dumps(obj))
    env.admin("patch", "cluster", MEMBER, "--subresource=status", "--type=merge", "-p", json.dumps({"status": status}))
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": EXECUTION_SPACE}}
    env.admin("apply", "-f", "-", stdin=json.dumps(namespace))


def deployment(name: str, image: str) -> Obj:
    labels = {"app": name}
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": image}]}},
        },
    }


def policy(name: str) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
            "placement": {"clusterAffinity": {"clusterNames": [MEMBER]}},
        },
    }


async def propagate(client: KubeClient, name: str, image: str) -> None:
    await client.create(DEPLOYMENTS, deployment(name, image), "default")
    await client.create(PROPAGATION_POLICIES, policy(name), "default")


def work_image(client: KubeClient, name: str) -> Callable[[], Any]:
    async def image() -> str | None:
        work = await client.get_or_none(WORKS, work_name("Deployment", name, "default"), EXECUTION_SPACE)
        if work is None:
            return None
        manifest = work["spec"]["workload"]["manifests"][0]
        return str(manifest["spec"]["template"]["spec"]["containers"][0]["image"])

    return image


async def tamper(client: KubeClient, name: str) -> None:
    work = await client.get(WORKS, work_name("Deployment", name, "default"), EXECUTION_SPACE)
    work["spec"]["workload"]["manifests"][0]["spec"]["template"]["spec"]["containers"][0]["image"] = "tampered"
    await client.update(WORKS, work, EXECUTION_SPACE)


async def take_the_lease(client: KubeClient, options: Options) -> None:
    """Another candidate writes itself into the Lease (as after a missed renewal)."""
    namespace, name = options.leader_elect_resource_namespace, options.leader_elect_resource_name
    while True:  # the leader renews every half second: a write may cross one of its renewals
        lease = await client.get(LEASES, name, namespace)
        lease["spec"].update(
            holderIdentity="intruder",
            leaseDurationSeconds=4,
            renewTime=micro_time(datetime.datetime.now(datetime.UTC)),
        )
        try:
            await client.update(LEASES, lease, namespace)
            return
        except KubeError as exc:
            if not exc.conflict:
                raise


async def test_a_second_term_lists_no_warm_cache_and_propagates(localkube: ServerThread, workdir: Path) -> None:
    env = PullMode(localkube, workdir).install()
    add_ready_cluster(env)
    options = Options(
        leader_elect_lease_duration=3.0,
        leader_elect_renew_deadline=2.0,
        leader_elect_retry_period=0.5,
    )
    async with KubeClient(from_kubeconfig(env.kubeconfig)) as client:
        control_plane = ControlPlane(client, options)
        stop = asyncio.Event()
        running = asyncio.create_task(control_plane.run(stop))
        try:

            def leading() -> bool:
                return control_plane.leading and control_plane.synced

            await until(leading, "the first term")
            await propagate(client, "before", "nginx:1")
            await propagate(client, "steady", "nginx:1")
            await until(lambda: _is(work_image(client, "before"), "nginx:1"), "the first term's Work")
            await until(lambda: _is(work_image(client, "steady"), "nginx:1"), "the first term's other Work")

            listed = lists(localkube)
            await take_the_lease(client, options)
            await until(lambda: not control_plane.leading, "the step-down")
            # changed while nobody leads: the next term finds it in its cache, not as an event
            template = await client.get(DEPLOYMENTS, "before", "default")
            template["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
            await client.update(DEPLOYMENTS, template, "default")
            # and a Work (a cache kept warm) changed by hand: the binding controller puts it back
            await tamper(client, "steady")
            assert not control_plane.leading, "re-elected before the change: no gap to test"

            await until(leading, "the second term")
            await until(lambda: _is(work_image(client, "before"), "nginx:2"), "the change made between terms")
            await until(lambda: _is(work_image(client, "steady"), "nginx:1"), "the Work changed between terms")
            await propagate(client, "after", "nginx:3")
            await until(lambda: _is(work_image(client, "after"), "nginx:3"), "the second term's Work")

            relisted = lists(localkube) - listed
            # the Deployments' cache was made on demand (a policy selects them): the only one gone with the term
            assert set(relisted) <= {"deployments"}, relisted
            assert {*WARM, "namespaces", "clusterroles", "rolebindings"} <= set(listed)  # the first term listed them
        finally:
            stop.set()
            await asyncio.wait_for(running, WAIT)


async def _is(read: Callable[[], Any], expected: str) -> bool:
    return bool(await read() == expected)
