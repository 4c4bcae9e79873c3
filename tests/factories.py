"""Small builders of API objects for table tests."""

from __future__ import annotations

from typing import Any

from karmada.api import Cluster, ResourceBindingSpec
from karmada.api.binding import ResourceBindingStatus


def cluster(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    provider: str | None = None,
    region: str | None = None,
    zones: list[str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    allocatable: dict[str, int | str] | None = None,
    allocated: dict[str, int | str] | None = None,
    allocating: dict[str, int | str] | None = None,
    apis: dict[str, list[str]] | None = None,
    deleting: bool = False,
) -> Cluster:
    """A Pull cluster; ``apis`` maps groupVersion to kinds (default: apps/v1 Deployment, v1 ConfigMap)."""
    spec: dict[str, Any] = {"syncMode": "Pull"}
    for key, value in (("provider", provider), ("region", region), ("zones", zones), ("taints", taints)):
        if value is not None:
            spec[key] = value
    served = apis if apis is not None else {"apps/v1": ["Deployment"], "v1": ["ConfigMap", "Service"]}
    status: dict[str, Any] = {
        "apiEnablements": [
            {"groupVersion": gv, "resources": [{"name": k.lower() + "s", "kind": k} for k in kinds]}
            for gv, kinds in served.items()
        ]
    }
    if allocatable is not None:
        status["resourceSummary"] = {
            "allocatable": allocatable,
            **({"allocated": allocated} if allocated else {}),
            **({"allocating": allocating} if allocating else {}),
        }
    metadata: dict[str, Any] = {"name": name, "labels": labels or {}}
    if deleting:
        metadata["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return Cluster.from_dict(
        {
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": metadata,
            "spec": spec,
            "status": status,
        }
    )


def binding_spec(
    *,
    replicas: int = 0,
    placement: dict[str, Any] | None = None,
    clusters: dict[str, int] | None = None,
    requests: dict[str, int | str] | None = None,
    kind: str = "Deployment",
    api_version: str = "apps/v1",
    uid: str = "",
    **extra: Any,
) -> ResourceBindingSpec:
    """A binding spec for a template ``default/app``; ``clusters`` is the previous result."""
    data: dict[str, Any] = {
        "resource": {"apiVersion": api_version, "kind": kind, "namespace": "default", "name": "app"},
        "placement": placement or {},
    }
    if uid:
        data["resource"]["uid"] = uid
    if replicas:
        data["replicas"] = replicas
    if requests is not None:
        data["replicaRequirements"] = {"resourceRequest": requests}
    if clusters is not None:
        data["clusters"] = [{"name": n, "replicas": r} for n, r in clusters.items()]
    data.update(extra)
    return ResourceBindingSpec.from_dict(data)


def status(**fields: Any) -> ResourceBindingStatus:
    """A binding status from JSON field names."""
    return ResourceBindingStatus.from_dict(fields)


def crd(
    group: str,
    kind: str,
    schema: dict[str, Any],
    *,
    plural: str = "",
    scope: str = "Namespaced",
    subresources: dict[str, Any] | None = None,
    list_kind: bool = True,
) -> dict[str, Any]:
    """A CustomResourceDefinition serving one version, ``v1``, with ``schema`` as its openAPIV3Schema."""
    plural = plural or kind.lower() + "s"
    names: dict[str, Any] = {"plural": plural, "kind": kind}
    if list_kind:
        names.update({"singular": kind.lower(), "listKind": f"{kind}List"})
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    if subresources is not None:
        version["subresources"] = subresources
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": scope, "names": names, "versions": [version]},
    }


def deployment_list(prefix: str, count: int, label: str) -> dict[str, Any]:
    """A v1 List of ``count`` one-replica nginx Deployments ``<prefix>-<i>`` in default, labelled ``test=<label>``."""
    return {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"{prefix}-{i}", "namespace": "default", "labels": {"test": label}},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app": f"{prefix}-{i}"}},
                    "template": {
                        "metadata": {"labels": {"app": f"{prefix}-{i}"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                    },
                },
            }
            for i in range(count)
        ],
    }
