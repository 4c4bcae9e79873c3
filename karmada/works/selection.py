"""Which bindings an (Cluster)OverridePolicy change concerns (Karmada's
``newOverridePolicyFunc``): those whose template the policy's resource
selectors pick; every binding in the policy's scope when it has none."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karmada.api.errors import APIValidationError
from karmada.api.policy import ResourceSelector
from karmada.selectors import ImplicitPriority, selector_priority


def policy_selectors(policy: Mapping[str, Any]) -> list[ResourceSelector] | None:
    """The policy's resource selectors (invalid ones dropped); None when it has none (it picks all)."""
    raw = (policy.get("spec") or {}).get("resourceSelectors") or []
    if not raw:
        return None
    selectors = []
    for item in raw:
        try:
            selectors.append(ResourceSelector.from_dict(item))
        except APIValidationError:
            continue
    return selectors


def policy_selects(selectors: list[ResourceSelector] | None, template: Mapping[str, Any] | None) -> bool:
    """Whether a policy with ``selectors`` (see :func:`policy_selectors`) picks ``template``.

    An unknown template (not cached yet) counts as picked: its binding is
    rendered again rather than left behind.
    """
    if selectors is None or template is None:
        return True
    return any(selector_priority(template, s) > ImplicitPriority.MISMATCH for s in selectors)
