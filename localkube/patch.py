"""The three patch formats: JSON patch (RFC 6902), JSON merge patch (RFC 7386)
and strategic merge patch (built-in kinds, with their merge keys and directives)."""

from __future__ import annotations

import copy
import re
from typing import Any

from localkube.errors import APIError, bad_request
from localkube.values import clone

MAX_JSON_PATCH_OPS = 10000
_INDEX = re.compile(r"[+-]?[0-9]+")


class PatchFailed(Exception):
    """A JSON patch operation failed (missing path, failed test)."""


def _tokens(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchFailed(f"invalid JSON pointer {pointer!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _index(token: str, length: int, allow_end: bool) -> int:
    if allow_end and token == "-":
        return length
    # Go's strconv.Atoi: ASCII digits with an optional sign (Python's int() takes more)
    if not _INDEX.fullmatch(token):
        raise PatchFailed(f"invalid array index {token!r}")
    index = int(token)
    if index < 0:
        index += length
    if index < 0 or index > (length if allow_end else length - 1):
        raise PatchFailed(f"array index {token} out of bounds")
    return index


def _resolve(doc: Any, tokens: list[str]) -> Any:
    node = doc
    for token in tokens:
        if isinstance(node, dict):
            if token not in node:
                raise PatchFailed(f"missing path element {token!r}")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(token, len(node), False)]
        else:
            raise PatchFailed(f"cannot traverse into {token!r}")
    return node


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent = _resolve(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(last, len(parent), True), value)
    else:
        raise PatchFailed("doc is missing path")
    return doc


def _remove(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        raise PatchFailed("cannot remove the root")
    parent = _resolve(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchFailed(f"unable to remove nonexistent key: {last}: missing value")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(last, len(parent), False))
    raise PatchFailed("doc is missing path")


def _container(doc: Any, tokens: list[str]) -> dict[str, Any] | list[Any] | None:
    """The object or array holding the last token, or None when a step on the way is missing,
    out of range, null or a scalar (evanphx/json-patch v4 ``findObject``)."""
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict):
            node = node.get(token)
        elif isinstance(node, list):
            try:
                node = node[_index(token, len(node), False)]
            except PatchFailed:
                return None
        else:
            return None
    return node if isinstance(node, dict | list) else None


def _replace(doc: Any, tokens: list[str], path: str, value: Any) -> Any:
    """kube-apiserver's replace (gopkg.in/evanphx/json-patch.v4 ``Patch.replace``): a missing
    parent fails, a missing object key is set as ``add`` would (v4's ``partialDoc.get`` never
    fails), and an array index must exist."""
    if not tokens:
        return value
    parent = _container(doc, tokens)
    if parent is None:
        raise PatchFailed(f"replace operation does not apply: doc is missing path: {path}: missing value")
    if isinstance(parent, dict):
        parent[tokens[-1]] = value
        return doc
    try:
        index = _index(tokens[-1], len(parent), False)
    except PatchFailed:
        raise PatchFailed(f"replace operation does not apply: doc is missing key: {path}: missing value") from None
    parent[index] = value
    return doc


def json_patch(doc: Any, ops: Any) -> Any:
    """Apply an RFC 6902 patch; raises 400 for a malformed patch and PatchFailed for a failing op."""
    if not isinstance(ops, list):
        raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    if len(ops) > MAX_JSON_PATCH_OPS:
        raise APIError(
            413,
            "RequestEntityTooLarge",
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPS}, got {len(ops)}",
        )
    result = clone(doc)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op:
            raise bad_request("json patch operation is not an object with an op")
        kind = op["op"]
        path = _tokens(str(op.get("path", "")))
        if kind == "add":
            if "value" not in op:
                raise PatchFailed("missing value")
            result = _add(result, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(result, path)
        elif kind == "replace":
            result = _replace(result, path, str(op.get("path", "")), copy.deepcopy(op.get("value")))
        elif kind == "move":
            value = _remove(result, _tokens(str(op.get("from", ""))))
            result = _add(result, path, value)
        elif kind == "copy":
            value = copy.deepcopy(_resolve(result, _tokens(str(op.get("from", "")))))
            result = _add(result, path, value)
        elif kind == "test":
            if _resolve(result, path) != op.get("value"):
                raise PatchFailed(f"testing value {op.get('path')} failed")
        else:
            raise bad_request(f"Unexpected kind: {kind}")
    return result


def merge_patch(doc: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes, everything else replaces. The
    result shares nothing with ``doc`` or ``patch``: ``doc`` is copied once, then merged into."""
    if not isinstance(patch, dict):
        return clone(patch)
    result = clone(doc) if isinstance(doc, dict) else {}
    _merge_into(result, patch)
    return result


def _merge_into(target: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            current = target.get(key)
            if not isinstance(current, dict):
                current = target[key] = {}
            _merge_into(current, value)
        else:
            target[key] = clone(value)


# ---- strategic merge patch ------------------------------------------------

_NAME_KEYED = {
    "containers",
    "initContainers",
    "ephemeralContainers",
    "imagePullSecrets",
    "volumes",
    "schedulingGates",
    "env",
    "secrets",
    "resourceClaims",
    # Mutating/ValidatingWebhookConfiguration.webhooks (patchMergeKey "name")
    "webhooks",
}
_KEYED = {
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "conditions": "type",
    "ownerReferences": "uid",
    "addresses": "type",
    "podIPs": "ip",
    "hostIPs": "ip",
}
_PRIMITIVE_MERGE = {"finalizers"}


def _merge_key(field: str, path: str, kind: str) -> str | None:
    if field == "ports":
        return "port" if kind == "Service" and path == ".spec.ports" else "containerPort"
    if field in _NAME_KEYED:
        return "name"
    return _KEYED.get(field)


def _strip(value: Any) -> Any:
    """Remove patch directives from a value that is being set wholesale."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if not k.startswith("$") and v is not None}
    if isinstance(value, list):
        return [_strip(v) for v in value if not (isinstance(v, dict) and v.get("$patch") == "delete")]
    return value


def _merge_list(original: Any, patch: list[Any], key: str | None, field: str, path: str, kind: str) -> list[Any]:
    current = copy.deepcopy(original) if isinstance(original, list) else []
    if key is None:  # primitive merge list: union, keeping order
        for value in patch:
            if value not in current:
                current.append(value)
        return current
    if any(isinstance(e, dict) and e.get("$patch") == "replace" for e in patch):
        return [_strip(e) for e in patch if not (isinstance(e, dict) and e.get("$patch") == "replace")]
    for element in patch:
        if not isinstance(element, dict):
            current.append(element)
            continue
        match = next(
            (
                i
                for i, e in enumerate(current)
                if isinstance(e, dict) and key in element and e.get(key) == element.get(key)
            ),
            None,
        )
        if element.get("$patch") == "delete":
            if match is not None:
                current.pop(match)
            continue
        if match is None:
            current.append(_strip(element))
        else:
            current[match] = strategic_merge(current[match], element, path, kind)
    return current


def strategic_merge(doc: Any, patch: Any, path: str = "", kind: str = "") -> Any:
    """Strategic merge patch for built-in kinds (merge keys of the Go types, and directives)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return _strip(patch)
    result = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    orders: dict[str, list[Any]] = {}
    for field, value in patch.items():
        if field in ("$patch", "$retainKeys"):
            continue
        if field.startswith("$setElementOrder/"):
            orders[field.split("/", 1)[1]] = value
            continue
        if field.startswith("$deleteFromPrimitiveList/"):
            target = field.split("/", 1)[1]
            if isinstance(result.get(target), list):
                result[target] = [v for v in result[target] if v not in (value or [])]
            continue
        child = f"{path}.{field}"
        if value is None:
            result.pop(field, None)
        elif isinstance(value, list) and (field in _PRIMITIVE_MERGE or _merge_key(field, child, kind)):
            result[field] = _merge_list(
                result.get(field),
                value,
                None if field in _PRIMITIVE_MERGE else _merge_key(field, child, kind),
                field,
                child,
                kind,
            )
        elif isinstance(value, dict):
            if value.get("$patch") == "delete":
                result.pop(field, None)
            else:
                result[field] = strategic_merge(result.get(field), value, child, kind)
        else:
            result[field] = copy.deepcopy(value)
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    for field, order in orders.items():
        items = result.get(field)
        if not isinstance(items, list):
            continue
        key = None if field in _PRIMITIVE_MERGE else _merge_key(field, f"{path}.{field}", kind)

        def position(item: Any, order: list[Any] = order, key: str | None = key) -> int:
            probe = item if key is None else {key: item.get(key)} if isinstance(item, dict) else item
            for index, wanted in enumerate(order):
                if (key is None and wanted == probe) or (
                    key is not None and isinstance(wanted, dict) and wanted.get(key) == probe.get(key)
                ):
                    return index
            return len(order)

        result[field] = sorted(items, key=position)
    return result
