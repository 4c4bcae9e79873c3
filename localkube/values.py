"""JSON values (dicts, lists and scalars) copied without recursion, so an
object as deep as the decoder allows costs heap, never Python's stack."""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def clone(value: T) -> T:
    """A deep copy of a JSON value; scalars are shared (they are immutable)."""
    if isinstance(value, dict):
        root: Any = {}
    elif isinstance(value, list):
        root = []
    else:
        return value
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            if isinstance(item, dict):
                child: Any = {}
                stack.append((item, child))
            elif isinstance(item, list):
                child = []
                stack.append((item, child))
            else:
                child = item
            if isinstance(target, dict):
                target[key] = child
            else:
                target.append(child)
    result: T = root
    return result


__all__ = ["clone"]
