"""Cluster taints: kubectl's ``key[=value]:Effect`` / ``key[:Effect]-`` syntax,
cordon, and the taints the cluster controller keeps in step with Ready."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from karmada.api.keys import TAINT_CLUSTER_NOT_READY, TAINT_CLUSTER_UNREACHABLE, TAINT_CLUSTER_UNSCHEDULABLE

Obj = dict[str, Any]
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# apimachinery's label-key (qualified name) and label-value rules, with their messages
# (fullmatch: Python's "$" would also match before a trailing newline)
_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME = re.compile(_NAME_FMT)
_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_NAME_EXAMPLES = "(e.g. 'MyName',  or 'my.name',  or '123-abc', "
_VALUE_FMT = f"({_NAME_FMT})?"
_VALUE = re.compile(_VALUE_FMT)
_SUBDOMAIN_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)


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


def qualified_name_problems(key: str) -> list[str]:
    """apimachinery's ``IsQualifiedName``: an optional DNS subdomain prefix and ``/``, then a name."""
    problems: list[str] = []
    parts = key.split("/")
    if len(parts) > 2:
        return [
            f"a valid label key {_NAME_MSG} {_NAME_EXAMPLES}regex used for validation is '{_NAME_FMT}') "
            "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            if len(prefix.encode()) > 253:
                problems.append("prefix part must be no more than 253 bytes")
            if not _SUBDOMAIN.fullmatch(prefix):
                problems.append(
                    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                    f"regex used for validation is '{_SUBDOMAIN_FMT}')"
                )
    name = parts[-1]
    if not name:
        problems.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        problems.append("name part must be no more than 63 bytes")
    if not _NAME.fullmatch(name):
        problems.append(f"name part {_NAME_MSG} {_NAME_EXAMPLES}regex used for validation is '{_NAME_FMT}')")
    return problems


def label_value_problems(value: str) -> list[str]:
    """apimachinery's ``IsValidLabelValue``."""
    problems = ["must be no more than 63 bytes"] if len(value.encode()) > 63 else []
    if not _VALUE.fullmatch(value):
        problems.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
            f"regex used for validation is '{_VALUE_FMT}')"
        )
    return problems


def _parse_one(spec: str) -> tuple[str, str, str]:
    """``key``, ``key:Effect`` or ``key[=value]:Effect`` (kubectl's ``parseTaint``); key, value, effect."""
    parts = spec.split(":")
    value = effect = ""
    if len(parts) == 1:
        key = parts[0]
    elif len(parts) == 2:
        effect = parts[1]
        if effect not in EFFECTS:
            raise TaintError(f"invalid taint effect: {effect}, unsupported taint effect")
        key_value = parts[0].split("=")
        if len(key_value) > 2:
            raise TaintError(f"invalid taint spec: {spec}")
        key = key_value[0]
        if len(key_value) == 2:
            value = key_value[1]
            problems = label_value_problems(value)
            if problems:
                raise TaintError(f"invalid taint spec: {spec}, {'; '.join(problems)}")
    else:
        raise TaintError(f"invalid taint spec: {spec}")
    problems = qualified_name_problems(key)
    if problems:
        raise TaintError(f"invalid taint spec: {spec}, {'; '.join(problems)}")
    return key, value, effect


def parse_taint(spec: str) -> TaintChange:
    """One argument, as kubectl reads it: a trailing ``-`` removes (``key-``, ``key:Effect-``,
    and, as kubectl allows, ``key=value:Effect-``, whose value is ignored); otherwise an
    addition, which needs an effect."""
    if spec.endswith("-"):
        key, _, effect = _parse_one(spec[:-1])
        return TaintChange(key, "", effect, True)
    key, value, effect = _parse_one(spec)
    if not effect:
        raise TaintError(f"invalid taint spec: {spec}")
    return TaintChange(key, value, effect, False)


def parse_taints(specs: list[str]) -> list[TaintChange]:
    """Every argument parsed; refuses two additions with the same key and effect, and an
    addition and a removal of the same taint (kubectl's ``parseTaints`` and ``Validate``)."""
    changes: list[TaintChange] = []
    for spec in specs:
        change = parse_taint(spec)
        if not change.remove and any(
            not c.remove and (c.key, c.effect) == (change.key, change.effect) for c in changes
        ):
            # Go's %v of a corev1.Taint value
            raise TaintError(
                f"duplicated taints with the same key and effect: {{{change.key} {change.value} {change.effect} <nil>}}"
            )
        changes.append(change)
    conflicts = [
        f"{removed.key}={removed.effect}"
        for added in changes
        if not added.remove
        for removed in changes
        if removed.remove and removed.key == added.key and removed.effect in ("", added.effect)
    ]
    if conflicts:
        raise TaintError(
            f"can not both modify and remove the following taint(s) in the same command: {', '.join(conflicts)}"
        )
    return changes


def is_taint_argument(arg: str) -> bool:
    """How kubectl tells a taint argument from a resource or name: ``=``, ``:`` or a trailing ``-``."""
    return "=" in arg or ":" in arg or arg.endswith("-")


def split_arguments(args: list[str]) -> tuple[list[str], list[str]]:
    """``TYPE NAME... TAINT...`` into resources and taints, with kubectl's errors."""
    resources: list[str] = []
    taints: list[str] = []
    for arg in args:
        if is_taint_argument(arg):
            taints.append(arg)
        elif taints:
            raise TaintError(f"all resources must be specified before taint changes: {arg}")
        else:
            resources.append(arg)
    if not resources:
        raise TaintError("one or more resources must be specified as <resource> <name>")
    if not taints:
        raise TaintError("at least one taint update is required")
    return resources, taints


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
