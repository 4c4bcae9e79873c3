"""Validation errors that name the field, the way the Kubernetes API server does.

A user who applies a bad policy should read ``spec.placement.replicaScheduling.
replicaSchedulingType: must be one of Duplicated, Divided``, not a pydantic
traceback. :func:`from_pydantic` turns pydantic's errors into that form.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError


@dataclass(frozen=True)
class FieldError:
    """One problem with one field; ``path`` is a JSON path such as ``spec.a[0].b``."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class APIValidationError(ValueError):
    """An object failed validation; ``errors`` lists every bad field."""

    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = errors
        super().__init__("; ".join(str(e) for e in errors))


def format_path(loc: tuple[int | str, ...], prefix: str = "") -> str:
    """``("spec", "clusters", 0, "name")`` -> ``spec.clusters[0].name``."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


_TYPE_NAMES = {
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "bool_type": "must be a boolean",
    "bool_parsing": "must be a boolean",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "missing": "Required value",
    "none_required": "must be null",
}


def _message(error: Any) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind in _TYPE_NAMES:
        return _TYPE_NAMES[kind]
    if kind == "literal_error":
        expected = str(ctx.get("expected", ""))
        choices = ", ".join(part.strip().strip("'") for part in expected.replace(" or ", ", ").split(","))
        return f"must be one of {choices} (got {json.dumps(error['input'])})"
    if kind == "too_short":
        return f"must have at least {ctx.get('min_length')} item(s)"
    if kind == "too_long":
        return f"must have at most {ctx.get('max_length')} item(s)"
    if kind == "string_too_short":
        return f"must be at least {ctx.get('min_length')} character(s) long"
    if kind == "string_too_long":
        return f"must be at most {ctx.get('max_length')} character(s) long"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        words = {
            "greater_than_equal": "greater than or equal to",
            "greater_than": "greater than",
            "less_than_equal": "less than or equal to",
            "less_than": "less than",
        }[kind]
        bound = next(iter(ctx.values()), "")
        return f"must be {words} {bound}"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return str(error["msg"])


def from_pydantic(exc: ValidationError, prefix: str = "") -> APIValidationError:
    """Convert a pydantic error to field-named errors (one per bad field)."""
    seen: set[str] = set()
    errors: list[FieldError] = []
    for error in exc.errors():
        loc = tuple(part for part in error["loc"] if not _is_union_tag(part))
        item = FieldError(format_path(loc, prefix), _message(error))
        if str(item) not in seen:
            seen.add(str(item))
            errors.append(item)
    return APIValidationError(errors)


def _is_union_tag(part: int | str) -> bool:
    # pydantic adds the member type to the location of union errors
    # ("function-plain[...]", "literal['A','B']"); they mean nothing to a user.
    return isinstance(part, str) and ("[" in part or part in ("int", "str", "bool", "float", "none"))
