"""State preservation: values picked by a Kubernetes JSONPath from the status
the failed cluster last reported, as the labels the new placement gets
(``statePreservation.rules``: ``aliasLabelName`` + ``jsonPath``).

The JSONPath subset here is what the rules use: one ``{...}`` expression of
field steps (``.a.b``, ``['a.b']``) and list indexes (``[0]``, ``[-1]``).
A missing key is an error, as in Karmada (``AllowMissingKeys(false)``).
Strings print as they are, numbers and booleans as Go prints them, objects
and lists as JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from karmada.api.policy import StatePreservation

_STEP = re.compile(r"""\.([A-Za-z0-9_\-]+)|\[\s*'([^']*)'\s*\]|\[\s*"([^"]*)"\s*\]|\[\s*(-?\d+)\s*\]""")


class StateError(ValueError):
    """A rule's JSONPath is malformed or finds nothing in the status."""


def _steps(path: str) -> list[str | int]:
    text = path.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise StateError(f"jsonPath {path!r}: expected one expression in braces, like {{.status.field}}")
    body = text[1:-1].strip()
    if body.startswith("$"):
        body = body[1:]
    steps: list[str | int] = []
    position = 0
    while position < len(body):
        match = _STEP.match(body, position)
        if match is None:
            raise StateError(f"jsonPath {path!r}: unsupported syntax at {body[position:]!r}")
        name, quoted, double, index = match.groups()
        steps.append(int(index) if index is not None else (name or quoted or double or ""))
        position = match.end()
    if not steps:
        raise StateError(f"jsonPath {path!r}: no field named")
    return steps


def _format(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def jsonpath_value(document: Any, path: str) -> str:
    """The value ``path`` finds in ``document``, printed."""
    value = document
    for step in _steps(path):
        if isinstance(step, int):
            if not isinstance(value, Sequence) or isinstance(value, str) or not -len(value) <= step < len(value):
                raise StateError(f"jsonPath {path!r}: array index {step} is out of bounds")
            value = value[step]
        else:
            if not isinstance(value, Mapping) or step not in value:
                raise StateError(f"jsonPath {path!r}: {step} is not found")
            value = value[step]
    return _format(value)


def preserved_label_state(preservation: StatePreservation | None, status: Any) -> dict[str, str] | None:
    """``aliasLabelName -> value`` for every rule (None without rules)."""
    if preservation is None or not preservation.rules:
        return None
    if status is None:
        raise StateError("the application status has not yet been collected")
    return {rule.alias_label_name: jsonpath_value(status, rule.json_path) for rule in preservation.rules}
