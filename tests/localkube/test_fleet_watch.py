"""Watches at fleet scale: an event is queued only for the watches that can match
it (by namespace, by ``metadata.name``), and a client that leaves is noticed
without every idle watch waking to look."""

from __future__ import annotations

import asyncio
import datetime
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from localkube.store import Store
from tests.servers import Raw, ServerThread, start_server

CONFIGMAPS = "/configmaps"


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        ("", "", ["a/one", "a/two", "b/one", "/cluster"]),
        ("a", "", ["a/one", "a/two"]),
        ("b", "", ["b/one"]),
        ("", "one", ["a/one", "b/one"]),
        ("a", "one", ["a/one"]),
        ("c", "", []),
        ("", "cluster", ["/cluster"]),
    ],
)
def test_an_event_is_queued_only_for_watchers_that_can_match_it(namespace: str, name: str, expected: list[str]) -> None:
    async def run() -> list[str]:
        store = Store()
        watcher = store.subscribe(CONFIGMAPS, namespace, name)
        for ns, object_name in (("a", "one"), ("a", "two"), ("b", "one"), ("", "cluster")):
            store.put(CONFIGMAPS, {"metadata": {"namespace": ns, "name": object_name}}, "ADDED")
        store.delete(CONFIGMAPS, "a", "two")
        seen = []
        while not watcher.queue.empty():
            event = watcher.queue.get_nowait()
            if event.type == "ADDED":
                meta = event.obj["metadata"]
                seen.append(f"{meta.get('namespace', '')}/{meta['name']}")
        store.unsubscribe(CONFIGMAPS, watcher)
        assert len(store._watchers[CONFIGMAPS]) == 0, "an unsubscribed watcher is gone from the index"
        return seen

    assert asyncio.run(run()) == expected


@pytest.fixture
def server() -> Iterator[ServerThread]:
    yield from start_server()


def test_a_watch_by_name_and_by_namespace_sees_exactly_its_objects(server: ServerThread, tmp_path: Path) -> None:
    raw = Raw(server, server.kubeconfig(tmp_path))

    async def run() -> None:
        for namespace in ("karmada-es-member1", "karmada-es-member2"):
            assert (await raw.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}}))[0] == 201
        base = "/api/v1/namespaces/karmada-es-member1/configmaps"
        assert (await raw.request("POST", base, {"metadata": {"name": "mine"}}))[0] == 201

        async def writes() -> None:
            await asyncio.sleep(0.8)
            for namespace in ("karmada-es-member2", "karmada-es-member1"):
                for name in ("other", "mine-too"):
                    path = f"/api/v1/namespaces/{namespace}/configmaps"
                    await raw.request("POST", path, {"metadata": {"name": name}})
            await raw.request("DELETE", f"{base}/mine")

        by_name, by_namespace, everywhere, _ = await asyncio.gather(
            raw.watch(f"{base}?watch=true&fieldSelector=metadata.name%3Dmine", 2.5),
            raw.watch(f"{base}?watch=true", 2.5),
            raw.watch("/api/v1/configmaps?watch=true&fieldSelector=metadata.namespace%3Dkarmada-es-member2", 2.5),
            writes(),
        )

        def seen(events: list[dict[str, object]]) -> list[str]:
            names = [f"{e['type']} {e['object']['metadata']['name']}" for e in events]  # type: ignore[index]
            return [n for n in names if not n.endswith("kube-root-ca.crt")]  # each namespace's own

        assert seen(by_name[1]) == ["ADDED mine", "DELETED mine"]
        assert seen(by_namespace[1]) == ["ADDED mine", "ADDED other", "ADDED mine-too", "DELETED mine"]
        assert seen(everywhere[1]) == ["ADDED other", "ADDED mine-too"]

    server.call(run())


def test_a_client_that_leaves_an_idle_watch_is_noticed(server: ServerThread, tmp_path: Path) -> None:
    raw = Raw(server, server.kubeconfig(tmp_path))

    async def run() -> None:
        before = server.server.watch_count
        async with aiohttp.ClientSession() as session:
            responses = [
                await session.get(f"{raw.url}/api/v1/namespaces/default/configmaps?watch=true", ssl=raw.context)
                for _ in range(3)
            ]
            assert all(r.status == 200 for r in responses)
            await asyncio.sleep(0.2)
            assert server.server.watch_count == before + 3
            for response in responses:
                response.close()  # the client goes away, the server writes nothing meanwhile
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline and server.server.watch_count > before:
            await asyncio.sleep(0.1)
        assert server.server.watch_count == before

    server.call(run())


def test_a_bootstrap_token_is_deleted_as_it_expires_without_polling(server: ServerThread, tmp_path: Path) -> None:
    raw = Raw(server, server.kubeconfig(tmp_path))
    soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=1.5)

    async def run() -> None:
        for token_id, expiration in (
            ("aaaaaa", soon.strftime("%Y-%m-%dT%H:%M:%SZ")),
            ("bbbbbb", "2099-01-01T00:00:00Z"),
        ):
            secret = {
                "metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "kube-system"},
                "type": "bootstrap.kubernetes.io/token",
                "stringData": {"token-id": token_id, "token-secret": "0123456789abcdef", "expiration": expiration},
            }
            status, body, _ = await raw.request("POST", "/api/v1/namespaces/kube-system/secrets", secret)
            assert status == 201, body
        path = "/api/v1/namespaces/kube-system/secrets/bootstrap-token-"
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and (await raw.request("GET", path + "aaaaaa"))[0] == 200:
            await asyncio.sleep(0.1)
        assert (await raw.request("GET", path + "aaaaaa"))[0] == 404
        assert (await raw.request("GET", path + "bbbbbb"))[0] == 200

    server.call(run())
