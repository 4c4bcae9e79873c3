"""Services (pkg/apis/core/validation: ValidateService): type, ports, selector, external names."""

from __future__ import annotations

from typing import Any

from localkube.errors import Cause, field_forbidden, field_invalid, field_required
from localkube.validation.fields import (
    PROTOCOLS,
    dns_label,
    dns_subdomain,
    duplicates,
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


def validate_service_update(obj: Obj, old: Obj) -> list[Cause]:
    causes = validate_service(obj)
    old_spec, spec = obj_at(old.get("spec")), obj_at(obj.get("spec"))
    old_ip, new_ip = old_spec.get("clusterIP"), spec.get("clusterIP")
    if old_ip and new_ip != old_ip and spec.get("type") != "ExternalName":
        causes.append(field_invalid("spec.clusterIPs[0]", new_ip or "", "may not change once set"))
    return causes
