"""``kubectl karmada explain``: why a template went where it went, read from what the
control plane recorded (claim, binding, scheduler decisions, Works); pure, no I/O.

:func:`explain` turns the objects into JSON data, :func:`render_text` prints it.
"""

from karmada.explanation.explain import FEASIBLE, FILTERED, SELECTED, Inputs, explain
from karmada.explanation.overrides import applied_overrides
from karmada.explanation.text import render_text
from karmada.explanation.types import ResourceType, UnknownType, resolve_type

__all__ = [
    "FEASIBLE",
    "FILTERED",
    "SELECTED",
    "Inputs",
    "ResourceType",
    "UnknownType",
    "applied_overrides",
    "explain",
    "render_text",
    "resolve_type",
]
