"""Label selectors with Kubernetes' semantics (``labels.Selector``).

A malformed selector (``In`` without values, ``Exists`` with values, an
unknown operator, a non-integer ``Gt``) matches nothing, as
``LabelSelectorAsSelector`` returning an error makes Karmada treat it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from karmada.api.meta import LabelSelector


def requirement_matches(key: str, operator: str, values: Sequence[str], labels: Mapping[str, str]) -> bool:
    """One requirement (label or node-selector operators) against a label set."""
    if operator == "In":
        return bool(values) and key in labels and labels[key] in values
    if operator == "NotIn":
        return bool(values) and (key not in labels or labels[key] not in values)
    if operator == "Exists":
        return not values and key in labels
    if operator == "DoesNotExist":
        return not values and key not in labels
    if operator in ("Gt", "Lt"):
        if len(values) != 1 or key not in labels:
            return False
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if operator == "Gt" else have < want
    return False


def label_selector_matches(selector: LabelSelector, labels: Mapping[str, str] | None) -> bool:
    """Whether ``labels`` satisfy every term; an empty selector matches everything."""
    have = labels or {}
    for key, wanted in (selector.match_labels or {}).items():
        if have.get(key) != wanted:
            return False
    for term in selector.match_expressions or []:
        if term.operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
        if not requirement_matches(term.key, term.operator, term.values or [], have):
            return False
    return True
