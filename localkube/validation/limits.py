"""LimitRanges (pkg/apis/core/validation: ValidateLimitRange).

Per item: one item per type, no ``default``/``defaultRequest`` on a Pod item,
a min or max storage on a PersistentVolumeClaim item, and per resource the
order min <= defaultRequest <= default <= max, a ratio of at least 1 and at
most max/min, and default == defaultRequest for resources that cannot be
overcommitted (extended resources, hugepages). Resource names are visited in
sorted order where kube ranges over a Go set. The invalid value is shown as the
quantity's canonical text in quotes.
"""

from __future__ import annotations

from typing import Any

from localkube.errors import Cause, field_duplicate, field_forbidden, field_invalid, field_required
from localkube.quantities import MAX_MILLI_VALUE, Quantity, resource_list
from localkube.validation.fields import list_at, obj_at

Obj = dict[str, Any]


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources other than hugepages."""
    native = "/" not in name or name.split("/", maxsplit=1)[0].endswith("kubernetes.io")
    return native and not name.startswith("hugepages-")


def validate_limitrange(obj: Obj) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[Any] = set()
    for index, raw in enumerate(list_at(obj_at(obj.get("spec")).get("limits"))):
        item = obj_at(raw)
        path = f"spec.limits[{index}]"
        kind = item.get("type")
        if kind in seen:
            causes.append(field_duplicate(f"{path}.type", kind))
        seen.add(kind)
        bounds = {field: resource_list(item.get(field)) for field in ("max", "min", "maxLimitRequestRatio")}
        if kind == "Pod":
            for field in ("default", "defaultRequest"):
                if item.get(field):
                    causes.append(field_forbidden(f"{path}.{field}", "may not be specified when `type` is 'Pod'"))
            defaults: dict[str, Quantity] = {}
            requests: dict[str, Quantity] = {}
        else:
            defaults, requests = resource_list(item.get("default")), resource_list(item.get("defaultRequest"))
        if kind == "PersistentVolumeClaim" and "storage" not in bounds["min"] and "storage" not in bounds["max"]:
            causes.append(
                field_required(
                    f"{path}.limits", "either minimum or maximum storage value is required, but neither was provided"
                )
            )
        names = sorted({*bounds["max"], *bounds["min"], *defaults, *requests, *bounds["maxLimitRequestRatio"]})
        for name in names:
            causes += _resource(path, name, bounds, defaults, requests)
    return causes


Bounds = dict[str, Quantity]


def _resource(path: str, name: str, bounds: dict[str, Bounds], defaults: Bounds, requests: Bounds) -> list[Cause]:
    low, high = bounds["min"].get(name), bounds["max"].get(name)
    default, request = defaults.get(name), requests.get(name)
    ratio = bounds["maxLimitRequestRatio"].get(name)
    causes: list[Cause] = []

    def invalid(field: str, value: Quantity, detail: str) -> None:
        causes.append(field_invalid(f"{path}.{field}[{name}]", str(value), detail))

    if low is not None and high is not None and low.value > high.value:
        invalid("min", low, f"min value {low} is greater than max value {high}")
    if request is not None and low is not None and low.value > request.value:
        invalid("defaultRequest", request, f"min value {low} is greater than default request value {request}")
    if request is not None and high is not None and request.value > high.value:
        invalid("defaultRequest", request, f"default request value {request} is greater than max value {high}")
    if request is not None and default is not None and request.value > default.value:
        detail = f"default request value {request} is greater than default limit value {default}"
        invalid("defaultRequest", request, detail)
    if default is not None and low is not None and low.value > default.value:
        invalid("default", low, f"min value {low} is greater than default value {default}")
    if default is not None and high is not None and default.value > high.value:
        invalid("default", high, f"default value {default} is greater than max value {high}")
    if ratio is not None and ratio.value < 1:
        invalid("maxLimitRequestRatio", ratio, f"ratio {ratio} is less than 1")
    if ratio is not None and low is not None and high is not None:
        allowed, smallest, largest = float(ratio.whole()), low.whole(), high.whole()
        if max(ratio.whole(), smallest, largest) < MAX_MILLI_VALUE:
            allowed, smallest, largest = ratio.milli() / 1000, low.milli(), high.milli()
        limit = largest / smallest if smallest else float("inf")
        if allowed > limit:
            invalid("maxLimitRequestRatio", ratio, f"ratio {ratio} is greater than max/min = {limit:f}")
    if not _overcommit_allowed(name) and default is not None and request is not None and default.value != request.value:
        detail = f"default value {default} must equal to defaultRequest value {request} in {name}"
        invalid("defaultRequest", request, detail)
    return causes


__all__ = ["validate_limitrange"]
