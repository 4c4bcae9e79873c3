"""``promote``: the resource template and the policy that adopt an object already
running in one member into Karmada, as karmadactl's promote builds them.

The template is the member's object without what its API server set (status,
uid, resourceVersion, managedFields, a Service's clusterIP ...), annotated
``work.karmada.io/conflict-resolution: overwrite`` so the Work may take over
the existing object; the policy selects exactly that object (apiVersion, kind,
name), places it on that one cluster, and says ``conflictResolution:
Overwrite`` and ``preserveResourcesOnDeletion: true`` (deleting the template
later leaves the member's object running). Policy names follow Karmada's
``GeneratePolicyName``: ``<name>-<hash of namespace + GVK>``.
"""

from __future__ import annotations

import copy
from typing import Any

from karmada.api.keys import (
    CONFLICT_RESOLUTION_ANNOTATION,
    CONFLICT_RESOLUTION_OVERWRITE,
    MANAGED_LABEL,
    MANAGED_LABEL_VALUE,
)
from karmada.api.names import name_hash
from karmada.works.prune import prune

Obj = dict[str, Any]
POLICY_API_VERSION = "policy.karmada.io/v1alpha1"


class PromotionError(ValueError):
    """The object cannot be promoted; the message says why."""


def gvk_string(api_version: str, kind: str) -> str:
    """apimachinery's ``GroupVersionKind.String()``: ``apps/v1, Kind=Deployment``, ``/v1, Kind=ConfigMap``."""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"


def policy_name(namespace: str, name: str, api_version: str, kind: str) -> str:
    """Karmada's ``names.GeneratePolicyName``."""
    return f"{name.replace(':', '.')}-{name_hash(namespace + gvk_string(api_version, kind))}".lower()


def promotion(member_object: Obj, cluster: str, *, policy: str | None = None) -> tuple[Obj, Obj]:
    """``(template, policy)`` for ``member_object`` as read from ``cluster``."""
    meta = member_object.get("metadata") or {}
    if (meta.get("labels") or {}).get(MANAGED_LABEL) == MANAGED_LABEL_VALUE:
        raise PromotionError(
            f"{member_object.get('kind')} {meta.get('name')} in cluster({cluster}) is already managed by Karmada"
        )
    api_version, kind = str(member_object.get("apiVersion", "")), str(member_object.get("kind", ""))
    name, namespace = str(meta.get("name", "")), str(meta.get("namespace", "") or "")
    template = prune(copy.deepcopy(member_object))
    template_meta = template.setdefault("metadata", {})
    template_meta.pop("generation", None)
    annotations = template_meta.setdefault("annotations", {})
    annotations.setdefault(CONFLICT_RESOLUTION_ANNOTATION, CONFLICT_RESOLUTION_OVERWRITE)
    # kubectl apply's record of the member's last apply describes the member, not the template
    annotations.pop("kubectl.kubernetes.io/last-applied-configuration", None)
    annotations.pop("deployment.kubernetes.io/revision", None)
    policy_meta: Obj = {"name": policy or policy_name(namespace, name, api_version, kind)}
    if namespace:
        policy_meta["namespace"] = namespace
    built = {
        "apiVersion": POLICY_API_VERSION,
        "kind": "PropagationPolicy" if namespace else "ClusterPropagationPolicy",
        "metadata": policy_meta,
        "spec": {
            "resourceSelectors": [{"apiVersion": api_version, "kind": kind, "name": name}],
            "placement": {"clusterAffinity": {"clusterNames": [cluster]}},
            "conflictResolution": "Overwrite",
            "preserveResourcesOnDeletion": True,
        },
    }
    return template, built
