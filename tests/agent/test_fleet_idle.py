"""What an idle agent does not repeat (the idle cost of a fleet of them), against a real
localkube: the heartbeat Lease is renewed from the copy last written (read again only
after a conflict), and the member's discovery documents become API enablements only when
they changed."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from agent.options import Options
from karmada.kube import Informer, KubeClient, KubeError, from_kubeconfig
from karmada.kube.resources import CLUSTERS, LEASES
from karmada.members.cluster_status import ClusterStatusController
from karmada.members.member import AGGREGATED, Discovery
from localkube.metrics import parse_request_totals
from tests.pullmode import PullMode
from tests.servers import ServerThread


def lease_requests(server: ServerThread) -> Counter[str]:
    counts: Counter[str] = Counter()
    totals = parse_request_totals(server.run_sync(server.server.metrics.render))
    for (verb, _group, resource, _subresource, _code), count in totals.items():
        if resource == "leases":
            counts[verb] += count
    return counts


async def test_the_heartbeat_is_renewed_without_reading_the_lease_again(localkube: ServerThread, workdir: Path) -> None:
    PullMode(localkube, workdir).install()  # the Cluster CRD and the karmada-cluster namespace
    config = from_kubeconfig(localkube.kubeconfig(workdir))
    async with KubeClient(config) as client:
        cluster = Informer(client, CLUSTERS)
        cluster.start()
        await cluster.wait_synced(10)
        options = Options(cluster_name="member9")
        status = ClusterStatusController(client, client, cluster, options)
        try:
            await status.renew_lease()  # none yet: read, then created
            before = lease_requests(localkube)
            for _ in range(3):
                await status.renew_lease()
            after = lease_requests(localkube)
            assert after - before == Counter({"PUT": 3})
            # someone else writes the Lease: the next renewal conflicts, reads it again and succeeds
            lease = await client.get(LEASES, "member9", "karmada-cluster")
            lease["metadata"].setdefault("annotations", {})["touched"] = "yes"
            await client.update(LEASES, lease, "karmada-cluster")
            before = lease_requests(localkube)
            await status.renew_lease()
            assert lease_requests(localkube) - before == Counter({"PUT": 2, "GET": 1})
            renewed = await client.get(LEASES, "member9", "karmada-cluster")
            assert renewed["spec"]["holderIdentity"] == "member9"
            assert renewed["metadata"]["annotations"] == {"touched": "yes"}
            # the Lease removed: a renewal brings it back (a Lease may be created by an update; where
            # the server refuses, the failed renewal forgets its copy and the next one creates it)
            await client.delete(LEASES, "member9", "karmada-cluster")
            with contextlib.suppress(KubeError):
                await status.renew_lease()
            await status.renew_lease()
            assert (await client.get(LEASES, "member9", "karmada-cluster"))["spec"]["leaseDurationSeconds"] == 40
        finally:
            await cluster.stop()


CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.idle.example.com"},
    "spec": {
        "group": "idle.example.com",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
}


async def test_enablements_are_rebuilt_only_when_discovery_changed(localkube: ServerThread, workdir: Path) -> None:
    admin = PullMode(localkube, workdir).admin
    async with KubeClient(from_kubeconfig(localkube.kubeconfig(workdir))) as client:
        discovery = Discovery(client)
        first, complete = await discovery.enablements()
        assert complete and any(e["groupVersion"] == "apps/v1" for e in first)
        again, _ = await discovery.enablements()
        assert again is first  # the same answer: the list built last time
        admin("apply", "-f", "-", stdin=json.dumps(CRD))
        for _ in range(50):
            changed, _ = await discovery.enablements()
            if changed is not first:
                break
            await asyncio.sleep(0.1)
        versions = {e["groupVersion"]: e["resources"] for e in changed}
        assert versions["idle.example.com/v1"] == [{"name": "gadgets", "kind": "Gadget"}]
        assert changed == (await Discovery(client).enablements())[0]  # as a fresh read builds it


async def test_an_unchanged_discovery_document_costs_a_304(localkube: ServerThread, workdir: Path) -> None:
    # kube-apiserver's ETag on aggregated discovery: the agents ask every 10 s, and the answer
    # to the same set of APIs is "Not Modified", not a document to encode and decode again
    admin = PullMode(localkube, workdir).admin
    async with KubeClient(from_kubeconfig(localkube.kubeconfig(workdir))) as client:
        document, etag = await client.get_if_changed("/apis", AGGREGATED, None)
        assert document is not None and document["kind"] == "APIGroupDiscoveryList"
        assert etag and etag.startswith('"') and etag.endswith('"')
        assert await client.get_if_changed("/apis", AGGREGATED, etag) == (None, etag)
        core, core_etag = await client.get_if_changed("/api", AGGREGATED, etag)  # another document's tag
        assert core is not None and core_etag != etag
        gadgets = {**CRD, "metadata": {"name": "widgets.etag.example.com"}}
        names = {"plural": "widgets", "singular": "widget", "kind": "Widget"}
        gadgets["spec"] = {**CRD["spec"], "group": "etag.example.com", "names": names}
        admin("apply", "-f", "-", stdin=json.dumps(gadgets))
        for _ in range(50):
            changed, new_etag = await client.get_if_changed("/apis", AGGREGATED, etag)
            if changed is not None:
                break
            await asyncio.sleep(0.1)
        assert changed is not None and new_etag != etag
        assert any(g["metadata"]["name"] == "etag.example.com" for g in changed["items"])
        # the agent's discovery sends the tag back and keeps its answer on a 304
        answers: list[tuple[bool, bool]] = []  # (a tag was sent, 304)
        real = client.get_if_changed

        async def spy(path: str, accept: str, tag: str | None) -> tuple[dict[str, Any] | None, str | None]:
            answer = await real(path, accept, tag)
            answers.append((tag is not None, answer[0] is None))
            return answer

        client.get_if_changed = spy  # type: ignore[method-assign,assignment]
        discovery = Discovery(client)
        first, complete = await discovery.enablements()
        again, _ = await discovery.enablements()
        assert complete and again is first
        assert answers == [(False, False), (False, False), (True, True), (True, True)]
