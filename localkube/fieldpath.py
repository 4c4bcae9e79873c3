"""Sets of field paths, as server-side apply tracks ownership (structured-merge-diff's model).

A path is a tuple of path elements, each already in its managedFields spelling:
``f:<field>`` (a field of a map), ``k:{"name":"x"}`` (an item of a list keyed by
its map keys), ``v:<json>`` (an item of a set-like list), ``i:<n>`` (an index).
A set holds *members* (paths that are owned themselves) and *children* (sets
below a path element), so ``f:data`` can be owned while ``f:data.f:b`` is too.

FieldsV1 is the JSON form: a member without children is ``{}``; a member with
children also holds ``".": {}``; a node that is only a parent holds only its
children.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import orjson

Path = tuple[str, ...]

_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}


def _order(element: str) -> tuple[int, str]:
    return _RANK.get(element[:1], 4), element


_PLAIN = {str, int, bool, type(None)}  # encoded alike by orjson and the standard library


def _plain(value: Any) -> bool:
    if type(value) is dict:
        return all(type(k) is str and type(v) in _PLAIN for k, v in value.items())
    return type(value) in _PLAIN


def go_json(value: Any) -> str:
    """JSON as Go's encoder writes it: compact, sorted keys, HTML characters escaped."""
    try:
        # a list item's keys are a few strings and numbers: orjson writes them several times faster
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode() if _plain(value) else ""
    except TypeError:  # an integer past 64 bits
        text = ""
    if not text:
        text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def describe(path: Path) -> str:
    """A path as Kubernetes prints it in a conflict: ``.spec.containers[name="web"].image``."""
    out = []
    for element in path:
        kind, rest = element[:1], element[2:]
        if kind == "f":
            out.append("." + rest)
        elif kind == "k":
            keys = json.loads(rest)
            out.append("[" + ",".join(f"{k}={json.dumps(keys[k])}" for k in sorted(keys)) + "]")
        elif kind == "v":
            out.append(f"[={rest}]")
        else:
            out.append(f"[{rest}]")
    return "".join(out)


class FieldSet:
    """A set of paths: members at this level and a child set per path element.

    Built by ``insert``/``attach``, then treated as immutable: the set operations
    return new sets that share untouched subtrees with their operands.
    """

    __slots__ = ("children", "members")

    def __init__(self) -> None:
        self.members: set[str] = set()
        self.children: dict[str, FieldSet] = {}

    @classmethod
    def of(cls, *paths: Path) -> FieldSet:
        made = cls()
        for path in paths:
            made.insert(path)
        return made

    def insert(self, path: Path) -> None:
        node = self
        for element in path[:-1]:
            node = node.child(element)
        if path:
            node.members.add(path[-1])

    def child(self, element: str) -> FieldSet:
        """The child set below ``element``, created when missing."""
        found = self.children.get(element)
        if found is None:
            found = self.children[element] = FieldSet()
        return found

    def attach(self, element: str, child: FieldSet) -> None:
        """Merge a child set in below ``element``, ignoring an empty one."""
        if child.empty():
            return
        existing = self.children.get(element)
        self.children[element] = child if existing is None else existing.union(child)

    def has(self, path: Path) -> bool:
        node: FieldSet | None = self
        for element in path[:-1]:
            node = node.children.get(element) if node else None
        return bool(path) and node is not None and path[-1] in node.members

    def with_prefix(self, element: str) -> FieldSet:
        return self.children.get(element) or FieldSet()

    def empty(self) -> bool:
        return not self.members and not self.children  # children are never empty

    def copy(self) -> FieldSet:
        made = FieldSet()
        made.members = set(self.members)
        made.children = {k: v.copy() for k, v in self.children.items()}
        return made

    def union(self, other: FieldSet) -> FieldSet:
        if other.empty():
            return self
        if self.empty():
            return other
        made = FieldSet()
        made.members = self.members | other.members
        for element in self.children.keys() | other.children.keys():
            mine, theirs = self.children.get(element), other.children.get(element)
            if mine is None or theirs is None:
                made.attach(element, mine or theirs or FieldSet())
            else:
                made.attach(element, mine.union(theirs))
        return made

    def issubset(self, other: FieldSet) -> bool:
        if not self.members <= other.members:
            return False
        for element, mine in self.children.items():
            theirs = other.children.get(element)
            if theirs is None or not mine.issubset(theirs):
                return False
        return True

    def intersection(self, other: FieldSet) -> FieldSet:
        made = FieldSet()
        made.members = self.members & other.members
        for element in self.children.keys() & other.children.keys():
            made.attach(element, self.children[element].intersection(other.children[element]))
        return made

    def difference(self, other: FieldSet) -> FieldSet:
        """Members of ``self`` not in ``other``; a member of ``other`` does not remove children.
        ``self`` itself when nothing is removed: an entry whose set is unchanged keeps its
        encoded fieldsV1 (managedfields.Entry.encode)."""
        if other.empty() or self.empty():
            return self
        members = self.members - other.members
        changed = len(members) != len(self.members)
        children: dict[str, FieldSet] = {}
        for element, mine in self.children.items():
            theirs = other.children.get(element)
            child = mine if theirs is None else mine.difference(theirs)
            if child is not mine:
                changed = True
            if not child.empty():
                children[element] = child
        if not changed:
            return self
        made = FieldSet()
        made.members, made.children = members, children
        return made

    def recursive_difference(self, other: FieldSet) -> FieldSet:
        """Like ``difference``, but a member of ``other`` removes everything below it too."""
        made = FieldSet()
        made.members = self.members - other.members
        for element, mine in self.children.items():
            if element in other.members:
                continue
            theirs = other.children.get(element)
            made.attach(element, mine if theirs is None else mine.recursive_difference(theirs))
        return made

    def paths(self, prefix: Path = ()) -> Iterator[Path]:
        """Every member, in managedFields order."""
        for element in sorted(self.members | self.children.keys(), key=_order):
            if element in self.members:
                yield (*prefix, element)
            if element in self.children:
                yield from self.children[element].paths((*prefix, element))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSet):
            return NotImplemented
        return self.to_fields_v1() == other.to_fields_v1()

    __hash__ = None  # type: ignore[assignment]

    def to_fields_v1(self) -> dict[str, Any]:
        tree: dict[str, Any] = {}
        for element in sorted(self.members | self.children.keys(), key=_order):
            child = self.children.get(element)
            node: dict[str, Any] = child.to_fields_v1() if child is not None else {}
            if element in self.members and node:
                node = {".": {}, **node}
            if node or element in self.members:
                tree[element] = node
        return tree

    @classmethod
    def from_fields_v1(cls, tree: Any) -> FieldSet:
        made = cls()
        if not isinstance(tree, dict):
            return made
        for element, node in tree.items():
            if element == "." or not isinstance(element, str):
                continue
            if not isinstance(node, dict) or not node:
                made.members.add(element)
                continue
            if "." in node:
                made.members.add(element)
            child = cls.from_fields_v1(node)
            if child.members or child.children:
                made.children[element] = child
        return made
