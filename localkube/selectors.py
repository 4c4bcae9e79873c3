"""Label and field selectors from query strings, with kube-apiserver's grammar and errors."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from localkube.errors import bad_request

_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def label_key_problem(key: str) -> str | None:
    """Why ``key`` is not a valid label/annotation key, or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(prefix)):
        return (
            "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'"
        )
    if not name or len(name) > 63 or not _QUALIFIED_NAME.fullmatch(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an"
            " alphanumeric character"
        )
    return None


def label_value_problem(value: str) -> str | None:
    """Why ``value`` is not a valid label value, or None."""
    if len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
        return (
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must"
            " start and end with an alphanumeric character"
        )
    return None


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # =, !=, in, notin, exists, !, gt, lt
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.op in ("=", "in"):
            return present and value in self.values
        if self.op in ("!=", "notin"):
            return not present or value not in self.values
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if self.op in ("gt", "lt"):
            if not present:
                return False
            try:
                have, want = int(str(value)), int(self.values[0])
            except ValueError:
                return False
            return have > want if self.op == "gt" else have < want
        return False


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


_SET = re.compile(r"^(\S+)\s+(in|notin)\s*\((.*)\)$")
_CMP = re.compile(r"^([^=!<>\s]+)\s*(==|=|!=|>|<)\s*(.*)$")


def parse_label_selector(text: str) -> list[Requirement]:
    """Parse ``k=v,k!=v,k in (a,b),k notin (a),k,!k,k>5``; 400 on errors."""
    requirements: list[Requirement] = []
    for part in _split_top_level(text):
        match = _SET.match(part)
        if match:
            key, op, raw = match.groups()
            values = tuple(v.strip() for v in raw.split(",") if v.strip())
            requirements.append(_checked(Requirement(key, op, values)))
            continue
        match = _CMP.match(part)
        if match:
            key, op, value = match.groups()
            value = value.strip()
            if op in (">", "<"):
                if not re.fullmatch(r"-?\d+", value):
                    raise bad_request(
                        "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"
                    )
                requirements.append(
                    _checked(Requirement(key, "gt" if op == ">" else "lt", (value,)), check_values=False)
                )
            else:
                requirements.append(_checked(Requirement(key, "!=" if op == "!=" else "=", (value,))))
            continue
        if part.startswith("!"):
            requirements.append(_checked(Requirement(part[1:].strip(), "!")))
        elif re.fullmatch(r"[^\s=!<>(),]+", part):
            requirements.append(_checked(Requirement(part, "exists")))
        else:
            raise bad_request(f"unable to parse requirement: found '{part}', expected: identifier")
    return requirements


def _checked(req: Requirement, check_values: bool = True) -> Requirement:
    problem = label_key_problem(req.key)
    if problem:
        raise bad_request(f'unable to parse requirement: values[0][{req.key}]: Invalid value: "{req.key}": {problem}')
    if check_values:
        for value in req.values:
            problem = label_value_problem(value)
            if problem:
                raise bad_request(
                    f'unable to parse requirement: values[0][{req.key}]: Invalid value: "{value}": {problem}'
                )
    return req


def labels_match(requirements: list[Requirement], labels: Mapping[str, str] | None) -> bool:
    have = labels or {}
    return all(r.matches(have) for r in requirements)


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    equal: bool
    value: str


def parse_field_selector(text: str, supported: Callable[[str], bool]) -> list[FieldRequirement]:
    """Parse ``f=v,f==v,f!=v``; unsupported fields → 400 ``field label not supported: f``."""
    result = []
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        match = re.match(r"^([^=!]+?)\s*(==|=|!=)\s*(.*)$", part)
        if not match:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field, op, value = match.groups()
        field = field.strip()
        if not supported(field):
            raise bad_request(f"field label not supported: {field}")
        result.append(FieldRequirement(field, op != "!=", value.strip()))
    return result


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The string value of a dotted field path (missing → empty string; bools lower-case)."""
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return ""
        node = node.get(part)
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


def fields_match(requirements: list[FieldRequirement], obj: Mapping[str, Any]) -> bool:
    return all((field_value(obj, req.field) == req.value) == req.equal for req in requirements)


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """A ``metav1.LabelSelector`` against labels: null matches nothing, ``{}`` everything."""
    if selector is None:
        return False
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression.get("key", ""), expression.get("operator", "")
        values = expression.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True
