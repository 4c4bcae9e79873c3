"""Cluster taints: kubectl's ``key[=value]:Effect`` / ``key[:Effect]-`` syntax,
cordon, and the taints the cluster controller keeps in step with Ready."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from karmada.api.keys import TAINT_CLUSTER_NOT_READY, TAINT_CLUSTER_UNREACHABLE, TAINT_CLUSTER_UNSCHEDULABLE

Obj = dict[str, Any]
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_QUALIFIED = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


class TaintError(ValueError):
    """A taint argument kubectl would refuse, or a change that conflicts."""


@dataclass(frozen=True)
class TaintChange:
    """One argument of ``taint``: an addition, or a removal (``effect`` empty = every effect)."""

    key: str
    value: str
    effect: str
    remove: bool

    def as_taint(self) -> Obj:
        taint: Obj = {"key": self.key, "effect": self.effect}
        if self.value:
            taint["value"] = self.value
        return taint


def parse_taint(spec: str) -> TaintChange:
    """``key=value:Effect``, ``key:Effect``, ``key:Effect-`` or ``key-`` (kubectl taint syntax)."""
    remove = spec.endswith("-")
    body = spec[:-1] if remove else spec
    key_value, _, effect = body.partition(":")
    if not remove and not effect:
        raise TaintError(f'invalid taint spec: {spec}, unknown taint spec "{spec}" (expected key[=value]:Effect)')
    key, _, value = key_value.partition("=")
    if remove and value:
        raise TaintError(f"invalid taint spec: {spec}, a taint to remove is key or key:Effect")
    if not key or len(key) > 316 or not _QUALIFIED.match(key):
        raise TaintError(f'invalid taint spec: {spec}, invalid taint key "{key}": a qualified name is required')
    if len(value) > 63 or not _VALUE.match(value):
        raise TaintError(f'invalid taint spec: {spec}, invalid taint value "{value}"')
    if effect and effect not in EFFECTS:
        raise TaintError(
            f'invalid taint spec: {spec}, unsupported taint effect "{effect}": '
            'supported values are "NoSchedule", "PreferNoSchedule", "NoExecute"'
        )
    return TaintChange(key, value, effect, remove)


def _same(a: Obj, b: Obj) -> bool:
    return a.get("key") == b.get("key") and a.get("effect") == b.get("effect")


def taint_string(taint: Obj) -> str:
    """``key=value:Effect`` as kubectl prints a taint."""
    value = f"={taint['value']}" if taint.get("value") else ""
    effect = f":{taint['effect']}" if taint.get("effect") else ""
    return f"{taint.get('key')}{value}{effect}"


def apply_taint_changes(
    taints: list[Obj], changes: list[TaintChange], *, overwrite: bool, owner: str = "cluster"
) -> tuple[list[Obj], str]:
    """The new taint list and the operation (``tainted``, ``untainted`` or ``modified``),
    computed as kubectl and karmadactl do: new taints first, then the untouched old ones.

    Adding a key+effect that exists is an error unless ``overwrite``; removing one that
    does not exist is an error.
    """
    adds = [c.as_taint() for c in changes if not c.remove]
    removes = [c for c in changes if c.remove]
    if not overwrite:
        existing = [a["key"] for a in adds if any(_same(a, old) for old in taints)]
        if existing:
            raise TaintError(
                f"{owner} already has [{' '.join(existing)}] taint(s) with same effect(s) and --overwrite is false"
            )
    result = [dict(t) for t in adds]
    for old in taints:
        if not any(_same(old, new) for new in result):
            result.append(dict(old))
    added = len(taints) != len(result)
    errors, deleted = [], False
    for change in removes:
        kept = [t for t in result if not (t.get("key") == change.key and change.effect in ("", t.get("effect")))]
        deleted = len(kept) != len(result)
        if not deleted:
            errors.append(f'taint "{taint_string({"key": change.key, "effect": change.effect})}" not found')
        result = kept
    if errors:
        raise TaintError("; ".join(errors))
    operation = "modified" if (added and deleted) or overwrite else "tainted" if added else "untainted"
    return result, operation


UNSCHEDULABLE_TAINT = {"key": TAINT_CLUSTER_UNSCHEDULABLE, "effect": "NoSchedule"}
NOT_READY_TAINT = {"key": TAINT_CLUSTER_NOT_READY, "effect": "NoSchedule"}
UNREACHABLE_TAINT = {"key": TAINT_CLUSTER_UNREACHABLE, "effect": "NoSchedule"}


def _has(taints: list[Obj], wanted: Obj) -> bool:
    return any(t.get("key") == wanted["key"] and t.get("effect") == wanted["effect"] for t in taints)


def _without(taints: list[Obj], unwanted: Obj) -> list[Obj]:
    return [t for t in taints if not (t.get("key") == unwanted["key"] and t.get("effect") == unwanted["effect"])]


def cordoned(taints: list[Obj], cordon: bool) -> list[Obj] | None:
    """Taints after ``cordon``/``uncordon``; None when nothing changes."""
    if cordon:
        return None if _has(taints, UNSCHEDULABLE_TAINT) else [*taints, dict(UNSCHEDULABLE_TAINT)]
    return _without(taints, UNSCHEDULABLE_TAINT) if _has(taints, UNSCHEDULABLE_TAINT) else None


def readiness_taints(taints: list[Obj], ready: str | None, now: str) -> list[Obj] | None:
    """Taints after the cluster controller's rule for the Ready status (None: absent);
    None when nothing changes.

    | Ready   | not-ready:NoSchedule | unreachable:NoSchedule |
    | absent  | added                | kept                   |
    | False   | added                | removed                |
    | Unknown | removed              | added                  |
    | True    | removed              | removed                |
    """
    result = list(taints)
    if ready is None:
        add, drop = [NOT_READY_TAINT], []
    elif ready == "False":
        add, drop = [NOT_READY_TAINT], [UNREACHABLE_TAINT]
    elif ready == "Unknown":
        add, drop = [UNREACHABLE_TAINT], [NOT_READY_TAINT]
    else:
        add, drop = [], [NOT_READY_TAINT, UNREACHABLE_TAINT]
    for taint in drop:
        result = _without(result, taint)
    for taint in add:
        if not _has(result, taint):
            result.append({**taint, "timeAdded": now})
    return None if result == taints else result


def taints_message(taints: list[Obj]) -> str:
    """The event text Karmada's cluster controller writes after changing taints."""
    if not taints:
        return "cluster now does not have taints"
    parts = []
    for taint in taints:
        value = f"Value:{taint['value']}," if taint.get("value") else ""
        parts.append(f"{{Key:{taint.get('key')},{value}Effect:{taint.get('effect')}}}")
    return ",".join(parts)
