"""``metav1.Condition`` lists: set one with Kubernetes' transition rules."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def find(conditions: list[Obj] | None, kind: str) -> Obj | None:
    """The condition of type ``kind``, or None."""
    for condition in conditions or []:
        if condition.get("type") == kind:
            return condition
    return None


def condition_status(obj: Obj, kind: str) -> str | None:
    """``True``/``False``/``Unknown`` of one condition of ``obj.status``, or None when absent."""
    found = find((obj.get("status") or {}).get("conditions"), kind)
    return None if found is None else str(found.get("status"))


def set_condition(
    conditions: list[Obj], kind: str, status: str, reason: str, message: str, now: str, generation: int | None = None
) -> bool:
    """Set (in place) a condition; ``lastTransitionTime`` moves only when the status changes.
    Returns whether anything changed."""
    wanted: Obj = {"type": kind, "status": status, "reason": reason, "message": message}
    if generation is not None:
        wanted["observedGeneration"] = generation
    current = find(conditions, kind)
    if current is None:
        conditions.append({**wanted, "lastTransitionTime": now})
        return True
    changed = any(current.get(key) != value for key, value in wanted.items())
    if current.get("status") != status:
        current["lastTransitionTime"] = now
    current.update(wanted)
    return changed
