"""Which resource selector matches a template, and how specifically.

Karmada ranks a match by its *implicit priority*: by name (3) beats by label
selector (2) beats match-all of the kind (1); 0 is no match. A non-nil but
empty label selector counts as a label-selector match.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import IntEnum
from typing import Any

from karmada.api.policy import ResourceSelector
from karmada.selectors.labels import label_selector_matches


class ImplicitPriority(IntEnum):
    """How specifically a selector matched (Karmada's ``ImplicitPriority``)."""

    MISMATCH = 0
    MATCH_ALL = 1
    MATCH_LABEL_SELECTOR = 2
    MATCH_NAME = 3


def selector_priority(resource: Mapping[str, Any], selector: ResourceSelector) -> ImplicitPriority:
    """How ``selector`` matches the template ``resource`` (a JSON object)."""
    metadata = resource.get("metadata") or {}
    if resource.get("apiVersion") != selector.api_version or resource.get("kind") != selector.kind:
        return ImplicitPriority.MISMATCH
    if selector.namespace and metadata.get("namespace", "") != selector.namespace:
        return ImplicitPriority.MISMATCH
    if selector.name:
        if selector.name == metadata.get("name"):
            return ImplicitPriority.MATCH_NAME
        return ImplicitPriority.MISMATCH
    if selector.label_selector is None:
        return ImplicitPriority.MATCH_ALL
    if label_selector_matches(selector.label_selector, metadata.get("labels")):
        return ImplicitPriority.MATCH_LABEL_SELECTOR
    return ImplicitPriority.MISMATCH


def selectors_priority(resource: Mapping[str, Any], selectors: Iterable[ResourceSelector]) -> ImplicitPriority:
    """The best priority among ``selectors`` (``MISMATCH`` when none matches)."""
    return max(
        (selector_priority(resource, s) for s in selectors),
        default=ImplicitPriority.MISMATCH,
    )
