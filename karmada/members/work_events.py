"""The events the work-status half of the execution controller records on a
Work (Karmada's work-status controller): their reasons, messages and types,
and which a new manifest status is worth.

Karmada records ``ReflectStatusSucceed`` and ``InterpretHealthSucceed`` on
every reflection of a member object; here they are recorded when the
reflected status, or the health, differs from what the Work reported before
(the first report included), so a resync or a restarted agent records
nothing and a status change costs one event write. Failures are recorded on
every attempt, as in Karmada (the recorder folds repeats into one Event).
Pure functions; the controller records what they return.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

HEALTHY, UNHEALTHY, UNKNOWN = "Healthy", "Unhealthy", "Unknown"


class WorkEvent(NamedTuple):
    """One event to record on the Work."""

    type: str
    reason: str
    message: str


def reflect_status_failed(what: str, error: object) -> WorkEvent:
    """``what`` is ``kind/namespace/name`` of the member object, as all messages here."""
    return WorkEvent("Warning", "ReflectStatusFailed", f"Reflect status for object({what}) failed, err: {error}.")


def interpret_health_failed(what: str, error: object) -> WorkEvent:
    return WorkEvent("Warning", "InterpretHealthFailed", f"Interpret health of object({what}) failed, err: {error}.")


def status_events(
    what: str, previous: Mapping[str, Any] | None, entry: Mapping[str, Any], *, reflected: bool, health_rule: bool
) -> list[WorkEvent]:
    """The Normal events of a manifest status ``entry`` replacing ``previous``.

    ``reflected``: the status reflection succeeded (a failure keeps the old status and
    records its Warning). ``health_rule``: some interpreter layer judges the kind's health
    (kinds without one are healthy without an event, as in Karmada); an ``Unknown``
    health is a failure, recorded as such.
    """
    found: list[WorkEvent] = []
    if reflected and (previous is None or previous.get("status") != entry.get("status")):
        found.append(WorkEvent("Normal", "ReflectStatusSucceed", f"Reflect status for object({what}) succeed."))
    health = entry.get("health")
    if health_rule and health in (HEALTHY, UNHEALTHY) and (previous is None or previous.get("health") != health):
        judged = "healthy" if health == HEALTHY else "unhealthy"
        found.append(WorkEvent("Normal", "InterpretHealthSucceed", f"Interpret health of object({what}) as {judged}."))
    return found
