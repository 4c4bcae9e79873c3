"""Taints and tolerations with Kubernetes' semantics (``Toleration.ToleratesTaint``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from karmada.api.core import Taint, Toleration


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """An empty effect matches every effect; an empty key with ``Exists`` matches every key."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator or "Equal"
    if operator == "Equal":
        return (toleration.value or "") == (taint.value or "")
    return operator == "Exists"


def find_untolerated_taint(
    taints: Iterable[Taint], tolerations: Sequence[Toleration], effects: Iterable[str]
) -> Taint | None:
    """The first taint with one of ``effects`` that no toleration tolerates."""
    wanted = set(effects)
    for taint in taints:
        if taint.effect not in wanted:
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def describe_taint(taint: Taint) -> str:
    """``key=value:Effect`` (``key:Effect`` without a value), as kubectl prints taints."""
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"
