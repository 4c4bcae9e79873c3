"""Request bodies: read within kube-apiserver's size limit, decode JSON or YAML
within a nesting limit, and refuse what Go's decoders refuse (NaN, Infinity,
numbers beyond float64) before any of it reaches storage.

Why a nesting limit lower than kube-apiserver's: Go's decoders allow 10,000
levels (``encoding/json``'s scanner, apimachinery's ``utiljson``, go-yaml), and
Go's stacks grow as needed. localkube's copies are iterative, but its pruning,
patching, apply and YAML output recurse on Python's stack (1,000 frames by
default, two or three per level), so an object deeper than ``MAX_DEPTH`` could
be stored and then fail on every read. ``MAX_DEPTH`` is far above any real
object (Karmada's deepest CRD manifest nests 27 levels) and every path serves
an object that deep; anything deeper is refused with 400, as kube-apiserver
refuses anything beyond 10,000. YAML aliases count as what they expand to, and
may add at most ``ALIAS_EXPANSION`` values (go-yaml refuses "excessive aliasing").

Reading, decoding and checking are synchronous apart from reading the body,
which awaits the client; nothing here touches storage.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import yaml
from aiohttp import web

from localkube import json_codec
from localkube.errors import bad_request, too_large
from localkube.values import clone

MAX_BODY_BYTES = 3 * 1024 * 1024  # kube-apiserver's MaxRequestBodyBytes
GO_MAX_DEPTH = 10000  # encoding/json's maxNestingDepth, utiljson's and go-yaml's maxDepth
MAX_DEPTH = 200
# values YAML aliases may add to a document: go-yaml's alias-ratio check starts tightening there
ALIAS_EXPANSION = 400_000
DEPTH_PROBLEM = f"exceeded max depth of {MAX_DEPTH}"

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENING = frozenset(b"[{")
_JSON_START = re.compile(rb"\s*[\[{]")
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: linear, in C


class _Loader(_YAML_LOADER):  # type: ignore[misc]
    """Safe YAML with timestamps left as strings, as Go's YAML-to-JSON conversion leaves them."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _YAML_LOADER.yaml_implicit_resolvers.items()
}


class DecodeError(ValueError):
    """A body Go's decoder would refuse; the message says why."""


async def read_body(request: web.Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The whole body, or 413 as soon as it passes ``limit`` (sized or chunked alike)."""
    if request.content_length is not None and request.content_length > limit:
        raise too_large(f"Request entity too large: limit is {limit}")
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await request.content.read(64 * 1024)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise too_large(f"Request entity too large: limit is {limit}")
        chunks.append(chunk)


def json_depth(raw: bytes, stop_after: int = GO_MAX_DEPTH) -> int:
    """How deeply ``raw``'s arrays and objects nest, counted without recursion
    (stops counting once past ``stop_after``)."""
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for byte in brackets:
        if byte in _OPENING:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_after:
                    break
        else:
            depth -= 1
    return deepest


def _refuse_constant(name: str) -> Any:
    if name.startswith("-"):
        raise DecodeError("invalid character 'I' in numeric literal")
    raise DecodeError(f"invalid character '{name[0]}' looking for beginning of value")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise DecodeError(f'strconv.ParseFloat: parsing "{text}": value out of range')
    return value


def load_json(raw: bytes | str) -> Any:
    """Decode JSON as Go would accept it, within ``MAX_DEPTH``; raises :class:`DecodeError`."""
    data = raw.encode() if isinstance(raw, str) else raw
    # fewer brackets than the limit cannot nest past it (counting is a C pass; the exact walk is not)
    if data.count(b"{") + data.count(b"[") > MAX_DEPTH and json_depth(data, stop_after=MAX_DEPTH) > MAX_DEPTH:
        raise DecodeError(DEPTH_PROBLEM)
    decoded, value = json_codec.fast_loads(data)  # it refuses infinities and NaN as Go does
    if decoded:
        return value
    try:
        return json.loads(data, parse_constant=_refuse_constant, parse_float=_finite_float)
    except DecodeError:
        raise
    except ValueError as exc:
        raise DecodeError(str(exc)) from None


def load_yaml(text: str) -> Any:
    """Decode one YAML document (JSON goes the fast way), within ``MAX_DEPTH``,
    with nothing JSON cannot hold; raises :class:`DecodeError`."""
    if _JSON_START.match(text.encode()[:64]):
        try:
            return load_json(text)
        except DecodeError as exc:
            if str(exc) == DEPTH_PROBLEM:
                raise
    try:
        depth = deepest = events = 0
        aliases = False
        # the event stream is flat: the nesting is checked before anything recursive builds it
        for event in yaml.parse(text, Loader=_YAML_LOADER):
            events += 1
            aliases = aliases or isinstance(event, yaml.AliasEvent)
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                deepest = max(deepest, depth)
                if deepest > MAX_DEPTH:
                    raise DecodeError(DEPTH_PROBLEM)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
        value = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        problem = str(exc)
        if "nesting depth" in problem:
            raise DecodeError(DEPTH_PROBLEM) from None
        raise DecodeError(f"error converting YAML to JSON: {problem}") from None
    check_json_value(value, events + ALIAS_EXPANSION if aliases else None)
    return clone(value) if aliases else value  # aliases share nodes; a stored object owns its own


def check_json_value(value: Any, max_nodes: int | None = None) -> None:
    """Refuse, without recursion, what JSON cannot carry: NaN, infinities, YAML's
    binary, sets and dates, more than ``MAX_DEPTH`` levels, and (with ``max_nodes``)
    documents whose aliases expand past that many values: a few kilobytes of nested
    aliases expand to billions, and an alias inside its own anchor never ends."""
    level = [value]
    depth = nodes = 0
    while level:  # one nesting level at a time
        depth += 1
        nodes += len(level)
        if max_nodes is not None and nodes > max_nodes:
            raise DecodeError("document contains excessive aliasing")
        below: list[Any] = []
        for item in level:
            if isinstance(item, (dict, list)):
                if depth > MAX_DEPTH:
                    raise DecodeError(DEPTH_PROBLEM)
                below.extend(item.values() if isinstance(item, dict) else item)
            elif isinstance(item, float) and not math.isfinite(item):
                raise DecodeError(f"json: unsupported value: {'NaN' if math.isnan(item) else 'Inf'}")
            elif item is not None and not isinstance(item, (str, int, float, bool)):
                raise DecodeError(f"json: unsupported type: {type(item).__name__}")
        level = below


def decode_body(raw: bytes, content_type: str, kind_hint: str) -> Any:
    """A JSON or YAML request body (None when empty); 400 naming ``kind_hint`` when refused."""
    if not raw:
        return None
    media = content_type.split(";", maxsplit=1)[0].strip().lower()
    try:
        if media in ("application/yaml", "application/apply-patch+yaml"):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DecodeError(str(exc)) from None
            return load_yaml(text)
        return load_json(raw)
    except DecodeError as exc:
        raise bad_request(f"{kind_hint}: couldn't decode the request body: {exc}") from None


__all__ = [
    "ALIAS_EXPANSION",
    "GO_MAX_DEPTH",
    "MAX_BODY_BYTES",
    "MAX_DEPTH",
    "DecodeError",
    "check_json_value",
    "decode_body",
    "json_depth",
    "load_json",
    "load_yaml",
    "read_body",
]
