"""Paged lists read one snapshot in key order, with kube-apiserver's continue
tokens, 410 for a snapshot gone from the history and 504 for a
resourceVersion the server has not reached."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from typing import Any

from localkube.server import LIST_SLICE, in_slices
from tests.servers import Raw, ServerThread

NS = "paging"
CM = f"/api/v1/namespaces/{NS}/configmaps"


def _token(page: dict[str, Any]) -> dict[str, Any]:
    token: str = page["metadata"]["continue"]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    return decoded


async def _namespace(raw: Raw, name: str) -> None:
    status, body, _ = await raw.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    assert status in (201, 409), body


async def test_pages_show_the_first_pages_snapshot_while_others_write(raw: Raw) -> None:
    await _namespace(raw, NS)
    for index in range(0, 60, 2):
        status, _, _ = await raw.request("POST", CM, {"metadata": {"name": f"c{index:03d}"}, "data": {"v": "old"}})
        assert status == 201
    _, full, _ = await raw.request("GET", CM)
    expected = [(i["metadata"]["name"], i["metadata"]["resourceVersion"]) for i in full["items"]]
    _, page, _ = await raw.request("GET", f"{CM}?limit=7")
    snapshot = page["metadata"]["resourceVersion"]
    assert snapshot == full["metadata"]["resourceVersion"]
    seen = [(i["metadata"]["name"], i["metadata"]["resourceVersion"]) for i in page["items"]]
    step = 0
    deleted: set[str] = set()
    while page["metadata"].get("continue"):
        assert page["metadata"]["remainingItemCount"] == len(expected) - len(seen)
        # writes between pages: before, inside and after the unread part; deletes and updates of unread items
        step += 1
        for name in (f"c{step * 14 + 1:03d}", f"a{step}", f"z{step}"):
            status, _, _ = await raw.request("POST", CM, {"metadata": {"name": name}})
            assert status == 201
        unread = [name for name, _ in expected[len(seen) :] if name not in deleted and name.startswith("c")]
        if unread:
            deleted.add(unread[-1])
            status, _, _ = await raw.request("DELETE", f"{CM}/{unread[-1]}")
            assert status == 200
        if len(unread) > 2:
            status, _, _ = await raw.request(
                "PATCH", f"{CM}/{unread[1]}", {"data": {"v": "new"}}, content_type="application/merge-patch+json"
            )
            assert status == 200
        token = page["metadata"]["continue"]
        status, page, _ = await raw.request("GET", f"{CM}?limit=7&continue={token}")
        assert status == 200, page
        assert page["metadata"]["resourceVersion"] == snapshot, "every page reports the first page's version"
        assert all((i.get("data") or {}).get("v") != "new" for i in page["items"]), "as at the snapshot"
        seen += [(i["metadata"]["name"], i["metadata"]["resourceVersion"]) for i in page["items"]]
    assert "remainingItemCount" not in page["metadata"]
    assert seen == expected, "the pages concatenate to the list at the snapshot, in order, each object once"
    _, now, _ = await raw.request("GET", CM)
    assert len(now["items"]) == len(expected) + 3 * step - len(deleted), "the writes did happen"


async def test_continue_tokens_are_kube_apiservers(raw: Raw) -> None:
    await _namespace(raw, NS)
    for name in ("t1", "t2", "t3"):
        await raw.request("POST", CM, {"metadata": {"name": name}})
    _, page, _ = await raw.request("GET", f"{CM}?limit=1")
    last = page["items"][0]["metadata"]["name"]
    assert _token(page) == {"v": "meta.k8s.io/v1", "rv": int(page["metadata"]["resourceVersion"]), "start": last + "\0"}
    assert page["metadata"]["continue"].rstrip("=") == page["metadata"]["continue"], "base64url without padding"
    _, across, _ = await raw.request("GET", "/api/v1/configmaps?limit=1")
    first = across["items"][0]["metadata"]
    assert _token(across)["start"] == f"{first['namespace']}/{first['name']}\0", "relative to the list's prefix"


async def test_across_namespaces_the_order_is_the_keys_byte_order(raw: Raw) -> None:
    for namespace in ("order", "order-b"):
        await _namespace(raw, namespace)
        await raw.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", {"metadata": {"name": "x"}})
    _, listed, _ = await raw.request("GET", "/api/v1/configmaps")
    names = [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]]
    keys = [f"{ns}/{name}" for ns, name in names]
    assert keys == sorted(keys)
    assert keys.index("order-b/x") < keys.index("order/x"), '"-" sorts before "/" as in etcd'
    pages: list[tuple[str, str]] = []
    token = ""
    while True:
        _, page, _ = await raw.request("GET", f"/api/v1/configmaps?limit=3&continue={token}")
        pages += [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in page["items"]]
        token = page["metadata"].get("continue", "")
        if not token:
            break
    assert pages == names


def _encoded(payload: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


async def test_invalid_continue_tokens_are_bad_requests(raw: Raw) -> None:
    await _namespace(raw, NS)
    cases = {
        "not-base64-json!": "continue key is not valid",
        _encoded({"v": "meta.k8s.io/v2", "rv": 5, "start": "a"}): "does not recognize this encoded version",
        _encoded({"v": "meta.k8s.io/v1", "rv": 0, "start": "a"}): "incorrect encoded start resourceVersion",
        _encoded({"v": "meta.k8s.io/v1", "rv": 5, "start": ""}): "encoded start key empty",
        _encoded({"v": "meta.k8s.io/v1", "rv": 5, "start": "../other/x"}): "continue key is not valid",
        _encoded(["a", "b"]): "continue key is not valid",
    }
    for token, message in cases.items():
        status, body, _ = await raw.request("GET", f"{CM}?limit=1&continue={token}")
        assert status == 400, (token, body)
        assert body["reason"] == "BadRequest" and body["message"].startswith("invalid continue token: ")
        assert message in body["message"], body["message"]


async def test_a_snapshot_gone_from_the_history_is_410_with_a_token_to_go_on(
    small_history: ServerThread, tmp_path_factory: Any
) -> None:
    raw = Raw(small_history, small_history.kubeconfig(tmp_path_factory.mktemp("small")))
    await _namespace(raw, NS)
    for index in range(6):
        await raw.request("POST", CM, {"metadata": {"name": f"e{index}"}})
    _, page, _ = await raw.request("GET", f"{CM}?limit=2")
    for index in range(6):  # more than the 5 events kept
        await raw.request("POST", CM, {"metadata": {"name": f"f{index}"}})
    status, body, _ = await raw.request("GET", f"{CM}?limit=2&continue={page['metadata']['continue']}")
    assert status == 410 and body["reason"] == "Expired", body
    assert body["message"].startswith("The provided continue parameter is too old to display a consistent list")
    fresh = body["metadata"]["continue"]
    assert _token(body) == {"v": "meta.k8s.io/v1", "rv": -1, "start": page["items"][-1]["metadata"]["name"] + "\0"}
    status, rest, _ = await raw.request("GET", f"{CM}?limit=100&continue={fresh}")
    assert status == 200, rest
    _, latest, _ = await raw.request("GET", CM)
    names = [i["metadata"]["name"] for i in latest["items"]]
    assert [i["metadata"]["name"] for i in rest["items"]] == names[names.index("e1") + 1 :], (
        "the latest state, after e1"
    )
    status, body, _ = await raw.request("GET", f"{CM}?resourceVersionMatch=Exact&resourceVersion={_token(page)['rv']}")
    assert status == 410 and body["message"] == "The resourceVersion for the provided list is too old."


async def test_exact_lists_read_the_requested_snapshot(raw: Raw) -> None:
    await _namespace(raw, NS)
    _, created, _ = await raw.request("POST", CM, {"metadata": {"name": "exact"}, "data": {"v": "1"}})
    at = created["metadata"]["resourceVersion"]
    await raw.request("PATCH", f"{CM}/exact", {"data": {"v": "2"}}, content_type="application/merge-patch+json")
    await raw.request("POST", CM, {"metadata": {"name": "exact-later"}})
    for query in (f"resourceVersionMatch=Exact&resourceVersion={at}", f"resourceVersion={at}&limit=500"):
        status, listed, _ = await raw.request("GET", f"{CM}?{query}&fieldSelector=metadata.name%3Dexact")
        assert status == 200, listed
        assert listed["metadata"]["resourceVersion"] == at
        assert [i["data"] for i in listed["items"]] == [{"v": "1"}]
        _, later, _ = await raw.request("GET", f"{CM}?{query}&fieldSelector=metadata.name%3Dexact-later")
        assert later["items"] == [], "created after the snapshot"
    _, newest, _ = await raw.request("GET", f"{CM}?resourceVersionMatch=NotOlderThan&resourceVersion={at}")
    assert {"v": "2"} in [i.get("data") for i in newest["items"]], "NotOlderThan reads the latest state"


async def test_a_list_ahead_of_the_server_waits_then_answers_504(raw: Raw) -> None:
    await _namespace(raw, NS)
    _, current, _ = await raw.request("GET", CM)
    ahead = int(current["metadata"]["resourceVersion"]) + 1000
    started = asyncio.get_running_loop().time()
    status, body, headers = await raw.request("GET", f"{CM}?resourceVersion={ahead}&resourceVersionMatch=NotOlderThan")
    assert asyncio.get_running_loop().time() - started >= 2.9, "kube-apiserver waits 3 s for the cache"
    assert status == 504 and headers["Retry-After"] == "1"
    assert body["reason"] == "Timeout" and re.fullmatch(
        rf"Timeout: Too large resource version: {ahead}, current: \d+", body["message"]
    )
    assert body["details"] == {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    }
    token = _encoded({"v": "meta.k8s.io/v1", "rv": ahead, "start": "a"})
    queries = [f"?resourceVersion={ahead}", f"?resourceVersion={ahead}&limit=5", f"?limit=5&continue={token}"]
    queries.append(f"/kube-root-ca.crt?resourceVersion={ahead}")  # a get, too
    answers = await asyncio.gather(*(raw.request("GET", f"{CM}{query}") for query in queries))
    for query, (status, body, _) in zip(queries, answers, strict=True):
        assert status == 504 and body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge", query


async def test_a_list_just_ahead_is_answered_once_the_server_gets_there(raw: Raw) -> None:
    await _namespace(raw, NS)
    _, current, _ = await raw.request("GET", CM)
    ahead = int(current["metadata"]["resourceVersion"]) + 1
    waiting = asyncio.create_task(raw.request("GET", f"{CM}?resourceVersion={ahead}"))
    await asyncio.sleep(0.3)
    assert not waiting.done()
    await raw.request("POST", CM, {"metadata": {"name": "arrives"}})
    status, listed, _ = await waiting
    assert status == 200 and int(listed["metadata"]["resourceVersion"]) >= ahead
    assert "arrives" in [i["metadata"]["name"] for i in listed["items"]]


async def test_a_watch_list_ahead_of_the_server_ends_with_the_504_event(raw: Raw) -> None:
    await _namespace(raw, NS)
    _, current, _ = await raw.request("GET", CM)
    ahead = int(current["metadata"]["resourceVersion"]) + 1000
    query = f"resourceVersion={ahead}&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&allowWatchBookmarks=true"
    status, events = await raw.watch(f"{CM}?watch=true&{query}", 6)
    assert status == 200 and [e["type"] for e in events] == ["ERROR"]
    error = events[0]["object"]
    assert error["code"] == 504 and error["reason"] == "Timeout"
    assert error["message"].startswith(f"Timeout: Too large resource version: {ahead}, current: ")
    assert error["details"]["retryAfterSeconds"] == 1
    assert error["details"]["causes"] == [
        {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
    ]


async def test_a_plain_watch_from_a_future_version_starts_there(raw: Raw) -> None:
    await _namespace(raw, NS)
    _, current, _ = await raw.request("GET", CM)
    ahead = int(current["metadata"]["resourceVersion"]) + 2

    written: list[tuple[str, int]] = []

    async def writes() -> None:
        await asyncio.sleep(0.3)
        for name in ("w1", "w2", "w3", "w4"):
            _, created, _ = await raw.request("POST", CM, {"metadata": {"name": name}})
            written.append((name, int(created["metadata"]["resourceVersion"])))

    writer = asyncio.create_task(writes())
    status, events = await raw.watch(f"{CM}?watch=true&resourceVersion={ahead}&timeoutSeconds=2", 4)
    await writer
    assert status == 200, "no error: kube-apiserver answers 504 only to a watch list"
    assert all(e["type"] == "ADDED" for e in events), events
    after = [name for name, rv in written if rv > ahead]
    assert [e["object"]["metadata"]["name"] for e in events] == after
    assert len(after) < len(written), "events up to the requested version are skipped"


async def test_a_long_list_lets_other_requests_run_between_slices() -> None:
    # a Lease renewal arriving while a page of 500 large objects is built and encoded
    # runs between slices, not after the whole answer
    turns = 0

    async def other() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(other())
    await asyncio.sleep(0)
    try:
        before = turns
        done = await in_slices(list(range(LIST_SLICE * 4 + 1)), lambda i: i * 2)
        assert done == [i * 2 for i in range(LIST_SLICE * 4 + 1)]
        assert turns - before >= 4, "the other task ran between the five slices"
        before = turns
        assert await in_slices(list(range(LIST_SLICE)), str) == [str(i) for i in range(LIST_SLICE)]
        assert turns == before, "a single slice runs at once"
    finally:
        task.cancel()


async def test_a_long_list_answers_whole_and_in_order(raw: Raw) -> None:
    namespace = "long-list"
    await _namespace(raw, namespace)
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    data = {f"k{i}": "v" * 200 for i in range(40)}

    async def create(index: int) -> None:
        status, body, _ = await raw.request("POST", path, {"metadata": {"name": f"c{index:04d}"}, "data": data})
        assert status == 201, body

    for start in range(0, 1200, 100):
        await asyncio.gather(*(create(i) for i in range(start, start + 100)))
    listed = asyncio.create_task(raw.request("GET", path))
    _, got, _ = await raw.request("GET", f"{path}/c0001")  # served while the list is built
    _, full, _ = await listed
    assert got["metadata"]["name"] == "c0001"
    ours = [i for i in full["items"] if i["metadata"]["name"] != "kube-root-ca.crt"]
    assert [i["metadata"]["name"] for i in ours] == [f"c{i:04d}" for i in range(1200)]
    assert ours[-1]["data"] == data and full["kind"] == "ConfigMapList" and "apiVersion" not in ours[0]
    assert full["metadata"]["resourceVersion"]
