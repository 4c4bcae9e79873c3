"""``describe``: one page about a resource template and everything Karmada made
of it: the policy that claimed it, its binding (conditions, the scheduler's
target clusters), the placement it was scheduled by, each target cluster's
Work (applied or not, health and status the agent reported) and the events of
template, binding and Works together, oldest first."""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from karmada.inspection.tables import human_duration
from karmada.timestamps import parse_time

Obj = dict[str, Any]


@dataclass
class DescribeInput:
    """What the command read from the control plane."""

    template: Obj
    policy: Obj | None = None
    policy_kind: str = ""
    binding: Obj | None = None
    binding_kind: str = "ResourceBinding"
    works: dict[str, Obj | None] = field(default_factory=dict)  # target cluster -> its Work
    events: list[Obj] = field(default_factory=list)


def _conditions(obj: Obj | None) -> list[Obj]:
    return list(((obj or {}).get("status") or {}).get("conditions") or [])


def _condition(obj: Obj | None, kind: str) -> Obj | None:
    return next((c for c in _conditions(obj) if c.get("type") == kind), None)


def _event_time(event: Obj) -> str:
    return str(
        event.get("lastTimestamp")
        or event.get("eventTime")
        or event.get("firstTimestamp")
        or (event.get("metadata") or {}).get("creationTimestamp")
        or ""
    )


def _ago(when: str, now: datetime.datetime) -> str:
    if not when:
        return "<unknown>"
    try:
        return human_duration((now - parse_time(when)).total_seconds())
    except ValueError:
        return when


def _placement_lines(placement: Obj) -> list[str]:
    lines: list[str] = []
    affinity = placement.get("clusterAffinity")
    if affinity:
        lines.append(f"  Cluster Affinity:    {json.dumps(affinity, sort_keys=True)}")
    for term in placement.get("clusterAffinities") or []:
        lines.append(f"  Cluster Affinities:  {json.dumps(term, sort_keys=True)}")
    if placement.get("clusterTolerations"):
        lines.append(f"  Cluster Tolerations: {json.dumps(placement['clusterTolerations'], sort_keys=True)}")
    if placement.get("spreadConstraints"):
        lines.append(f"  Spread Constraints:  {json.dumps(placement['spreadConstraints'], sort_keys=True)}")
    scheduling = placement.get("replicaScheduling")
    if scheduling:
        text = str(scheduling.get("replicaSchedulingType", "Divided"))
        if scheduling.get("replicaDivisionPreference"):
            text += f", {scheduling['replicaDivisionPreference']}"
        weights = ((scheduling.get("weightPreference") or {}).get("staticWeightList")) or []
        if weights:
            parts = []
            for entry in weights:
                names = ",".join((entry.get("targetCluster") or {}).get("clusterNames") or []) or json.dumps(
                    entry.get("targetCluster"), sort_keys=True
                )
                parts.append(f"{names}={entry.get('weight')}")
            text += f" (static weights {' '.join(parts)})"
        elif (scheduling.get("weightPreference") or {}).get("dynamicWeight"):
            text += f" (dynamic weight by {scheduling['weightPreference']['dynamicWeight']})"
        lines.append(f"  Replica Scheduling:  {text}")
    return lines or ["  <none>"]


def _work_state(work: Obj | None) -> tuple[str, str, str]:
    """(applied, health, status summary) of one Work."""
    if work is None:
        return "<no work>", "", ""
    applied = _condition(work, "Applied")
    applied_text = applied.get("status", "Unknown") if applied else "Unknown"
    if applied and applied.get("status") != "True" and applied.get("message"):
        applied_text += f" ({applied['message']})"
    statuses = (work.get("status") or {}).get("manifestStatuses") or []
    health = ",".join(sorted({str(s.get("health", "")) for s in statuses if s.get("health")})) or "<none>"
    status = (statuses[0].get("status") if statuses else None) or {}
    summary = ""
    if "readyReplicas" in status or "replicas" in status:
        summary = f"ready {status.get('readyReplicas', 0)}/{status.get('replicas', 0)}"
    return applied_text, health, summary


def describe_page(data: DescribeInput, now: datetime.datetime) -> str:
    """The page, kubectl describe's layout (``Key:  value`` lines, indented sections, an events table)."""
    template = data.template
    meta = template.get("metadata") or {}
    lines = [f"Name:          {meta.get('name', '')}"]
    if meta.get("namespace"):
        lines.append(f"Namespace:     {meta['namespace']}")
    lines.append(f"API Version:   {template.get('apiVersion', '')}")
    lines.append(f"Kind:          {template.get('kind', '')}")
    if data.policy is None:
        lines.append("Policy:        <none> (no PropagationPolicy or ClusterPropagationPolicy claims this template)")
    else:
        policy_meta = data.policy.get("metadata") or {}
        spec = data.policy.get("spec") or {}
        where = f"{policy_meta.get('namespace')}/" if policy_meta.get("namespace") else ""
        lines.append(f"Policy:        {data.policy_kind} {where}{policy_meta.get('name', '')}")
        lines.append(f"  Priority:             {spec.get('priority', 0)}")
        lines.append(f"  Conflict Resolution:  {spec.get('conflictResolution', 'Abort')}")
        for selector in spec.get("resourceSelectors") or []:
            lines.append(f"  Resource Selector:    {json.dumps(selector, sort_keys=True)}")
    binding = data.binding
    if binding is None:
        lines.append("Binding:       <none>")
    else:
        binding_meta = binding.get("metadata") or {}
        where = f"{binding_meta.get('namespace')}/" if binding_meta.get("namespace") else ""
        lines.append(f"Binding:       {data.binding_kind} {where}{binding_meta.get('name', '')}")
        for condition in _conditions(binding):
            message = f": {condition['message']}" if condition.get("message") else ""
            lines.append(
                f"  {condition.get('type')}:  {condition.get('status')} ({condition.get('reason', '')}){message}"
            )
        spec = binding.get("spec") or {}
        lines.append("Placement:")
        lines.extend(_placement_lines(spec.get("placement") or {}))
        lines.append("Clusters:")
        targets = spec.get("clusters") or []
        if not targets:
            lines.append("  <none> (not scheduled)")
        else:
            rows = [["CLUSTER", "REPLICAS", "WORK", "APPLIED", "HEALTH", "STATUS"]]
            for target in targets:
                cluster = str(target.get("name", ""))
                work = data.works.get(cluster)
                work_meta = (work or {}).get("metadata") or {}
                work_name = f"{work_meta.get('namespace', '')}/{work_meta.get('name', '')}" if work else "<none>"
                applied, health, summary = _work_state(work)
                rows.append([cluster, str(target.get("replicas", "")), work_name, applied, health, summary])
            lines.extend("  " + row for row in _align(rows))
    lines.append("Events:")
    events = sorted(data.events, key=_event_time)
    if not events:
        lines.append("  <none>")
    else:
        rows = [["TYPE", "REASON", "OBJECT", "AGE", "FROM", "MESSAGE"]]
        for event in events:
            involved = event.get("involvedObject") or {}
            source = (event.get("source") or {}).get("component") or event.get("reportingComponent") or ""
            rows.append(
                [
                    str(event.get("type", "")),
                    str(event.get("reason", "")),
                    _involved(involved),
                    _ago(_event_time(event), now),
                    str(source),
                    str(event.get("message", "")).replace("\n", " "),
                ]
            )
        lines.extend("  " + row for row in _align(rows))
    return "\n".join(lines) + "\n"


def _involved(involved: Obj) -> str:
    kind = str(involved.get("kind", "")).lower()
    if kind == "work":  # the same Work name in every execution space: the namespace tells the cluster
        return f"work/{involved.get('namespace', '')}/{involved.get('name', '')}"
    return f"{kind}/{involved.get('name', '')}"


def _align(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)).rstrip() for row in rows]
