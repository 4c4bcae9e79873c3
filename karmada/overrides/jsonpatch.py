"""RFC 6902 JSON patch (add, remove, replace), with the behaviour of the Go
library Karmada uses (evanphx/json-patch, default options).

Paths are JSON pointers (RFC 6901, ``~1`` for ``/`` and ``~0`` for ``~``).
``add`` needs the parent to exist; ``-`` appends to a list; negative list
indices count from the end; ``remove`` and ``replace`` need the target to
exist. Errors say which operation failed and why.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class PatchError(ValueError):
    """A patch operation could not be applied."""


@dataclass(frozen=True)
class Operation:
    """One JSON patch operation."""

    op: str
    path: str
    value: Any = None


def split_pointer(pointer: str) -> list[str]:
    """The unescaped tokens of a JSON pointer (``""`` is the whole document)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"path {pointer!r} must start with /")
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer[1:].split("/")]


def _index(token: str, length: int, *, for_add: bool) -> int:
    if for_add and token == "-":
        return length
    try:
        index = int(token)
    except ValueError:
        raise PatchError(f"{token!r} is not a list index") from None
    if index < 0:
        index += length
    upper = length if for_add else length - 1
    if index < 0 or index > upper:
        raise PatchError(f"index {token} is out of range")
    return index


def _parent(doc: Any, tokens: list[str], pointer: str) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(token, len(node), for_add=False)]
        else:
            raise PatchError(f"doc is missing path {pointer}")
    return node


def get(doc: Any, pointer: str) -> Any:
    """The value at ``pointer``; raises :class:`PatchError` when absent."""
    node = doc
    for token in split_pointer(pointer):
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(token, len(node), for_add=False)]
        else:
            raise PatchError(f"doc is missing path {pointer}")
    return node


def _apply_one(doc: Any, operation: Operation) -> Any:
    tokens = split_pointer(operation.path)
    value = copy.deepcopy(operation.value)
    if not tokens:
        if operation.op in ("add", "replace"):
            return value
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens, operation.path)
    last = tokens[-1]
    if operation.op == "add":
        if isinstance(parent, dict):
            parent[last] = value
        elif isinstance(parent, list):
            parent.insert(_index(last, len(parent), for_add=True), value)
        else:
            raise PatchError(f"doc is missing path {operation.path}")
    elif operation.op in ("remove", "replace"):
        if isinstance(parent, dict):
            if last not in parent:
                raise PatchError(f"doc is missing key {operation.path}")
            if operation.op == "remove":
                del parent[last]
            else:
                parent[last] = value
        elif isinstance(parent, list):
            index = _index(last, len(parent), for_add=False)
            if operation.op == "remove":
                del parent[index]
            else:
                parent[index] = value
        else:
            raise PatchError(f"doc is missing path {operation.path}")
    else:
        raise PatchError(f"unsupported operation {operation.op!r}")
    return doc


def apply_patch(doc: Any, operations: Sequence[Operation]) -> Any:
    """``doc`` with every operation applied in order; ``doc`` itself is not modified."""
    result = copy.deepcopy(doc)
    for operation in operations:
        try:
            result = _apply_one(result, operation)
        except PatchError as exc:
            raise PatchError(f"{operation.op} operation does not apply: {exc}") from None
    return result
