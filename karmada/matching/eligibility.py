"""Which resource templates the detector considers at all.

Karmada's own namespaces and groups, events, leases, namespaces matching the
skipped-namespace patterns (default ``kube-.*``, anchored) and the API
server's ``kube-system/extension-apiserver-authentication`` ConfigMap are
never propagated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from karmada.api.names import is_reserved_namespace

DEFAULT_SKIPPED_NAMESPACES = ("kube-.*",)

SKIPPED_GROUPS = frozenset(
    {
        "cluster.karmada.io",
        "policy.karmada.io",
        "work.karmada.io",
        "config.karmada.io",
        "networking.karmada.io",
        "autoscaling.karmada.io",
        "remedy.karmada.io",
        "apps.karmada.io",
        "events.k8s.io",
    }
)
SKIPPED_GROUP_VERSIONS = frozenset({"coordination.k8s.io/v1"})
SKIPPED_KINDS = frozenset({("v1", "Event")})


def skip_reason(
    template: Mapping[str, Any], skipped_namespaces: Iterable[str] = DEFAULT_SKIPPED_NAMESPACES
) -> str | None:
    """Why the detector ignores ``template``, or None when policies may claim it."""
    api_version = str(template.get("apiVersion", ""))
    kind = str(template.get("kind", ""))
    group = api_version.rpartition("/")[0]
    metadata = template.get("metadata") or {}
    namespace = str(metadata.get("namespace") or "")
    if group in SKIPPED_GROUPS:
        return f"API group {group} is Karmada's own or never propagated"
    if api_version in SKIPPED_GROUP_VERSIONS or (api_version, kind) in SKIPPED_KINDS:
        return f"{kind} in {api_version} is never propagated"
    if namespace and is_reserved_namespace(namespace):
        return f"namespace {namespace} is reserved for Karmada"
    for pattern in skipped_namespaces:
        if namespace and re.fullmatch(pattern, namespace):
            return f"namespace {namespace} matches the skipped-namespace pattern {pattern}"
    if (
        namespace == "kube-system"
        and kind == "ConfigMap"
        and metadata.get("name") == "extension-apiserver-authentication"
    ):
        return "the API server manages kube-system/extension-apiserver-authentication"
    return None
