"""``localkube.crd``: structural defaults, and telling whether an object still lacks any."""

from __future__ import annotations

from typing import Any

import pytest

from localkube.crd import apply_defaults, defaults_pending
from localkube.values import clone

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "default": "Fast"},
                "note": {"type": "string"},
                "maybe": {"type": "string", "nullable": True},
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"weight": {"type": "integer", "default": 1}}},
                },
                "byName": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"on": {"type": "boolean", "default": True}},
                    },
                },
            },
        }
    },
}


@pytest.mark.parametrize(
    "obj",
    [
        {},  # no spec: defaults never create parents
        {"spec": {}},
        {"spec": {"mode": "Slow"}},
        {"spec": {"mode": "Slow", "note": None}},  # a null that is not nullable is dropped
        {"spec": {"mode": "Slow", "maybe": None}},  # a nullable one stays
        {"spec": {"mode": "Slow", "items": [{"weight": 3}, {}]}},
        {"spec": {"mode": "Slow", "items": [{"weight": 3}]}},
        {"spec": {"mode": "Slow", "byName": {"a": {"on": False}, "b": {}}}},
        {"spec": {"mode": "Slow", "byName": {"a": {"on": False}}}},
        {"spec": {"mode": "Slow", "unknown": {"mode": None}}},
    ],
)
def test_pending_exactly_when_applying_defaults_changes_the_object(obj: dict[str, Any]) -> None:
    defaulted = apply_defaults(clone(obj), SCHEMA)
    assert defaults_pending(obj, SCHEMA) == (defaulted != obj)
    assert not defaults_pending(defaulted, SCHEMA)
