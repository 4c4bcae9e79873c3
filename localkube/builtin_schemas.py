"""Kubernetes v1.32's own type definitions of the built-in kinds.

They come from the ``kubernetes-validate`` package (Kubernetes' published
OpenAPI, converted to JSON Schema, one set per release). localkube uses them
for what the Go decoder does with its compiled-in types: drop fields a kind
does not have (reported as unknown fields under ``fieldValidation``), and to
serve real component schemas in ``/openapi/v3`` so ``kubectl explain`` works
for built-in kinds. Loaded once, on first use (about 1.3 MB of JSON).
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

Obj = dict[str, Any]

KUBERNETES_VERSION = "v1.32.0"
_DEFINITIONS = f"kubernetes-json-schema/{KUBERNETES_VERSION}-local/_definitions.json"
_REF_PREFIX = "#/$defs/"


@functools.cache
def definitions() -> dict[str, Obj]:
    """Every definition by its OpenAPI name (``io.k8s.api.apps.v1.Deployment``)."""
    text = resources.files("kubernetes_validate").joinpath(_DEFINITIONS).read_text(encoding="utf-8")
    loaded: dict[str, Obj] = json.loads(text)["$defs"]
    return loaded


@functools.cache
def _names_by_gvk() -> dict[tuple[str, str, str], str]:
    names: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            names.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    return names


def definition_name(group: str, version: str, kind: str) -> str | None:
    """The definition of a built-in kind, or None for kinds Kubernetes does not have."""
    return _names_by_gvk().get((group, version, kind))


def _resolve(schema: Obj) -> Obj:
    ref = schema.get("$ref")
    while isinstance(ref, str) and ref.startswith(_REF_PREFIX):
        schema = definitions()[ref[len(_REF_PREFIX) :]]
        ref = schema.get("$ref")
    return schema


def prune_unknown_fields(obj: Obj, group: str, version: str, kind: str) -> list[str]:
    """Drop, in place, the fields the kind's Go type does not have; their paths.

    A kind without a definition is left alone. Opaque values (RawExtension,
    FieldsV1, JSON) keep everything, as their Go types do.
    """
    name = definition_name(group, version, kind)
    if name is None:
        return []
    dropped: list[str] = []
    _prune(obj, definitions()[name], "", dropped)
    return dropped


def _prune(value: Any, schema: Obj, path: str, dropped: list[str]) -> None:
    schema = _resolve(schema)
    if isinstance(value, dict):
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        if properties is None:
            if isinstance(additional, dict):
                for key, item in value.items():
                    _prune(item, additional, f"{path}.{key}" if path else key, dropped)
            return  # a map of scalars, or an opaque object
        for key in list(value):
            child = f"{path}.{key}" if path else key
            if key in properties:
                _prune(value[key], properties[key], child, dropped)
            else:
                del value[key]
                dropped.append(child)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                _prune(item, items, f"{path}[{index}]", dropped)


# ---- OpenAPI v3 component schemas -------------------------------------------------------------


def component_schemas(names: list[str]) -> dict[str, Obj]:
    """The named definitions and everything they reference, as OpenAPI 3 component schemas."""
    wanted = list(names)
    result: dict[str, Obj] = {}
    while wanted:
        name = wanted.pop()
        if name in result or name not in definitions():
            continue
        converted = to_openapi(definitions()[name], 3, wanted)
        result[name] = converted
    return result


_V2_DROPPED = ("$schema", "$id", "anyOf", "allOf", "not")  # JSON-Schema keywords Swagger 2.0 lacks


def to_openapi(schema: Any, version: int, references: list[str] | None = None) -> Any:
    """JSON-Schema style (``type: [x, "null"]``, ``oneOf`` for int-or-string) to the
    OpenAPI ``version`` (2 or 3) style kube-apiserver publishes; referenced definition
    names are appended to ``references``."""
    if isinstance(schema, list):
        return [to_openapi(item, version, references) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref_base = "#/definitions/" if version == 2 else "#/components/schemas/"
    out: Obj = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, list):
            kinds = [v for v in value if v != "null"]
            if kinds:
                out["type"] = kinds[0]
        elif key == "$ref" and isinstance(value, str) and value.startswith(_REF_PREFIX):
            if references is not None:
                references.append(value[len(_REF_PREFIX) :])
            out["$ref"] = ref_base + value[len(_REF_PREFIX) :]
        elif key == "oneOf" and _is_int_or_string(value):
            out["type"] = "string"
            if version == 2:
                out["format"] = "int-or-string"
            else:
                out["x-kubernetes-int-or-string"] = True
        elif key in ("properties", "patternProperties"):
            out[key] = {name: to_openapi(item, version, references) for name, item in value.items()}
        elif not (version == 2 and key in _V2_DROPPED):
            out[key] = to_openapi(value, version, references)
    if "$ref" in out and len(out) > 1:
        # both versions ignore siblings of $ref: kube-apiserver wraps it in allOf (v3) or drops them (v2)
        out = {"allOf": [{"$ref": out.pop("$ref")}], **out} if version == 3 else {"$ref": out["$ref"]}
    return out


def _is_int_or_string(value: Any) -> bool:
    if not isinstance(value, list):
        return False
    kinds = {k for option in value if isinstance(option, dict) for k in option.get("type") or [] if k != "null"}
    return "string" in kinds and bool(kinds & {"integer", "number"})
