"""Bodies and parameters kube-apiserver refuses are refused before anything is
stored, and whatever is stored stays servable: deep objects, oversized and
chunked bodies, NaN and Infinity, integers beyond their Go type, unparsable
numeric query parameters, and internal errors that must not leak."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from localkube.decoding import MAX_BODY_BYTES, MAX_DEPTH
from localkube.internal_errors import internal_error
from tests.servers import Raw, ServerThread, start_server

ROOT = Path(__file__).resolve().parents[2]
WORK_CRD = ROOT / "manifests" / "crds" / "work.karmada.io_works.yaml"
NAMESPACE = "karmada-es-deep"
WORKS = f"/apis/work.karmada.io/v1alpha1/namespaces/{NAMESPACE}/works"
CM = "/api/v1/namespaces/default/configmaps"
# a Work's manifest data sits at depth 6: work, spec, workload, manifests, manifest, data
MANIFEST_DATA_DEPTH = 6


async def send(
    raw: Raw,
    method: str,
    path: str,
    data: bytes | AsyncIterator[bytes] | None = None,
    content_type: str = "application/json",
    accept: str = "application/json",
) -> tuple[int, Any, dict[str, str]]:
    """One request with a body sent exactly as given (an async iterator is sent chunked)."""
    headers = {"Content-Type": content_type, "Accept": accept}
    payload_data = io.BytesIO(data) if isinstance(data, bytes) else data  # sized, without aiohttp's warning
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, raw.url + path, data=payload_data, headers=headers, ssl=raw.context) as response,
    ):
        text = await response.text()
        try:
            payload: Any = json.loads(text)
        except ValueError:
            payload = text
        return response.status, payload, dict(response.headers)


def nested_json(levels: int) -> str:
    """``{"a":{"a":...{}}}`` with ``levels`` objects, built without recursion."""
    return '{"a":' * (levels - 1) + "{}" + "}" * (levels - 1)


def work_json(name: str, data_levels: int) -> bytes:
    """A Work whose one manifest's ``data`` nests ``data_levels`` objects."""
    head = (
        '{"apiVersion":"work.karmada.io/v1alpha1","kind":"Work","metadata":{"name":"' + name + '"},'
        '"spec":{"workload":{"manifests":[{"apiVersion":"v1","kind":"ConfigMap",'
        '"metadata":{"name":"deep"},"data":'
    )
    return (head + nested_json(data_levels) + "}]}}}").encode()


def work_yaml(name: str, data_levels: int) -> bytes:
    """The same Work in block-style YAML (one indentation level per object)."""
    lines = [
        "apiVersion: work.karmada.io/v1alpha1",
        "kind: Work",
        f"metadata: {{name: {name}}}",
        "spec:",
        "  workload:",
        "    manifests:",
        "    - apiVersion: v1",
        "      kind: ConfigMap",
        "      metadata: {name: deep}",
        "      data:",
    ]
    indent = 8
    for _ in range(data_levels - 1):
        lines.append(" " * indent + "a:")
        indent += 2
    lines[-1] += " {}"
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(scope="module")
def works(raw: Raw) -> None:
    """The Work CRD and a cluster namespace, once per module."""

    async def install() -> None:
        crd = yaml.safe_load(WORK_CRD.read_text())
        status, _, _ = await raw.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        assert status == 201
        assert (await raw.request("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}}))[0] == 201
        for _ in range(100):
            if (await raw.request("GET", WORKS))[0] == 200:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("works never became served")

    asyncio.run(install())


async def _first_watch_event(raw: Raw, path: str) -> dict[str, Any]:
    url = f"{raw.url}{path}?watch=true&timeoutSeconds=5"
    async with aiohttp.ClientSession() as session, session.get(url, ssl=raw.context) as response:
        assert response.status == 200
        line = await response.content.readline()
    await asyncio.sleep(0.05)  # the stream was cut: let its TLS shutdown finish
    event: dict[str, Any] = json.loads(line)
    return event


async def test_deep_works_are_refused_and_the_deepest_accepted_one_is_servable(raw: Raw, works: None) -> None:
    # 500 levels poisoned every read of works before (RecursionError in a copy); 10,000 is
    # beyond even kube-apiserver's limit
    for name, body, media in [
        ("deep-500", work_json("deep-500", 500), "application/json"),
        ("deep-10000", work_json("deep-10000", 10_000), "application/json"),
        ("deep-yaml-500", work_yaml("deep-yaml-500", 500), "application/yaml"),
        # block style costs its indentation: 1,000 levels are a megabyte
        ("deep-yaml-1000", work_yaml("deep-yaml-1000", 1000), "application/yaml"),
        ("deep-flow-10000", b"x: " + b"[" * 10_000 + b"]" * 10_000, "application/yaml"),
        ("deep-json-as-yaml-10000", work_json("deep-json-as-yaml-10000", 10_000), "application/yaml"),
    ]:
        status, refused, _ = await send(raw, "POST", WORKS, body, media)
        assert status == 400, (name, refused)
        assert refused["reason"] == "BadRequest" and f"exceeded max depth of {MAX_DEPTH}" in refused["message"]
        assert (await raw.request("GET", f"{WORKS}/{name}"))[0] == 404

    deepest = work_json("deepest", MAX_DEPTH - MANIFEST_DATA_DEPTH + 1)
    status, created, _ = await send(raw, "POST", WORKS, deepest)
    assert status == 201, created
    one_more = work_json("too-deep", MAX_DEPTH - MANIFEST_DATA_DEPTH + 2)
    assert (await send(raw, "POST", WORKS, one_more))[0] == 400

    status, got, _ = await raw.request("GET", f"{WORKS}/deepest")
    assert status == 200 and got["spec"] == created["spec"]
    status, listed, _ = await raw.request("GET", WORKS)
    assert status == 200 and [w["metadata"]["name"] for w in listed["items"]] == ["deepest"]
    assert (await _first_watch_event(raw, WORKS))["object"]["metadata"]["name"] == "deepest"
    status, as_yaml, headers = await send(raw, "GET", f"{WORKS}/deepest", accept="application/yaml")
    assert status == 200 and headers["Content-Type"] == "application/yaml"
    assert "deepest" in as_yaml
    table = "application/json;as=Table;v=v1;g=meta.k8s.io"
    assert (await send(raw, "GET", WORKS, accept=table))[0] == 200
    merge = json.dumps({"metadata": {"labels": {"patched": "merge"}}}).encode()
    assert (await send(raw, "PATCH", f"{WORKS}/deepest", merge, "application/merge-patch+json"))[0] == 200
    json_patch = json.dumps([{"op": "add", "path": "/metadata/labels/json", "value": "patch"}]).encode()
    assert (await send(raw, "PATCH", f"{WORKS}/deepest", json_patch, "application/json-patch+json"))[0] == 200
    apply = "/deepest?fieldManager=test&force=true"
    assert (await send(raw, "PATCH", WORKS + apply, deepest, "application/apply-patch+yaml"))[0] == 200
    status, got, _ = await raw.request("GET", f"{WORKS}/deepest")
    assert status == 200 and got["metadata"]["labels"] == {"patched": "merge", "json": "patch"}
    status, _, _ = await raw.request("PUT", f"{WORKS}/deepest", got)
    assert status == 200

    status, _, _ = await raw.request("DELETE", f"{WORKS}/deepest")
    assert status == 200
    assert (await raw.request("GET", WORKS))[1]["items"] == []

    # the cluster's namespace, with a deep Work in it, can still be deleted
    assert (await send(raw, "POST", WORKS, deepest))[0] == 201
    assert (await raw.request("DELETE", f"/api/v1/namespaces/{NAMESPACE}"))[0] == 200
    for _ in range(200):
        if (await raw.request("GET", f"/api/v1/namespaces/{NAMESPACE}"))[0] == 404:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the namespace holding a deep Work was never deleted")
    assert (await raw.request("GET", "/apis/work.karmada.io/v1alpha1/works"))[1]["items"] == []


def test_the_deepest_accepted_object_survives_a_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    crd = yaml.safe_load(WORK_CRD.read_text())
    deepest = work_json("deepest", MAX_DEPTH - MANIFEST_DATA_DEPTH + 1)

    async def store(raw: Raw) -> None:
        status, _, _ = await raw.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        assert status == 201
        assert (await raw.request("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}}))[0] == 201
        for _ in range(100):
            if (await send(raw, "POST", WORKS, deepest))[0] == 201:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the deep Work was never created")

    async def read(raw: Raw) -> None:
        status, got, _ = await raw.request("GET", f"{WORKS}/deepest")
        assert status == 200, got
        assert (await raw.request("GET", WORKS))[0] == 200

    for step in (store, read):
        for server in start_server(port=0, data_dir=data_dir):
            asyncio.run(step(Raw(server, server.kubeconfig(tmp_path))))


async def _chunks(total: int) -> AsyncIterator[bytes]:
    piece = b" " * (64 * 1024)
    sent = 0
    while sent < total:
        yield piece
        sent += len(piece)


async def test_bodies_over_the_limit_are_413_sized_or_chunked(raw: Raw) -> None:
    big = json.dumps({"metadata": {"name": "big"}, "data": {"k": "x" * MAX_BODY_BYTES}}).encode()
    status, sized, _ = await send(raw, "POST", CM, big)
    assert status == 413 and sized["reason"] == "RequestEntityTooLarge"
    assert sized["message"] == f"Request entity too large: limit is {MAX_BODY_BYTES}"
    status, chunked, _ = await send(raw, "POST", CM, _chunks(MAX_BODY_BYTES + 1))
    assert status == 413 and chunked == sized
    status, patched, _ = await send(
        raw, "PATCH", f"{CM}/big", _chunks(MAX_BODY_BYTES + 1), "application/merge-patch+json"
    )
    assert status == 413 and patched == sized
    assert (await raw.request("GET", f"{CM}/big"))[0] == 404


@pytest.mark.parametrize(
    ("body", "media"),
    [
        (b'{"metadata":{"name":"nan"},"data":{"a":NaN}}', "application/json"),
        (b'{"metadata":{"name":"inf"},"data":{"a":Infinity}}', "application/json"),
        (b'{"metadata":{"name":"minf"},"data":{"a":-Infinity}}', "application/json"),
        (b'{"metadata":{"name":"e400"},"data":{"a":1e400}}', "application/json"),
        (b"metadata: {name: ynan}\ndata: {a: .nan}\n", "application/yaml"),
        (b"metadata: {name: yinf}\ndata: {a: -.inf}\n", "application/yaml"),
    ],
)
async def test_nan_and_infinity_are_refused(raw: Raw, body: bytes, media: str) -> None:
    status, refused, _ = await send(raw, "POST", CM, body, media)
    assert status == 400 and refused["reason"] == "BadRequest", refused
    assert "ConfigMap" in refused["message"]


def _laughs() -> bytes:
    """Nine levels of nine aliases each: a kilobyte that expands to 387 million strings."""
    lines = ["metadata: {name: laughs}", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for previous, current in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{current}: &{current} [" + ",".join([f"*{previous}"] * 9) + "]")
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (_laughs(), "excessive aliasing"),
        (b"metadata: {name: loop}\ndata: &loop {a: [*loop]}\n", "exceeded max depth"),
        (b"metadata: {name: when}\ndata: {a: !!binary aGVsbG8=}\n", "unsupported type"),
    ],
)
async def test_yaml_that_json_cannot_hold_is_refused(raw: Raw, body: bytes, problem: str) -> None:
    status, refused, _ = await send(raw, "POST", CM, body, "application/yaml")
    assert status == 400 and problem in refused["message"], refused


async def test_yaml_aliases_and_dates_decode_as_go_decodes_them(raw: Raw) -> None:
    body = b"metadata: {name: aliased, labels: &l {app: x}, annotations: *l}\ndata: {day: 2024-01-02}\n"
    status, created, _ = await send(raw, "POST", CM, body, "application/yaml")
    assert status == 201, created
    assert created["metadata"]["labels"] == created["metadata"]["annotations"] == {"app": "x"}
    assert created["data"] == {"day": "2024-01-02"}  # a string, as Go's YAML-to-JSON conversion leaves it


async def test_integers_beyond_their_go_type_are_refused_with_the_field_path(raw: Raw) -> None:
    deployment: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "overflow"},
        "spec": {
            "replicas": 2**31,
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    path = "/apis/apps/v1/namespaces/default/deployments?dryRun=All"
    status, refused, _ = await raw.request("POST", path, deployment)
    # kube-apiserver's decoder fails on it: 400, naming the Go struct and the field path
    assert status == 400 and refused["reason"] == "BadRequest", refused
    assert refused["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 2147483648'
        " into Go struct field DeploymentSpec.spec.replicas of type int32"
    )
    deployment["spec"]["replicas"] = 2**31 - 1
    assert (await raw.request("POST", path, deployment))[0] == 201
    # the status subresource decodes the same type
    deployment["spec"]["replicas"] = 1
    deployments = "/apis/apps/v1/namespaces/default/deployments"
    assert (await raw.request("POST", deployments, deployment))[0] == 201
    status_patch = json.dumps({"status": {"replicas": 2**31}}).encode()
    merge = "application/merge-patch+json"
    status, refused, _ = await send(raw, "PATCH", f"{deployments}/overflow/status", status_patch, merge)
    assert status == 400 and "DeploymentStatus.status.replicas of type int32" in refused["message"], refused

    pod: dict[str, Any] = {
        "metadata": {"name": "overflow"},
        # terminationGracePeriodSeconds: an int64 that validation bounds only below
        "spec": {"terminationGracePeriodSeconds": 2**63, "containers": [{"name": "c", "image": "nginx"}]},
    }
    pods = "/api/v1/namespaces/default/pods?dryRun=All"
    status, refused, _ = await raw.request("POST", pods, pod)
    assert status == 400
    assert "Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64" in refused["message"]
    pod["spec"]["terminationGracePeriodSeconds"] = 2**63 - 1
    assert (await raw.request("POST", pods, pod))[0] == 201
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": 1.5}]
    status, refused, _ = await raw.request("POST", pods, pod)
    assert status == 400
    assert "number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort" in refused["message"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (f"{CM}?limit=abc", 'strconv.ParseInt: parsing "abc": invalid syntax'),
        (f"{CM}?limit=99999999999999999999", 'strconv.ParseInt: parsing "99999999999999999999": value out of range'),
        (f"{CM}?watch=true&timeoutSeconds=soon", 'strconv.ParseInt: parsing "soon": invalid syntax'),
        (
            f"{CM}?resourceVersion=abc",
            'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
        ),
        (
            f"{CM}?watch=true&resourceVersion=-1",
            'resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax',
        ),
        (
            "/api/v1/namespaces/default?resourceVersion=v1",
            'resourceVersion: Invalid value: "v1": strconv.ParseUint: parsing "v1": invalid syntax',
        ),
    ],
)
async def test_unparsable_numeric_parameters_are_400(raw: Raw, path: str, message: str) -> None:
    status, refused, _ = await raw.request("GET", path)
    assert status == 400, refused
    assert refused["reason"] == "BadRequest" and refused["message"] == message


async def test_unparsable_grace_period_is_400(raw: Raw) -> None:
    assert (await raw.request("POST", CM, {"metadata": {"name": "grace"}}))[0] == 201
    status, refused, _ = await raw.request("DELETE", f"{CM}/grace?gracePeriodSeconds=later")
    assert status == 400 and refused["message"] == 'strconv.ParseInt: parsing "later": invalid syntax'
    assert (await raw.request("GET", f"{CM}/grace"))[0] == 200


async def test_malformed_bodies_are_400_and_continue_tokens_too(raw: Raw) -> None:
    # a protobuf envelope cut inside a varint
    status, refused, _ = await send(raw, "POST", CM, b"k8s\x00\x0a\x02\x0a\x80", "application/vnd.kubernetes.protobuf")
    assert status == 400 and refused["message"].startswith('ConfigMap in version "v1" cannot be handled'), refused
    deep_token = base64.urlsafe_b64encode(b"[" * 2000 + b"]" * 2000).decode()  # fits a request line
    status, refused, _ = await raw.request("GET", f"{CM}?limit=1&continue={deep_token}")
    assert status == 400, refused
    assert refused["message"].startswith("invalid continue token: continue key is not valid"), refused


def _raise_from_depth(levels: int) -> None:
    if levels:
        _raise_from_depth(levels - 1)
    raise KeyError("secret-internal-detail")


def test_internal_errors_answer_generically_and_log_one_line(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("localkube.test-internal-errors")
    caplog.set_level(logging.INFO, logger=logger.name)
    statuses = []
    for attempt in range(3):
        try:
            _raise_from_depth(200)
        except KeyError as exc:
            statuses.append(internal_error(exc, f"request-{attempt}", "GET", "/api/v1/pods", logger).status())
    for attempt, status in enumerate(statuses):
        assert status["code"] == 500 and status["reason"] == "InternalError"
        assert f"request-{attempt}" in status["message"] and "secret-internal-detail" not in status["message"]
    records = [r for r in caplog.records if r.name == logger.name]
    assert len(records) == 3, "one log record per failed request"
    assert all(f"request request-{attempt}:" in r.getMessage() for attempt, r in enumerate(records))
    first, *repeats = (r.getMessage() for r in records)
    assert "Traceback" in first and len(first) < 8_000, "the first sighting shows where, not 200 frames"
    assert all("\n" not in message and "KeyError" in message for message in repeats)


async def test_a_client_that_hung_up_is_no_internal_error(
    localkube: ServerThread, raw: Raw, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # aiohttp raises this when the answer is written to a connection the client closed (a watch it left)
    async def hung_up(request: object) -> None:
        raise aiohttp.ClientConnectionResetError("Cannot write to closing transport")

    monkeypatch.setattr(localkube.server, "_dispatch", hung_up)
    caplog.set_level(logging.DEBUG, logger="localkube")
    status, _, _ = await raw.request("GET", "/api/v1/namespaces")
    assert status == 499
    messages = [r.getMessage() for r in caplog.records if r.name == "localkube"]
    assert not any("internal error" in m for m in messages), messages
    assert any("the client went away" in m for m in messages), messages
