"""Integer fields of built-in kinds hold what their Go types hold.

kube-apiserver decodes a built-in kind into its Go struct, so a number that
does not fit the field's type (``replicas: 2147483648`` in an int32, a value
beyond int64, or a fraction) fails decoding: a 400 whose message names the Go
struct and the field path (``json: cannot unmarshal number 2147483648 into Go
struct field DeploymentSpec.spec.replicas of type int32``). The field types come
from the published definitions in :mod:`localkube.builtin_schemas`. The walk is
iterative and visits fields in document order, so the first bad field is the one
Go reports.
"""

from __future__ import annotations

from typing import Any

from localkube import builtin_schemas

Obj = dict[str, Any]

RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _integer_format(schema: Obj) -> str | None:
    kinds = schema.get("type")
    if kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds):
        return str(schema.get("format") or "int64")
    return None


# per schema (by id; the definitions live as long as the process): can a value below it
# hold an integer field? Most of an object (names, labels, strings, data) cannot, and is skipped
_HOLDS: dict[int, bool] = {}


def _holds_integers(schema: Obj) -> bool:
    known = _HOLDS.get(id(schema))
    if known is not None:
        return known
    _HOLDS[id(schema)] = True  # a definition that refers to itself: assume so while looking
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        holds = _holds_integers(builtin_schemas.definitions()[ref[len("#/$defs/") :]])
    elif _integer_format(schema) in RANGES:
        holds = True
    else:
        nested = [*((schema.get("properties") or {}).values()), schema.get("additionalProperties"), schema.get("items")]
        nested += schema.get("allOf") or []
        holds = any(isinstance(child, dict) and _holds_integers(child) for child in nested)
    _HOLDS[id(schema)] = holds
    return holds


def _struct_name(definition: str) -> str:
    return definition.rsplit(".", 1)[-1]


def integer_problem(obj: Obj, group: str, version: str, kind: str) -> str | None:
    """Go's decoding error for the first integer field that its type cannot hold, or None."""
    name = builtin_schemas.definition_name(group, version, kind)
    if name is None:
        return None
    definitions = builtin_schemas.definitions()
    # (value, schema, JSON field path, enclosing struct's name)
    stack: list[tuple[Any, Obj, str, str]] = [(obj, definitions[name], "", _struct_name(name))]
    while stack:
        value, schema, path, struct = stack.pop()
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            struct = _struct_name(ref[len("#/$defs/") :])
            schema = definitions[ref[len("#/$defs/") :]]
        fmt = _integer_format(schema)
        if fmt in RANGES and isinstance(value, (int, float)) and not isinstance(value, bool):
            low, high = RANGES[fmt]
            if (isinstance(value, float) and not value.is_integer()) or not low <= value <= high:
                shown = repr(value) if isinstance(value, float) else str(value)
                return f"json: cannot unmarshal number {shown} into Go struct field {struct}.{path} of type {fmt}"
            continue
        children: list[tuple[Any, Obj, str, str]] = []
        if isinstance(value, dict):
            properties = schema.get("properties")
            if isinstance(properties, dict):
                for key, item in value.items():
                    child = properties.get(key)
                    if child is not None and _holds_integers(child):
                        children.append((item, child, f"{path}.{key}" if path else key, struct))
            elif isinstance(schema.get("additionalProperties"), dict) and _holds_integers(
                schema["additionalProperties"]
            ):
                children = [(item, schema["additionalProperties"], path, struct) for item in value.values()]
        elif isinstance(value, list) and isinstance(schema.get("items"), dict) and _holds_integers(schema["items"]):
            children = [(item, schema["items"], path, struct) for item in value]
        stack.extend(reversed(children))
    return None


__all__ = ["integer_problem"]
