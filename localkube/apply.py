"""Server-side apply (``application/apply-patch+yaml``), at the level the issue asks:
create-or-merge, per-manager ownership of leaf fields recorded in ``managedFields``
(FieldsV1), removal of fields a manager stopped applying, and conflicts with other
managers' applied fields unless ``force=true``.

Simplification (documented): lists are owned atomically as one field, so two
managers cannot share the items of one list as they can with merge keys.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from localkube.errors import APIError, Cause, bad_request, invalid
from localkube.kinds import Context
from localkube.meta import now_time

if TYPE_CHECKING:
    from localkube.api import ResourceAPI, Result, WriteOptions
    from localkube.resources import ResourceType

Obj = dict[str, Any]
Path = tuple[str, ...]

_SERVER_META = {
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "namespace",
    "name",
}


def leaf_paths(value: Any, prefix: Path = ()) -> set[Path]:
    """Every owned field of an applied configuration (maps recurse, everything else is a leaf)."""
    paths: set[Path] = set()
    if isinstance(value, dict) and value:
        for key, child in value.items():
            if prefix == ("metadata",) and key in _SERVER_META:
                continue
            if not prefix and key in ("apiVersion", "kind"):
                continue
            paths |= leaf_paths(child, (*prefix, key))
    elif prefix:
        paths.add(prefix)
    return paths


def to_fields_v1(paths: set[Path]) -> Obj:
    """FieldsV1 JSON: nested ``f:<name>`` keys, leaves as ``{}``."""
    tree: Obj = {}
    for path in sorted(paths):
        node = tree
        for part in path:
            node = node.setdefault(f"f:{part}", {})
    return tree


def from_fields_v1(tree: Obj, prefix: Path = ()) -> set[Path]:
    paths: set[Path] = set()
    for key, child in (tree or {}).items():
        if key == ".":
            continue
        name = key[2:] if key.startswith("f:") else key
        if isinstance(child, dict) and any(k.startswith("f:") for k in child):
            paths |= from_fields_v1(child, (*prefix, name))
        else:
            paths.add((*prefix, name))
    return paths


def _get(obj: Any, path: Path) -> tuple[bool, Any]:
    node = obj
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _delete(obj: Obj, path: Path) -> None:
    node: Any = obj
    parents = []
    for part in path[:-1]:
        if not isinstance(node, dict) or part not in node:
            return
        parents.append((node, part))
        node = node[part]
    if isinstance(node, dict):
        node.pop(path[-1], None)
    for parent, part in reversed(parents):  # drop maps left empty by the removal
        if parent[part] == {}:
            del parent[part]


def _merge(base: Any, applied: Any) -> Any:
    if isinstance(base, dict) and isinstance(applied, dict):
        result = dict(base)
        for key, value in applied.items():
            result[key] = _merge(base.get(key), value)
        return result
    return copy.deepcopy(applied)


def server_side_apply(
    api: ResourceAPI,
    rt: ResourceType,
    namespace: str,
    name: str,
    body: Any,
    old: Obj | None,
    subresource: str,
    context: Context,
    options: WriteOptions,
) -> Result:
    """Apply ``body`` as ``options.field_manager``."""
    if not options.field_manager:
        raise invalid(
            "PatchOptions",
            "meta.k8s.io",
            "",
            [Cause("FieldValueRequired", "Required value: is required for apply patch", "fieldManager")],
        )
    if not isinstance(body, dict):
        raise bad_request("apply patch body must be an object")
    applied = api._check_body_identity(rt, copy.deepcopy(body), namespace, name)
    mine = leaf_paths(applied)
    entry = {
        "manager": options.field_manager,
        "operation": "Apply",
        "apiVersion": rt.api_version,
        "time": now_time(),
        "fieldsType": "FieldsV1",
        "fieldsV1": to_fields_v1(mine),
    }
    if subresource:
        entry["subresource"] = subresource
    if old is None:
        if subresource:
            raise api._not_found(rt, name)
        applied["metadata"]["managedFields"] = [entry]
        result = api.create(rt, namespace, applied, context, options)
        result.code = 201
        return result
    current = api._view(rt, old)
    managed: list[Obj] = list(current["metadata"].get("managedFields") or [])
    others = [
        m
        for m in managed
        if not (
            m.get("manager") == options.field_manager
            and m.get("operation") == "Apply"
            and m.get("subresource", "") == subresource
        )
    ]
    previous = next((m for m in managed if m not in others), None)
    conflicts: list[tuple[str, Path]] = []
    for other in others:
        if other.get("operation") != "Apply":
            continue
        owned = from_fields_v1(other.get("fieldsV1") or {})
        for path in sorted(mine & owned):
            if _get(current, path) != _get(applied, path):
                conflicts.append((str(other.get("manager")), path))
    if conflicts and not options.force:
        managers = sorted({m for m, _ in conflicts})
        fields = [("." + ".".join(p)) for _, p in conflicts]
        if len(conflicts) == 1:
            message = f'Apply failed with 1 conflict: conflict with "{managers[0]}" using {rt.api_version}: {fields[0]}'
        else:
            lines = "\n".join(f"- {f}" for f in fields)
            message = f'Apply failed with {len(conflicts)} conflicts: conflicts with "{managers[0]}":\n{lines}'
        error = APIError(409, "Conflict", message, name, rt.group, rt.plural)
        error.causes = [
            Cause("FieldManagerConflict", f'conflict with "{m}"', f)
            for (m, _), f in zip(conflicts, fields, strict=True)
        ]
        raise error
    if conflicts:  # force: take the fields over
        taken = {p for _, p in conflicts}
        for other in others:
            if other.get("operation") == "Apply":
                other["fieldsV1"] = to_fields_v1(from_fields_v1(other.get("fieldsV1") or {}) - taken)
    merged = _merge(current, applied)
    if previous is not None:
        owned_by_others = set().union(*(from_fields_v1(o.get("fieldsV1") or {}) for o in others)) if others else set()
        for path in from_fields_v1(previous.get("fieldsV1") or {}) - mine - owned_by_others:
            _delete(merged, path)
    merged["metadata"]["managedFields"] = [*others, entry]
    merged["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion")
    obj = api._to_storage(rt, merged)
    return api._update_existing(rt, obj, old, subresource, context, options)
