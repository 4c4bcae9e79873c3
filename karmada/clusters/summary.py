"""The resource view an agent reports in ``Cluster.status``: node summary,
resource summary (allocatable of all nodes; requests of pending pods as
allocating and of scheduled, unfinished pods as allocated) and, against the
Cluster's resource models, how many nodes fall in each grade. Mirrors
Karmada's cluster-status controller, quantity formats included."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from karmada.quantity import format_quantity, is_binary, parse

Obj = dict[str, Any]
_BINARY_RESOURCES = ("memory", "ephemeral-storage")


def node_ready(node: Obj) -> bool:
    """Whether the node's Ready condition is True."""
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return False


def node_summary(nodes: Iterable[Obj]) -> Obj:
    """``{totalNum, readyNum}``."""
    listed = list(nodes)
    return {"totalNum": len(listed), "readyNum": sum(1 for n in listed if node_ready(n))}


def _add(total: dict[str, Fraction], resources: Obj | None) -> None:
    for name, amount in (resources or {}).items():
        total[name] = total.get(name, Fraction(0)) + parse(amount)


def pod_requests(spec: Obj) -> dict[str, Fraction]:
    """What a pod asks for: containers summed, init containers as a maximum, plus overhead."""
    total: dict[str, Fraction] = {}
    for container in spec.get("containers") or []:
        _add(total, (container.get("resources") or {}).get("requests"))
    for container in spec.get("initContainers") or []:
        for name, amount in ((container.get("resources") or {}).get("requests") or {}).items():
            total[name] = max(total.get(name, Fraction(0)), parse(amount))
    _add(total, spec.get("overhead"))
    return total


def _scheduled(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return bool((pod.get("spec") or {}).get("nodeName")) and phase not in ("Succeeded", "Failed")


def _resource_list(total: dict[str, Fraction], pods: int) -> Obj | None:
    """Go's ``Resource.ResourceList()``: only positive amounts, pods counted; None when empty."""
    result: Obj = {}
    for name, amount in sorted(total.items()):
        if amount > 0:
            result[name] = format_quantity(amount, binary=name in _BINARY_RESOURCES or name.startswith("hugepages-"))
    if pods > 0:
        result["pods"] = str(pods)
    return result or None


def _allocatable(nodes: list[Obj]) -> Obj:
    total: dict[str, Fraction] = {}
    binary: dict[str, bool] = {}
    for node in nodes:
        for name, amount in ((node.get("status") or {}).get("allocatable") or {}).items():
            binary.setdefault(name, is_binary(amount))
            total[name] = total.get(name, Fraction(0)) + parse(amount)
    return {name: format_quantity(amount, binary=binary[name]) for name, amount in sorted(total.items())}


def resource_summary(nodes: Iterable[Obj], pods: Iterable[Obj], models: list[Obj] | None = None) -> Obj:
    """``{allocatable, allocating, allocated[, allocatableModelings]}``."""
    node_list, pod_list = list(nodes), list(pods)
    allocating: dict[str, Fraction] = {}
    allocated: dict[str, Fraction] = {}
    pending = scheduled = 0
    for pod in pod_list:
        spec = pod.get("spec") or {}
        if not spec.get("nodeName"):
            for name, amount in pod_requests(spec).items():
                allocating[name] = allocating.get(name, Fraction(0)) + amount
            pending += 1
        elif _scheduled(pod):
            for name, amount in pod_requests(spec).items():
                allocated[name] = allocated.get(name, Fraction(0)) + amount
            scheduled += 1
    summary: Obj = {}
    allocatable = _allocatable(node_list)
    if allocatable:
        summary["allocatable"] = allocatable
    for key, total, count in (("allocating", allocating, pending), ("allocated", allocated, scheduled)):
        listed = _resource_list(total, count)
        if listed is not None:
            summary[key] = listed
    if models:
        summary["allocatableModelings"] = allocatable_modelings(models, node_list, pod_list)
    return summary


def _grade_index(minimums: list[tuple[str, list[Fraction]]], available: dict[str, Fraction]) -> int:
    """The last grade whose minimum every modelled resource reaches (-1: none)."""
    index = len(minimums[0][1]) if minimums else -1
    for name, values in minimums:
        amount = available.get(name, Fraction(0))
        reached = [i for i, minimum in enumerate(values) if minimum <= amount]
        index = min(index, reached[-1] if reached else -1)
    return index


def allocatable_modelings(models: list[Obj], nodes: list[Obj], pods: list[Obj]) -> list[Obj]:
    """``[{grade, count}]``: nodes by the grade their free resources reach."""
    ordered = sorted(models, key=lambda m: int(m.get("grade", 0)))
    names = [r["name"] for r in ordered[0].get("ranges") or []]
    minimums = [
        (name, [parse(next(r["min"] for r in m["ranges"] if r["name"] == name)) for m in ordered]) for name in names
    ]
    used: dict[str, dict[str, Fraction]] = {}
    for pod in pods:
        if _scheduled(pod):
            node_use = used.setdefault(pod["spec"]["nodeName"], {})
            for name, amount in pod_requests(pod["spec"]).items():
                node_use[name] = node_use.get(name, Fraction(0)) + amount
            node_use["pods"] = node_use.get("pods", Fraction(0)) + 1
    counts = [0] * len(ordered)
    for node in nodes:
        allocatable = {k: parse(v) for k, v in ((node.get("status") or {}).get("allocatable") or {}).items()}
        node_use = used.get(node["metadata"]["name"], {})
        if node_use and allocatable.get("pods", Fraction(0)) - node_use.get("pods", Fraction(0)) <= 0:
            break  # Karmada stops counting at the first full node (it breaks out of its loop)
        available = {name: amount - node_use.get(name, Fraction(0)) for name, amount in allocatable.items()}
        index = _grade_index(minimums, available)
        if index >= 0:
            counts[index] += 1
    return [{"grade": int(m.get("grade", 0)), "count": count} for m, count in zip(ordered, counts, strict=True)]
