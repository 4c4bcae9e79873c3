"""The shared Kubernetes plumbing, against a real localkube over TLS."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from karmada.kube import (
    ConfigError,
    EventRecorder,
    Informer,
    KubeClient,
    KubeError,
    LeaderElector,
    ResourceMapper,
    UnknownKind,
    WorkQueue,
    from_kubeconfig,
    from_kubeconfig_bytes,
)
from karmada.kube.config import ClusterConfig
from karmada.kube.resources import CONFIGMAPS, EVENTS, LEASES
from manifests import crd_files
from tests.servers import ServerThread, plain_http


async def test_crud_and_errors(kube: KubeClient) -> None:
    created = await kube.create(CONFIGMAPS, {"metadata": {"name": "plumb"}, "data": {"a": "1"}}, "default")
    assert created["metadata"]["uid"]
    with pytest.raises(KubeError) as caught:
        await kube.create(CONFIGMAPS, {"metadata": {"name": "plumb"}}, "default")
    assert caught.value.already_exists
    patched = await kube.patch(CONFIGMAPS, "plumb", {"data": {"b": "2"}}, "default")
    assert patched["data"] == {"a": "1", "b": "2"}
    stale = dict(created, data={"c": "3"})
    with pytest.raises(KubeError) as conflict:
        await kube.update(CONFIGMAPS, stale, "default")
    assert conflict.value.conflict
    applied = await kube.apply(
        CONFIGMAPS,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "ssa", "namespace": "default"},
            "data": {"x": "1"},
        },
        "default",
        manager="test",
    )
    assert applied["metadata"]["managedFields"][0]["manager"] == "test"
    await kube.delete(CONFIGMAPS, "plumb", "default")
    assert await kube.get_or_none(CONFIGMAPS, "plumb", "default") is None


async def test_resource_mapper_resolves_crds_after_they_appear(kube: KubeClient, localkube: ServerThread) -> None:
    mapper = ResourceMapper(kube)
    deployments = await mapper.resource_for("apps/v1", "Deployment")
    assert (deployments.plural, deployments.namespaced) == ("deployments", True)
    with pytest.raises(UnknownKind):
        await mapper.resource_for("cluster.karmada.io/v1alpha1", "Cluster")
    crd = yaml.safe_load(next(p for p in crd_files() if "clusters" in p.name).read_text())
    await kube.create((await mapper.resource_for("apiextensions.k8s.io/v1", "CustomResourceDefinition")), crd)
    clusters = await mapper.resource_for("cluster.karmada.io/v1alpha1", "Cluster")
    assert (clusters.plural, clusters.namespaced) == ("clusters", False)


async def test_informer_caches_and_relists_after_410(small_history: ServerThread, workdir: Path) -> None:
    async with KubeClient(
        from_kubeconfig(small_history.kubeconfig(workdir, "informer-admin", ["system:masters"]))
    ) as client:
        informer = Informer(client, CONFIGMAPS, namespace="default", label_selector="app=cached", min_watch_timeout=1)
        seen: list[tuple[str, str]] = []
        informer.add_handler(lambda kind, obj, old: seen.append((kind, obj["metadata"]["name"])))
        informer.start()
        await informer.wait_synced(5)
        await client.create(CONFIGMAPS, {"metadata": {"name": "c1", "labels": {"app": "cached"}}}, "default")
        for _ in range(50):
            if informer.get("c1", "default"):
                break
            await asyncio.sleep(0.05)
        assert informer.get("c1", "default") is not None
        cached = informer.get("c1", "default")
        assert cached is not None and "managedFields" not in cached["metadata"]
        # expire the informer's resourceVersion while its watch is between reconnections
        await informer.stop()
        for index in range(10):
            await client.create(CONFIGMAPS, {"metadata": {"name": f"churn-{index}"}}, "default")
        await client.create(CONFIGMAPS, {"metadata": {"name": "c2", "labels": {"app": "cached"}}}, "default")
        relists = informer.relists
        informer.start()
        for _ in range(100):
            if informer.get("c2", "default"):
                break
            await asyncio.sleep(0.05)
        await informer.stop()
        assert informer.get("c2", "default") is not None and informer.relists > relists
        assert ("ADDED", "c1") in seen and ("ADDED", "c2") in seen
        assert {o["metadata"]["name"] for o in informer.items()} == {"c1", "c2"}


async def test_work_queue_deduplicates_and_backs_off() -> None:
    queue: WorkQueue[str] = WorkQueue(base_delay=0.01, max_delay=0.05)
    queue.add("a")
    queue.add("a")
    queue.add("b")
    assert len(queue) == 2
    key = await queue.get()
    assert key == "a"
    queue.add("a")  # while processing: comes back after done()
    assert len(queue) == 1
    queue.done("a")
    assert len(queue) == 2
    assert [queue.add_rate_limited("x") for _ in range(4)] == [0.01, 0.02, 0.04, 0.05]
    queue.forget("x")
    assert queue.failures("x") == 0
    got = [await asyncio.wait_for(queue.get(), 1) for _ in range(3)]
    assert got == ["b", "a", "x"]
    await queue.shutdown()


async def test_leader_election_hands_over(kube: KubeClient) -> None:
    first = LeaderElector(kube, "default", "election", "one", lease_duration=1, renew_deadline=0.8, retry_period=0.1)
    second = LeaderElector(kube, "default", "election", "two", lease_duration=1, renew_deadline=0.8, retry_period=0.1)
    assert await first.try_acquire_or_renew()
    assert not await second.try_acquire_or_renew()
    lease = await kube.get(LEASES, "election", "default")
    assert lease["spec"]["holderIdentity"] == "one"
    await asyncio.sleep(1.2)  # "one" stopped renewing: the lease expires
    assert await second.try_acquire_or_renew()
    lease = await kube.get(LEASES, "election", "default")
    assert (lease["spec"]["holderIdentity"], lease["spec"]["leaseTransitions"]) == ("two", 1)
    led = asyncio.Event()

    async def lead() -> None:
        led.set()
        await asyncio.sleep(3600)

    runner = asyncio.create_task(second.run(lead))
    await asyncio.wait_for(led.wait(), 2)
    assert second.is_leader
    runner.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await runner


async def test_event_recorder_aggregates(kube: KubeClient) -> None:
    target = await kube.create(CONFIGMAPS, {"metadata": {"name": "noted"}}, "default")
    target.update(apiVersion="v1", kind="ConfigMap")
    recorder = EventRecorder(kube, "karmada-test")
    await recorder.record(target, "Normal", "Synced", "all good")
    await recorder.record(target, "Normal", "Synced", "all good")
    await recorder.flush()
    events = await kube.list(EVENTS, "default", fieldSelector="involvedObject.name=noted")
    assert len(events["items"]) == 1
    event: dict[str, Any] = events["items"][0]
    assert (event["reason"], event["count"], event["source"]["component"]) == ("Synced", 2, "karmada-test")


def test_kubeconfig_loading(tmp_path: Path) -> None:
    text = """
apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://a.example:6443/", insecure-skip-tls-verify: true}
- name: b
  cluster: {server: "https://b.example", certificate-authority: ca.pem}
users:
- name: t
  user: {token: secret-token}
contexts:
- name: ctx-a
  context: {cluster: a, user: t}
- name: ctx-b
  context: {cluster: b, user: t}
current-context: ctx-a
"""
    (tmp_path / "ca.pem").write_text("PEM")
    (tmp_path / "config").write_text(text)
    first = from_kubeconfig(tmp_path / "config")
    assert (first.server, first.insecure, first.credentials.bearer()) == (
        "https://a.example:6443",
        True,
        "secret-token",
    )
    second = from_kubeconfig(tmp_path / "config", context="ctx-b")
    assert second.server == "https://b.example" and second.ca_pem == b"PEM"
    with pytest.raises(ConfigError, match="context 'nope' not found"):
        from_kubeconfig_bytes(text, context="nope")
    with pytest.raises(ConfigError, match="cannot read kubeconfig"):
        from_kubeconfig(tmp_path / "missing")


async def test_many_open_watches_leave_room_for_requests(kube: KubeClient) -> None:
    # a control plane working 50 Push members holds 100 watches on one client: more than the
    # requests' pool of 64 connections, which must still serve everything else at once
    opened = 0

    async def hold() -> None:
        nonlocal opened
        async for _kind, _obj in kube.watch(CONFIGMAPS, "default", timeout_seconds=60):
            opened += 1  # the first event (the initial ADDED) says the watch is open
            await asyncio.Event().wait()

    await kube.create(CONFIGMAPS, {"metadata": {"name": "watched"}, "data": {}}, "default")
    watches = [asyncio.create_task(hold()) for _ in range(100)]
    try:
        async with asyncio.timeout(20):
            while opened < 100:
                await asyncio.sleep(0.05)
            answers = await asyncio.gather(*(kube.get(CONFIGMAPS, "watched", "default") for _ in range(10)))
        assert all(a["metadata"]["name"] == "watched" for a in answers)
    finally:
        for task in watches:
            task.cancel()
        await asyncio.gather(*watches, return_exceptions=True)
        await kube.delete(CONFIGMAPS, "watched", "default")


async def test_a_companion_answers_while_the_clients_pool_is_full() -> None:
    # leader election's client: its renewals must not wait behind 64 slow requests of the controllers
    release = asyncio.Event()

    async def answer(request: web.Request) -> web.Response:
        if request.match_info["name"] == "slow":
            await release.wait()
        return web.json_response({"metadata": {"name": request.match_info["name"]}})

    app = web.Application()
    app.router.add_get("/api/v1/namespaces/default/configmaps/{name}", answer)
    async with plain_http(app) as url:
        client = KubeClient(ClusterConfig(server=url), timeout=30)
        companion = client.companion()
        slow = [asyncio.create_task(client.get(CONFIGMAPS, "slow", "default")) for _ in range(70)]
        try:
            await asyncio.sleep(0.3)  # every connection of the pool taken
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.get(CONFIGMAPS, "quick", "default"), 1.0)
            async with asyncio.timeout(5):
                assert (await companion.get(CONFIGMAPS, "quick", "default"))["metadata"]["name"] == "quick"
            renewed = ClusterConfig(server=url, tls_server_name="renewed")
            await client.set_config(renewed)
            assert companion.config is renewed, "a renewed certificate reaches the companion too"
        finally:
            release.set()
            await asyncio.gather(*slow, return_exceptions=True)
            await companion.close()
            await client.close()
    assert client._companions == [], "a closed companion is forgotten"


@pytest.mark.parametrize(
    ("answers", "expected", "calls"),
    [
        ([(429, "0.05"), (429, "0.05"), (201, None)], 201, 3),  # API Priority and Fairness turned it away twice
        ([(429, None)], 429, 1),  # no Retry-After: the answer stands
        ([(429, "soon")], 429, 1),  # not a number of seconds
        ([(429, "0.01")] * 12, 429, 11),  # client-go's ten retries, then the answer stands
        ([(500, "0.01"), (201, None)], 500, 1),  # only 429 says the server did not run it
    ],
)
async def test_a_429_with_retry_after_is_sent_again(
    answers: list[tuple[int, str | None]], expected: int, calls: int
) -> None:
    bodies: list[bytes] = []

    async def answer(request: web.Request) -> web.Response:
        bodies.append(await request.read())
        status, wait = answers[min(len(bodies), len(answers)) - 1]
        headers = {"Retry-After": wait} if wait is not None else {}
        if status >= 400:
            body = {"kind": "Status", "apiVersion": "v1", "code": status, "reason": "TooManyRequests", "message": "m"}
            return web.json_response(body, status=status, headers=headers)
        return web.json_response({"metadata": {"name": "made"}}, status=status)

    app = web.Application()
    app.router.add_post("/api/v1/namespaces/default/configmaps", answer)
    made = {"metadata": {"name": "made"}, "data": {"k": "v"}}
    async with plain_http(app) as url, KubeClient(ClusterConfig(server=url), timeout=30) as client:
        if expected == 201:
            assert (await client.create(CONFIGMAPS, made, "default"))["metadata"]["name"] == "made"
        else:
            with pytest.raises(KubeError) as raised:
                await client.create(CONFIGMAPS, made, "default")
            assert raised.value.status == expected
    assert len(bodies) == calls
    assert all(b == bodies[0] and b"made" in b for b in bodies), "each retry sends the whole body again"
