"""``kubectl karmada explain``: why a template went where it went, read from what the
control plane recorded (claim, binding, scheduler decisions, Works); and ``interpret``:
an interpreter operation run offline. Pure, no I/O.

:func:`explain` turns the objects into JSON data, :func:`render_text` prints it;
:func:`run_operation` runs one interpreter operation.
"""

from karmada.explanation.explain import FEASIBLE, FILTERED, SELECTED, Inputs, explain
from karmada.explanation.interpret import Interpreter, InterpretError, parse_operation, run_operation, status_items
from karmada.explanation.overrides import applied_overrides
from karmada.explanation.text import render_text
from karmada.explanation.types import ResourceType, UnknownType, resolve_type

__all__ = [
    "FEASIBLE",
    "FILTERED",
    "SELECTED",
    "Inputs",
    "InterpretError",
    "Interpreter",
    "ResourceType",
    "UnknownType",
    "applied_overrides",
    "explain",
    "parse_operation",
    "render_text",
    "resolve_type",
    "run_operation",
    "status_items",
]
