"""Decoding the protobuf request bodies kubectl 1.32 sends from its typed clients.

kubectl's typed commands (``create namespace|configmap|secret|deployment|...``,
``create quota``, ``auth can-i|whoami``, ``certificate approve``, ``create token``) send
``application/vnd.kubernetes.protobuf`` and never retry with JSON. Bodies are a
``k8s\\0`` envelope around ``runtime.Unknown`` {typeMeta, raw}; the message in
``raw`` is decoded by the schema table below into the JSON shape the rest of
the server handles. The table covers the kinds those commands create; other
kinds get 415 (a documented limit).
"""

from __future__ import annotations

import base64
import datetime
from typing import Any

from localkube.errors import unsupported_media_type
from localkube.resources import ResourceType

MAGIC = b"k8s\x00"
Obj = dict[str, Any]

# message -> field number -> (json name, type). Types: string, int, bool, bytes,
# map (string->string), mapbytes (string->bytes, base64 in JSON), quantity,
# mapquantity, time, intorstring, or a message name; a leading "[]" repeats.
SCHEMA: dict[str, dict[int, tuple[str, str]]] = {
    "ObjectMeta": {
        1: ("name", "string"),
        2: ("generateName", "string"),
        3: ("namespace", "string"),
        5: ("uid", "string"),
        6: ("resourceVersion", "string"),
        7: ("generation", "int"),
        8: ("creationTimestamp", "time"),
        11: ("labels", "map"),
        12: ("annotations", "map"),
        13: ("ownerReferences", "[]OwnerReference"),
        14: ("finalizers", "[]string"),
    },
    "OwnerReference": {
        1: ("kind", "string"),
        3: ("name", "string"),
        4: ("uid", "string"),
        5: ("apiVersion", "string"),
        6: ("controller", "bool"),
        7: ("blockOwnerDeletion", "bool"),
    },
    "LabelSelector": {1: ("matchLabels", "map"), 2: ("matchExpressions", "[]LabelSelectorRequirement")},
    "LabelSelectorRequirement": {1: ("key", "string"), 2: ("operator", "string"), 3: ("values", "[]string")},
    "Namespace": {1: ("metadata", "ObjectMeta"), 2: ("spec", "NamespaceSpec")},
    "NamespaceSpec": {1: ("finalizers", "[]string")},
    "ConfigMap": {
        1: ("metadata", "ObjectMeta"),
        2: ("data", "map"),
        3: ("binaryData", "mapbytes"),
        4: ("immutable", "bool"),
    },
    "Secret": {
        1: ("metadata", "ObjectMeta"),
        2: ("data", "mapbytes"),
        3: ("type", "string"),
        4: ("stringData", "map"),
        5: ("immutable", "bool"),
    },
    "ServiceAccount": {
        1: ("metadata", "ObjectMeta"),
        2: ("secrets", "[]ObjectReference"),
        3: ("imagePullSecrets", "[]LocalObjectReference"),
        4: ("automountServiceAccountToken", "bool"),
    },
    "ObjectReference": {
        1: ("kind", "string"),
        2: ("namespace", "string"),
        3: ("name", "string"),
        4: ("uid", "string"),
        5: ("apiVersion", "string"),
        6: ("resourceVersion", "string"),
        7: ("fieldPath", "string"),
    },
    "LocalObjectReference": {1: ("name", "string")},
    "Service": {1: ("metadata", "ObjectMeta"), 2: ("spec", "ServiceSpec")},
    "ServiceSpec": {
        1: ("ports", "[]ServicePort"),
        2: ("selector", "map"),
        3: ("clusterIP", "string"),
        4: ("type", "string"),
        5: ("externalIPs", "[]string"),
        7: ("sessionAffinity", "string"),
        10: ("externalName", "string"),
        18: ("clusterIPs", "[]string"),
    },
    "ServicePort": {
        1: ("name", "string"),
        2: ("protocol", "string"),
        3: ("port", "int"),
        4: ("targetPort", "intorstring"),
        5: ("nodePort", "int"),
        6: ("appProtocol", "string"),
    },
    "Deployment": {1: ("metadata", "ObjectMeta"), 2: ("spec", "DeploymentSpec")},
    "DeploymentSpec": {
        1: ("replicas", "int"),
        2: ("selector", "LabelSelector"),
        3: ("template", "PodTemplateSpec"),
        4: ("strategy", "DeploymentStrategy"),
        5: ("minReadySeconds", "int"),
        6: ("revisionHistoryLimit", "int"),
        7: ("paused", "bool"),
        9: ("progressDeadlineSeconds", "int"),
    },
    "DeploymentStrategy": {1: ("type", "string")},
    "PodTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec")},
    "PodSpec": {
        2: ("containers", "[]Container"),
        3: ("restartPolicy", "string"),
        6: ("dnsPolicy", "string"),
        7: ("nodeSelector", "map"),
        8: ("serviceAccountName", "string"),
        10: ("nodeName", "string"),
        15: ("imagePullSecrets", "[]LocalObjectReference"),
        20: ("initContainers", "[]Container"),
    },
    "Container": {
        1: ("name", "string"),
        2: ("image", "string"),
        3: ("command", "[]string"),
        4: ("args", "[]string"),
        5: ("workingDir", "string"),
        6: ("ports", "[]ContainerPort"),
        7: ("env", "[]EnvVar"),
        8: ("resources", "ResourceRequirements"),
        14: ("imagePullPolicy", "string"),
    },
    "ContainerPort": {
        1: ("name", "string"),
        2: ("hostPort", "int"),
        3: ("containerPort", "int"),
        4: ("protocol", "string"),
    },
    "EnvVar": {1: ("name", "string"), 2: ("value", "string")},
    "ResourceRequirements": {1: ("limits", "mapquantity"), 2: ("requests", "mapquantity")},
    "ResourceQuota": {1: ("metadata", "ObjectMeta"), 2: ("spec", "ResourceQuotaSpec")},
    "ResourceQuotaSpec": {1: ("hard", "mapquantity"), 2: ("scopes", "[]string"), 3: ("scopeSelector", "ScopeSelector")},
    "ScopeSelector": {1: ("matchExpressions", "[]ScopedResourceSelectorRequirement")},
    "ScopedResourceSelectorRequirement": {
        1: ("scopeName", "string"),
        2: ("operator", "string"),
        3: ("values", "[]string"),
    },
    "Job": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec")},
    "JobSpec": {
        1: ("parallelism", "int"),
        2: ("completions", "int"),
        4: ("selector", "LabelSelector"),
        5: ("manualSelector", "bool"),
        6: ("template", "PodTemplateSpec"),
        7: ("backoffLimit", "int"),
    },
    "CronJob": {1: ("metadata", "ObjectMeta"), 2: ("spec", "CronJobSpec")},
    "CronJobSpec": {1: ("schedule", "string"), 5: ("jobTemplate", "JobTemplateSpec"), 8: ("timeZone", "string")},
    "JobTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec")},
    "Role": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[]PolicyRule")},
    "ClusterRole": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[]PolicyRule")},
    "PolicyRule": {
        1: ("verbs", "[]string"),
        2: ("apiGroups", "[]string"),
        3: ("resources", "[]string"),
        4: ("resourceNames", "[]string"),
        5: ("nonResourceURLs", "[]string"),
    },
    "RoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "[]Subject"), 3: ("roleRef", "RoleRef")},
    "ClusterRoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "[]Subject"), 3: ("roleRef", "RoleRef")},
    "Subject": {1: ("kind", "string"), 2: ("apiGroup", "string"), 3: ("name", "string"), 4: ("namespace", "string")},
    "RoleRef": {1: ("apiGroup", "string"), 2: ("kind", "string"), 3: ("name", "string")},
    "SelfSubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SelfSubjectAccessReviewSpec")},
    "SelfSubjectAccessReviewSpec": {
        1: ("resourceAttributes", "ResourceAttributes"),
        2: ("nonResourceAttributes", "NonResourceAttributes"),
    },
    "SubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SubjectAccessReviewSpec")},
    "LocalSubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SubjectAccessReviewSpec")},
    "SubjectAccessReviewSpec": {
        1: ("resourceAttributes", "ResourceAttributes"),
        2: ("nonResourceAttributes", "NonResourceAttributes"),
        3: ("user", "string"),
        4: ("groups", "[]string"),
        6: ("uid", "string"),
    },
    "ResourceAttributes": {
        1: ("namespace", "string"),
        2: ("verb", "string"),
        3: ("group", "string"),
        4: ("version", "string"),
        5: ("resource", "string"),
        6: ("subresource", "string"),
        7: ("name", "string"),
    },
    "NonResourceAttributes": {1: ("path", "string"), 2: ("verb", "string")},
    "SelfSubjectRulesReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SelfSubjectRulesReviewSpec")},
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "string")},
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta")},
    "CertificateSigningRequest": {
        1: ("metadata", "ObjectMeta"),
        2: ("spec", "CertificateSigningRequestSpec"),
        3: ("status", "CertificateSigningRequestStatus"),
    },
    "CertificateSigningRequestSpec": {
        1: ("request", "bytes"),
        2: ("username", "string"),
        3: ("uid", "string"),
        4: ("groups", "[]string"),
        5: ("usages", "[]string"),
        7: ("signerName", "string"),
        8: ("expirationSeconds", "int"),
    },
    "CertificateSigningRequestStatus": {1: ("conditions", "[]CSRCondition"), 2: ("certificate", "bytes")},
    "CSRCondition": {
        1: ("type", "string"),
        2: ("reason", "string"),
        3: ("message", "string"),
        4: ("lastUpdateTime", "time"),
        5: ("lastTransitionTime", "time"),
        6: ("status", "string"),
    },
    "TokenRequest": {1: ("metadata", "ObjectMeta"), 2: ("spec", "TokenRequestSpec")},
    "TokenRequestSpec": {1: ("audiences", "[]string"), 4: ("expirationSeconds", "int")},
}


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


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _entry(data: bytes) -> tuple[str, bytes]:
    key, value = "", b""
    for number, _, raw in fields(data):
        if number == 1:
            key = raw.decode()
        elif number == 2:
            value = raw
    return key, value


def _scalar(kind: str, value: Any) -> Any:
    if kind == "string":
        return value.decode("utf-8")
    if kind == "int":
        return _signed(value)
    if kind == "bool":
        return bool(value)
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind == "time":
        seconds = 0
        for number, _, raw in fields(value):
            if number == 1:
                seconds = _signed(raw)
        if seconds == 0:
            return None
        return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if kind == "quantity":
        return next((raw.decode() for number, _, raw in fields(value) if number == 1), "0")
    if kind == "intorstring":
        parts = {number: raw for number, _, raw in fields(value)}
        return parts[3].decode() if parts.get(1) == 1 else _signed(parts.get(2, 0))
    return decode_message(kind, value)


def _empty(value: Any) -> bool:
    return value in ("", 0, False, None) and not isinstance(value, dict)


def decode_message(name: str, data: bytes) -> Obj:
    """A message as JSON; empty scalars are dropped, as Go's ``omitempty`` drops them."""
    schema = SCHEMA[name]
    obj: Obj = {}
    for number, _, raw in fields(data):
        if number not in schema:
            continue
        field, kind = schema[number]
        if kind.startswith("[]"):
            obj.setdefault(field, []).append(_scalar(kind[2:], raw))
        elif kind in ("map", "mapbytes", "mapquantity"):
            key, value = _entry(raw)
            if kind == "map":
                obj.setdefault(field, {})[key] = value.decode()
            elif kind == "mapbytes":
                obj.setdefault(field, {})[key] = base64.b64encode(value).decode()
            else:
                obj.setdefault(field, {})[key] = _scalar("quantity", value)
        else:
            value = _scalar(kind, raw)
            if not _empty(value):
                obj[field] = value
    return obj


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
                    api_version = v.decode()
                elif n == 2:
                    kind = v.decode()
        elif number == 2:
            payload = value
    if kind not in SCHEMA:
        raise unsupported_media_type(["application/json", "application/yaml"])
    obj = decode_message(kind, payload)
    obj["apiVersion"] = api_version
    obj["kind"] = kind
    return obj
