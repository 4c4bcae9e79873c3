"""CustomResourceDefinitions: checking CRDs, serving their kinds, and processing
custom resources on every write (prune, default, validate) by the structural schema."""

from __future__ import annotations

import copy
import re
from typing import Any

import orjson

from localkube.errors import (
    Cause,
    field_duplicate,
    field_forbidden,
    field_invalid,
    field_required,
    field_unsupported,
)
from localkube.kinds import Context, Strategy, register
from localkube.meta import OBJECT_META_FIELDS, now_time
from localkube.pruning import prune
from localkube.resources import ResourceType

Obj = dict[str, Any]

_TYPES = {"object", "array", "string", "integer", "number", "boolean"}
_GROUP = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


# ---- the CRD object ----------------------------------------------------------


def structural_problems(schema: Any, path: str) -> list[Cause]:
    """Why an ``openAPIV3Schema`` is not structural (kube-apiserver's write-time check)."""
    causes: list[Cause] = []
    if not isinstance(schema, dict):
        return [field_invalid(path, schema, "must be an object")]
    free = schema.get("x-kubernetes-int-or-string") or schema.get("x-kubernetes-preserve-unknown-fields")
    kind = schema.get("type")
    if kind is None and not free:
        causes.append(field_required(f"{path}.type", "must not be empty for specified object fields"))
    elif kind is not None and kind not in _TYPES:
        causes.append(field_unsupported(f"{path}.type", kind, sorted(_TYPES)))
    if schema.get("x-kubernetes-validations"):
        # No CEL interpreter here: refuse loudly rather than accept objects the rules would reject.
        causes.append(
            field_forbidden(
                f"{path}.x-kubernetes-validations", "CEL validation rules are not supported by this server (localkube)"
            )
        )
    if "$ref" in schema:
        causes.append(field_forbidden(f"{path}.$ref", "$ref is not supported"))
    if schema.get("uniqueItems"):
        causes.append(
            field_forbidden(
                f"{path}.uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    if "properties" in schema and "additionalProperties" in schema:
        causes.append(
            field_forbidden(f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive")
        )
    if kind == "array" and "items" not in schema:
        causes.append(field_required(f"{path}.items", "must be specified"))
    properties = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if properties and name not in properties and not schema.get("x-kubernetes-preserve-unknown-fields"):
            causes.append(field_invalid(f"{path}.required", name, "must be a property"))
    for name, child in properties.items():
        causes += structural_problems(child, f"{path}.properties[{name}]")
    if isinstance(schema.get("items"), dict):
        causes += structural_problems(schema["items"], f"{path}.items")
    if isinstance(schema.get("additionalProperties"), dict):
        causes += structural_problems(schema["additionalProperties"], f"{path}.additionalProperties")
    return causes


def crd_problems(crd: Obj) -> list[Cause]:
    """Validation of a CustomResourceDefinition object."""
    causes: list[Cause] = []
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group") or ""
    if not group or "." not in group or not _GROUP.fullmatch(group):
        causes.append(field_invalid("spec.group", group, "should be a domain with at least one dot"))
    for field in ("plural", "kind"):
        if not names.get(field):
            causes.append(field_required(f"spec.names.{field}"))
    expected = f"{names.get('plural', '')}.{group}"
    if crd.get("metadata", {}).get("name") != expected:
        causes.append(
            field_invalid(
                "metadata.name",
                crd.get("metadata", {}).get("name"),
                'must be spec.names.plural+"."+spec.group',
            )
        )
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        causes.append(field_unsupported("spec.scope", spec.get("scope", ""), ["Cluster", "Namespaced"]))
    versions = spec.get("versions") or []
    if not versions:
        causes.append(field_required("spec.versions", "must have exactly one version marked as storage version"))
    storage = [v for v in versions if v.get("storage")]
    if versions and len(storage) != 1:
        causes.append(
            field_invalid("spec.versions", len(storage), "must have exactly one version marked as storage version")
        )
    seen: set[str] = set()
    for index, version in enumerate(versions):
        name = version.get("name", "")
        if name in seen:
            causes.append(field_duplicate(f"spec.versions[{index}].name", name))
        seen.add(name)
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if schema is None:
            causes.append(field_required(f"spec.versions[{index}].schema.openAPIV3Schema", "schemas are required"))
        else:
            causes += structural_problems(schema, f"spec.versions[{index}].schema.openAPIV3Schema")
    conversion = spec.get("conversion") or {}
    if conversion.get("strategy", "None") != "None":
        causes.append(field_unsupported("spec.conversion.strategy", conversion.get("strategy"), ["None"]))
    return causes


def _condition(kind: str, status: str, reason: str, message: str) -> Obj:
    return {
        "type": kind,
        "status": status,
        "lastTransitionTime": now_time(),
        "reason": reason,
        "message": message,
    }


class CRDStrategy(Strategy):
    """Defaults and status of CRDs; the server establishes them right after the write."""

    def prepare_create(self, obj: Obj, context: Context) -> None:
        self._defaults(obj)
        obj["status"] = {"conditions": [], "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": []}

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        self._defaults(obj)

    def _defaults(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        names = spec.setdefault("names", {})
        if names.get("kind"):
            names.setdefault("singular", str(names["kind"]).lower())
            names.setdefault("listKind", f"{names['kind']}List")
        spec.setdefault("conversion", {"strategy": "None"})
        for version in spec.get("versions") or []:
            for column in version.get("additionalPrinterColumns") or []:
                column.setdefault("description", "")

    def validate(self, obj: Obj) -> list[Cause]:
        return crd_problems(obj)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        causes = crd_problems(obj)
        if (obj.get("spec") or {}).get("scope") != (old.get("spec") or {}).get("scope"):
            causes.append(field_invalid("spec.scope", (obj.get("spec") or {}).get("scope"), "field is immutable"))
        return causes


def established_status(crd: Obj) -> Obj:
    """The status the naming and establishing controllers converge to."""
    spec = crd["spec"]
    names = spec["names"]
    status = copy.deepcopy(crd.get("status") or {})
    status["acceptedNames"] = {
        k: v for k, v in names.items() if k in ("plural", "singular", "kind", "listKind", "shortNames", "categories")
    }
    stored = list(status.get("storedVersions") or [])
    for version in spec.get("versions") or []:
        if version.get("storage") and version["name"] not in stored:
            stored.append(version["name"])
    status["storedVersions"] = stored
    existing = {c["type"]: c for c in status.get("conditions") or []}
    conditions = []
    for kind, reason, message in (
        ("NamesAccepted", "NoConflicts", "no conflicts found"),
        ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
    ):
        previous = existing.get(kind)
        if previous and previous.get("status") == "True":
            conditions.append(previous)
        else:
            conditions.append(_condition(kind, "True", reason, message))
    for kind, condition in existing.items():
        if kind not in ("NamesAccepted", "Established"):
            conditions.append(condition)
    status["conditions"] = conditions
    return status


def is_established(crd: Obj) -> bool:
    return any(
        c.get("type") == "Established" and c.get("status") == "True"
        for c in (crd.get("status") or {}).get("conditions") or []
    )


def resource_types(crd: Obj) -> list[ResourceType]:
    """The served versions of an established CRD as resource types."""
    spec = crd["spec"]
    names = (crd.get("status") or {}).get("acceptedNames") or spec["names"]
    types = []
    for version in spec.get("versions") or []:
        if not version.get("served"):
            continue
        subresources = version.get("subresources") or {}
        scale = subresources.get("scale")
        types.append(
            ResourceType(
                group=spec["group"],
                version=version["name"],
                kind=names["kind"],
                plural=names["plural"],
                namespaced=spec["scope"] == "Namespaced",
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                status="status" in subresources,
                scale=scale is not None,
                generation=True,
                unconditional_update=False,
                storage=f"{spec['group']}/{names['plural']}",
                crd=crd["metadata"]["name"],
                schema=(version.get("schema") or {}).get("openAPIV3Schema") or {},
                printer_columns=list(version.get("additionalPrinterColumns") or []),
                selectable_fields=tuple(
                    f.get("jsonPath", "").lstrip(".") for f in version.get("selectableFields") or []
                ),
                scale_paths=dict(scale or {}),
            )
        )
    return types


# ---- custom resources ----------------------------------------------------------


def prune_custom_resource(obj: Obj, schema: Obj) -> list[str]:
    """Drop unknown fields (returns their paths); metadata keeps only ObjectMeta fields."""
    dropped = prune(obj, schema)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        for key in list(meta):
            if key not in OBJECT_META_FIELDS:
                del meta[key]
                dropped.append(f"metadata.{key}")
    return dropped


def apply_defaults(value: Any, schema: Obj) -> Any:
    """Fill ``default`` values into objects present in the data (never creating parents)."""
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for name, child in properties.items():
            if name in value and value[name] is None and not child.get("nullable"):
                del value[name]
            if name not in value and "default" in child:
                value[name] = copy.deepcopy(child["default"])
            if name in value:
                value[name] = apply_defaults(value[name], child)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key in list(value):
                value[key] = apply_defaults(value[key], additional)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [apply_defaults(item, schema["items"]) for item in value]
    return value


def defaults_pending(value: Any, schema: Obj) -> bool:
    """Whether :func:`apply_defaults` would change ``value`` (it reads, never copies): an object
    stored since its schema last changed has its defaults already."""
    stack: list[tuple[Any, Obj]] = [(value, schema)]
    while stack:
        item, node = stack.pop()
        if isinstance(item, dict):
            for name, child in (node.get("properties") or {}).items():
                if name not in item:
                    if "default" in child:
                        return True
                    continue
                if item[name] is None and not child.get("nullable"):
                    return True
                stack.append((item[name], child))
            additional = node.get("additionalProperties")
            if isinstance(additional, dict):
                stack.extend((child, additional) for child in item.values())
        elif isinstance(item, list) and isinstance(node.get("items"), dict):
            stack.extend((child, node["items"]) for child in item)
    return False


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _type_ok(value: Any, kind: str) -> bool:
    actual = _type_name(value)
    if kind == "number":
        return actual in ("number", "integer")
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return True
    return actual == kind


_NO_OLD: Any = object()  # a value without an old counterpart (a create, an added field)


def _unchanged(value: Any, old: Any) -> bool:
    """Equal as JSON: Python's ``==`` alone holds ``true == 1 == 1.0``, which JSON (and Go's
    DeepEqual) tell apart; their encodings do, in C."""
    if value != old:
        return False
    if not isinstance(value, (dict, list, bool, int, float)):
        return True  # strings and null: == is exact
    try:
        return bool(orjson.dumps(value) == orjson.dumps(old))
    except TypeError:  # an integer past 64 bits: validate it
        return False


def validate_value(value: Any, schema: Obj, path: str, old: Any = _NO_OLD) -> list[Cause]:
    """Validate a value against a structural schema node; one cause per problem.

    With ``old``, the value it replaces: a value equal to it is not validated again, as
    kube-apiserver's CRD validation ratcheting (on by default since 1.30) ignores errors in
    unchanged values, so a schema tightened later never blocks an update that leaves them
    alone. Map keys correlate old and new values; list items do not (kube correlates
    ``map`` and ``set`` lists too, so this validates at least what it does).
    """
    if old is not _NO_OLD and _unchanged(value, old):
        return []
    causes: list[Cause] = []
    if value is None:
        if schema.get("nullable"):
            return []
        if schema.get("type") or schema.get("x-kubernetes-int-or-string"):
            return [
                field_invalid(
                    path,
                    "null",
                    f'{path} in body must be of type {schema.get("type", "integer-or-string")}: "null"',
                )
            ]
        return []
    if schema.get("x-kubernetes-int-or-string") and (isinstance(value, bool) or not isinstance(value, (int, str))):
        return [
            field_invalid(
                path,
                _type_name(value),
                f'{path} in body must be of type integer-or-string: "{_type_name(value)}"',
            )
        ]
    kind = schema.get("type")
    if kind and not _type_ok(value, kind):
        return [field_invalid(path, _type_name(value), f'{path} in body must be of type {kind}: "{_type_name(value)}"')]
    if "enum" in schema and value not in schema["enum"]:
        causes.append(field_unsupported(path, value, [str(e) for e in schema["enum"]]))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        fmt = schema.get("format")
        bounds = _INT32 if fmt == "int32" else _INT64 if fmt == "int64" else None
        if bounds and isinstance(value, int) and not bounds[0] <= value <= bounds[1]:
            causes.append(field_invalid(path, value, f"{path} in body must be of type {fmt}"))
        if "minimum" in schema and value < schema["minimum"]:
            causes.append(
                field_invalid(path, value, f"{path} in body should be greater than or equal to {schema['minimum']}")
            )
        if "maximum" in schema and value > schema["maximum"]:
            causes.append(
                field_invalid(path, value, f"{path} in body should be less than or equal to {schema['maximum']}")
            )
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            causes.append(
                Cause("FieldValueTooLong", f"Too long: may not be more than {schema['maxLength']} bytes", path)
            )
        if "minLength" in schema and len(value) < schema["minLength"]:
            causes.append(
                field_invalid(path, value, f"{path} in body should be at least {schema['minLength']} chars long")
            )
        pattern = schema.get("pattern")
        if pattern and not re.search(pattern, value):
            causes.append(field_invalid(path, value, f"{path} in body should match '{pattern}'"))
        if schema.get("format") == "date-time" and not re.fullmatch(
            r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", value
        ):
            causes.append(field_invalid(path, value, f'{path} in body must be of type date-time: "{value}"'))
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            causes.append(
                Cause(
                    "FieldValueTooMany",
                    f"Too many: {len(value)}: must have at most {schema['maxItems']} items",
                    path,
                )
            )
        if "minItems" in schema and len(value) < schema["minItems"]:
            causes.append(
                field_invalid(path, len(value), f"{path} in body should have at least {schema['minItems']} items")
            )
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                causes += validate_value(item, items, f"{path}[{index}]")
        list_type = schema.get("x-kubernetes-list-type")
        if list_type == "set":
            seen: list[Any] = []
            for index, item in enumerate(value):
                if item in seen:
                    causes.append(field_duplicate(f"{path}[{index}]", item))
                seen.append(item)
        elif list_type == "map":
            keys = schema.get("x-kubernetes-list-map-keys") or []
            tuples: list[tuple[Any, ...]] = []
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    key = tuple(item.get(k) for k in keys)
                    if key in tuples:
                        causes.append(field_duplicate(f"{path}[{index}]", dict(zip(keys, key, strict=True))))
                    tuples.append(key)
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for name in schema.get("required") or []:
            if name not in value:
                causes.append(field_required(f"{path}.{name}" if path else name))
        old_map = old if isinstance(old, dict) else {}
        for name, child in properties.items():
            if name in value:
                causes += validate_value(
                    value[name], child, f"{path}.{name}" if path else name, old_map.get(name, _NO_OLD)
                )
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key, item in value.items():
                causes += validate_value(item, additional, f"{path}[{key}]" if path else key, old_map.get(key, _NO_OLD))
    return causes


def validate_custom_resource(obj: Obj, schema: Obj, old: Obj | None = None) -> list[Cause]:
    """Schema validation of a whole custom resource (metadata is validated separately); on an
    update, ``old`` ratchets what did not change (:func:`validate_value`)."""
    outside = ("apiVersion", "kind", "metadata")
    body = {k: v for k, v in obj.items() if k not in outside}
    node = {
        **schema,
        "properties": {k: v for k, v in (schema.get("properties") or {}).items() if k not in outside},
    }
    if old is None:
        return validate_value(body, node, "")
    return validate_value(body, node, "", {k: v for k, v in old.items() if k not in outside})


register("CustomResourceDefinition", CRDStrategy())
