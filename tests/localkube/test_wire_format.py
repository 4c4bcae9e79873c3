"""What goes over the wire the way kube-apiserver sends and takes it: exact
media types, Secret bytes in base64 with line breaks, and a resourceVersion
sent on create."""

from __future__ import annotations

import asyncio
import base64

import aiohttp
import pytest

from tests.servers import Raw

CM = "/api/v1/namespaces/default/configmaps"
SECRETS = "/api/v1/namespaces/default/secrets"


async def _content_type(raw: Raw, path: str, accept: str = "application/json") -> str:
    headers = {"Accept": accept}
    async with (
        aiohttp.ClientSession() as session,
        session.get(raw.url + path, headers=headers, ssl=raw.context) as response,
    ):
        await response.read()
        return response.headers["Content-Type"]


@pytest.mark.parametrize(
    ("path", "accept", "expected"),
    [
        (f"{CM}/missing", "application/json", "application/json"),  # a Status error
        ("/api/v1/namespaces/default", "application/json", "application/json"),
        ("/api/v1/namespaces", "application/json", "application/json"),
        ("/api/v1/namespaces", "application/json;as=Table;v=v1;g=meta.k8s.io", "application/json"),
        ("/api/v1/namespaces/default", "application/yaml", "application/yaml"),
        ("/api", "application/json", "application/json"),
        ("/apis", "application/json", "application/json"),
        ("/api/v1", "application/json", "application/json"),
        ("/apis/apps/v1", "application/json", "application/json"),
        ("/apis/apps", "application/json", "application/json"),
        ("/version", "application/json", "application/json"),
        ("/openapi/v3", "application/json", "application/json"),
    ],
)
async def test_media_types_are_exact(raw: Raw, path: str, accept: str, expected: str) -> None:
    # kube-apiserver sends the bare media type; aiohttp would add "; charset=utf-8"
    assert await _content_type(raw, path, accept) == expected


async def test_watch_is_application_json_and_chunked(raw: Raw) -> None:
    # handlers/watch.go: JSON watches keep "application/json"; other media types get ";stream=watch"
    url = f"{raw.url}{CM}?watch=true&timeoutSeconds=1"
    async with aiohttp.ClientSession() as session, session.get(url, ssl=raw.context) as response:
        assert response.headers["Content-Type"] == "application/json"
        assert response.headers["Transfer-Encoding"] == "chunked"
        await response.read()
    await asyncio.sleep(0.05)  # let the TLS shutdown finish


async def test_secret_data_with_line_breaks_is_accepted_and_read_back_canonical(raw: Raw) -> None:
    # Go's base64 decoder skips \r and \n; the bytes are stored and re-encoded on reads
    secret = {"metadata": {"name": "wrapped"}, "data": {"wrapped": "aGVs\nbG8=\n", "crlf": "aGVs\r\nbG8="}}
    status, created, _ = await raw.request("POST", SECRETS, secret)
    assert status == 201, created
    assert created["data"] == {"wrapped": "aGVsbG8=", "crlf": "aGVsbG8="}
    status, got, _ = await raw.request("GET", f"{SECRETS}/wrapped")
    assert status == 200 and base64.b64decode(got["data"]["wrapped"]) == b"hello"
    status, refused, _ = await raw.request("POST", SECRETS, {"metadata": {"name": "bad"}, "data": {"k": "aGV*"}})
    assert status == 400 and "illegal base64 data at input byte 3" in refused["message"]


@pytest.mark.parametrize("version", ["v1", "abc", "-1", "0", "00"])
async def test_create_clears_a_resource_version_that_is_not_a_positive_number(raw: Raw, version: str) -> None:
    # etcd3's store refuses only a version that parses as a non-zero uint64, and clears any other
    name = f"rv-{version.replace('-', 'minus')}"
    status, created, _ = await raw.request("POST", CM, {"metadata": {"name": name, "resourceVersion": version}})
    assert status == 201, created
    assert created["metadata"]["resourceVersion"] not in (version, "")
    assert int(created["metadata"]["resourceVersion"]) > 0


async def test_create_with_a_positive_resource_version_is_refused(raw: Raw) -> None:
    status, refused, _ = await raw.request("POST", CM, {"metadata": {"name": "rv-set", "resourceVersion": "5"}})
    # kube-apiserver answers this storage error with a 500; the mistake is the client's: 400 here
    assert status == 400 and refused["reason"] == "BadRequest"
    assert refused["message"] == "resourceVersion should not be set on objects to be created"
    assert (await raw.request("GET", f"{CM}/rv-set"))[0] == 404
