"""application/vnd.kubernetes.protobuf: the committed field table, the codec's
round trips, and the server's negotiation as kube-apiserver does it
(k8s.io/apimachinery pkg/runtime/serializer/protobuf: the ``k8s\\0`` envelope
around runtime.Unknown; the length-delimited watch framer; CRs served as JSON
only by the apiextensions-apiserver), checked with raw requests and the real
kubectl, which sends and reads protobuf for its typed commands."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import json
import struct
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from localkube import protobuf, protowire
from localkube.resources import Registry
from localkube.simulation import SimulationConfig
from manifests import crd_files
from tests.programs import Background, kubectl
from tests.servers import Kubectl, Raw, ServerThread, start_server

PB = protobuf.CONTENT_TYPE
Obj = dict[str, Any]
FLAGS = set("rmpoi")


# -- the table -----------------------------------------------------------------------------
def test_the_committed_table_is_well_formed() -> None:
    table = protobuf.table()
    messages = table["messages"]
    assert len(messages) > 1000
    for name, entries in messages.items():
        numbers = [e[0] for e in entries]
        assert numbers == sorted(set(numbers)) and all(n > 0 for n in numbers), name
        json_names = [e[1] for e in entries if "i" not in e[3] and e[1] != "-"]
        assert len(json_names) == len(set(json_names)), name
        for number, json_name, kind, flags in entries:
            assert isinstance(number, int) and isinstance(json_name, str), name
            assert set(flags) <= FLAGS and not ("r" in flags and "m" in flags), (name, number)
            assert kind in protobuf._SCALAR_KINDS or kind in messages, (name, kind)
    for slice_name in table["slices"]:
        assert [e[3][:1] for e in messages[slice_name]] == ["r"]
    for group_version, package in table["groups"].items():
        assert any(m.startswith(package + ".") for m in messages), group_version


def test_every_served_built_in_kind_has_a_message() -> None:
    registry = Registry()
    for group, versions in registry.groups():
        for version in versions:
            for rt in registry.resources(group, version):
                assert protobuf.message_for(rt.api_version, rt.kind), rt.api_version + " " + rt.kind
                if rt.verbs != ("create",):
                    assert protobuf.message_for(rt.api_version, rt.list_kind), rt.list_kind


def test_field_numbers_are_the_published_ones() -> None:
    """A few numbers read from k8s.io/api's generated.proto, against drift."""
    fields = {(e[1], e[0]) for e in protobuf.table()["messages"]["k8s.io.api.core.v1.PodSpec"]}
    assert {("containers", 2), ("nodeName", 10), ("initContainers", 20), ("tolerations", 22)} <= fields
    meta = {e[1]: e for e in protobuf.table()["messages"][protobuf.META + "ObjectMeta"]}
    assert meta["managedFields"][0] == 17 and meta["deletionGracePeriodSeconds"][3] == "po"
    schema = protobuf.table()["messages"]["k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"]
    assert [38, "x-kubernetes-preserve-unknown-fields", "bool", "po"] in schema


def test_the_envelope_bytes() -> None:
    encoded = protobuf.encode({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})
    type_meta = b"\x0a\x02v1\x12\x09Namespace"
    raw = b"\x0a\x03\x0a\x01x"
    expected = b"k8s\x00" + b"\x0a" + bytes([len(type_meta)]) + type_meta + b"\x12\x05" + raw + b"\x1a\x00\x22\x00"
    assert encoded == expected


# -- round trips --------------------------------------------------------------------------------
META = {
    "name": "n",
    "namespace": "default",
    "uid": "6f1c3a7e-0000-4000-8000-000000000001",
    "resourceVersion": "42",
    "generation": 3,
    "creationTimestamp": "2026-01-02T03:04:05Z",
    "labels": {"app": "web", "empty": ""},
    "annotations": {"note": "ünïcode ✓"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1", "controller": True}],
    "finalizers": ["example.com/f"],
    "managedFields": [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": "2026-01-02T03:04:05Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
        }
    ],
}

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": META,
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "nginx:1.25",
                "command": ["nginx", "-g", "daemon off;"],
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}],
                "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": "250m"}},
                "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
                "livenessProbe": {"tcpSocket": {"port": 8080}},
            }
        ],
        "volumes": [
            {"name": "cfg", "configMap": {"name": "cm", "defaultMode": 420}},
            {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
        ],
        "replicas_unknown_field_dropped": None,
        "terminationGracePeriodSeconds": 0,
        "nodeSelector": {"disk": "ssd"},
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
        "securityContext": {"runAsUser": 0, "runAsNonRoot": False},
    },
    "status": {
        "phase": "Running",
        "podIP": "10.0.0.1",
        "podIPs": [{"ip": "10.0.0.1"}],
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-02T03:04:06Z"}],
        "startTime": "2026-01-02T03:04:05Z",
    },
}

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "creationTimestamp": "2026-01-02T03:04:05Z"},
    "spec": {
        "replicas": 0,
        "selector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "t", "operator": "In", "values": ["a"]}],
        },
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
    },
    "status": {"observedGeneration": 1, "conditions": []},
}

CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "cm", "namespace": "default"},
    "data": {"a": "1", "multi": "line\nbreak"},
    "binaryData": {"blob": base64.b64encode(bytes(range(256))).decode()},
    "immutable": True,
}

SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "s", "namespace": "default"},
    "type": "kubernetes.io/tls",
    "data": {"tls.crt": base64.b64encode(b"cert").decode(), "tls.key": base64.b64encode(b"\x00\xff").decode()},
}

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1"}},
    "spec": {"podCIDR": "10.244.0.0/24", "taints": [{"key": "k", "effect": "NoSchedule", "timeAdded": None}]},
    "status": {
        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
        "allocatable": {"cpu": "7900m", "memory": "31Gi", "pods": "110"},
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "lastHeartbeatTime": "2026-01-02T03:04:05Z",
                "lastTransitionTime": "2026-01-02T03:04:05Z",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
            }
        ],
        "addresses": [{"type": "InternalIP", "address": "10.0.0.5"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": "",
            "systemUUID": "",
            "bootID": "",
            "kernelVersion": "6.1",
            "osImage": "",
            "containerRuntimeVersion": "containerd://1.7",
            "kubeletVersion": "v1.32.0",
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
    },
}

LEASE = {
    "apiVersion": "coordination.k8s.io/v1",
    "kind": "Lease",
    "metadata": {"name": "l", "namespace": "kube-node-lease"},
    "spec": {
        "holderIdentity": "node-1",
        "leaseDurationSeconds": 40,
        "acquireTime": "2026-01-02T03:04:05.123456Z",
        "renewTime": "2026-01-02T03:04:45.000001Z",
        "leaseTransitions": 0,
    },
}

SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "svc", "namespace": "default"},
    "spec": {
        "ports": [
            {"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080},
            {"name": "named", "protocol": "TCP", "port": 81, "targetPort": "http"},
        ],
        "selector": {"app": "web"},
        "clusterIP": "10.96.0.10",
        "clusterIPs": ["10.96.0.10"],
        "type": "ClusterIP",
        "sessionAffinity": "None",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster",
    },
    "status": {"loadBalancer": {}},
}

EVENT = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "e", "namespace": "default"},
    "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p", "uid": "u"},
    "reason": "Scheduled",
    "message": "Successfully assigned",
    "source": {"component": "scheduler"},
    "firstTimestamp": "2026-01-02T03:04:05Z",
    "lastTimestamp": "2026-01-02T03:04:05Z",
    "count": 1,
    "type": "Normal",
    "eventTime": "2026-01-02T03:04:05.500000Z",
    "reportingComponent": "",
    "reportingInstance": "",
}

REVIEW = {
    "apiVersion": "authorization.k8s.io/v1",
    "kind": "SubjectAccessReview",
    "metadata": {},
    "spec": {
        "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "pods"},
        "user": "alice",
        "groups": ["devs"],
        "extra": {"scopes": ["a", "b"]},
    },
    "status": {"allowed": False},
}

REVISION = {
    "apiVersion": "apps/v1",
    "kind": "ControllerRevision",
    "metadata": {"name": "r", "namespace": "default"},
    "data": {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}, "n": 1.5, "list": [1, "a", None]},
    "revision": 2,
}

PDB = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "pdb", "namespace": "default"},
    "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
    "status": {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0},
}

PRIORITY = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "low"},
    "value": -10,
    "preemptionPolicy": "Never",
}

STATUS = {
    "apiVersion": "v1",
    "kind": "Status",
    "metadata": {},
    "status": "Failure",
    "message": 'pods "x" not found',
    "reason": "NotFound",
    "details": {"name": "x", "kind": "pods"},
    "code": 404,
}

LIST: Obj = {
    "apiVersion": "v1",
    "kind": "ConfigMapList",
    "metadata": {"resourceVersion": "7", "continue": "abc", "remainingItemCount": 0},
    "items": [CONFIGMAP, {**CONFIGMAP, "metadata": {"name": "cm2"}, "immutable": False}],
}


def _normal(value: Any) -> Any:
    """What survives a protobuf trip: no nulls, no empty lists (protobuf cannot tell them from
    absent ones), no fields the message lacks."""
    if isinstance(value, dict):
        dropped: tuple[Any, ...] = (None, [])
        return {k: _normal(v) for k, v in value.items() if v not in dropped and k != "replicas_unknown_field_dropped"}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


CASES = [POD, DEPLOYMENT, CONFIGMAP, SECRET, NODE, LEASE, SERVICE, EVENT, REVIEW, REVISION, PDB, PRIORITY, STATUS]


@pytest.mark.parametrize("obj", CASES, ids=lambda o: str(o["kind"]))
def test_json_protobuf_json_is_identity(obj: Obj) -> None:
    decoded = protobuf.decode_object(protobuf.encode(copy.deepcopy(obj)))
    assert decoded == _normal(obj)


def test_lists_keep_their_metadata_and_items() -> None:
    decoded = protobuf.decode_object(protobuf.encode(copy.deepcopy(LIST)))
    expected = _normal(LIST)
    expected["items"] = [{k: v for k, v in item.items() if k not in ("apiVersion", "kind")} for item in LIST["items"]]
    assert decoded == expected


def test_custom_resource_definitions_round_trip() -> None:
    crd = json.loads(json.dumps(_first_crd()))
    crd.setdefault("metadata", {})
    decoded = protobuf.decode_object(protobuf.encode(copy.deepcopy(crd)))
    assert decoded == _normal(crd)


def _first_crd() -> Obj:
    import yaml

    path = crd_files()[0]
    doc: Obj = yaml.safe_load(path.read_text())
    return doc


def test_json_schema_unions_and_durations() -> None:
    schema = {
        "type": "object",
        "properties": {
            "free": {"type": "object", "additionalProperties": True},
            "typed": {"type": "object", "additionalProperties": {"type": "string"}},
            "closed": {"type": "object", "additionalProperties": False},
            "tuple": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
            "list": {"type": "array", "items": {"type": "number", "maximum": 2.5, "minimum": -1}},
            "intOrString": {"x-kubernetes-int-or-string": True, "default": 3, "enum": ["a", 1, None]},
        },
        "dependencies": {"a": ["b"], "c": {"required": ["d"]}},
        "x-kubernetes-preserve-unknown-fields": False,
    }
    name = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
    assert protobuf.decode_message(name, protobuf.encode_message(name, schema)) == schema
    for text in ("0s", "1.5s", "1h0m0s", "2m3s", "250ms", "-1.000000001s", "1µs"):
        assert protobuf._format_duration(protobuf._parse_duration(text)) == text


def test_wire_forms_go_may_write() -> None:
    """Map entries without a value hold the zero value; repeated scalars may come packed;
    negative int32s come as ten-byte varints."""
    entry = protowire.delimited(1, b"cpu")
    resources = protobuf.decode_message("k8s.io.api.core.v1.ResourceRequirements", protowire.delimited(1, entry))
    assert resources == {"limits": {"cpu": "0"}}
    config = protobuf.decode_message(
        "k8s.io.api.core.v1.ConfigMap", protowire.delimited(2, protowire.delimited(1, b"k"))
    )
    assert config == {"data": {"k": ""}}
    context = "k8s.io.api.core.v1.PodSecurityContext"  # supplementalGroups = 4, repeated int64
    packed = protowire.delimited(4, protowire.varint(1000) + protowire.varint(2000))
    unpacked = protowire.key(4, 0) + protowire.varint(3000)
    assert protobuf.decode_message(context, packed + unpacked) == {"supplementalGroups": [1000, 2000, 3000]}
    minus_one = protowire.key(2, 0) + protowire.varint(-1)
    assert len(protowire.varint(-1)) == 10
    assert protobuf.decode_message(protobuf.INT_OR_STRING, minus_one) == -1


def test_corrupt_bodies_are_refused() -> None:
    good = protobuf.encode(copy.deepcopy(CONFIGMAP))
    for bad in (good[:-3], b"k8s\x00\x0a\xff\xff\xff", b"\x0a\x01x", good[:4] + b"\x07"):
        with pytest.raises((ValueError, IndexError)):
            protobuf.decode_object(bad)


# -- over HTTP ----------------------------------------------------------------------------------
async def call(
    raw: Raw, method: str, path: str, body: bytes | None = None, *, accept: str = PB, content_type: str = PB
) -> tuple[int, bytes, str]:
    headers = {"Accept": accept, "Content-Type": content_type}
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, raw.url + path, data=body, headers=headers, ssl=raw.context) as response,
    ):
        return response.status, await response.read(), response.headers.get("Content-Type", "")


async def test_protobuf_only_requests_for_built_in_kinds(raw: Raw) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "pb"}, "data": {"k": "v"}}
    code, body, media = await call(raw, "POST", "/api/v1/namespaces/default/configmaps", protobuf.encode(cm))
    assert (code, media) == (201, PB), body
    created = protobuf.decode_object(body)
    assert created["data"] == {"k": "v"} and created["metadata"]["uid"]
    code, body, media = await call(raw, "GET", "/api/v1/namespaces/default/configmaps/pb")
    assert (code, media) == (200, PB) and protobuf.decode_object(body)["metadata"]["name"] == "pb"
    code, body, media = await call(raw, "GET", "/api/v1/namespaces/default/configmaps")
    listed = protobuf.decode_object(body)
    assert listed["kind"] == "ConfigMapList" and "pb" in [i["metadata"]["name"] for i in listed["items"]]
    assert int(listed["metadata"]["resourceVersion"]) > 0
    # errors come back as a protobuf Status
    code, body, media = await call(raw, "GET", "/api/v1/namespaces/default/configmaps/none")
    status = protobuf.decode_object(body)
    assert (code, media, status["kind"], status["reason"], status["code"]) == (404, PB, "Status", "NotFound", 404)
    assert status["message"] == 'configmaps "none" not found'
    # JSON first in Accept still answers JSON
    code, body, media = await call(
        raw, "GET", "/api/v1/namespaces/default/configmaps/pb", accept=f"application/json,{PB}"
    )
    assert media.startswith("application/json") and json.loads(body)["data"] == {"k": "v"}


async def test_discovery_documents_in_protobuf(raw: Raw) -> None:
    code, body, media = await call(raw, "GET", "/api")
    assert (code, media) == (200, PB) and protobuf.decode_object(body)["versions"] == ["v1"]
    groups = protobuf.decode_object((await call(raw, "GET", "/apis"))[1])
    assert "apps" in [g["name"] for g in groups["groups"]]
    resources = protobuf.decode_object((await call(raw, "GET", "/apis/apps/v1"))[1])
    deployments = next(r for r in resources["resources"] if r["name"] == "deployments")
    assert deployments["verbs"] == ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    assert deployments["namespaced"] is True and resources["groupVersion"] == "apps/v1"
    code, body, media = await call(raw, "GET", "/api/v1", accept="application/json")
    assert media.startswith("application/json") and json.loads(body)["kind"] == "APIResourceList"
    eviction = next(r for r in json.loads(body)["resources"] if r["name"] == "pods/eviction")
    assert (eviction["group"], eviction["version"], eviction["kind"], eviction["verbs"]) == (
        "policy",
        "v1",
        "Eviction",
        ["create"],
    )
    aggregated = f"{PB};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    code, body, media = await call(raw, "GET", "/apis", accept=aggregated)
    assert (code, media) == (200, aggregated)
    as_json = json.loads((await call(raw, "GET", "/apis", accept=aggregated.replace(PB, "application/json")))[1])
    assert protobuf.decode_object(body) == as_json


async def test_tables_are_json_only_and_partial_metadata_has_protobuf(raw: Raw) -> None:
    """kube-apiserver's AllowsMediaTypeTransform: Table as JSON or YAML, PartialObjectMetadata in any."""
    path = "/api/v1/namespaces/kube-system/configmaps"
    table_pb = f"{PB};as=Table;v=v1;g=meta.k8s.io"
    code, _, _ = await call(raw, "GET", path, accept=table_pb)
    assert code == 406
    code, body, media = await call(raw, "GET", path, accept=f"{table_pb},application/json;as=Table;v=v1;g=meta.k8s.io")
    assert code == 200 and media.startswith("application/json") and json.loads(body)["kind"] == "Table"
    partial = f"{PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
    code, body, media = await call(raw, "GET", path, accept=partial)
    listed = protobuf.decode_object(body)
    assert (code, media, listed["kind"]) == (200, PB, "PartialObjectMetadataList")
    names = [item["metadata"]["name"] for item in listed["items"]]
    assert "kube-root-ca.crt" in names and "data" not in listed["items"][0]


async def test_protobuf_bodies_that_are_not_objects_are_bad_requests(raw: Raw) -> None:
    code, body, _ = await call(
        raw, "POST", "/api/v1/namespaces/default/configmaps", b"k8s\x00\x0a\x05\x0a", accept="application/json"
    )
    assert code == 400 and "cannot be handled as a ConfigMap" in json.loads(body)["message"]


async def test_custom_resources_are_json_only(raw: Raw, admin: Kubectl) -> None:
    admin("apply", "-f", str(crd_files()[0]))
    crd = _first_crd()
    group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
    version = crd["spec"]["versions"][0]["name"]
    path = f"/apis/{group}/{version}/{plural}"
    if crd["spec"]["scope"] == "Namespaced":
        path = f"/apis/{group}/{version}/namespaces/default/{plural}"
    for _ in range(50):
        code, body, _ = await call(raw, "GET", path, accept="application/json")
        if code == 200:
            break
        await asyncio.sleep(0.1)
    code, body, _ = await call(raw, "GET", path)
    assert code == 406, body
    code, body, media = await call(raw, "GET", path, accept=f"{PB},application/json")
    assert code == 200 and media.startswith("application/json")
    obj = {"apiVersion": f"{group}/{version}", "kind": crd["spec"]["names"]["kind"], "metadata": {"name": "x"}}
    code, body, _ = await call(raw, "POST", path, json.dumps(obj).encode(), accept="application/json", content_type=PB)
    assert code == 415, body


async def test_watch_streams_length_prefixed_frames(raw: Raw) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "watched"}, "data": {"n": "1"}}
    await call(raw, "POST", "/api/v1/namespaces/default/configmaps", protobuf.encode(cm))
    path = "/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dwatched&timeoutSeconds=1"
    headers = {"Accept": PB}
    async with (
        aiohttp.ClientSession() as session,
        session.get(raw.url + path, headers=headers, ssl=raw.context) as response,
    ):
        assert response.headers["Content-Type"] == protobuf.WATCH_CONTENT_TYPE
        stream = await response.read()  # the server ends the watch after timeoutSeconds
    length = struct.unpack(">I", stream[:4])[0]
    frame = stream[4 : 4 + length]
    assert len(stream) == 4 + length  # one event, then the end of the stream
    parts = {n: v for n, _, v in protobuf.fields(frame)}
    assert parts[1] == b"ADDED"
    embedded = {n: v for n, _, v in protobuf.fields(parts[2])}[1]
    obj = protobuf.decode_object(embedded)
    assert obj["kind"] == "ConfigMap" and obj["data"] == {"n": "1"}


# -- with kubectl ------------------------------------------------------------------------------------
def test_kubectl_typed_commands_send_and_read_protobuf(admin: Kubectl) -> None:
    admin("create", "namespace", "pb-kubectl")
    out = admin(
        "create", "deployment", "zero", "--image=nginx", "--replicas=0", "--port=8080", "-n", "pb-kubectl", "-v=8"
    )
    assert "6b 38 73 00" in out.stderr  # kubectl's dump of a response body that starts with k8s\0
    assert "deployment.apps/zero created" in out.stdout
    deployment = json.loads(admin("get", "deployment", "zero", "-n", "pb-kubectl", "-o", "json").stdout)
    assert deployment["spec"]["replicas"] == 0  # a pointer's zero survives protobuf
    assert deployment["spec"]["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 8080, "protocol": "TCP"}
    ]
    admin("create", "service", "clusterip", "svc", "--tcp=80:8080", "-n", "pb-kubectl")
    svc = json.loads(admin("get", "svc", "svc", "-n", "pb-kubectl", "-o", "json").stdout)
    assert svc["spec"]["ports"][0]["targetPort"] == 8080
    admin("create", "poddisruptionbudget", "pdb", "--selector=app=x", "--min-available=50%", "-n", "pb-kubectl")
    pdb = json.loads(admin("get", "pdb", "pdb", "-n", "pb-kubectl", "-o", "json").stdout)
    assert pdb["spec"]["minAvailable"] == "50%"
    admin("create", "quota", "q", "--hard=cpu=1,memory=1G,pods=2", "-n", "pb-kubectl")
    quota = json.loads(admin("get", "quota", "q", "-n", "pb-kubectl", "-o", "json").stdout)
    assert quota["spec"]["hard"] == {"cpu": "1", "memory": "1G", "pods": "2"}
    admin("create", "priorityclass", "pb-low", "--value=-5", "--preemption-policy=Never")
    assert admin("get", "priorityclass", "pb-low", "-o", "jsonpath={.value}").stdout == "-5"
    admin("create", "secret", "generic", "bin", "--from-literal=k=\x01\x02 x", "-n", "pb-kubectl")
    data = json.loads(admin("get", "secret", "bin", "-n", "pb-kubectl", "-o", "json").stdout)["data"]
    assert base64.b64decode(data["k"]) == b"\x01\x02 x"
    assert "apiVersion: v1" in admin("get", "pods", "-n", "pb-kubectl", "-o", "yaml").stdout


def _wait_for(condition: Any, timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_kubectl_events_watch_reads_protobuf_frames(admin: Kubectl, localkube: ServerThread, tmp_path: Path) -> None:
    """``kubectl events --watch`` is a typed client-go watch: length-prefixed protobuf frames."""
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "pb-first", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Tested",
        "message": "listed",
        "type": "Normal",
        "count": 1,
    }
    admin("create", "-f", "-", stdin=json.dumps(event))
    log = tmp_path / "events.log"
    args = [kubectl(), f"--kubeconfig={admin.kubeconfig}", "events", "--watch", "-n", "default", "-v=8"]
    watching = localkube.server.watch_count
    process = Background(args, log).start()
    try:
        assert _wait_for(lambda: localkube.server.watch_count > watching), process.output()
        later = {**event, "metadata": {"name": "pb-later", "namespace": "default"}, "message": "watched-later"}
        admin("create", "-f", "-", stdin=json.dumps(later))
        assert _wait_for(lambda: "watched-later" in process.output()), process.output()
    finally:
        process.stop()
    assert f"Content-Type: {protobuf.WATCH_CONTENT_TYPE}" in process.output()
    assert "listed" in process.output()


def test_kubectl_drain_lists_and_evicts_in_protobuf(tmp_path: Path) -> None:
    """drain reads a PodList and posts policy/v1 Evictions, both protobuf; it evicts (rather
    than deletes) only because discovery names pods/eviction's kind as kube-apiserver does."""
    with contextlib.contextmanager(start_server)(
        port=0, simulation=SimulationConfig(nodes=1, workloads=True, shutdown_seconds=0.2)
    ) as server:
        kubectl = Kubectl(server.kubeconfig(tmp_path), tmp_path / "cache")
        kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2")
        kubectl("rollout", "status", "deployment/web", "--timeout=30s")
        out = kubectl("drain", "node-1", "--timeout=30s", "-v=6", timeout=60)
        assert out.stdout.count(" evicted") == 2, out.stdout
        assert "/eviction 201" in out.stderr
