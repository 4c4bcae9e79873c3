"""Namespaces, Nodes and ServiceAccounts (pkg/apis/core/validation)."""

from __future__ import annotations

import ipaddress
from typing import Any

from localkube.errors import Cause, field_duplicate, field_invalid, field_required
from localkube.selectors import label_key_problem, label_value_problem
from localkube.validation.fields import list_at, obj_at, one_of
from localkube.validation.pods import TAINT_EFFECTS

Obj = dict[str, Any]

CIDR_MSG = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


def validate_namespace(obj: Obj) -> list[Cause]:
    causes: list[Cause] = []
    for index, finalizer in enumerate(list_at(obj_at(obj.get("spec")).get("finalizers"))):
        name = str(finalizer)
        problem = label_key_problem(name)
        if problem:
            causes.append(field_invalid(f"spec.finalizers[{index}]", name, problem))
        elif "/" not in name and name != "kubernetes":
            causes.append(
                field_invalid(
                    f"spec.finalizers[{index}]",
                    name,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return causes


def validate_node(obj: Obj) -> list[Cause]:
    spec = obj_at(obj.get("spec"))
    causes: list[Cause] = []
    for index, cidr in enumerate(list_at(spec.get("podCIDRs"))):
        try:
            ipaddress.ip_network(str(cidr), strict=False)
        except ValueError:
            causes.append(
                field_invalid(
                    f"spec.podCIDRs[{index}]", cidr, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
                )
            )
    if spec.get("podCIDR") and spec.get("podCIDRs") and spec["podCIDR"] != list_at(spec["podCIDRs"])[:1][0]:
        causes.append(field_invalid("spec.podCIDRs", spec["podCIDRs"], "must match first element of podCIDRs"))
    seen: set[tuple[str, str]] = set()
    for index, raw_taint in enumerate(list_at(spec.get("taints"))):
        item = f"spec.taints[{index}]"
        taint = obj_at(raw_taint)
        key = str(taint.get("key") or "")
        if not key:
            causes.append(field_required(f"{item}.key"))
        else:
            problem = label_key_problem(key)
            if problem:
                causes.append(field_invalid(f"{item}.key", key, problem))
        value = taint.get("value")
        if value:
            problem = label_value_problem(str(value))
            if problem:
                causes.append(field_invalid(f"{item}.value", value, problem))
        causes += one_of(f"{item}.effect", taint.get("effect"), TAINT_EFFECTS, required=True)
        pair = (key, str(taint.get("effect") or ""))
        if pair in seen:
            causes.append(field_duplicate(item, f"{key}:{pair[1]}"))
        seen.add(pair)
    return causes


def validate_serviceaccount(obj: Obj) -> list[Cause]:
    causes: list[Cause] = []
    for field in ("secrets", "imagePullSecrets"):
        for index, ref in enumerate(list_at(obj.get(field))):
            if field == "imagePullSecrets" and not obj_at(ref).get("name"):
                causes.append(field_required(f"{field}[{index}].name"))
    return causes
