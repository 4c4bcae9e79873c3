"""Ingresses (pkg/apis/networking/validation: ValidateIngressCreate)."""

from __future__ import annotations

import re
from typing import Any

from localkube.errors import Cause, GoLiteral, field_invalid, field_required
from localkube.validation.fields import dns1035_label, dns_subdomain, list_at, obj_at, one_of, port_name, port_number

Obj = dict[str, Any]

PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]
_WILDCARD = re.compile(r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
WILDCARD_MSG = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of "
    "lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', "
    "regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def _backend(backend: Obj, path: str) -> list[Cause]:
    service, resource = backend.get("service"), backend.get("resource")
    if service is not None and resource is not None:
        return [field_invalid(path, GoLiteral('""'), "cannot set both resource and service backends")]
    if service is None and resource is None:
        return [field_invalid(path, GoLiteral('""'), "resource or service backend is required")]
    causes: list[Cause] = []
    if service is not None:
        service = obj_at(service)
        if not service.get("name"):
            causes.append(field_required(f"{path}.service.name"))
        else:
            causes += dns1035_label(f"{path}.service.name", str(service["name"]))
        port = obj_at(service.get("port"))
        has_name, has_number = bool(port.get("name")), port.get("number") is not None
        if has_name and has_number:
            causes.append(
                field_invalid(f"{path}.service.port", GoLiteral('""'), "cannot set both port name & port number")
            )
        elif has_name:
            causes += port_name(f"{path}.service.port.name", str(port["name"]))
        elif has_number:
            causes += port_number(f"{path}.service.port.number", port["number"])
        else:
            causes.append(field_required(f"{path}.service.port", "port name or number is required"))
    else:
        resource = obj_at(resource)
        for field in ("kind", "name"):
            if not resource.get(field):
                causes.append(field_required(f"{path}.resource.{field}"))
    return causes


def validate_ingress(obj: Obj) -> list[Cause]:
    spec = obj_at(obj.get("spec"))
    causes: list[Cause] = []
    rules = list_at(spec.get("rules"))
    if spec.get("defaultBackend") is None and not rules:
        causes.append(field_invalid("spec", GoLiteral('""'), "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend") is not None:
        causes += _backend(obj_at(spec["defaultBackend"]), "spec.defaultBackend")
    class_name = spec.get("ingressClassName")
    if class_name:
        causes += dns_subdomain("spec.ingressClassName", str(class_name))
    for index, raw_rule in enumerate(rules):
        item = f"spec.rules[{index}]"
        rule = obj_at(raw_rule)
        host = str(rule.get("host") or "")
        if host:
            if host.startswith("*."):
                if not _WILDCARD.fullmatch(host):
                    causes.append(field_invalid(f"{item}.host", host, WILDCARD_MSG))
            else:
                causes += dns_subdomain(f"{item}.host", host)
        http = rule.get("http")
        if http is None:
            continue
        paths = list_at(obj_at(http).get("paths"))
        if not paths:
            causes.append(field_required(f"{item}.http.paths"))
        for path_index, raw_entry in enumerate(paths):
            at = f"{item}.http.paths[{path_index}]"
            entry = obj_at(raw_entry)
            kind = entry.get("pathType")
            if not kind:
                causes.append(field_required(f"{at}.pathType", "pathType must be specified"))
            else:
                causes += one_of(f"{at}.pathType", kind, PATH_TYPES)
            value = str(entry.get("path") or "")
            if (kind in ("Exact", "Prefix") or value) and not value.startswith("/"):
                causes.append(field_invalid(f"{at}.path", value, "must be an absolute path"))
            causes += _backend(obj_at(entry.get("backend")), f"{at}.backend")
    for index, tls in enumerate(list_at(spec.get("tls"))):
        for host_index, host in enumerate(list_at(obj_at(tls).get("hosts"))):
            if not str(host).startswith("*."):
                causes += dns_subdomain(f"spec.tls[{index}].hosts[{host_index}]", str(host))
    return causes
