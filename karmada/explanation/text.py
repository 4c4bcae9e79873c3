"""The explanation for people: a few labelled lines, a table of clusters, then the
overrides and dependencies (the same data ``-o json|yaml`` prints)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

Obj = dict[str, Any]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=False)]
    return [
        "  " + "   ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)).rstrip() for row in (header, *rows)
    ]


def _ref(section: Obj) -> str:
    namespace = section.get("namespace")
    return (
        f"{section.get('kind')} {namespace}/{section.get('name')}"
        if namespace
        else f"{section.get('kind')} {section.get('name')}"
    )


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _why(row: Obj) -> str:
    reasons = [f"{f['plugin']}: {f['reason']}" for f in row.get("filters") or []]
    for miss in row.get("affinityMisses") or []:
        text = f"affinity {miss['term']} needs {miss['field']} {miss['requirement']}"
        if "key" in miss:
            text += (
                f", cluster has {miss['key']}={miss['value']}" if "value" in miss else f", cluster has no {miss['key']}"
            )
        reasons.append(text)
    return "; ".join(reasons)


def _num(row: Obj, key: str) -> str:
    return str(row[key]) if row.get(key) is not None else "-"


def render_text(explanation: Obj) -> str:
    """The explanation as ``kubectl describe``-like text."""
    lines: list[str] = []
    resource = explanation["resource"]
    generation = f" (generation {resource['generation']})" if "generation" in resource else ""
    lines.append(f"Resource:     {_ref(resource)}{generation}")
    policy = explanation["policy"]
    if policy.get("claimed"):
        priority = f" (priority {policy['priority']})" if "priority" in policy else ""
        lines.append(f"Policy:       {_ref(policy)}{priority}")
    else:
        lines.append("Policy:       <none>")
    lines.append(f"  Why:        {policy.get('reason')}")
    binding = explanation.get("binding")
    if binding is None:
        lines.append("Binding:      <none> (the template has not been propagated)")
        return "\n".join(lines) + "\n"
    gens = [f"generation {binding['generation']}"] if "generation" in binding else []
    if "schedulerObservedGeneration" in binding:
        gens.append(f"scheduled generation {binding['schedulerObservedGeneration']}")
    lines.append(f"Binding:      {_ref(binding)}" + (f" ({', '.join(gens)})" if gens else ""))
    if "replicas" in binding:
        lines.append(f"  Replicas:   {binding['replicas']}")
    if binding.get("replicaScheduling"):
        lines.append(f"  Strategy:   {_value(binding['replicaScheduling'])}")
    scheduled = binding.get("scheduled")
    if scheduled:
        message = f": {scheduled['message']}" if scheduled.get("message") else ""
        lines.append(f"  Scheduled:  {scheduled.get('status')} {scheduled.get('reason', '')}{message}".rstrip())
    decision = explanation.get("decision") or {}
    parts = [decision["outcome"]] if "outcome" in decision else []
    if "generation" in decision:
        parts.append(f"(made on binding generation {decision['generation']})")
    if decision.get("affinityName"):
        parts.append(f"with clusterAffinities term {decision['affinityName']}")
    lines.append(f"Decision:     {' '.join(parts) or '<none>'}")
    for failure in decision.get("termFailures") or []:
        lines.append(f"  Tried:      term {failure.get('term')}: {failure.get('error')}")
    if decision.get("stale"):
        lines.append(f"  STALE:      {decision.get('staleReason')}")
    if decision.get("truncated"):
        lines.append(f"  Truncated:  {decision['truncated']} more cluster(s) not recorded")
    rows = explanation.get("clusters") or []
    if rows:
        lines.append("Clusters:")
        header = ("CLUSTER", "RESULT", "REPLICAS", "WEIGHT", "SCORE", "AVAILABLE", "TIER", "WHY")
        body = [
            (
                r["name"],
                r["result"],
                _num(r, "replicas"),
                _num(r, "weight"),
                _num(r, "score"),
                _num(r, "availableReplicas"),
                _num(r, "overflowTier"),
                _why(r),
            )
            for r in rows
        ]
        lines.extend(_table(header, body))
    works = explanation.get("works") or {}
    if works:
        lines.append("Works:")
        lines.extend(f"  {cluster}: {w['name']} {w['state']}" for cluster, w in works.items())
    overrides = explanation.get("overrides") or {}
    lines.append("Overrides:" if overrides else "Overrides:    <none>")
    for cluster, entries in overrides.items():
        for entry in entries:
            if "error" in entry:
                lines.append(f"  {cluster}: {entry['policy']}: {entry['error']}")
                continue
            rule = f" rule {entry['rule']}" if entry.get("rule") is not None else ""
            what = " ".join(str(entry[k]) for k in ("component", "operator") if entry.get(k))
            lines.append(
                f"  {cluster}: {entry['policy']}{rule} {entry['overrider']} ({what}) "
                f"{entry['path']} = {_value(entry.get('value'))}"
            )
    deps = explanation.get("dependencies") or []
    lines.append("Dependencies:" if deps else "Dependencies: <none>")
    for dep in deps:
        if "error" in dep:
            lines.append(f"  {dep['error']}")
            continue
        where = f"{dep.get('namespace')}/" if dep.get("namespace") else ""
        target = dep.get("name") or f"selector {_value(dep.get('labelSelector'))}"
        lines.append(f"  {dep.get('kind')} {where}{target} ({dep.get('apiVersion')})")
    return "\n".join(lines) + "\n"
