"""What a request addresses and which verb it is (kube-apiserver's RequestInfo)."""

from __future__ import annotations

from dataclasses import dataclass

from multidict import MultiMapping


@dataclass
class RequestInfo:
    """A parsed API path; ``resource`` is empty for discovery and non-resource paths."""

    path: str
    method: str
    is_resource: bool = False
    api_prefix: str = ""  # "api" or "apis"
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    name: str = ""
    subresource: str = ""
    verb: str = ""
    parts: tuple[str, ...] = ()


def _truthy(value: str | None) -> bool:
    return value in ("true", "1", "True")


def parse_request(path: str, method: str, query: MultiMapping[str]) -> RequestInfo:
    """Classify a request path; non-resource paths get the lower-case method as verb."""
    segments = [s for s in path.strip("/").split("/") if s]
    info = RequestInfo(path=path, method=method, verb=method.lower())
    if not segments or segments[0] not in ("api", "apis"):
        return info
    info.api_prefix = segments[0]
    rest = segments[1:]
    if info.api_prefix == "api":
        if not rest:
            return info
        info.version, rest = rest[0], rest[1:]
    else:
        if len(rest) < 2:
            info.group = rest[0] if rest else ""
            return info
        info.group, info.version, rest = rest[0], rest[1], rest[2:]
    info.parts = tuple(rest)
    if not rest:
        return info
    if rest[0] == "watch":
        # legacy /watch/ prefix: a list with watch=true
        rest = rest[1:]
        query = {"watch": "true"}  # type: ignore[assignment]
    info.is_resource = True
    if rest[0] == "namespaces" and len(rest) > 1:
        info.namespace = rest[1]
        # namespaces/{ns}/{resource}... unless it is the namespace's own subresource
        if len(rest) > 2 and rest[2] not in ("status", "finalize"):
            rest = rest[2:]
    info.resource = rest[0]
    if len(rest) >= 2:
        info.name = rest[1]
    if len(rest) >= 3:
        info.subresource = "/".join(rest[2:])
    method = method.upper()
    if method in ("GET", "HEAD"):
        if info.name:
            info.verb = "get"
        elif _truthy(query.get("watch")):
            info.verb = "watch"
        else:
            info.verb = "list"
    elif method == "POST":
        info.verb = "create"
    elif method == "PUT":
        info.verb = "update"
    elif method == "PATCH":
        info.verb = "patch"
    elif method == "DELETE":
        info.verb = "delete" if info.name else "deletecollection"
    return info
