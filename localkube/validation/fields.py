"""Checks shared by every kind's validation, with apimachinery's messages
(k8s.io/apimachinery/pkg/util/validation and pkg/api/validation)."""

from __future__ import annotations

import re
from typing import Any

from localkube.errors import Cause, GoLiteral, field_duplicate, field_invalid, field_required, field_unsupported
from localkube.meta import DNS1035_LABEL, DNS1035_MSG, DNS1123_LABEL, DNS1123_SUBDOMAIN, LABEL_MSG, SUBDOMAIN_MSG
from localkube.selectors import label_key_problem, label_value_problem

Obj = dict[str, Any]

PORT_RANGE = "must be between 1 and 65535, inclusive"
NON_NEGATIVE = "must be greater than or equal to 0"
PROTOCOLS = ["SCTP", "TCP", "UDP"]
_IANA_NAME = re.compile(r"[-a-z0-9]+")
_HAS_LETTER = re.compile(r"[a-z]")


def obj_at(value: Any) -> Obj:
    """A nested object, or an empty one when absent or of the wrong type (the decoder refuses those)."""
    return value if isinstance(value, dict) else {}


def list_at(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _name_check(path: str, value: str, limit: int, pattern: re.Pattern[str], message: str) -> list[Cause]:
    causes = []
    if len(value) > limit:
        causes.append(field_invalid(path, value, f"must be no more than {limit} characters"))
    if not pattern.fullmatch(value):
        causes.append(field_invalid(path, value, message))
    return causes


def dns_label(path: str, value: str) -> list[Cause]:
    return _name_check(path, value, 63, DNS1123_LABEL, LABEL_MSG)


def dns1035_label(path: str, value: str) -> list[Cause]:
    return _name_check(path, value, 63, DNS1035_LABEL, DNS1035_MSG)


def dns_subdomain(path: str, value: str) -> list[Cause]:
    return _name_check(path, value, 253, DNS1123_SUBDOMAIN, SUBDOMAIN_MSG)


def required_label(path: str, value: Any) -> list[Cause]:
    """A required DNS-1123 label (container, volume and port names)."""
    if not value:
        return [field_required(path)]
    return dns_label(path, str(value))


def port_number(path: str, value: Any) -> list[Cause]:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 65535:
        return [field_invalid(path, value, PORT_RANGE)]
    return []


def port_name(path: str, value: str) -> list[Cause]:
    """IANA_SVC_NAME: what a named container port (and a named target port) must be."""
    problems = []
    if len(value) > 15:
        problems.append("must be no more than 15 characters")
    if not _IANA_NAME.fullmatch(value):
        problems.append("must contain only alphanumeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in value:
        problems.append("must not contain consecutive hyphens")
    if not _HAS_LETTER.search(value):
        problems.append("must contain at least one letter (a-z)")
    if value.startswith("-") or value.endswith("-"):
        problems.append("must not begin or end with a hyphen")
    return [field_invalid(path, value, p) for p in problems]


def int_or_port_name(path: str, value: Any) -> list[Cause]:
    if isinstance(value, str):
        return port_name(path, value)
    return port_number(path, value)


def non_negative(path: str, value: Any) -> list[Cause]:
    if value is not None and (not isinstance(value, int) or value < 0):
        return [field_invalid(path, value, NON_NEGATIVE)]
    return []


def one_of(path: str, value: Any, supported: list[str], *, required: bool = False) -> list[Cause]:
    if value is None or value == "":
        return [field_required(path)] if required else []
    if value not in supported:
        return [field_unsupported(path, value, supported)]
    return []


def duplicates(path: str, values: list[tuple[str, Any]]) -> list[Cause]:
    """Duplicate value at each repeated (path, value) after the first."""
    seen: set[Any] = set()
    causes = []
    for item_path, value in values:
        if value in seen:
            causes.append(field_duplicate(item_path, value))
        seen.add(value)
    return causes


def labels(path: str, value: Any) -> list[Cause]:
    """ValidateLabels: every key a qualified name, every value a label value."""
    causes: list[Cause] = []
    for key, item in obj_at(value).items():
        problem = label_key_problem(str(key))
        if problem:
            causes.append(field_invalid(path, key, problem))
        if isinstance(item, str):
            problem = label_value_problem(item)
            if problem:
                causes.append(field_invalid(path, item, problem))
    return causes


def label_selector(path: str, selector: Obj) -> list[Cause]:
    causes = labels(f"{path}.matchLabels", selector.get("matchLabels"))
    for index, raw_requirement in enumerate(list_at(selector.get("matchExpressions"))):
        item = f"{path}.matchExpressions[{index}]"
        requirement = obj_at(raw_requirement)
        operator = requirement.get("operator")
        values = list_at(requirement.get("values"))
        if operator in ("In", "NotIn"):
            if not values:
                causes.append(field_required(f"{item}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                causes.append(
                    Cause(
                        "FieldValueForbidden",
                        "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                        f"{item}.values",
                    )
                )
        else:
            causes.append(field_invalid(f"{item}.operator", operator or "", "not a valid selector operator"))
        problem = label_key_problem(str(requirement.get("key", "")))
        if problem:
            causes.append(field_invalid(f"{item}.key", requirement.get("key", ""), problem))
    return causes


def go_strings(values: list[Any]) -> GoLiteral:
    """A []string as Go's %#v prints it in an Invalid value."""
    return GoLiteral("[]string{" + ", ".join(f'"{v}"' for v in values) + "}")


def go_map(value: Obj) -> GoLiteral:
    """A map[string]string as Go's %#v prints it in an Invalid value."""
    items = ", ".join(f'"{k}":"{v}"' for k, v in sorted(value.items()))
    return GoLiteral("map[string]string{" + items + "}")
