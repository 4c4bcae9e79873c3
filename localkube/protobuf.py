"""Decoding the few protobuf request bodies kubectl 1.32 sends (typed clients do not
fall back to JSON): access and rules reviews, self-subject reviews, CSR approval
and TokenRequest. Only the fields the server reads are decoded."""

from __future__ import annotations

from typing import Any

from localkube.errors import unsupported_media_type
from localkube.resources import ResourceType

MAGIC = b"k8s\x00"
Obj = dict[str, Any]


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def fields(data: bytes) -> list[tuple[int, int, Any]]:
    """``(field number, wire type, value)`` of every field of a message."""
    out = []
    pos = 0
    value: Any
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos : pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _str(value: bytes) -> str:
    return value.decode("utf-8")


def _time(data: bytes) -> str:
    import datetime

    seconds = 0
    for number, _, value in fields(data):
        if number == 1:
            seconds = value
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _map_entry(data: bytes) -> tuple[str, str]:
    key = value = ""
    for number, _, raw in fields(data):
        if number == 1:
            key = _str(raw)
        elif number == 2:
            value = _str(raw)
    return key, value


def object_meta(data: bytes) -> Obj:
    meta: Obj = {}
    for number, _, value in fields(data):
        if number == 1:
            meta["name"] = _str(value)
        elif number == 2:
            meta["generateName"] = _str(value)
        elif number == 3:
            meta["namespace"] = _str(value)
        elif number == 5:
            meta["uid"] = _str(value)
        elif number == 6:
            meta["resourceVersion"] = _str(value)
        elif number == 7:
            meta["generation"] = value
        elif number == 8:
            meta["creationTimestamp"] = _time(value)
        elif number == 11:
            key, val = _map_entry(value)
            meta.setdefault("labels", {})[key] = val
        elif number == 12:
            key, val = _map_entry(value)
            meta.setdefault("annotations", {})[key] = val
        elif number == 14:
            meta.setdefault("finalizers", []).append(_str(value))
    return meta


def _resource_attributes(data: bytes) -> Obj:
    names = {1: "namespace", 2: "verb", 3: "group", 4: "version", 5: "resource", 6: "subresource", 7: "name"}
    return {names[n]: _str(v) for n, _, v in fields(data) if n in names}


def _non_resource_attributes(data: bytes) -> Obj:
    names = {1: "path", 2: "verb"}
    return {names[n]: _str(v) for n, _, v in fields(data) if n in names}


def _access_review(data: bytes) -> Obj:
    spec: Obj = {}
    meta: Obj = {}
    for number, _, value in fields(data):
        if number == 1:
            meta = object_meta(value)
        elif number == 2:
            for n, _, v in fields(value):
                if n == 1:
                    spec["resourceAttributes"] = _resource_attributes(v)
                elif n == 2:
                    spec["nonResourceAttributes"] = _non_resource_attributes(v)
    return {"metadata": meta, "spec": spec}


def _rules_review(data: bytes) -> Obj:
    spec: Obj = {}
    for number, _, value in fields(data):
        if number == 2:
            for n, _, v in fields(value):
                if n == 1:
                    spec["namespace"] = _str(v)
    return {"metadata": {}, "spec": spec}


def _csr(data: bytes) -> Obj:
    import base64

    obj: Obj = {"metadata": {}, "spec": {}, "status": {}}
    for number, _, value in fields(data):
        if number == 1:
            obj["metadata"] = object_meta(value)
        elif number == 2:
            spec = obj["spec"]
            for n, _, v in fields(value):
                if n == 1:
                    spec["request"] = base64.b64encode(v).decode()
                elif n == 2:
                    spec["username"] = _str(v)
                elif n == 3:
                    spec["uid"] = _str(v)
                elif n == 4:
                    spec.setdefault("groups", []).append(_str(v))
                elif n == 5:
                    spec.setdefault("usages", []).append(_str(v))
                elif n == 7:
                    spec["signerName"] = _str(v)
                elif n == 8:
                    spec["expirationSeconds"] = v
        elif number == 3:
            status = obj["status"]
            for n, _, v in fields(value):
                if n == 1:
                    condition: Obj = {}
                    for cn, _, cv in fields(v):
                        if cn == 1:
                            condition["type"] = _str(cv)
                        elif cn == 6:
                            condition["status"] = _str(cv)
                        elif cn == 2:
                            condition["reason"] = _str(cv)
                        elif cn == 3:
                            condition["message"] = _str(cv)
                        elif cn == 4:
                            condition["lastUpdateTime"] = _time(cv)
                        elif cn == 5:
                            condition["lastTransitionTime"] = _time(cv)
                    status.setdefault("conditions", []).append(condition)
                elif n == 2:
                    status["certificate"] = base64.b64encode(v).decode()
    return obj


def _token_request(data: bytes) -> Obj:
    spec: Obj = {}
    for number, _, value in fields(data):
        if number == 2:
            for n, _, v in fields(value):
                if n == 1:
                    spec.setdefault("audiences", []).append(_str(v))
                elif n == 4:
                    spec["expirationSeconds"] = v
    return {"metadata": {}, "spec": spec}


_DECODERS = {
    "SelfSubjectAccessReview": _access_review,
    "SubjectAccessReview": _access_review,
    "LocalSubjectAccessReview": _access_review,
    "SelfSubjectRulesReview": _rules_review,
    "SelfSubjectReview": lambda data: {"metadata": {}},
    "CertificateSigningRequest": _csr,
    "TokenRequest": _token_request,
}


def decode(raw: bytes, rt: ResourceType) -> Obj:
    """A JSON-shaped object from a ``k8s\\0``-enveloped protobuf body."""
    if not raw.startswith(MAGIC):
        raise unsupported_media_type(["application/json", "application/yaml"])
    api_version = kind = ""
    payload = b""
    for number, _, value in fields(raw[len(MAGIC) :]):
        if number == 1:
            for n, _, v in fields(value):
                if n == 1:
                    api_version = _str(v)
                elif n == 2:
                    kind = _str(v)
        elif number == 2:
            payload = value
    decoder = _DECODERS.get(kind)
    if decoder is None:
        raise unsupported_media_type(["application/json", "application/yaml"])
    obj = decoder(payload)
    obj["apiVersion"] = api_version
    obj["kind"] = kind
    return obj
