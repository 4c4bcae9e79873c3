"""Field errors as apimachinery's ``field`` package words them.

A rule returns a list of :class:`FieldError`; :func:`aggregate` joins a list into
the one message the webhook denies with (``path: Invalid value: <value>: detail``,
several in brackets, duplicates dropped), which is what kubectl shows after
``admission webhook "..." denied the request:``. Values are rendered as Go's
``%v``/``%q`` renders scalars; objects (Go prints a struct dump) as compact JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

_OMIT = object()

INVALID = "Invalid value"
REQUIRED = "Required value"
FORBIDDEN = "Forbidden"
DUPLICATE = "Duplicate value"
NOT_SUPPORTED = "Unsupported value"
TOO_LONG = "Too long"


def render_value(value: Any) -> str:
    """A bad value as apimachinery prints it: strings quoted, numbers and booleans bare, nil as null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class FieldError:
    """One problem at one field path."""

    type: str
    field: str
    detail: str = ""
    value: Any = _OMIT

    def body(self) -> str:
        text = self.type
        if self.type not in (REQUIRED, FORBIDDEN, TOO_LONG) and self.value is not _OMIT:
            text = f"{text}: {render_value(self.value)}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}" if self.field else self.body()


def invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(INVALID, field, detail, value)


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, field, detail)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(FORBIDDEN, field, detail)


def duplicate(field: str, value: Any, detail: str = "") -> FieldError:
    return FieldError(DUPLICATE, field, detail, value)


def not_supported(field: str, value: Any, supported: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(json.dumps(v) for v in supported)
    return FieldError(NOT_SUPPORTED, field, detail, value)


def aggregate(errors: list[FieldError]) -> str:
    """The message of ``ErrorList.ToAggregate().Error()``: one error bare, several in brackets."""
    messages: list[str] = []
    for error in errors:
        text = str(error)
        if text not in messages:
            messages.append(text)
    if len(messages) == 1:
        return messages[0]
    return "[" + ", ".join(messages) + "]"
