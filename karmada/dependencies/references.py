"""The dependencies annotation and matching templates against it.

The annotation holds the JSON array of ``DependentObjectReference`` that
Karmada writes (Go's ``json.Marshal``: compact, fields in declaration order,
empty ones omitted), so the value a Karmada controller wrote compares equal
to ours and nothing is rewritten after a switch.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from karmada.api.errors import APIValidationError
from karmada.api.interpreter import DependentObjectReference
from karmada.api.meta import LabelSelector
from karmada.selectors.labels import label_selector_matches


def annotation_value(dependencies: Sequence[DependentObjectReference]) -> str:
    """The annotation's value for ``dependencies`` (``null`` for none, as Go marshals a nil slice)."""
    if not dependencies:
        return "null"
    return json.dumps([d.to_dict() for d in dependencies], separators=(",", ":"))


def parse_annotation(value: str | None) -> list[DependentObjectReference]:
    """The references an annotation value lists; ValueError naming the problem when it is not one."""
    if not value:
        return []
    try:
        data = json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValueError(f"dependencies annotation is not JSON: {exc}") from None
    if data is None:
        return []
    if not isinstance(data, list):
        raise ValueError("dependencies annotation is not a JSON array")
    found = []
    for index, item in enumerate(data):
        try:
            found.append(DependentObjectReference.from_dict(item, path=f"[{index}]"))
        except APIValidationError as exc:
            raise ValueError(f"dependencies annotation: {exc}") from None
    return found


def _selector_text(selector: LabelSelector | None) -> str:
    if selector is None:
        return "<nil>"
    return f"&LabelSelector{json.dumps(selector.to_dict(), separators=(',', ':'), sort_keys=True)}"


def describe_dependencies(dependencies: Sequence[DependentObjectReference]) -> str:
    """Go's ``%+v`` of the references, as Karmada's ``GetDependenciesSucceed`` message prints them."""
    items = [
        f"{{APIVersion:{d.api_version} Kind:{d.kind} Namespace:{d.namespace or ''} Name:{d.name or ''} "
        f"LabelSelector:{_selector_text(d.label_selector)}}}"
        for d in dependencies
    ]
    return "[" + " ".join(items) + "]"


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def reference_matches(reference: DependentObjectReference, template: Mapping[str, Any]) -> bool:
    """Whether ``template`` (with apiVersion and kind set) is the object ``reference`` names:
    same apiVersion, kind and namespace, then the name, or (no name) the label selector."""
    meta = _meta(template)
    if (
        reference.api_version != template.get("apiVersion")
        or reference.kind != template.get("kind")
        or (reference.namespace or "") != (meta.get("namespace") or "")
    ):
        return False
    if reference.name:
        return reference.name == meta.get("name")
    if reference.label_selector is None:
        return False
    return label_selector_matches(reference.label_selector, meta.get("labels") or {})


def references_template(dependencies: Sequence[DependentObjectReference], template: Mapping[str, Any]) -> bool:
    """Whether any of ``dependencies`` is ``template``."""
    return any(reference_matches(d, template) for d in dependencies)
