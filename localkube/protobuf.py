"""``application/vnd.kubernetes.protobuf``: the built-in kinds as kube-apiserver
writes and reads them in protobuf.

An object on the wire is ``k8s\\0`` followed by a ``runtime.Unknown`` message
{typeMeta {apiVersion, kind}, raw, contentEncoding, contentType} whose ``raw``
is the object's own message. The messages' fields (numbers, types, JSON names,
Go pointer and ``omitempty``) come from ``protobuf_fields.json``, generated
from k8s.io/api, k8s.io/apimachinery, k8s.io/apiextensions-apiserver and
k8s.io/kube-aggregator by :mod:`localkube.protobuf_gen`; the rest of the server
keeps handling JSON-shaped objects, converted here both ways.

The types whose JSON is not their message's shape are converted by hand, as
their Go marshallers do: Time (RFC 3339 seconds; protobuf drops the nanos),
MicroTime (microseconds), Duration, Quantity (its string), IntOrString,
RawExtension, FieldsV1 and apiextensions' JSON (raw JSON bytes), the
JSONSchemaPropsOr* unions and slice types such as ExtraValue (a JSON array).

Decoding keeps a field that is present on the wire unless Go would drop its
value from JSON (a non-pointer ``omitempty`` zero); a pointer's zero (e.g.
``replicas: 0``) stays. Watch streams use frames of a 4-byte big-endian length
and a bare ``WatchEvent`` message whose object is a full ``k8s\\0`` envelope.

Custom resources have no messages: kube-apiserver serves them as JSON only.
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
import re
import struct
from importlib import resources
from typing import Any

from localkube.errors import bad_request, unsupported_media_type
from localkube.protowire import delimited as _delimited
from localkube.protowire import key as _key
from localkube.protowire import read_varint as _read_varint
from localkube.protowire import varint as _varint
from localkube.resources import ResourceType

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
WATCH_CONTENT_TYPE = "application/vnd.kubernetes.protobuf;stream=watch"
Obj = dict[str, Any]
Field = list[Any]  # [number, json name, type, flags]; flags: r repeated, m map, p pointer, o omitempty, i inline

META = "k8s.io.apimachinery.pkg.apis.meta.v1."
TIME = META + "Time"
MICRO_TIME = META + "MicroTime"
DURATION = META + "Duration"
FIELDS_V1 = META + "FieldsV1"
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"
APIEXTENSIONS = (
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.",
)
VARINT_TYPES = ("int32", "int64", "uint32", "uint64", "bool")
_MASK64 = (1 << 64) - 1


@functools.cache
def table() -> Obj:
    text = resources.files("localkube").joinpath("protobuf_fields.json").read_text()
    data: Obj = json.loads(text)
    data["slice_set"] = frozenset(data["slices"])
    specials = {TIME, MICRO_TIME, DURATION, FIELDS_V1, QUANTITY, INT_OR_STRING, RAW_EXTENSION, *data["slices"]}
    for prefix in APIEXTENSIONS:
        specials |= {prefix + short for short in ("JSON", "JSONSchemaPropsOrBool", "JSONSchemaPropsOrArray")}
        specials.add(prefix + "JSONSchemaPropsOrStringArray")
    data["specials"] = frozenset(specials)  # the messages converted by hand, looked up once per value
    return data


def message_for(api_version: str, kind: str) -> str | None:
    """The message of a kind in a group version, or None (no protobuf for it)."""
    messages = table()["messages"]
    package = table()["groups"].get(api_version)
    if package is not None and f"{package}.{kind}" in messages:
        return f"{package}.{kind}"
    # meta.k8s.io kinds (Status, DeleteOptions, ...) are registered in every group version
    if META + kind in messages and (package is not None or api_version == "meta.k8s.io/v1"):
        return META + kind
    return None


def encodable(obj: Any) -> bool:
    return isinstance(obj, dict) and message_for(obj.get("apiVersion", ""), obj.get("kind", "")) is not None


def supported(rt: ResourceType) -> bool:
    """Whether kube-apiserver would serve this resource as protobuf."""
    return not rt.custom and message_for(rt.api_version, rt.kind) is not None


# -- wire primitives ---------------------------------------------------------------------
def fields(data: bytes) -> list[tuple[int, int, Any]]:
    """``(field number, wire type, value)`` of every field of a message."""
    out = []
    pos = 0
    value: Any
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            length, pos = _read_varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated field")
            value, pos = data[pos : pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _signed(value: int, bits: int = 64) -> int:
    """A varint read back as a two's complement int64 or int32 (Go writes negatives in 10 bytes)."""
    value &= _MASK64 if bits == 64 else 0xFFFFFFFF
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


# -- times, durations ------------------------------------------------------------------------
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _parse_time(text: str) -> tuple[int, int]:
    """Seconds and nanoseconds of an RFC 3339 time."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", text)
    if match is None:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    base = datetime.datetime.fromisoformat(match.group(1) + ("+00:00" if match.group(3) == "Z" else match.group(3)))
    seconds = int((base - _EPOCH).total_seconds())
    nanos = int((match.group(2) or "0")[:9].ljust(9, "0"))
    return seconds, nanos


def _format_time(seconds: int, micros: int | None) -> str:
    moment = _EPOCH + datetime.timedelta(seconds=seconds)
    if micros is None:
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{micros:06d}Z"


_DURATION_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}


def _parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string ("1h2m3.5s")."""
    sign = -1 if text.startswith("-") else 1
    rest = text.lstrip("+-")
    if rest == "0":
        return 0
    parts = re.findall(r"(\d+(?:\.\d*)?)(ns|us|µs|ms|s|m|h)", rest)
    if not parts or "".join(n + u for n, u in parts) != rest:
        raise ValueError(f"not a duration: {text!r}")
    return sign * round(sum(float(n) * _DURATION_UNITS[u] for n, u in parts))


def _format_duration(nanos: int) -> str:
    """Go's ``time.Duration.String``."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    n = abs(nanos)
    if n < 10**9:
        for unit, size in (("ms", 10**6), ("µs", 10**3), ("ns", 1)):
            if n >= size:
                return sign + _trim(n, size) + unit
    hours, n = divmod(n, 3600 * 10**9)
    minutes, n = divmod(n, 60 * 10**9)
    text = _trim(n, 10**9) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def _trim(value: int, size: int) -> str:
    whole, fraction = divmod(value, size)
    if not fraction:
        return str(whole)
    digits = len(str(size)) - 1
    return f"{whole}.{fraction:0{digits}d}".rstrip("0")


# -- encoding -----------------------------------------------------------------------------------
def _scalar(kind: str, value: Any) -> tuple[int, bytes]:
    """(wire type, payload) of a scalar; length-delimited payloads without their length."""
    if kind == "string":
        return 2, str(value).encode()
    if kind == "bytes":
        return 2, base64.b64decode(value) if isinstance(value, str) else bytes(value)
    if kind == "bool":
        return 0, _varint(1 if value else 0)
    if kind in ("int32", "int64", "uint32", "uint64"):
        return 0, _varint(int(value))
    if kind == "double":
        return 1, struct.pack("<d", float(value))
    if kind == "float":
        return 5, struct.pack("<f", float(value))
    raise ValueError(f"unknown scalar type {kind}")


def _value(number: int, kind: str, value: Any) -> bytes:
    if kind in _SCALAR_KINDS:
        wire, payload = _scalar(kind, value)
        return _delimited(number, payload) if wire == 2 else _key(number, wire) + payload
    return _delimited(number, encode_message(kind, value))


_SCALAR_KINDS = frozenset(("string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "double", "float"))


def _special_encode(name: str, value: Any) -> bytes | None:
    if name in (TIME, MICRO_TIME):
        seconds, nanos = _parse_time(value)
        nanos = (nanos // 1000) * 1000 if name == MICRO_TIME else 0
        return _key(1, 0) + _varint(seconds) + _key(2, 0) + _varint(nanos)
    if name == DURATION:
        return _key(1, 0) + _varint(_parse_duration(value))
    if name == QUANTITY:
        return _delimited(1, str(value).encode())
    if name == INT_OR_STRING:
        if isinstance(value, str):
            return _key(1, 0) + _varint(1) + _key(2, 0) + _varint(0) + _delimited(3, value.encode())
        return _key(1, 0) + _varint(0) + _key(2, 0) + _varint(int(value)) + _delimited(3, b"")
    if name in (RAW_EXTENSION, FIELDS_V1) or _apiextensions(name, "JSON"):
        return _delimited(1, json.dumps(value, separators=(",", ":")).encode())
    if _apiextensions(name, "JSONSchemaPropsOrBool"):
        if isinstance(value, bool):
            return _key(1, 0) + _varint(int(value))
        return _key(1, 0) + _varint(1) + _delimited(2, encode_message(_sibling(name, "JSONSchemaProps"), value))
    if _apiextensions(name, "JSONSchemaPropsOrArray") or _apiextensions(name, "JSONSchemaPropsOrStringArray"):
        schema = _sibling(name, "JSONSchemaProps")
        if isinstance(value, dict):
            return _delimited(1, encode_message(schema, value))
        if name.endswith("OrArray"):
            return b"".join(_delimited(2, encode_message(schema, v)) for v in value)
        return b"".join(_delimited(2, str(v).encode()) for v in value)
    if name in table()["slice_set"]:
        item_kind = table()["messages"][name][0][2]
        return b"".join(_value(1, item_kind, v) for v in value or [])
    return None


def _apiextensions(name: str, short: str) -> bool:
    return name.startswith(APIEXTENSIONS) and name.rsplit(".", 1)[1] == short


def _sibling(name: str, short: str) -> str:
    return name.rsplit(".", 1)[0] + "." + short


def encode_message(name: str, obj: Any) -> bytes:
    """The protobuf of one JSON value of message ``name``; fields it does not know are left out."""
    if name in table()["specials"]:
        special = _special_encode(name, obj)
        assert special is not None
        return special
    if not isinstance(obj, dict):
        raise ValueError(f"{name.rsplit('.', 1)[1]} must be an object")
    out = bytearray()
    for number, json_name, kind, flags in table()["messages"][name]:
        if "i" in flags:
            if kind not in _SCALAR_KINDS:
                out += _delimited(number, encode_message(kind, obj))
            continue
        value = obj.get(json_name)
        if value is None or json_name == "-":
            continue
        if "m" in flags:
            for key in sorted(value):  # Go writes map entries in key order
                if value[key] is None and kind in _SCALAR_KINDS:
                    continue
                entry = _delimited(1, str(key).encode()) + _value(2, kind, value[key])
                out += _delimited(number, entry)
        elif "r" in flags:
            for item in value:
                out += _value(number, kind, item)
        else:
            out += _value(number, kind, value)
    return bytes(out)


def _unknown(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _delimited(1, api_version.encode()) + _delimited(2, kind.encode())
    return MAGIC + _delimited(1, type_meta) + _delimited(2, raw) + _delimited(3, b"") + _delimited(4, b"")


def encode(obj: Obj) -> bytes:
    """A JSON-shaped object of a built-in kind in its ``k8s\\0`` envelope."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    name = message_for(api_version, kind)
    if name is None:
        raise ValueError(f"no protobuf message for {api_version} {kind}")
    return _unknown(api_version, kind, encode_message(name, obj))


def watch_frame(event_type: str, obj: Obj) -> bytes:
    """One watch event: a length-prefixed WatchEvent whose object is enveloped."""
    raw_extension = _delimited(1, encode(obj))
    event = _delimited(1, event_type.encode()) + _delimited(2, raw_extension)
    return struct.pack(">I", len(event)) + event


# -- decoding -------------------------------------------------------------------------------------
def _decode_scalar(kind: str, wire: int, raw: Any) -> Any:
    if kind == "string":
        return bytes(raw).decode("utf-8")
    if kind == "bytes":
        return base64.b64encode(raw).decode()
    if kind == "bool":
        return bool(raw)
    if kind in ("int64", "uint64"):
        return _signed(raw) if kind == "int64" else raw
    if kind in ("int32", "uint32"):
        return _signed(raw, 32) if kind == "int32" else raw & 0xFFFFFFFF
    if kind == "double":
        value: float = struct.unpack("<d", raw)[0]
        return int(value) if value.is_integer() else value
    if kind == "float":
        return struct.unpack("<f", raw)[0]
    raise ValueError(f"unknown scalar type {kind}")


def _decode_value(kind: str, wire: int, raw: Any) -> Any:
    if kind in _SCALAR_KINDS:
        return _decode_scalar(kind, wire, raw)
    if wire != 2:
        raise ValueError(f"field of type {kind} is not length-delimited")
    return decode_message(kind, raw)


def _parts(data: bytes) -> dict[int, Any]:
    return {number: value for number, _, value in fields(data)}


def _special_decode(name: str, data: bytes) -> tuple[bool, Any]:
    if name in (TIME, MICRO_TIME):
        if not data:
            return True, None
        parts = _parts(data)
        seconds = _signed(parts.get(1, 0))
        micros = _signed(parts.get(2, 0), 32) // 1000 if name == MICRO_TIME else None
        return True, _format_time(seconds, micros)
    if name == DURATION:
        return True, _format_duration(_signed(_parts(data).get(1, 0)))
    if name == QUANTITY:
        return True, bytes(_parts(data).get(1, b"0")).decode()
    if name == INT_OR_STRING:
        parts = _parts(data)
        if parts.get(1) == 1:
            return True, bytes(parts.get(3, b"")).decode()
        return True, _signed(parts.get(2, 0), 32)
    if name in (RAW_EXTENSION, FIELDS_V1) or _apiextensions(name, "JSON"):
        raw = _parts(data).get(1, b"")
        return True, json.loads(raw) if raw else None
    if _apiextensions(name, "JSONSchemaPropsOrBool"):
        parts = _parts(data)
        if 2 in parts:
            return True, decode_message(_sibling(name, "JSONSchemaProps"), parts[2])
        return True, bool(parts.get(1, 0))
    if _apiextensions(name, "JSONSchemaPropsOrArray") or _apiextensions(name, "JSONSchemaPropsOrStringArray"):
        schema = _sibling(name, "JSONSchemaProps")
        found = fields(data)
        items = [v for n, _, v in found if n == 2]
        if items:
            if name.endswith("OrArray"):
                return True, [decode_message(schema, v) for v in items]
            return True, [bytes(v).decode() for v in items]
        single = [v for n, _, v in found if n == 1]
        return True, decode_message(schema, single[-1]) if single else None
    if name in table()["slice_set"]:
        item_kind = table()["messages"][name][0][2]
        return True, [_decode_value(item_kind, w, v) for n, w, v in fields(data) if n == 1]
    return False, None


def _zero(value: Any) -> bool:
    return value is None or (not isinstance(value, (dict, list)) and value in ("", 0, False))


def _packed(kind: str, data: bytes) -> list[Any]:
    out: list[Any] = []
    pos = 0
    while pos < len(data):
        if kind == "double":
            out.append(_decode_scalar(kind, 1, data[pos : pos + 8]))
            pos += 8
        elif kind == "float":
            out.append(_decode_scalar(kind, 5, data[pos : pos + 4]))
            pos += 4
        else:
            raw, pos = _read_varint(data, pos)
            out.append(_decode_scalar(kind, 0, raw))
    return out


def decode_message(name: str, data: bytes) -> Any:
    """The JSON value of message ``name`` in ``data``."""
    if name in table()["specials"]:
        return _special_decode(name, data)[1]
    schema = {entry[0]: entry for entry in table()["messages"][name]}
    obj: Obj = {}
    for number, wire, raw in fields(data):
        entry = schema.get(number)
        if entry is None:
            continue
        _, json_name, kind, flags = entry
        if "i" in flags:
            inline = decode_message(kind, raw)
            if isinstance(inline, dict):
                obj.update(inline)
            continue
        if json_name == "-":
            continue
        if "m" in flags:
            parts = fields(raw)
            key = next((bytes(v).decode() for n, _, v in parts if n == 1), "")
            found = [(w, v) for n, w, v in parts if n == 2]
            if found:
                value = _decode_value(kind, *found[-1])
            elif kind in _SCALAR_KINDS:  # an entry without a value holds the type's zero value
                value = {"string": "", "bytes": "", "bool": False}.get(kind, 0)
            else:
                value = _decode_value(kind, 2, b"")
            obj.setdefault(json_name, {})[key] = value
        elif "r" in flags:
            items = obj.setdefault(json_name, [])
            if wire == 2 and kind in _SCALAR_KINDS and kind not in ("string", "bytes"):
                items.extend(_packed(kind, raw))
            else:
                items.append(_decode_value(kind, wire, raw))
        else:
            value = _decode_value(kind, wire, raw)
            if value is None or ("p" not in flags and "o" in flags and _zero(value)):
                obj.pop(json_name, None)
                continue
            obj[json_name] = value
    return obj


def unwrap(raw: bytes) -> tuple[str, str, bytes]:
    """apiVersion, kind and message bytes of a ``k8s\\0`` envelope."""
    if not raw.startswith(MAGIC):
        raise ValueError("no k8s protobuf envelope")
    api_version = kind = ""
    payload = b""
    for number, _, value in fields(raw[len(MAGIC) :]):
        if number == 1:
            for n, _, v in fields(value):
                if n == 1:
                    api_version = bytes(v).decode()
                elif n == 2:
                    kind = bytes(v).decode()
        elif number == 2:
            payload = value
    return api_version, kind, payload


def decode_object(raw: bytes) -> Obj:
    """A JSON-shaped object from an envelope (ValueError when it is not one we know)."""
    api_version, kind, payload = unwrap(raw)
    name = message_for(api_version, kind)
    if name is None:
        raise ValueError(f"no protobuf message for {api_version} {kind}")
    obj = decode_message(name, payload)
    if not isinstance(obj, dict):
        raise ValueError(f"{kind} is not an object")
    return {"apiVersion": api_version, "kind": kind, **obj}


def decode(raw: bytes, rt: ResourceType) -> Obj:
    """A request body in protobuf, as JSON: 415 for a custom resource (kube-apiserver
    reads those as JSON only), 400 for a body that is no object it knows."""
    if rt.custom:
        raise unsupported_media_type(["application/json", "application/yaml"])
    try:
        return decode_object(raw)
    except (ValueError, UnicodeDecodeError, IndexError, KeyError, TypeError, struct.error) as exc:
        raise bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {exc}') from None
