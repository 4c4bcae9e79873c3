"""The ``policy.karmada.io/applied-(cluster-)overrides`` annotations, byte for byte
as Karmada writes them.

Karmada marshals ``[]OverridePolicyShadow{policyName, overriders}`` with Go's
``encoding/json``: struct fields in declaration order with their
``omitempty`` rules (a plaintext or JSON-patch ``value`` that is absent is
``null``, a labels/annotations ``value`` map always present), map keys
sorted (free-form values come back from the API server as sorted maps too),
no spaces, non-ASCII as UTF-8, and ``<``, ``>``, ``&``, U+2028 and U+2029
escaped. Entries are sorted by policy name (stably: rules of one policy keep
their order).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from karmada.api.keys import APPLIED_CLUSTER_OVERRIDES_ANNOTATION, APPLIED_OVERRIDES_ANNOTATION
from karmada.api.override import (
    CommandArgsOverrider,
    FieldOverrider,
    ImageOverrider,
    JSONPatchOperation,
    LabelAnnotationOverrider,
    Overriders,
    PlaintextOverrider,
)
from karmada.overrides import AppliedRule, OverrideResult

_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json(value: Any) -> str:
    """``json.Marshal`` output for plain JSON data whose dicts are already in Go's order."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # these characters only ever occur inside JSON strings, so replacing them is safe
    for char, escaped in _GO_ESCAPES.items():
        text = text.replace(char, escaped)
    return text


def _sorted(value: Any) -> Any:
    """A free-form value as Go's map encoding orders it: keys sorted, all the way down."""
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _plaintext(item: PlaintextOverrider) -> dict[str, Any]:
    return {"path": item.path, "operator": item.operator, "value": _sorted(item.value)}


def _image(item: ImageOverrider) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if item.predicate is not None:
        out["predicate"] = {"path": item.predicate.path}
    out["component"] = item.component
    out["operator"] = item.operator
    if item.value:
        out["value"] = item.value
    return out


def _command_args(item: CommandArgsOverrider) -> dict[str, Any]:
    out: dict[str, Any] = {"containerName": item.container_name, "operator": item.operator}
    if item.value:
        out["value"] = list(item.value)
    return out


def _labels_annotations(item: LabelAnnotationOverrider) -> dict[str, Any]:
    return {"operator": item.operator, "value": _sorted(item.value)}


def _patch_operation(item: JSONPatchOperation) -> dict[str, Any]:
    return {"subPath": item.sub_path, "operator": item.operator, "value": _sorted(item.value)}


def _field(item: FieldOverrider) -> dict[str, Any]:
    out: dict[str, Any] = {"fieldPath": item.field_path}
    if item.json_:
        out["json"] = [_patch_operation(op) for op in item.json_]
    if item.yaml:
        out["yaml"] = [_patch_operation(op) for op in item.yaml]
    return out


def overriders_shadow(overriders: Overriders) -> dict[str, Any]:
    """``Overriders`` as Go marshals it (declaration order, empty lists omitted)."""
    o = overriders
    out: dict[str, Any] = {}
    if o.plaintext:
        out["plaintext"] = [_plaintext(i) for i in o.plaintext]
    if o.image_overrider:
        out["imageOverrider"] = [_image(i) for i in o.image_overrider]
    if o.command_overrider:
        out["commandOverrider"] = [_command_args(i) for i in o.command_overrider]
    if o.args_overrider:
        out["argsOverrider"] = [_command_args(i) for i in o.args_overrider]
    if o.labels_overrider:
        out["labelsOverrider"] = [_labels_annotations(i) for i in o.labels_overrider]
    if o.annotations_overrider:
        out["annotationsOverrider"] = [_labels_annotations(i) for i in o.annotations_overrider]
    if o.field_overrider:
        out["fieldOverrider"] = [_field(i) for i in o.field_overrider]
    return out


def _shadows(rules: Sequence[AppliedRule]) -> str:
    ordered = sorted(rules, key=lambda r: r.policy_name)  # stable, as Go's sort of so few items is
    return go_json([{"policyName": r.policy_name, "overriders": overriders_shadow(r.overriders)} for r in ordered])


def applied_overrides_annotations(result: OverrideResult) -> dict[str, str]:
    """The Work's applied-overrides annotations (each absent when no rule of its kind applied)."""
    annotations: dict[str, str] = {}
    if result.cluster_rules:
        annotations[APPLIED_CLUSTER_OVERRIDES_ANNOTATION] = _shadows(result.cluster_rules)
    if result.namespaced_rules:
        annotations[APPLIED_OVERRIDES_ANNOTATION] = _shadows(result.namespaced_rules)
    return annotations
