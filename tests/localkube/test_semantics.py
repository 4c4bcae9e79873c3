"""The API-server semantics clients silently depend on, checked over raw HTTPS:
one test per "likely drift" of the reference (section 12) not covered by the
kubectl and client suites."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.factories import crd
from tests.servers import Raw, ServerThread

CM = "/api/v1/namespaces/default/configmaps"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"

WIDGET_CRD = crd(
    "example.com",
    "Widget",
    {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
        },
    },
    subresources={"status": {}},
)


@pytest.fixture(scope="module")
def widgets(raw: Raw) -> None:
    """A namespaced custom resource with a status subresource, once per module."""

    async def install() -> None:
        status, _, _ = await raw.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", WIDGET_CRD)
        assert status == 201
        for _ in range(100):
            if (await raw.request("GET", WIDGETS))[0] == 200:
                await asyncio.sleep(0.05)  # let the TLS shutdown finish before this loop ends
                return
            await asyncio.sleep(0.05)
        raise AssertionError("widgets never became served")

    asyncio.run(install())


async def _events_after(raw: Raw, path: str, resource_version: str, seconds: float) -> list[dict[str, Any]]:
    """Every watch event after ``resource_version`` within ``seconds``."""
    separator = "&" if "?" in path else "?"
    _, events = await raw.watch(
        f"{path}{separator}watch=true&resourceVersion={resource_version}&timeoutSeconds=1", seconds
    )
    return events


async def test_resource_version_is_global_and_noop_writes_keep_it(raw: Raw) -> None:
    _, first, _ = await raw.request("POST", CM, {"metadata": {"name": "rv-a"}, "data": {"k": "v"}})
    _, lease, _ = await raw.request("POST", LEASES, {"metadata": {"name": "rv-b"}, "spec": {"holderIdentity": "x"}})
    _, second, _ = await raw.request("POST", CM, {"metadata": {"name": "rv-c"}})
    versions = [int(o["metadata"]["resourceVersion"]) for o in (first, lease, second)]
    assert versions == sorted(versions) and len(set(versions)) == 3, "one counter across kinds"
    before = second["metadata"]["resourceVersion"]
    status, same, _ = await raw.request(
        "PATCH", f"{CM}/rv-c", {"metadata": {"labels": None}}, content_type="application/merge-patch+json"
    )
    assert status == 200 and same["metadata"]["resourceVersion"] == before
    assert await _events_after(raw, CM + "?fieldSelector=metadata.name%3Drv-c", before, 0.5) == []


@pytest.mark.parametrize(
    ("renew_time", "expected"),
    [
        ("2025-01-02T03:04:05+00:00", 400),
        ("2025-01-02T03:04:05.000000", 400),
        ("2025-01-02T03:04:05.123Z", 400),
        ("2025-01-02T03:04:05.000000+00:00", 200),
        ("2025-01-02T03:04:05.123456Z", 200),
    ],
)
async def test_micro_time_is_parsed_strictly(raw: Raw, renew_time: str, expected: int) -> None:
    name = f"micro-{expected}-{abs(hash(renew_time)) % 10_000}"
    status, body, _ = await raw.request(
        "POST", LEASES, {"metadata": {"name": name}, "spec": {"holderIdentity": "h", "renewTime": renew_time}}
    )
    assert status in (expected, 201 if expected == 200 else expected), body
    if expected == 400:
        assert body["reason"] == "BadRequest" and "cannot be handled as a Lease" in body["message"]
    else:
        assert body["spec"]["renewTime"] == renew_time.replace("+00:00", "Z")


async def test_optimistic_concurrency(raw: Raw, widgets: None) -> None:
    _, created, _ = await raw.request("POST", CM, {"metadata": {"name": "occ"}, "data": {"n": "0"}})
    one = {**created, "data": {"n": "1"}}
    two = {**created, "data": {"n": "2"}}
    assert (await raw.request("PUT", f"{CM}/occ", one))[0] == 200
    status, conflict, _ = await raw.request("PUT", f"{CM}/occ", two)
    assert status == 409 and conflict["reason"] == "Conflict"
    assert conflict["message"] == (
        'Operation cannot be fulfilled on configmaps "occ": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    # custom resources and leases refuse unconditional updates
    await raw.request("POST", WIDGETS, {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    unconditional = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 2}}
    status, invalid, _ = await raw.request("PUT", f"{WIDGETS}/w", unconditional)
    assert status == 422 and invalid["reason"] == "Invalid"
    assert "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update" in invalid["message"]
    status, _, _ = await raw.request("PUT", f"{LEASES}/rv-b", {"metadata": {"name": "rv-b"}, "spec": {}})
    assert status == 422
    # configmaps accept them; a PUT to a missing CR is 404 but creates a Lease
    assert (await raw.request("PUT", f"{CM}/occ", {"metadata": {"name": "occ"}}))[0] == 200
    missing = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "nope"}}
    assert (await raw.request("PUT", f"{WIDGETS}/nope", missing))[0] == 404
    assert (await raw.request("PUT", f"{LEASES}/made", {"metadata": {"name": "made"}, "spec": {}}))[0] == 201


async def test_patch_types_are_never_guessed(raw: Raw, widgets: None) -> None:
    await raw.request("POST", CM, {"metadata": {"name": "patched"}, "data": {"a": "1"}})
    status, body, _ = await raw.request(
        "PATCH", f"{CM}/patched", {"data": {"b": "2"}}, content_type="application/json-patch+json"
    )
    assert status == 400, body
    status, body, _ = await raw.request(
        "PATCH", f"{WIDGETS}/w", {"spec": {"size": 3}}, content_type="application/strategic-merge-patch+json"
    )
    assert status == 415 and body["reason"] == "UnsupportedMediaType"
    status, body, _ = await raw.request("PATCH", f"{CM}/patched", {"data": {"b": "2"}}, content_type="text/plain")
    assert status == 415
    status, body, _ = await raw.request(
        "PATCH",
        f"{CM}/patched",
        [{"op": "test", "path": "/data/a", "value": "9"}],
        content_type="application/json-patch+json",
    )
    assert status == 422 and body["reason"] == "Invalid"
    status, body, _ = await raw.request(
        "PATCH", f"{CM}/patched?force=true", {"data": {}}, content_type="application/merge-patch+json"
    )
    assert status == 422 and "force: Forbidden: may not be specified for non-apply patch" in body["message"]


async def test_status_subresource_matrix(raw: Raw, widgets: None) -> None:
    body = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "st", "labels": {"a": "1"}},
        "spec": {"size": 1},
        "status": {"phase": "ignored-on-create"},
    }
    _, created, _ = await raw.request("POST", WIDGETS, body)
    assert "status" not in created and created["metadata"]["generation"] == 1
    # /status writes only status: spec and metadata changes are dropped, generation stays
    change = {**created, "metadata": {**created["metadata"], "labels": {"a": "2"}}, "spec": {"size": 9}}
    _, after_status, _ = await raw.request("PUT", f"{WIDGETS}/st/status", {**change, "status": {"phase": "Ready"}})
    assert after_status["status"] == {"phase": "Ready"} and after_status["spec"] == {"size": 1}
    assert after_status["metadata"]["labels"] == {"a": "1"} and after_status["metadata"]["generation"] == 1
    # the main resource ignores status, bumps generation for spec only
    main = {**after_status, "spec": {"size": 2}, "status": {"phase": "Overwritten"}}
    _, after_main, _ = await raw.request("PUT", f"{WIDGETS}/st", main)
    assert after_main["status"] == {"phase": "Ready"} and after_main["metadata"]["generation"] == 2
    labels_only = {**after_main, "metadata": {**after_main["metadata"], "labels": {"a": "3"}}}
    _, relabelled, _ = await raw.request("PUT", f"{WIDGETS}/st", labels_only)
    assert relabelled["metadata"]["generation"] == 2 and relabelled["metadata"]["labels"] == {"a": "3"}
    # built-ins: /status resets spec but keeps other metadata changes
    deployment = {
        "metadata": {"name": "st", "labels": {"app": "st"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "st"}},
            "template": {"metadata": {"labels": {"app": "st"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
    }
    deployments = "/apis/apps/v1/namespaces/default/deployments"
    _, dep, _ = await raw.request("POST", deployments, deployment)
    dep_status = {**dep, "spec": {**dep["spec"], "replicas": 7}, "status": {"replicas": 1, "readyReplicas": 1}}
    _, written, _ = await raw.request("PUT", f"{deployments}/st/status", dep_status)
    assert written["spec"]["replicas"] == 1 and written["status"]["readyReplicas"] == 1
    assert written["metadata"]["generation"] == 1


async def test_deletion_is_seen_as_one_event(raw: Raw) -> None:
    _, held, _ = await raw.request("POST", CM, {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}})
    status, deleting, _ = await raw.request("DELETE", f"{CM}/held")
    assert status == 200 and deleting["metadata"]["deletionTimestamp"]
    assert (await raw.request("GET", f"{CM}/held"))[0] == 200, "finalizers keep the object"
    since = deleting["metadata"]["resourceVersion"]
    release = {**deleting, "metadata": {**deleting["metadata"], "finalizers": []}}
    status, final, _ = await raw.request("PUT", f"{CM}/held", release)
    assert status == 200
    events = await _events_after(raw, CM + "?fieldSelector=metadata.name%3Dheld", since, 0.5)
    assert [e["type"] for e in events] == ["DELETED"]
    assert (await raw.request("GET", f"{CM}/held"))[0] == 404
    # a terminating namespace refuses new content
    await raw.request("POST", "/api/v1/namespaces", {"metadata": {"name": "going"}})
    await raw.request("POST", "/api/v1/namespaces/going/configmaps", {"metadata": {"name": "x", "finalizers": ["a/b"]}})
    await raw.request("DELETE", "/api/v1/namespaces/going")
    status, refused, _ = await raw.request("POST", "/api/v1/namespaces/going/configmaps", {"metadata": {"name": "y"}})
    assert status == 403 and refused["reason"] == "Forbidden" and "being terminated" in refused["message"]
    _, namespace, _ = await raw.request("GET", "/api/v1/namespaces/going")
    assert namespace["status"]["phase"] == "Terminating", "content with finalizers keeps the namespace"
    assert held["metadata"]["uid"] == final["metadata"]["uid"]


@pytest.mark.parametrize(
    ("path", "selector", "status"),
    [
        (CM, "metadata.name=held", 200),
        (CM, "metadata.namespace=default", 200),
        ("/api/v1/namespaces/default/events", "involvedObject.kind=Pod,involvedObject.name=p", 200),
        ("/api/v1/namespaces/default/pods", "spec.nodeName=n1,status.phase!=Running", 200),
        ("/api/v1/namespaces/default/secrets", "type=Opaque", 200),
        (CM, "data.k=v", 400),
        (CM, "metadata.labels=x", 400),
    ],
)
async def test_field_selectors(raw: Raw, path: str, selector: str, status: int) -> None:
    code, body, _ = await raw.request("GET", f"{path}?fieldSelector={selector}")
    assert code == status, body
    if status == 400:
        assert body["message"].startswith("field label not supported:")


async def test_lists_are_sorted_with_a_snapshot_version(raw: Raw) -> None:
    path = "/apis/coordination.k8s.io/v1/namespaces/lists/leases"
    await raw.request("POST", "/api/v1/namespaces", {"metadata": {"name": "lists"}})
    _, empty, _ = await raw.request("GET", path)
    assert empty["items"] == [] and empty["metadata"]["resourceVersion"]
    for name in ("c", "a", "b"):
        await raw.request("POST", path, {"metadata": {"name": name}})
    _, newest, _ = await raw.request("POST", CM, {"metadata": {"name": "elsewhere"}})
    _, listed, _ = await raw.request("GET", path)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a", "b", "c"]
    assert int(listed["metadata"]["resourceVersion"]) >= int(newest["metadata"]["resourceVersion"])
    _, page, _ = await raw.request("GET", f"{path}?limit=2&labelSelector=")
    assert page["metadata"]["remainingItemCount"] == 1
    _, selected, _ = await raw.request("GET", f"{path}?limit=1&labelSelector=x!%3Dy")
    assert "remainingItemCount" not in selected["metadata"] and selected["metadata"]["continue"]


async def test_identity_rejections(raw: Raw, localkube: ServerThread, workdir: Path) -> None:
    status, body, _ = await raw.request("GET", CM, token="not-a-real-token")
    assert status == 401 and body["reason"] == "Unauthorized", "a bad token never falls back to anonymous"
    status, body, _ = await raw.request("GET", "/api/v1/namespaces/default/configmaps", anonymous=True)
    assert status == 403 and 'User "system:anonymous"' in body["message"]
    status, body, _ = await raw.request("GET", "/version", anonymous=True)
    assert status == 200 and body["minor"].startswith("32")
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    _, whoami, _ = await raw.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", review)
    groups = whoami["status"]["userInfo"]["groups"]
    assert "system:masters" in groups and "system:authenticated" in groups


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("resourceVersionMatch=NotOlderThan&resourceVersion=1", 200, ""),
        ("resourceVersionMatch=Newest&resourceVersion=1", 422, 'Unsupported value: "Newest"'),
        ("resourceVersionMatch=Exact", 422, "forbidden unless resourceVersion is provided"),
        ("resourceVersionMatch=Exact&resourceVersion=1&continue=abc", 422, "forbidden when continue is provided"),
    ],
)
async def test_resource_version_match_rules(raw: Raw, query: str, status: int, message: str) -> None:
    code, body, _ = await raw.request("GET", f"{CM}?{query}")
    assert code == status, body
    if message:
        assert body["reason"] == "Invalid" and message in body["message"]
        assert body["details"]["causes"][0]["field"] == "resourceVersionMatch"
