"""Services (pkg/apis/core/validation: ValidateService): type, ports, selector, external names."""

from __future__ import annotations

from typing import Any

from localkube.errors import Cause, field_forbidden, field_invalid, field_required
from localkube.validation.fields import (
    PROTOCOLS,
    dns_label,
    dns_subdomain,
    duplicates,
    go_strings,
    int_or_port_name,
    labels,
    list_at,
    obj_at,
    one_of,
    port_number,
)

Obj = dict[str, Any]

TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]


def validate_service(obj: Obj) -> list[Cause]:
    spec = obj_at(obj.get("spec"))
    kind = spec.get("type") or "ClusterIP"
    causes = one_of("spec.type", kind, TYPES)
    ports = list_at(spec.get("ports"))
    if kind == "ExternalName":
        name = spec.get("externalName")
        if not name:
            causes.append(field_required("spec.externalName"))
        else:
            causes += dns_subdomain("spec.externalName", str(name).rstrip("."))
    elif not ports and spec.get("clusterIP") != "None":
        causes.append(field_required("spec.ports"))
    names: list[tuple[str, Any]] = []
    for index, raw_port in enumerate(ports):
        item = f"spec.ports[{index}]"
        port = obj_at(raw_port)
        name = port.get("name")
        if len(ports) > 1 and not name:
            causes.append(field_required(f"{item}.name"))
        elif name:
            causes += dns_label(f"{item}.name", str(name))
            names.append((f"{item}.name", name))
        causes += port_number(f"{item}.port", port.get("port"))
        causes += one_of(f"{item}.protocol", port.get("protocol"), PROTOCOLS, required=True)
        if port.get("targetPort") is not None:
            causes += int_or_port_name(f"{item}.targetPort", port["targetPort"])
        if port.get("nodePort"):
            if kind in ("ClusterIP", "ExternalName"):
                causes.append(field_forbidden(f"{item}.nodePort", f"may not be used when `type` is '{kind}'"))
            else:
                causes += port_number(f"{item}.nodePort", port["nodePort"])
    causes += duplicates("spec.ports", names)
    causes += labels("spec.selector", spec.get("selector"))
    causes += one_of("spec.sessionAffinity", spec.get("sessionAffinity"), ["ClientIP", "None"])
    if kind not in ("NodePort", "LoadBalancer") and spec.get("externalTrafficPolicy"):
        causes.append(
            field_invalid(
                "spec.externalTrafficPolicy",
                spec["externalTrafficPolicy"],
                "may only be set when `type` is 'NodePort' or 'LoadBalancer'",
            )
        )
    causes += one_of("spec.internalTrafficPolicy", spec.get("internalTrafficPolicy"), ["Cluster", "Local"])
    return causes


def _headless(spec: Obj) -> bool:
    return spec.get("clusterIP") == "None"


def validate_service_update(obj: Obj, old: Obj) -> list[Cause]:
    """validateUpgradeDowngradeClusterIPs: an allocated cluster IP stays (ExternalName and headless aside)."""
    causes = validate_service(obj)
    old_spec, spec = obj_at(old.get("spec")), obj_at(obj.get("spec"))
    if "ExternalName" in (spec.get("type"), old_spec.get("type")) or (_headless(spec) and _headless(old_spec)):
        return causes
    old_ips = list_at(old_spec.get("clusterIPs"))
    new_ips = list_at(spec.get("clusterIPs"))
    ip = spec.get("clusterIP")
    if ip and old_ips and (not new_ips or new_ips == old_ips) and ip != old_ips[0]:
        new_ips = [ip, *old_ips[1:]]  # a changed clusterIP carries into clusterIPs, as PrepareForUpdate does
    if len(new_ips) == len(old_ips):
        for index, (before, after) in enumerate(zip(old_ips, new_ips, strict=True)):
            if before != after:
                causes.append(
                    field_invalid(f"spec.clusterIPs[{index}]", go_strings(new_ips), "may not change once set")
                )
    elif not new_ips:
        causes.append(field_invalid("spec.clusterIPs[0]", go_strings([]), "primary clusterIP can not be unset"))
    elif new_ips[0] != old_ips[0]:
        causes.append(field_invalid("spec.clusterIPs[0]", go_strings(new_ips), "may not change once set"))
    return causes
