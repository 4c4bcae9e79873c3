"""Structural-schema pruning of custom resources, as kube-apiserver does it.

When a custom resource is written, fields its CRD's structural schema does
not specify are dropped, except under ``x-kubernetes-preserve-unknown-fields``
(or an ``x-kubernetes-embedded-resource``'s apiVersion/kind/metadata). The
root's ``apiVersion``, ``kind`` and ``metadata`` are always kept. Returning the
dropped paths lets the server report them as unknown fields
(``fieldValidation=Warn|Strict``) instead of losing them silently.
"""

from __future__ import annotations

from typing import Any

_ALWAYS_KEPT = ("apiVersion", "kind", "metadata")


def prune(obj: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Prune a whole object in place by its ``openAPIV3Schema``; returns dropped paths."""
    dropped: list[str] = []
    _prune_object(obj, schema, "", dropped, root=True)
    return dropped


def _prune_value(value: Any, schema: dict[str, Any], path: str, dropped: list[str]) -> None:
    if isinstance(value, dict):
        _prune_object(value, schema, path, dropped, root=False)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                _prune_value(item, items, f"{path}[{index}]", dropped)


def _prune_object(obj: dict[str, Any], schema: dict[str, Any], path: str, dropped: list[str], *, root: bool) -> None:
    properties: dict[str, Any] = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(schema.get("x-kubernetes-embedded-resource"))
    for key in list(obj):
        child_path = f"{path}.{key}" if path else key
        if (root or embedded) and key in _ALWAYS_KEPT:
            continue  # ObjectMeta has its own rules; the schema only says "object"
        if key in properties:
            _prune_value(obj[key], properties[key], child_path, dropped)
        elif isinstance(additional, dict):
            _prune_value(obj[key], additional, child_path, dropped)
        elif preserve or additional is True:
            continue
        else:
            del obj[key]
            dropped.append(child_path)
