"""Generate CustomResourceDefinitions from the API models.

The models are the single source of truth: the schema of each CRD is derived
from field types and the annotations in :mod:`karmada.api._base`, and matches
the structural schema Karmada's controller-gen emits (types, enums, defaults,
required fields, formats, bounds, list/map types, preserve-unknown-fields
exactly where Karmada holds free-form JSON, int-or-string for quantities).

Run ``python -m karmada.api.crdgen [DIR]`` to rewrite ``manifests/crds``; a
test fails when the committed files differ from a fresh generation.
"""

from __future__ import annotations

import argparse
import sys
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

import annotated_types
import yaml
from pydantic.fields import FieldInfo

from karmada.api._base import (
    CRD_DEFAULT_KEY,
    QUANTITY_PATTERN,
    CRDExtra,
    Format,
    IntOrString,
    KubeModel,
    Pattern,
    PreserveUnknown,
)
from karmada.api.kinds import KINDS, KindInfo
from karmada.api.meta import ObjectMeta
from manifests import crds_dir

_TOP_LEVEL_DESCRIPTIONS = {
    "apiVersion": "APIVersion defines the versioned schema of this representation of an object.",
    "kind": "Kind is a string value representing the REST resource this object represents.",
}


def _is_none(tp: Any) -> bool:
    return tp is type(None)


def schema_for(tp: Any, metadata: list[Any] | None = None) -> dict[str, Any]:
    """The OpenAPI v3 (structural) schema of a field type plus its annotations."""
    meta = list(metadata or [])
    origin = get_origin(tp)
    if origin is Annotated:
        base, *extra = get_args(tp)
        return schema_for(base, meta + extra)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in get_args(tp) if not _is_none(a)]
        if len(members) == 1:
            return schema_for(members[0], meta)
    flat = _flatten(meta)
    for marker in flat:
        if isinstance(marker, IntOrString):
            return {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "pattern": QUANTITY_PATTERN,
                "x-kubernetes-int-or-string": True,
            }
        if isinstance(marker, PreserveUnknown):
            schema: dict[str, Any] = {"type": "object"} if marker.object_only else {}
            schema["x-kubernetes-preserve-unknown-fields"] = True
            return schema
    schema = _base_schema(tp)
    _apply_markers(schema, flat)
    return schema


def _flatten(meta: list[Any]) -> list[Any]:
    flat: list[Any] = []
    for item in meta:
        if isinstance(item, FieldInfo):
            flat.extend(item.metadata)
        else:
            flat.append(item)
    return flat


def _base_schema(tp: Any) -> dict[str, Any]:
    origin = get_origin(tp)
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if origin is Literal:
        return {"type": "string", "enum": list(get_args(tp))}
    if origin is list:
        (item,) = get_args(tp)
        return {"type": "array", "items": schema_for(item)}
    if origin is dict:
        _, value = get_args(tp)
        return {"type": "object", "additionalProperties": schema_for(value)}
    if isinstance(tp, type) and issubclass(tp, ObjectMeta):
        return {"type": "object"}
    if isinstance(tp, type) and issubclass(tp, KubeModel):
        return model_schema(tp)
    raise TypeError(f"no CRD schema for type {tp!r}")


def _apply_markers(schema: dict[str, Any], markers: list[Any]) -> None:
    is_array = schema.get("type") == "array"
    for marker in markers:
        if isinstance(marker, Format):
            schema["format"] = marker.name
        elif isinstance(marker, Pattern):
            schema["pattern"] = marker.regex
        elif isinstance(marker, CRDExtra):
            schema.update(marker.keywords)
        elif isinstance(marker, annotated_types.Ge):
            schema["minimum"] = marker.ge
        elif isinstance(marker, annotated_types.Le):
            schema["maximum"] = marker.le
        elif isinstance(marker, annotated_types.MinLen):
            schema["minItems" if is_array else "minLength"] = marker.min_length
        elif isinstance(marker, annotated_types.MaxLen):
            schema["maxItems" if is_array else "maxLength"] = marker.max_length


def _description(info: FieldInfo, tp: Any) -> str | None:
    if info.description:
        return info.description
    inner = tp
    while get_origin(inner) in (typing.Union, types.UnionType, Annotated):
        args = [a for a in get_args(inner) if not _is_none(a)]
        inner = args[0]
    if isinstance(inner, type) and issubclass(inner, KubeModel) and inner.__doc__:
        return " ".join(inner.__doc__.split())
    return None


def model_schema(model: type[KubeModel]) -> dict[str, Any]:
    """The object schema of one model: properties by JSON name, sorted, and required."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        prop = schema_for(info.annotation, list(info.metadata))
        description = _description(info, info.annotation)
        if description and "description" not in prop:
            prop = {"description": description, **prop}
        extra = info.json_schema_extra
        if isinstance(extra, dict) and extra.get(CRD_DEFAULT_KEY):
            prop["default"] = info.default
        properties[key] = prop
        if info.is_required():
            required.append(key)
    schema: dict[str, Any] = {"type": "object", "properties": dict(sorted(properties.items()))}
    if required:
        schema["required"] = sorted(required)
    schema.update(model.crd_extra)
    return schema


def kind_schema(info: KindInfo) -> dict[str, Any]:
    """The ``openAPIV3Schema`` of a kind."""
    schema = model_schema(info.model)
    for key, text in _TOP_LEVEL_DESCRIPTIONS.items():
        schema["properties"][key] = {"description": text, "type": "string"}
    schema["properties"]["metadata"] = {"type": "object"}
    if info.model.__doc__:
        schema = {"description": " ".join(info.model.__doc__.split()), **schema}
    return schema


def crd_for(info: KindInfo) -> dict[str, Any]:
    """The whole CustomResourceDefinition object of a kind."""
    names: dict[str, Any] = {}
    if info.categories:
        names["categories"] = list(info.categories)
    names.update({"kind": info.kind, "listKind": f"{info.kind}List", "plural": info.plural})
    if info.short_names:
        names["shortNames"] = list(info.short_names)
    names["singular"] = info.singular
    version: dict[str, Any] = {}
    if info.printer_columns:
        version["additionalPrinterColumns"] = [
            {
                "jsonPath": col.json_path,
                "name": col.name,
                **({"priority": col.priority} if col.priority else {}),
                "type": col.type,
            }
            for col in info.printer_columns
        ]
    version["name"] = info.version
    version["schema"] = {"openAPIV3Schema": kind_schema(info)}
    version["served"] = True
    version["storage"] = True
    if info.status_subresource:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": info.crd_name},
        "spec": {
            "group": info.group,
            "names": names,
            "scope": info.scope,
            "versions": [version],
        },
    }


def crd_filename(info: KindInfo) -> str:
    """``<group>_<plural>.yaml``, the file name Karmada uses too."""
    return f"{info.group}_{info.plural}.yaml"


def render(crd: dict[str, Any]) -> str:
    """YAML text of one CRD, stable across runs."""
    header = "# Generated by `python -m karmada.api.crdgen` from karmada/api. Do not edit.\n"
    return header + "---\n" + yaml.safe_dump(crd, sort_keys=False, width=120, allow_unicode=True)


def generate() -> dict[str, str]:
    """File name -> YAML text, for every kind."""
    return {crd_filename(info): render(crd_for(info)) for info in KINDS}


def default_output_dir() -> Path:
    """``manifests/crds`` of the installed (or checked-out) ``manifests`` package."""
    return crds_dir()


def main(argv: list[str] | None = None) -> int:
    """Write every CRD to the output directory; ``--check`` only reports drift."""
    parser = argparse.ArgumentParser(prog="python -m karmada.api.crdgen", description=__doc__)
    parser.add_argument("output", nargs="?", type=Path, help="directory (default: manifests/crds)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the files differ, write nothing")
    args = parser.parse_args(argv)
    out: Path = args.output or default_output_dir()
    wanted = generate()
    drift = sorted(
        name for name, text in wanted.items() if not (out / name).exists() or (out / name).read_text() != text
    )
    stale = sorted(p.name for p in out.glob("*.yaml") if p.name not in wanted) if out.exists() else []
    if args.check:
        for name in drift + stale:
            print(f"out of date: {out / name}", file=sys.stderr)
        return 1 if drift or stale else 0
    out.mkdir(parents=True, exist_ok=True)
    for name in drift:
        (out / name).write_text(wanted[name])
    for name in stale:
        (out / name).unlink()
    print(f"wrote {len(drift)} file(s), removed {len(stale)} in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
