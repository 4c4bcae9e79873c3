"""localkube with kubernetes_asyncio and raw HTTPS: watch semantics, paging,
bootstrap tokens, cluster-info signatures and persistence."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client, config, watch
from kubernetes_asyncio.client.rest import ApiException

from localkube.controllers import jws_signature
from tests.servers import Raw, ServerThread, start_server


@pytest.fixture
async def api(localkube: ServerThread, workdir: Path) -> AsyncIterator[client.ApiClient]:
    path = localkube.kubeconfig(workdir)
    configuration = client.Configuration()
    await config.load_kube_config(config_file=str(path), client_configuration=configuration)
    async with client.ApiClient(configuration) as api_client:
        yield api_client


async def test_typed_client_round_trip(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="typed", labels={"app": "x"}), data={"k": "v"})
    created = await core.create_namespaced_config_map("default", body)
    assert created.metadata.uid and created.metadata.resource_version
    fetched = await core.read_namespaced_config_map("typed", "default")
    assert fetched.data == {"k": "v"}
    listed = await core.list_namespaced_config_map("default", label_selector="app=x")
    assert [i.metadata.name for i in listed.items] == ["typed"]
    with pytest.raises(ApiException) as caught:
        await core.create_namespaced_config_map("default", body)
    assert caught.value.status == 409 and json.loads(caught.value.body or b"{}")["reason"] == "AlreadyExists"
    stale = fetched
    fetched.data = {"k": "w"}
    await core.replace_namespaced_config_map("typed", "default", fetched)
    stale.data = {"k": "z"}
    with pytest.raises(ApiException) as conflict:
        await core.replace_namespaced_config_map("typed", "default", stale)
    assert (
        conflict.value.status == 409
        and "the object has been modified" in json.loads(conflict.value.body or b"{}")["message"]
    )


async def test_watch_sees_changes_and_resumes(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    listing = await core.list_namespaced_config_map("default")
    since = listing.metadata.resource_version
    await core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="w1")))
    await core.patch_namespaced_config_map("w1", "default", {"data": {"a": "1"}})
    await core.delete_namespaced_config_map("w1", "default")
    events = []
    async with watch.Watch().stream(
        core.list_namespaced_config_map, "default", resource_version=since, timeout_seconds=1
    ) as stream:
        async for event in stream:
            if event["object"].metadata.name == "w1":
                events.append(event["type"])
    assert events == ["ADDED", "MODIFIED", "DELETED"]


async def test_watch_from_an_expired_version_gets_410(small_history: ServerThread, workdir: Path) -> None:
    configuration = client.Configuration()
    await config.load_kube_config(
        config_file=str(small_history.kubeconfig(workdir, "history-admin", ["system:masters"])),
        client_configuration=configuration,
    )
    async with client.ApiClient(configuration) as api_client:
        core = client.CoreV1Api(api_client)
        first = await core.create_namespaced_config_map(
            "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="old"))
        )
        for index in range(8):
            await core.patch_namespaced_config_map("old", "default", {"data": {"i": str(index)}})
        with pytest.raises(ApiException) as caught:
            async with watch.Watch().stream(
                core.list_namespaced_config_map,
                "default",
                resource_version=first.metadata.resource_version,
                timeout_seconds=1,
            ) as stream:
                async for _ in stream:
                    pass
        assert caught.value.status == 410


async def test_raw_watch_framing_and_selector_transitions(raw: Raw) -> None:
    status, created, _ = await raw.request(
        "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "sel", "labels": {"team": "a"}}}
    )
    assert status == 201
    rv = created["metadata"]["resourceVersion"]
    await raw.request(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/sel",
        {"metadata": {"labels": {"team": "b"}}},
        content_type="application/merge-patch+json",
    )
    await raw.request(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/sel",
        {"metadata": {"labels": {"team": "a"}}},
        content_type="application/merge-patch+json",
    )
    url = (
        f"/api/v1/namespaces/default/configmaps?watch=true&labelSelector=team%3Da&resourceVersion={rv}&timeoutSeconds=1"
    )
    async with aiohttp.ClientSession() as session, session.get(raw.url + url, ssl=raw.context) as response:
        assert response.headers["Content-Type"] == "application/json"
        lines = [json.loads(line) for line in (await response.text()).splitlines() if line]
    assert [(e["type"], e["object"]["metadata"]["labels"]["team"]) for e in lines] == [("DELETED", "b"), ("ADDED", "a")]


async def test_paging_selectors_and_error_bodies(raw: Raw) -> None:
    for index in range(5):
        await raw.request(
            "POST",
            "/api/v1/namespaces/default/secrets",
            {"metadata": {"name": f"page-{index}"}, "stringData": {"i": str(index)}},
        )
    status, page, _ = await raw.request("GET", "/api/v1/namespaces/default/secrets?limit=2")
    assert status == 200 and len(page["items"]) == 2 and page["metadata"]["remainingItemCount"] >= 3
    names = [i["metadata"]["name"] for i in page["items"]]
    token = page["metadata"]["continue"]
    while token:
        _, page, _ = await raw.request("GET", f"/api/v1/namespaces/default/secrets?limit=2&continue={token}")
        names += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue")
    assert names == sorted(names) and {f"page-{i}" for i in range(5)} <= set(names)
    _, empty, _ = await raw.request("GET", "/api/v1/namespaces/default/secrets?labelSelector=nothing%3Dhere")
    assert empty["items"] == []
    status, error, _ = await raw.request("GET", "/api/v1/namespaces/default/configmaps?fieldSelector=data.k%3Dv")
    assert (status, error["reason"], error["message"]) == (400, "BadRequest", "field label not supported: data.k")
    status, missing, _ = await raw.request("GET", "/apis/apps/v1/namespaces/default/deployments/nope")
    assert missing == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'deployments.apps "nope" not found',
        "reason": "NotFound",
        "details": {"name": "nope", "group": "apps", "kind": "deployments"},
        "code": 404,
    }
    status, secret, _ = await raw.request("GET", "/api/v1/namespaces/default/secrets/page-1")
    assert base64.b64decode(secret["data"]["i"]) == b"1" and "stringData" not in secret


async def test_aggregated_discovery_content_type(raw: Raw) -> None:
    headers = {"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"}
    async with (
        aiohttp.ClientSession() as session,
        session.get(raw.url + "/apis", headers=headers, ssl=raw.context) as response,
    ):
        assert (
            response.headers["Content-Type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        )
        body = await response.json(content_type=None)
    groups = [item["metadata"]["name"] for item in body["items"]]
    assert "apps" in groups and "coordination.k8s.io" in groups


def test_jws_vectors() -> None:
    content = "Hello from the other side. I must have called a thousand times."
    assert jws_signature(content, "joshua", "my voice is my passcode") == (
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8"
    )
    assert jws_signature("", "joshua", "my voice is my passcode") == (
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk"
    )
    assert jws_signature(content, "joshua", "") == (
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..UfkqvDGiIFxrMnFseDj9LYJOLNrvjW8aHhF71mvvAs8"
    )


def _token_secret(token_id: str, secret: str, expiration: str = "2099-01-01T00:00:00Z", **extra: str) -> dict[str, Any]:
    data = {
        "token-id": token_id,
        "token-secret": secret,
        "expiration": expiration,
        "usage-bootstrap-authentication": "true",
        "usage-bootstrap-signing": "true",
        **extra,
    }
    return {
        "metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "kube-system"},
        "type": "bootstrap.kubernetes.io/token",
        "stringData": data,
    }


async def test_bootstrap_tokens_authenticate_and_sign_cluster_info(raw: Raw) -> None:
    token = "abcdef.0123456789abcdef"
    secret = _token_secret(
        "abcdef", "0123456789abcdef", **{"auth-extra-groups": "system:bootstrappers:karmada:default-cluster-token"}
    )
    status, _, _ = await raw.request("POST", "/api/v1/namespaces/kube-system/secrets", secret)
    assert status == 201
    status, review, _ = await raw.request(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        token=token,
    )
    assert status == 201
    assert review["status"]["userInfo"] == {
        "username": "system:bootstrap:abcdef",
        "groups": [
            "system:bootstrappers",
            "system:bootstrappers:karmada:default-cluster-token",
            "system:authenticated",
        ],
    }
    status, error, _ = await raw.request("GET", "/api/v1/namespaces", token="abcdef.ffffffffffffffff")
    assert (status, error["reason"]) == (401, "Unauthorized")
    denied, body, _ = await raw.request("GET", "/api/v1/namespaces", token=token)
    assert denied == 403 and 'User "system:bootstrap:abcdef" cannot list resource "namespaces"' in body["message"]
    for _ in range(50):
        _, info, _ = await raw.request("GET", "/api/v1/namespaces/kube-public/configmaps/cluster-info", anonymous=True)
        if "jws-kubeconfig-abcdef" in info.get("data", {}):
            break
        await asyncio.sleep(0.05)
    data = info["data"]
    assert data["jws-kubeconfig-abcdef"] == jws_signature(data["kubeconfig"], "abcdef", "0123456789abcdef")
    anonymous_list, _, _ = await raw.request("GET", "/api/v1/namespaces/kube-public/configmaps", anonymous=True)
    assert anonymous_list == 403


async def test_expired_bootstrap_tokens_are_rejected(raw: Raw) -> None:
    expired = _token_secret("zzzzzz", "0123456789abcdef", expiration="2000-01-01T00:00:00Z")
    await raw.request("POST", "/api/v1/namespaces/kube-system/secrets", expired)
    status, _, _ = await raw.request("GET", "/version", token="zzzzzz.0123456789abcdef")
    assert status == 401


def test_state_survives_a_restart(tmp_path: Path) -> None:
    gen = start_server(port=0, data_dir=tmp_path / "data")
    first = next(gen)
    path = first.kubeconfig(tmp_path)
    from tests.servers import Kubectl

    kube = Kubectl(path, tmp_path / "cache")
    kube("create", "configmap", "kept", "--from-literal=k=v")
    rv = int(kube("get", "cm", "kept", "-o", "jsonpath={.metadata.resourceVersion}").stdout)
    with pytest.raises(StopIteration):
        next(gen)
    second_gen = start_server(port=0, data_dir=tmp_path / "data")
    second = next(second_gen)
    try:
        kube2 = Kubectl(second.kubeconfig(tmp_path / "again"), tmp_path / "cache2")
        assert kube2("get", "cm", "kept", "-o", "jsonpath={.data.k}").stdout == "v"
        kube2("create", "configmap", "after")
        assert int(kube2("get", "cm", "after", "-o", "jsonpath={.metadata.resourceVersion}").stdout) > rv
    finally:
        with pytest.raises(StopIteration):
            next(second_gen)
