"""Printing objects the way kubectl does for ``-o json|yaml|name|jsonpath=``,
and aligned tables for the default and ``wide`` outputs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

Obj = dict[str, Any]


def as_list(items: Sequence[Obj]) -> Obj:
    """Several objects as kubectl prints them: a ``v1 List``."""
    return {"apiVersion": "v1", "kind": "List", "items": list(items), "metadata": {"resourceVersion": ""}}


def render_objects(items: Sequence[Obj], output: str, *, single: bool = False) -> str | None:
    """``items`` in a structured format; None for table formats ('' and 'wide')."""
    data: Any = items[0] if single and len(items) == 1 else as_list(items)
    if output == "json":
        return json.dumps(data, indent=4) + "\n"
    if output == "yaml":
        import yaml

        return yaml.safe_dump(data, sort_keys=False)
    if output == "name":
        return "".join(f"{_resource_name(obj)}\n" for obj in items)
    if output.startswith("jsonpath="):
        from kubectl_karmada.jsonpath import render

        return render(output[len("jsonpath=") :], data)
    if output in ("", "wide"):
        return None
    raise ValueError(f'unable to match a printer suitable for the output format "{output}"')


def _resource_name(obj: Obj) -> str:
    group = obj.get("apiVersion", "").rpartition("/")[0]
    kind = obj.get("kind", "").lower()
    return f"{kind}.{group}/{obj['metadata']['name']}" if group else f"{kind}/{obj['metadata']['name']}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns separated by three spaces, like kubectl's tab writer."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=False)]
    lines = ["   ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=False)).rstrip()]
    lines += ["   ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=False)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"
