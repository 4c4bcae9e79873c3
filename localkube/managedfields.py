"""``metadata.managedFields``: which manager owns which fields, kept on every write.

kube-apiserver's field manager, on structured-merge-diff's sets (``localkube.fieldpath``)
and walks (``localkube.typed``):

- every create, update and non-apply patch records an ``Update`` entry for its
  manager (``fieldManager``, else the User-Agent up to its first ``/``) owning what
  it added or changed; other managers lose the fields it changed or removed;
- server-side apply (``apply``) merges the configuration, removes what the same
  manager applied before and no longer applies (unless someone else owns it),
  and fails with 409 on fields another manager owns with a different value,
  unless forced, which takes them over;
- ``managedFields: [{}]`` in a write strips the entries; an omitted or empty list
  keeps the stored ones; a non-empty list replaces them;
- an object without entries gets a ``before-first-apply`` owner of everything on
  its first apply; more than 10 ``Update`` entries fold the oldest into
  ``ancient-changes``.

Everything here is a pure function of the objects; the caller stores the result.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from localkube.errors import APIError, Cause
from localkube.fieldpath import FieldSet, describe
from localkube.typed import MISSING, Schema, compare, ensure_named_fields_are_members, merge, remove_items, to_field_set

Obj = dict[str, Any]

APPLY = "Apply"
UPDATE = "Update"
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"
BEFORE_FIRST_APPLY = "before-first-apply"
# localkube's own controllers write as kube-controller-manager does in a real cluster
INTERNAL_MANAGER = "kube-controller-manager"

_UNTRACKED_META = (  # metadata fields no manager owns
    "name",
    "namespace",
    "creationTimestamp",
    "selfLink",
    "uid",
    "clusterName",
    "generation",
    "managedFields",
    "resourceVersion",
)
_STRIPPED = FieldSet.of(
    ("f:apiVersion",),
    ("f:kind",),
    ("f:metadata",),
    *(("f:metadata", f"f:{name}") for name in _UNTRACKED_META),
)


@dataclass
class Entry:
    """One managedFields entry, its fields as a set."""

    manager: str
    operation: str
    api_version: str
    time: str | None
    subresource: str
    fields: FieldSet
    # the stored entry this was decoded from, and its fields then (reused when unchanged)
    raw: Obj | None = None
    decoded: FieldSet | None = None

    def key(self) -> tuple[str, str, str]:
        return self.manager, self.operation, self.subresource

    def encode(self) -> Obj:
        raw = self.raw
        same_fields = raw is not None and self.fields is self.decoded
        stamp = (self.time, self.api_version)
        if same_fields and raw is not None and (raw.get("time"), raw.get("apiVersion")) == stamp:
            return raw
        out: Obj = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = raw["fieldsV1"] if same_fields and raw is not None else self.fields.to_fields_v1()
        if self.subresource:
            out["subresource"] = self.subresource
        _remember(out, self.fields)
        return out


@dataclass(frozen=True)
class Write:
    """What the field manager needs to know about one write."""

    schema: Schema
    manager: str
    api_version: str
    subresource: str
    has_status: bool
    now: str


# decoded field sets of stored entries, by the entry's identity: the store keeps
# objects as written, so the next write of an object finds its entries here
_DECODED: dict[int, tuple[Obj, FieldSet]] = {}
_DECODED_MAX = 16384


def _remember(raw: Obj, fields: FieldSet) -> None:
    if len(_DECODED) >= _DECODED_MAX:
        _DECODED.clear()
    _DECODED[id(raw)] = (raw, fields)


def _fields_of(raw: Obj) -> FieldSet:
    cached = _DECODED.get(id(raw))
    if cached is not None and cached[0] is raw:
        return cached[1]
    fields = FieldSet.from_fields_v1(raw.get("fieldsV1"))
    _remember(raw, fields)
    return fields


def decode(entries: Any) -> list[Entry]:
    """Entries of a stored or sent ``managedFields`` (malformed ones are skipped)."""
    decoded: list[Entry] = []
    for raw in entries if isinstance(entries, list) else []:
        if not isinstance(raw, dict) or not raw:
            continue
        fields = _fields_of(raw)
        decoded.append(
            Entry(
                str(raw.get("manager", "")),
                str(raw.get("operation", UPDATE)),
                str(raw.get("apiVersion", "")),
                raw.get("time"),
                str(raw.get("subresource", "")),
                fields,
                raw,
                fields,
            )
        )
    return decoded


def encode(entries: list[Entry]) -> list[Obj]:
    """The stored form: empty entries dropped, in kube-apiserver's order."""
    kept = [e for e in entries if not e.fields.empty()]
    kept.sort(key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource))
    return [e.encode() for e in kept]


def _reset(fields: FieldSet, write: Write) -> FieldSet:
    """Fields a write through this endpoint can own: the status subresource owns only
    the status, the main resource everything else (kube-apiserver's reset fields)."""
    if not write.has_status:
        return fields
    if write.subresource == "status":
        only = FieldSet()
        if "f:status" in fields.members:
            only.members.add("f:status")
        only.attach("f:status", fields.with_prefix("f:status").copy())
        return only
    if write.subresource:
        return fields
    return fields.recursive_difference(FieldSet.of(("f:status",)))


def _owned(fields: FieldSet, write: Write) -> FieldSet:
    """What is recorded: reset fields and the object's identity (nobody's) left out."""
    return _reset(fields, write).difference(_STRIPPED)


def _without_managed_fields(obj: Obj | None) -> Any:
    if obj is None:
        return MISSING
    clean = copy.copy(obj)
    meta = dict(clean.get("metadata") or {})
    meta.pop("managedFields", None)
    clean["metadata"] = meta
    return clean


def _tracked(obj: Obj) -> Obj:
    """``obj`` without what no manager owns (``_STRIPPED``): comparing less costs less."""
    clean = {key: value for key, value in obj.items() if key not in ("apiVersion", "kind")}
    meta = clean.get("metadata")
    if isinstance(meta, dict):
        clean["metadata"] = {key: value for key, value in meta.items() if key not in _UNTRACKED_META}
    return clean


def _cap(entries: list[Entry]) -> list[Entry]:
    updates = [e for e in entries if e.operation == UPDATE]
    if len(updates) <= MAX_UPDATE_MANAGERS:
        return entries
    updates.sort(key=lambda e: e.time or "")
    folded = updates[: len(updates) - MAX_UPDATE_MANAGERS + 1]
    fields = FieldSet()
    for entry in folded:
        fields = fields.union(entry.fields)
    newest = folded[-1]
    ancient = Entry(ANCIENT_CHANGES, UPDATE, newest.api_version, newest.time, "", fields)
    return [e for e in entries if all(e is not f for f in folded)] + [ancient]


def _is_reset(entries: Any) -> bool:
    return isinstance(entries, list) and len(entries) == 1 and entries[0] == {}


def track_update(live: Obj | None, new: Obj, write: Write) -> None:
    """Set ``new``'s managedFields for a create, update or non-apply patch by ``write.manager``.

    As kube-apiserver does: the write owns what it added or changed (merged into its
    manager's entry, whose time moves to now); every other entry loses those fields
    and any the write removed.
    """
    meta = new.setdefault("metadata", {})
    given = meta.get("managedFields")
    if _is_reset(given):
        meta.pop("managedFields", None)
        return
    stored = (live or {}).get("metadata", {}).get("managedFields")
    base = stored if not given or given == stored else given
    comparison = compare(_tracked(live) if live else {}, _tracked(new), write.schema)
    changed = _owned(comparison.added.union(comparison.modified), write)
    if changed.empty() and comparison.removed.empty():
        if base:
            meta["managedFields"] = list(base)  # entries are never mutated in place
        else:
            meta.pop("managedFields", None)
        return
    entries = decode(base)
    key = (write.manager, UPDATE, write.subresource)
    mine = next((e for e in entries if e.key() == key), None)
    for entry in entries:
        entry.fields = entry.fields.difference(comparison.removed)
        if entry is not mine:
            entry.fields = entry.fields.difference(changed)
    if not changed.empty():
        if mine is None:
            entries.append(Entry(write.manager, UPDATE, write.api_version, write.now, write.subresource, changed))
        else:
            if not changed.issubset(mine.fields):
                mine.fields = mine.fields.union(changed)
            mine.time, mine.api_version = write.now, write.api_version
    encoded = encode(_cap(entries))
    if encoded:
        meta["managedFields"] = encoded
    else:
        meta.pop("managedFields", None)


def _prune(merged: Any, owners: list[FieldSet], last: FieldSet, schema: Schema) -> Any:
    """Remove what the applier applied last time and no longer applies, unless owned."""
    last_named = ensure_named_fields_are_members(last, merged, schema)
    pruned = remove_items(merged, last_named, schema)
    owned = FieldSet()
    for fields in owners:
        owned = owned.union(fields)
    merged_set = ensure_named_fields_are_members(to_field_set(merged, schema), merged, schema)
    pruned_set = ensure_named_fields_are_members(to_field_set(pruned, schema), pruned, schema)
    owned_named = ensure_named_fields_are_members(owned, merged, schema)
    pruned = remove_items(merged, merged_set.difference(pruned_set.union(owned_named)), schema)
    pruned_set = ensure_named_fields_are_members(to_field_set(pruned, schema), pruned, schema)
    return remove_items(merged, merged_set.difference(pruned_set).intersection(last_named), schema)


def conflict_error(conflicts: list[tuple[Entry, FieldSet]], name: str, group: str, plural: str) -> APIError:
    """kube-apiserver's 409 for an apply that would change fields other managers own."""
    pairs = [(entry, path) for entry, fields in conflicts for path in fields.paths()]
    if len(pairs) == 1:
        entry, path = pairs[0]
        detail = f'conflict with "{entry.manager}" using {entry.api_version}: {describe(path)}'
    else:
        lines: list[str] = []
        for entry, fields in sorted(conflicts, key=lambda c: c[0].manager):
            lines.append(f'conflicts with "{entry.manager}" using {entry.api_version}:')
            lines.extend(f"- {describe(path)}" for path in fields.paths())
        detail = "\n".join(lines)
    plural_s = "" if len(pairs) == 1 else "s"
    error = APIError(
        409, "Conflict", f"Apply failed with {len(pairs)} conflict{plural_s}: {detail}", name, group, plural
    )
    error.causes = [
        Cause("FieldManagerConflict", f'conflict with "{entry.manager}" using {entry.api_version}', describe(path))
        for entry, path in pairs
    ]
    return error


def apply(live: Obj | None, config: Obj, write: Write, force: bool, identity: tuple[str, str, str]) -> Obj:
    """The object after ``write.manager`` applies ``config``, managedFields included.

    Raises the 409 conflict error when another manager owns a field the
    configuration changes and ``force`` is off. ``identity`` is the object's
    (name, group, plural), for the error.
    """
    entries = decode((live or {}).get("metadata", {}).get("managedFields"))
    live_clean = _without_managed_fields(live)
    if live is not None and not entries:
        everything = _owned(to_field_set(live_clean, write.schema), write)
        entries = [Entry(BEFORE_FIRST_APPLY, UPDATE, write.api_version, write.now, "", everything)]
    config_clean = _without_managed_fields(config)
    merged = merge(live_clean if live is not None else {}, config_clean, write.schema)
    applying = _reset(to_field_set(config_clean, write.schema), write)
    applied = applying.difference(_STRIPPED)
    key = (write.manager, APPLY, write.subresource)
    mine = next((e for e in entries if e.key() == key), None)
    others = [e for e in entries if e is not mine]
    if mine is not None and not mine.fields.empty():
        # the applier's identity fields count as owned while pruning, so metadata stays
        merged = _prune(merged, [applying, *(e.fields for e in others)], mine.fields, write.schema)
    comparison = compare(live_clean if live is not None else {}, merged, write.schema)
    changed = comparison.added.union(comparison.modified)
    conflicts = [(e, e.fields.intersection(changed)) for e in others]
    conflicts = [(e, fields) for e, fields in conflicts if not fields.empty()]
    if conflicts and not force:
        raise conflict_error(conflicts, *identity)
    for entry in others:
        entry.fields = entry.fields.difference(changed).difference(comparison.removed)
    same = mine is not None and mine.fields == applied and mine.api_version == write.api_version
    time = mine.time if same and mine is not None else write.now
    entries = [*others, Entry(write.manager, APPLY, write.api_version, time, write.subresource, applied)]
    result: Obj = merged if isinstance(merged, dict) else {}
    result.setdefault("metadata", {})["managedFields"] = encode(_cap(entries))
    return result
