"""Discovery documents (legacy and aggregated apidiscovery.k8s.io/v2) and /version."""

from __future__ import annotations

import hashlib
from typing import Any

from localkube.resources import Registry, ResourceType

Obj = dict[str, Any]

AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

VERSION_INFO = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-localkube",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2024-12-11T00:00:00Z",
    "goVersion": "go1.23.4",
    "compiler": "gc",
    "platform": "linux/amd64",
}

_SUBRESOURCE_VERBS = {
    "status": ["get", "patch", "update"],
    "scale": ["get", "patch", "update"],
    "approval": ["get", "patch", "update"],
    "finalize": ["update"],
    "token": ["create"],
    "proxy": ["create", "delete", "get", "patch", "update"],
    "binding": ["create"],
    "eviction": ["create"],
    "ephemeralcontainers": ["get", "patch", "update"],
    "attach": ["create", "get"],
    "exec": ["create", "get"],
    "portforward": ["create", "get"],
    "log": ["get"],
}
# subresources whose objects are of another kind (kube-apiserver's discovery says which)
_SUBRESOURCE_KINDS = {
    "scale": ("autoscaling", "v1", "Scale"),
    "token": ("authentication.k8s.io", "v1", "TokenRequest"),
    "binding": ("", "v1", "Binding"),
    "eviction": ("policy", "v1", "Eviction"),  # kubectl drain evicts only when discovery says so
    "attach": ("", "v1", "PodAttachOptions"),
    "exec": ("", "v1", "PodExecOptions"),
    "portforward": ("", "v1", "PodPortForwardOptions"),
}


def _storage_hash(rt: ResourceType) -> str:
    return hashlib.sha256(f"{rt.group}/{rt.version}/{rt.kind}".encode()).hexdigest()[:11]


def _sub_kind(rt: ResourceType, sub: str) -> tuple[str, str, str]:
    if sub == "proxy":
        return rt.group, rt.version, f"{rt.kind}ProxyOptions"
    return _SUBRESOURCE_KINDS.get(sub, (rt.group, rt.version, rt.kind))


def resource_list(registry: Registry, group: str, version: str) -> Obj:
    """``APIResourceList`` of one group/version."""
    resources: list[Obj] = []
    for rt in registry.resources(group, version):
        entry: Obj = {
            "name": rt.plural,
            "singularName": rt.singular,
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": list(rt.verbs),
            "storageVersionHash": _storage_hash(rt),
        }
        if rt.short_names:
            entry["shortNames"] = list(rt.short_names)
        if rt.categories:
            entry["categories"] = list(rt.categories)
        resources.append(entry)
        for sub in rt.subresources():
            sub_group, sub_version, sub_kind = _sub_kind(rt, sub)
            item: Obj = {
                "name": f"{rt.plural}/{sub}",
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": sub_kind,
                "verbs": _SUBRESOURCE_VERBS.get(sub, ["get"]),
            }
            if (sub_group, sub_version) != (rt.group, rt.version):
                item["group"] = sub_group
                item["version"] = sub_version
            resources.append(item)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


def _group_doc(group: str, versions: list[str]) -> Obj:
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": entries, "preferredVersion": dict(entries[0])}


def api_group_list(registry: Registry) -> Obj:
    groups = [_group_doc(g, vs) for g, vs in registry.groups() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> Obj | None:
    for name, versions in registry.groups():
        if name == group and group:
            return {"kind": "APIGroup", "apiVersion": "v1", **_group_doc(group, versions)}
    return None


def api_versions(host: str) -> Obj:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
    }


def _aggregated_resource(rt: ResourceType) -> Obj:
    entry: Obj = {
        "resource": rt.plural,
        "responseKind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular,
        "verbs": list(rt.verbs),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    subs = []
    for sub in rt.subresources():
        group, version, kind = _sub_kind(rt, sub)
        subs.append(
            {
                "subresource": sub,
                "responseKind": {"group": group, "version": version, "kind": kind},
                "verbs": _SUBRESOURCE_VERBS.get(sub, ["get"]),
            }
        )
    if subs:
        entry["subresources"] = subs
    return entry


def aggregated(registry: Registry, core: bool) -> Obj:
    """``APIGroupDiscoveryList`` for ``/api`` (core) or ``/apis``."""
    items = []
    for group, versions in registry.groups():
        if (group == "") != core:
            continue
        items.append(
            {
                "metadata": {"name": group} if group else {},
                "versions": [
                    {
                        "version": v,
                        "freshness": "Current",
                        "resources": [_aggregated_resource(rt) for rt in registry.resources(group, v)],
                    }
                    for v in versions
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }
