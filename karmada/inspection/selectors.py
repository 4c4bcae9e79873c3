"""kubectl's label selector strings (``-l``): ``k=v``, ``k==v``, ``k!=v``,
``k in (a,b)``, ``k notin (a,b)``, ``k``, ``!k``, joined by commas; parsed into
requirements and matched against labels, for objects the server does not
filter (the manifests of Works)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from karmada.selectors.labels import requirement_matches


class SelectorError(ValueError):
    """A selector kubectl would refuse."""


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple[str, ...] = ()


_SET = re.compile(r"^\s*(!?)([A-Za-z0-9_./-]+)\s+(in|notin)\s*\(([^)]*)\)\s*$")
_EQUALITY = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|=|!=)\s*([A-Za-z0-9_.-]*)\s*$")
_EXISTS = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*$")


def _split(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p for p in parts if p.strip()]


def parse_selector(text: str) -> list[Requirement]:
    """Requirements of a selector string; the empty string selects everything."""
    requirements: list[Requirement] = []
    for part in _split(text):
        if match := _SET.match(part):
            if match.group(1):
                raise SelectorError(f"unable to parse requirement: {part.strip()!r}")
            values = tuple(v.strip() for v in match.group(4).split(",") if v.strip())
            requirements.append(Requirement(match.group(2), "In" if match.group(3) == "in" else "NotIn", values))
        elif match := _EQUALITY.match(part):
            operator = "NotIn" if match.group(2) == "!=" else "In"
            requirements.append(Requirement(match.group(1), operator, (match.group(3),)))
        elif match := _EXISTS.match(part):
            requirements.append(Requirement(match.group(2), "DoesNotExist" if match.group(1) else "Exists"))
        else:
            raise SelectorError(f"unable to parse requirement: {part.strip()!r}")
    return requirements


def selector_matches(requirements: list[Requirement], labels: Mapping[str, str] | None) -> bool:
    """Whether ``labels`` satisfy every requirement."""
    return all(requirement_matches(r.key, r.operator, list(r.values), labels or {}) for r in requirements)
