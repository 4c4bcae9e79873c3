"""Structural pruning of custom resources (kube-apiserver's rules)."""

from __future__ import annotations

from typing import Any

import pytest

from localkube.pruning import prune

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
                "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "embedded": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object", "properties": {}}},
                },
            },
        },
    },
}


@pytest.mark.parametrize(
    ("obj", "expected", "dropped"),
    [
        (
            {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n", "labels": {"a": "b"}}},
            {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n", "labels": {"a": "b"}}},
            [],
        ),
        ({"spec": {"replicas": 1, "typo": 2}}, {"spec": {"replicas": 1}}, ["spec.typo"]),
        ({"status": {"x": 1}}, {}, ["status"]),
        (
            {"spec": {"items": [{"name": "a", "extra": 1}, {"name": "b"}]}},
            {"spec": {"items": [{"name": "a"}, {"name": "b"}]}},
            ["spec.items[0].extra"],
        ),
        ({"spec": {"labels": {"any": "key"}}}, {"spec": {"labels": {"any": "key"}}}, []),
        ({"spec": {"raw": {"deep": {"x": [1]}}}}, {"spec": {"raw": {"deep": {"x": [1]}}}}, []),
        (
            {"spec": {"embedded": {"apiVersion": "v1", "kind": "C", "metadata": {}, "spec": {"x": 1}}}},
            {"spec": {"embedded": {"apiVersion": "v1", "kind": "C", "metadata": {}, "spec": {}}}},
            ["spec.embedded.spec.x"],
        ),
    ],
)
def test_prune(obj: dict[str, Any], expected: dict[str, Any], dropped: list[str]) -> None:
    assert prune(obj, SCHEMA) == dropped
    assert obj == expected
