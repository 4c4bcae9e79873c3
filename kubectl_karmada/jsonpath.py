"""kubectl's JSONPath templates for ``-o jsonpath=...``: text with ``{...}``
expressions of fields (``.a.b``, ``['a.b']``), indexes (``[0]``, ``[-1]``,
``[*]``), filters (``[?(@.type=="Ready")]``) and ``{range ...}{end}`` loops.
Results of one expression are joined by spaces; maps and lists print as JSON."""

from __future__ import annotations

import json
import re
from typing import Any

_TOKEN = re.compile(r"\.\.|\.([A-Za-z0-9_\-/]+|\*)|\[([^\]]*)\]")
_FILTER = re.compile(r"^\?\(@((?:\.[A-Za-z0-9_\-/]+)+)\s*(==|!=)\s*(?:'([^']*)'|\"([^\"]*)\"|(\S+))\)$")


class JSONPathError(ValueError):
    """A template kubectl would reject too."""


def _steps(path: str) -> list[tuple[str, str]]:
    path = path.strip()
    if path.startswith("$"):
        path = path[1:]
    steps: list[tuple[str, str]] = []
    position = 0
    while position < len(path):
        match = _TOKEN.match(path, position)
        if not match:
            raise JSONPathError(f"unrecognized identifier in {path!r} at {path[position:]!r}")
        if match.group(0) == "..":
            steps.append(("recurse", ""))
        elif match.group(1) is not None:
            steps.append(("field", match.group(1)))
        else:
            steps.append(("bracket", match.group(2).strip()))
        position = match.end()
    return steps


def _walk(values: list[Any], step: tuple[str, str]) -> list[Any]:
    kind, arg = step
    out: list[Any] = []
    for value in values:
        if kind == "recurse":
            out.extend(_descendants(value))
        elif kind == "field":
            if arg == "*":
                out.extend(value.values() if isinstance(value, dict) else value if isinstance(value, list) else [])
            elif isinstance(value, dict) and arg in value:
                out.append(value[arg])
        elif arg.startswith("?"):
            out.extend(item for item in (value if isinstance(value, list) else []) if _keep(item, arg))
        elif arg == "*":
            out.extend(value if isinstance(value, list) else value.values() if isinstance(value, dict) else [])
        elif arg[:1] in "'\"":
            key = arg[1:-1]
            if isinstance(value, dict) and key in value:
                out.append(value[key])
        elif ":" in arg and isinstance(value, list):
            start, _, stop = arg.partition(":")
            out.extend(value[int(start) if start else None : int(stop) if stop else None])
        elif isinstance(value, list):
            try:
                out.append(value[int(arg)])
            except (ValueError, IndexError):
                raise JSONPathError(f"array index out of bounds: index {arg}, length {len(value)}") from None
    return out


def _descendants(value: Any) -> list[Any]:
    found = [value]
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    for child in children:
        found.extend(_descendants(child))
    return found


def _keep(item: Any, condition: str) -> bool:
    match = _FILTER.match(condition)
    if not match:
        raise JSONPathError(f"unsupported filter {condition!r}")
    path, operator = match.group(1), match.group(2)
    expected = next(g for g in match.groups()[2:] if g is not None)
    found = [str(v).lower() if isinstance(v, bool) else str(v) for v in evaluate(item, path)]
    return (expected in found) if operator == "==" else (expected not in found)


def evaluate(data: Any, path: str) -> list[Any]:
    """Every value ``path`` selects in ``data``."""
    values = [data]
    for step in _steps(path):
        values = _walk(values, step)
    return values


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return "" if value is None else str(value)


def render(template: str, data: Any) -> str:
    """Fill a kubectl JSONPath template; a bare path is treated as ``{path}``."""
    if "{" not in template:
        template = "{" + template + "}"
    parts = re.split(r"(\{[^{}]*\})", template)
    output, _ = _render(parts, 0, data)
    return output


def _render(parts: list[str], index: int, data: Any) -> tuple[str, int]:
    out: list[str] = []
    while index < len(parts):
        part = parts[index]
        if not (part.startswith("{") and part.endswith("}")):
            out.append(part.replace("\\n", "\n").replace("\\t", "\t"))
            index += 1
            continue
        expression = part[1:-1].strip()
        if expression == "end":
            return "".join(out), index + 1
        if expression.startswith("range "):
            body_start = index + 1
            end = body_start
            for item in evaluate(data, expression[len("range ") :]):
                text, end = _render(parts, body_start, item)
                out.append(text)
            if end == body_start:  # nothing to iterate: skip the body
                _, end = _render(parts, body_start, None)
            index = end
            continue
        if expression.startswith('"') and expression.endswith('"'):
            out.append(expression[1:-1].replace("\\n", "\n").replace("\\t", "\t"))
        elif data is not None:
            out.append(" ".join(_text(v) for v in evaluate(data, expression)))
        index += 1
    return "".join(out), index
