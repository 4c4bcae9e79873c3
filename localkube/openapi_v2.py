"""``/openapi/v2``: the Swagger 2.0 document of the built-in kinds, as JSON or
in the protobuf form (gnostic's ``openapi_v2.Document``) that kubectl asks for.

kubectl validates some inputs on the client from this document: a ``kind:
List`` is never validated by the server, so without it ``kubectl apply -f``
of a List fails with "could not find the requested resource". The schemas are
Kubernetes' own v1.32 definitions (see :mod:`localkube.builtin_schemas`),
with their ``x-kubernetes-*`` extensions (group-version-kind, patch strategy
and merge keys).
"""

from __future__ import annotations

import functools
import json
import struct
from typing import Any

import yaml

from localkube import builtin_schemas
from localkube.protowire import delimited as _bytes
from localkube.protowire import key as _field
from localkube.protowire import varint as _varint

Obj = dict[str, Any]
PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
# clients ask with either spelling; the "@" one is not a valid media type to answer with
PROTOBUF_ACCEPTED = (PROTOBUF, "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")


@functools.cache
def document() -> Obj:
    """The whole Swagger document (definitions only: paths are not needed by clients here)."""
    definitions = {
        name: builtin_schemas.to_openapi(schema, 2) for name, schema in builtin_schemas.definitions().items()
    }
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": builtin_schemas.KUBERNETES_VERSION},
        "paths": {},
        "definitions": definitions,
    }


@functools.cache
def document_json() -> bytes:
    return json.dumps(document(), separators=(",", ":")).encode()


# ---- the same as gnostic protobuf ---------------------------------------------------------------------


def _string(number: int, text: str) -> bytes:
    return _bytes(number, text.encode())


def _bool(number: int, value: bool) -> bytes:
    return _field(number, 0) + _varint(1 if value else 0)


def _int(number: int, value: int) -> bytes:
    return _field(number, 0) + _varint(int(value))


def _double(number: int, value: float) -> bytes:
    return _field(number, 1) + struct.pack("<d", float(value))


def _any(number: int, value: Any) -> bytes:
    """gnostic ``Any``: the value as YAML text (field 2)."""
    return _bytes(number, _string(2, yaml.safe_dump(value, default_flow_style=False).rstrip("\n")))


def _named_any(number: int, name: str, value: Any) -> bytes:
    return _bytes(number, _string(1, name) + _any(2, value))


def _schema(schema: Obj) -> bytes:
    out = bytearray()
    if "$ref" in schema:
        out += _string(1, schema["$ref"])
    if "format" in schema:
        out += _string(2, str(schema["format"]))
    if "title" in schema:
        out += _string(3, str(schema["title"]))
    if "description" in schema:
        out += _string(4, str(schema["description"]))
    if "default" in schema:
        out += _any(5, schema["default"])
    for number, key in ((6, "multipleOf"), (7, "maximum")):
        if key in schema:
            out += _double(number, schema[key])
    if schema.get("exclusiveMaximum") is True:
        out += _bool(8, True)
    if "minimum" in schema:
        out += _double(9, schema["minimum"])
    if schema.get("exclusiveMinimum") is True:
        out += _bool(10, True)
    for number, key in ((11, "maxLength"), (12, "minLength")):
        if key in schema:
            out += _int(number, schema[key])
    if "pattern" in schema:
        out += _string(13, str(schema["pattern"]))
    for number, key in ((14, "maxItems"), (15, "minItems")):
        if key in schema:
            out += _int(number, schema[key])
    if schema.get("uniqueItems") is True:
        out += _bool(16, True)
    for number, key in ((17, "maxProperties"), (18, "minProperties")):
        if key in schema:
            out += _int(number, schema[key])
    for name in schema.get("required") or []:
        out += _string(19, name)
    for value in schema.get("enum") or []:
        out += _any(20, value)
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        out += _bytes(21, _bytes(1, _schema(additional)))
    elif isinstance(additional, bool):
        out += _bytes(21, _bool(2, additional))
    if "type" in schema:
        out += _bytes(22, _string(1, str(schema["type"])))
    if isinstance(schema.get("items"), dict):
        out += _bytes(23, _bytes(1, _schema(schema["items"])))
    if isinstance(schema.get("properties"), dict):
        named = b"".join(
            _bytes(1, _string(1, name) + _bytes(2, _schema(value))) for name, value in schema["properties"].items()
        )
        out += _bytes(25, named)
    if schema.get("readOnly") is True:
        out += _bool(27, True)
    if "example" in schema:
        out += _any(30, schema["example"])
    for key, value in schema.items():
        if key.startswith("x-"):
            out += _named_any(31, key, value)
    return bytes(out)


@functools.cache
def document_protobuf() -> bytes:
    """The document as gnostic's ``openapi_v2.Document`` protobuf message."""
    doc = document()
    info = _string(1, doc["info"]["title"]) + _string(2, doc["info"]["version"])
    definitions = b"".join(
        _bytes(1, _string(1, name) + _bytes(2, _schema(schema))) for name, schema in doc["definitions"].items()
    )
    return _string(1, "2.0") + _bytes(2, info) + _bytes(8, b"") + _bytes(9, definitions)
