"""Schema-aware walks over objects for server-side apply: field sets, comparison,
merge and removal, with structured-merge-diff's rules.

The schema is a JSON-schema node: Kubernetes' own definitions for built-in kinds
(``$ref`` into ``builtin_schemas``), a CRD version's ``openAPIV3Schema`` for custom
resources (its ``metadata`` read as ObjectMeta), or ``None`` where nothing is
known, which is walked as structured-merge-diff's "deduced" type: maps are
granular, lists atomic. Lists are atomic unless ``x-kubernetes-list-type`` says
``set`` or ``map``; maps are granular unless ``x-kubernetes-map-type: atomic``.

Walks deeper than ``MAX_DEPTH`` treat the rest as one atomic value, so no object
the decoder accepts can exhaust the interpreter's stack (a documented deviation:
structured-merge-diff has no such bound).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from localkube import builtin_schemas
from localkube.fieldpath import FieldSet, Path, go_json

Obj = dict[str, Any]
Schema = Obj | None

MAX_DEPTH = 200
_REF = "#/$defs/"
_OBJECT_META = {"$ref": _REF + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}


class _Missing:
    """An absent value (distinct from JSON null)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Node:
    """What a schema says about one value."""

    shape: str  # "scalar", "map" or "list"
    atomic: bool = False
    fields: Obj | None = None  # a struct's named fields
    element: Schema = None  # a map's values or a list's items
    keys: tuple[str, ...] = ()  # a map-list's keys; () with a set
    named: bool = False  # the map is a struct (its fields are named)


def root_schema(group: str, version: str, kind: str, crd_schema: Obj | None, custom: bool) -> Schema:
    """The schema of a whole object of this kind (``None`` when unknown)."""
    if custom:
        if crd_schema is None:
            return {"properties": {"metadata": _OBJECT_META}, "x-kubernetes-preserve-unknown-fields": True}
        properties = dict(crd_schema.get("properties") or {})
        properties["metadata"] = _OBJECT_META
        return {**crd_schema, "properties": properties}
    name = builtin_schemas.definition_name(group, version, kind)
    return {"$ref": _REF + name} if name else None


def _resolve(schema: Schema) -> Schema:
    while schema is not None and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith(_REF):
        schema = builtin_schemas.definitions()[schema["$ref"][len(_REF) :]]
    return schema


# node_of's answers by (schema's id, the value's shape); each entry holds its schema, so the
# id is not reused while the entry lives
_NODES: dict[tuple[int, type], tuple[Schema, Node]] = {}
_NODES_MAX = 8192


def node_of(schema: Schema, value: Any, depth: int) -> Node:
    if depth > MAX_DEPTH:
        return Node("scalar")
    shape = type(value) if value is MISSING or isinstance(value, (dict, list)) else str
    key = (id(schema), shape)
    cached = _NODES.get(key)
    if cached is not None and cached[0] is schema:
        return cached[1]
    node = _node_of(schema, value)
    if len(_NODES) >= _NODES_MAX:
        _NODES.clear()
    _NODES[key] = (schema, node)
    return node


def _node_of(schema: Schema, value: Any) -> Node:
    schema = _resolve(schema)
    if value is MISSING:  # the shape the schema gives
        kind = (schema or {}).get("type")
        is_list = "items" in (schema or {}) or kind == "array" or (isinstance(kind, list) and "array" in kind)
        value = [] if is_list else {}
    if schema is None:
        if isinstance(value, dict):
            return Node("map")
        return Node("list", atomic=True) if isinstance(value, list) else Node("scalar")
    properties = schema.get("properties")
    additional = schema.get("additionalProperties")
    if isinstance(value, dict):
        if properties is None and not isinstance(additional, dict):
            return Node("map", atomic=schema.get("x-kubernetes-map-type") == "atomic")
        element = additional if isinstance(additional, dict) else None
        return Node(
            "map",
            atomic=schema.get("x-kubernetes-map-type") == "atomic",
            fields=properties,
            element=element,
            named=properties is not None,
        )
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema.get("items"), dict) else None
        list_type = schema.get("x-kubernetes-list-type", "atomic")
        keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
        if list_type == "map" and keys:
            return Node("list", element=items, keys=keys)
        if list_type == "set":
            return Node("list", element=items)
        return Node("list", atomic=True, element=items)
    return Node("scalar")


def field_schema(node: Node, key: str) -> Schema:
    if node.fields is not None and key in node.fields:
        child: Obj = node.fields[key]
        return child
    return node.element


def item_element(node: Node, item: Any) -> str:
    """The path element of a list item: ``k:{...}`` for map-lists, ``v:...`` for sets."""
    if node.keys:
        present = {k: item[k] for k in node.keys if isinstance(item, dict) and k in item}
        return "k:" + go_json(present)
    return "v:" + go_json(item)


def _is_leaf(node: Node, left: Any, right: Any) -> bool:
    """Scalars, atomic values, and maps or lists empty on both sides are compared whole."""
    if node.shape == "scalar" or node.atomic:
        return True
    return _empty(left) and _empty(right)


def _empty(value: Any) -> bool:
    return value is MISSING or value is None or (isinstance(value, (dict, list)) and not value)


# -- field sets ---------------------------------------------------------------
def to_field_set(value: Any, schema: Schema) -> FieldSet:
    """The fields a configuration sets (structured-merge-diff's ToFieldSet)."""
    out = FieldSet()
    _collect(value, schema, out, 0)
    return out


def _collect(value: Any, schema: Schema, out: FieldSet, depth: int) -> bool:
    """Fill ``out`` with the paths below ``value``; True when the value is itself a member."""
    node = node_of(schema, value, depth)
    if node.shape == "scalar" or node.atomic:
        return True
    if node.shape == "list":
        seen: set[str] = set()
        duplicated: set[str] = set()
        for item in value:
            element = item_element(node, item)
            (duplicated if element in seen else seen).add(element)
        for item in value:
            element = item_element(node, item)
            if element in duplicated:
                out.members.add(element)
                continue
            child = FieldSet()
            _collect(item, node.element, child, depth + 1)
            out.attach(element, child)
            out.members.add(element)
        return False
    for key, child_value in value.items():
        element = "f:" + key
        child = FieldSet()
        member = _collect(child_value, field_schema(node, key), child, depth + 1)
        out.attach(element, child)
        unnamed = node.fields is None or key not in node.fields
        if member or child_value is None or child_value == {} or unnamed:
            out.members.add(element)
    return False


def ensure_named_fields_are_members(fields: FieldSet, value: Any, schema: Schema, depth: int = 0) -> FieldSet:
    """The set with every struct field that has children made a member too, so removing
    it removes its subtree (structured-merge-diff's EnsureNamedFieldsAreMembers)."""
    node = node_of(schema, value, depth)
    made = FieldSet()
    made.members = set(fields.members)
    for element, child in fields.children.items():
        child_value: Any = MISSING
        child_schema: Schema = None
        if element.startswith("f:"):
            key = element[2:]
            child_schema = field_schema(node, key)
            if node.named and node.fields is not None and key in node.fields:
                made.members.add(element)
            if isinstance(value, dict):
                child_value = value.get(key, MISSING)
        elif element.startswith(("k:", "v:")):
            child_schema = node.element
            if isinstance(value, list):
                child_value = next((i for i in value if item_element(node, i) == element), MISSING)
        made.attach(element, ensure_named_fields_are_members(child, child_value, child_schema, depth + 1))
    return made


# -- comparison ---------------------------------------------------------------
@dataclass
class Comparison:
    added: FieldSet
    modified: FieldSet
    removed: FieldSet


def compare(old: Any, new: Any, schema: Schema) -> Comparison:
    result = Comparison(FieldSet(), FieldSet(), FieldSet())
    _compare(old, new, schema, (), result, 0)
    return result


def _compare(left: Any, right: Any, schema: Schema, path: Path, out: Comparison, depth: int) -> None:
    if left is MISSING:
        _insert_added(out.added, path, right, schema, depth)
        return
    if right is not MISSING and left == right:
        return  # equal subtrees add nothing (and comparing them in C keeps writes cheap)
    present = right if right is not MISSING else left
    node = node_of(schema, present, depth)
    # null is an empty map or list to structured-merge-diff: null -> [a] adds a's fields
    shapes_differ = type(left) is not type(right) and right is not MISSING and left is not None and right is not None
    if _is_leaf(node, left, right) or shapes_differ or not isinstance(present, (dict, list)):
        if left is MISSING:
            out.added.insert(path)
        elif right is MISSING:
            out.removed.insert(path)
        elif left != right:
            out.modified.insert(path)
        return
    if isinstance(present, dict):
        lhs = left if isinstance(left, dict) else {}
        rhs = right if isinstance(right, dict) else {}
        for key in {**lhs, **rhs}:
            child = (*path, "f:" + key)
            _compare(lhs.get(key, MISSING), rhs.get(key, MISSING), field_schema(node, key), child, out, depth + 1)
    else:
        lhs_items = left if isinstance(left, list) else []
        rhs_items = right if isinstance(right, list) else []
        _compare_items(node, lhs_items, rhs_items, path, out, depth)
    if path:
        if left is MISSING:
            out.added.insert(path)
        elif right is MISSING:
            out.removed.insert(path)


def _insert_added(out: FieldSet, path: Path, value: Any, schema: Schema, depth: int) -> None:
    """``value``, absent before, added at ``path``: the path and every path below it."""
    below = _added(value, schema, depth)
    if not path:
        if below is not None:
            out.members |= below.members
            for element, child in below.children.items():
                out.attach(element, child)
        return
    parent = out
    for element in path[:-1]:
        parent = parent.child(element)
    parent.members.add(path[-1])
    if below is not None:
        parent.attach(path[-1], below)


def _added(value: Any, schema: Schema, depth: int) -> FieldSet | None:
    """The paths below a value that is added whole, built in one walk (what comparing it with
    nothing inserts one path at a time); ``None`` for a leaf."""
    if not value or not isinstance(value, (dict, list)):
        return None
    node = node_of(schema, value, depth)
    if node.shape == "scalar" or node.atomic:
        return None
    out = FieldSet()
    if isinstance(value, dict):
        for key, child_value in value.items():
            element = "f:" + key
            out.members.add(element)
            child = _added(child_value, field_schema(node, key), depth + 1)
            if child is not None:
                out.children[element] = child
        return out
    for element, items in _index(node, value).items():
        out.members.add(element)
        if len(items) == 1:  # a duplicated item is owned whole
            child = _added(items[0], node.element, depth + 1)
            if child is not None:
                out.children[element] = child
    return out


def _index(node: Node, items: list[Any]) -> dict[str, list[Any]]:
    indexed: dict[str, list[Any]] = {}
    for item in items:
        indexed.setdefault(item_element(node, item), []).append(item)
    return indexed


def _compare_items(node: Node, left: list[Any], right: list[Any], path: Path, out: Comparison, depth: int) -> None:
    lhs, rhs = _index(node, left), _index(node, right)
    for element in [*lhs, *(e for e in rhs if e not in lhs)]:
        lv, rv = lhs.get(element, []), rhs.get(element, [])
        child = (*path, element)
        if len(lv) <= 1 and len(rv) <= 1:
            _compare(lv[0] if lv else MISSING, rv[0] if rv else MISSING, node.element, child, out, depth + 1)
        elif len(lv) >= 2 and len(rv) >= 2:
            if lv != rv:
                out.modified.insert(child)
        elif len(lv) >= 2:
            if rv:
                _compare(MISSING, rv[0], node.element, child, out, depth + 1)
            out.removed.insert(child)
        else:
            if lv:
                _compare(lv[0], MISSING, node.element, child, out, depth + 1)
            out.added.insert(child)


# -- merge ----------------------------------------------------------------------
def merge(live: Any, config: Any, schema: Schema) -> Any:
    """``config`` merged onto ``live``: the configuration wins, granular maps and lists merge."""
    return _merge(live, config, schema, 0)


def _merge(left: Any, right: Any, schema: Schema, depth: int) -> Any:
    if right is MISSING:
        return left
    if left is MISSING:
        return right
    node = node_of(schema, right, depth)
    if _is_leaf(node, left, right) or type(left) is not type(right) or not isinstance(right, (dict, list)):
        return right
    if isinstance(left, dict) and isinstance(right, dict):
        out: Obj = {}
        for key in {**left, **right}:
            merged = _merge(left.get(key, MISSING), right.get(key, MISSING), field_schema(node, key), depth + 1)
            if merged is not MISSING and merged is not None:
                out[key] = merged
        return out
    if isinstance(left, list) and isinstance(right, list):
        return _merge_items(node, left, right, depth)
    return right


def _merge_items(node: Node, left: list[Any], right: list[Any], depth: int) -> list[Any]:
    """Items of both lists: shared ones in the configuration's order, the live list's own
    kept where they stood, the configuration's new ones where it puts them."""
    lkeys = [item_element(node, i) for i in left]
    rkeys = [item_element(node, i) for i in right]
    lvalues: dict[str, Any] = {}
    for key, item in zip(lkeys, left, strict=True):
        lvalues[key] = MISSING if key in lvalues else item  # a duplicated live item merges as absent
    rvalues = dict(zip(rkeys, right, strict=True))
    shared = [k for k in rkeys if k in lvalues]
    next_shared = shared.pop(0) if shared else None
    merged_right: set[str] = set()
    out: list[Any] = []

    def emit(key: str, lv: Any, rv: Any) -> None:
        value = _merge(lv, rv, node.element, depth + 1)
        if value is not MISSING:
            out.append(value)

    li = ri = 0
    while li < len(lkeys) or ri < len(rkeys):
        if li < len(lkeys) and ri < len(rkeys):
            key = lkeys[li]
            if key == rkeys[ri]:
                merged_right.add(key)
                emit(key, lvalues.get(key, MISSING), rvalues[key])
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if key in rvalues and next_shared is not None and next_shared != key:
                li += 1
                continue
        if li < len(lkeys):
            key = lkeys[li]
            if key not in rvalues:
                emit(key, left[li], MISSING)
                li += 1
                continue
            if key in merged_right:
                li += 1
        if ri < len(rkeys):
            key = rkeys[ri]
            merged_right.add(key)
            emit(key, lvalues.get(key, MISSING), rvalues[key])
            ri += 1
            if next_shared is not None and next_shared == key:
                next_shared = shared.pop(0) if shared else None
    return out


# -- removal --------------------------------------------------------------------
def remove_items(value: Any, fields: FieldSet, schema: Schema) -> Any:
    """``value`` without the members of ``fields`` (and everything below them)."""
    result = _remove(value, fields, schema, 0)
    return {} if result is MISSING and isinstance(value, dict) else result


def _remove(value: Any, fields: FieldSet, schema: Schema, depth: int) -> Any:
    node = node_of(schema, value, depth)
    if node.shape == "scalar" or node.atomic or _empty(value):
        return value
    if node.shape == "list":
        items = []
        for item in value:
            element = item_element(node, item)
            if element in fields.members:
                continue
            below = fields.children.get(element)
            kept = item if below is None else _remove(item, below, node.element, depth + 1)
            if kept is not MISSING:
                items.append(kept)
        return items or MISSING
    out: Obj = {}
    for key, child in value.items():
        element = "f:" + key
        if element in fields.members:
            continue
        below = fields.children.get(element)
        kept = child if below is None else _remove(child, below, field_schema(node, key), depth + 1)
        if kept is not MISSING:
            out[key] = kept
    return out or MISSING
