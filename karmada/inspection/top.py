"""``top clusters``: each Cluster's resources as its agent reports them in
``status.resourceSummary`` (allocatable of all nodes, allocated to scheduled
pods, allocating to pending ones); available is allocatable less allocated
and allocating, as Karmada's general estimator counts it."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from karmada.quantity import format_quantity, parse

Obj = dict[str, Any]
RESOURCES = ("cpu", "memory", "pods")
HEADER = [
    "NAME",
    "CPU(ALLOCATABLE)",
    "CPU(ALLOCATED)",
    "CPU(AVAILABLE)",
    "CPU%",
    "MEMORY(ALLOCATABLE)",
    "MEMORY(ALLOCATED)",
    "MEMORY(AVAILABLE)",
    "MEMORY%",
    "PODS(ALLOCATABLE)",
    "PODS(ALLOCATED)",
    "PODS(AVAILABLE)",
]


def _amount(resources: Obj | None, name: str) -> Fraction:
    value = (resources or {}).get(name)
    return parse(value) if value is not None else Fraction(0)


def _show(amount: Fraction, name: str) -> str:
    if name == "cpu":
        return f"{int(amount * 1000)}m" if amount.denominator != 1 else str(int(amount))
    if name == "memory":
        return f"{int(amount / (1024 * 1024))}Mi"
    return format_quantity(amount, binary=False)


def cluster_usage(cluster: Obj) -> Obj:
    """``{resource: {allocatable, allocated, available}}`` as quantities, None when nothing was reported."""
    summary = (cluster.get("status") or {}).get("resourceSummary")
    if not summary:
        return {}
    usage: Obj = {}
    for name in RESOURCES:
        allocatable = _amount(summary.get("allocatable"), name)
        allocated = _amount(summary.get("allocated"), name) + _amount(summary.get("allocating"), name)
        usage[name] = {
            "allocatable": allocatable,
            "allocated": allocated,
            "available": max(allocatable - allocated, Fraction(0)),
        }
    return usage


def cluster_usage_rows(clusters: list[Obj]) -> list[list[str]]:
    """One row per Cluster under :data:`HEADER`; ``<unknown>`` where no summary was reported yet."""
    rows = []
    for cluster in sorted(clusters, key=lambda c: c["metadata"]["name"]):
        usage = cluster_usage(cluster)
        row = [cluster["metadata"]["name"]]
        for name in RESOURCES:
            if not usage:
                row += ["<unknown>"] * (4 if name != "pods" else 3)
                continue
            entry = usage[name]
            row += [_show(entry["allocatable"], name), _show(entry["allocated"], name), _show(entry["available"], name)]
            if name != "pods":
                share = entry["allocated"] / entry["allocatable"] * 100 if entry["allocatable"] else Fraction(0)
                row.append(f"{int(share)}%")
        rows.append(row)
    return rows
