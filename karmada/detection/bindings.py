"""The (Cluster)ResourceBinding the detector wants for a claimed template.

:func:`desired_binding` builds it from the template, the (defaulted) policy
spec and the interpreter's replica answer; :func:`merged_binding` folds it
into the binding that exists, touching only the fields the detector owns
(claim metadata, owner, ``resource``, replicas, the policy-derived settings):
``spec.clusters``, eviction tasks, ``requiredBy``, ``rescheduleTriggeredAt``
and ``status`` belong to other controllers and are kept as they are. It
returns None when nothing would change, so no write is made.

Field presence follows Go's ``omitempty`` on the binding types (zero replicas,
false ``propagateDeps`` and an empty scheduler name are absent), so a binding
written by real Karmada and one written here compare equal.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from karmada.api.keys import (
    BINDING_CONTROLLER_FINALIZER,
    CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER,
    CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL,
    PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    RESOURCE_BINDING_PERMANENT_ID_LABEL,
)
from karmada.api.names import binding_name
from karmada.detection.claims import CPP_CLAIM_ANNOTATIONS, CPP_CLAIM_LABELS, claim_metadata

Obj = dict[str, Any]
BINDING_API_VERSION = "work.karmada.io/v1alpha2"

# spec fields the detector overwrites from the policy and the template on every apply
OWNED_SPEC_FIELDS = (
    "resource",
    "replicaRequirements",
    "replicas",
    "components",
    "propagateDeps",
    "schedulerName",
    "placement",
    "failover",
    "conflictResolution",
    "preserveResourcesOnDeletion",
    "schedulePriority",
    "workloadAffinityGroups",
)

DIFFERENT_OWNER_MESSAGE = (
    "failed to update binding due to different owner reference UID, will try again later after binding is "
    "garbage collected, see https://github.com/karmada-io/karmada/issues/2090"
)
# the template's Normal event after its replicas were interpreted (Karmada's detector, v1.12 on)
GET_REPLICAS_SUCCEED_MESSAGE = "Get replicas of resource template successfully."


def binding_kind(template: Mapping[str, Any]) -> str:
    """ResourceBinding for a namespaced template, ClusterResourceBinding for a cluster-scoped one."""
    namespace = (template.get("metadata") or {}).get("namespace")
    return "ResourceBinding" if namespace else "ClusterResourceBinding"


def binding_id_label(kind: str) -> str:
    """The label holding a binding's own permanent id."""
    if kind == "ClusterResourceBinding":
        return CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL
    return RESOURCE_BINDING_PERMANENT_ID_LABEL


def controller_reference(template: Mapping[str, Any]) -> Obj:
    metadata = template.get("metadata") or {}
    return {
        "apiVersion": template.get("apiVersion", ""),
        "kind": template.get("kind", ""),
        "name": metadata.get("name", ""),
        "uid": metadata.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def object_reference(template: Mapping[str, Any]) -> Obj:
    metadata = template.get("metadata") or {}
    reference: Obj = {"apiVersion": template.get("apiVersion", ""), "kind": template.get("kind", "")}
    if metadata.get("namespace"):
        reference["namespace"] = metadata["namespace"]
    reference["name"] = metadata.get("name", "")
    for key in ("uid", "resourceVersion"):
        if metadata.get(key):
            reference[key] = metadata[key]
    return reference


def desired_binding(
    template: Mapping[str, Any],
    spec: Mapping[str, Any],
    *,
    cluster_wide_policy: bool,
    policy_id: str,
    policy_name: str,
    policy_namespace: str = "",
    replicas: int = 0,
    replica_requirements: Mapping[str, Any] | None = None,
    schedule_priority: int | None = None,
) -> Obj:
    """The binding for ``template`` under a policy with (defaulted) ``spec``, without its own id label."""
    metadata = template.get("metadata") or {}
    kind = binding_kind(template)
    labels, annotations = claim_metadata(cluster_wide_policy, policy_id, policy_name, policy_namespace)
    binding_spec: Obj = {"resource": object_reference(template)}
    if spec.get("propagateDeps"):
        binding_spec["propagateDeps"] = True
    if replica_requirements:
        binding_spec["replicaRequirements"] = copy.deepcopy(dict(replica_requirements))
    if replicas:
        binding_spec["replicas"] = replicas
    binding_spec["placement"] = copy.deepcopy(spec.get("placement") or {})
    if spec.get("schedulerName"):
        binding_spec["schedulerName"] = spec["schedulerName"]
    if spec.get("failover") is not None:
        binding_spec["failover"] = copy.deepcopy(spec["failover"])
    if spec.get("conflictResolution"):
        binding_spec["conflictResolution"] = spec["conflictResolution"]
    if spec.get("preserveResourcesOnDeletion") is not None:
        binding_spec["preserveResourcesOnDeletion"] = spec["preserveResourcesOnDeletion"]
    if schedule_priority is not None:
        binding_spec["schedulePriority"] = {"priority": schedule_priority}
    if spec.get("suspension") is not None:
        binding_spec["suspension"] = copy.deepcopy(spec["suspension"])
    binding_meta: Obj = {"name": binding_name(str(template.get("kind", "")), str(metadata.get("name", "")))}
    if kind == "ResourceBinding":
        binding_meta["namespace"] = metadata["namespace"]
    binding_meta["labels"] = labels
    binding_meta["annotations"] = annotations
    binding_meta["ownerReferences"] = [controller_reference(template)]
    # Karmada's detector creates the binding with the binding controller's finalizer
    binding_meta["finalizers"] = [
        BINDING_CONTROLLER_FINALIZER if kind == "ResourceBinding" else CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER
    ]
    return {"apiVersion": BINDING_API_VERSION, "kind": kind, "metadata": binding_meta, "spec": binding_spec}


def replicas_changed(binding: Mapping[str, Any] | None, replicas: int, requirements: Mapping[str, Any] | None) -> bool:
    """Whether an interpreted replica answer differs from what ``binding`` carries (no binding
    yet: it does). The detector records ``GetReplicasSucceed`` then only, not on every apply."""
    if binding is None:
        return True
    spec = binding.get("spec") or {}
    return bool(
        int(spec.get("replicas") or 0) != replicas
        or (spec.get("replicaRequirements") or None) != (requirements or None)
    )


def merged_suspension(existing: Mapping[str, Any] | None, policy: Mapping[str, Any] | None) -> Obj | None:
    """The policy's suspension over the binding's, keeping the binding-only ``scheduling`` switch."""
    scheduling = (existing or {}).get("scheduling")
    merged: Obj = copy.deepcopy(dict(policy)) if policy is not None else {}
    if scheduling is not None:
        merged["scheduling"] = scheduling
    if policy is None and scheduling is None:
        return None
    return merged


def controller_uid(obj: Mapping[str, Any]) -> str | None:
    """The uid of the object's controller owner, if any."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("uid", ""))
    return None


def owned_by_other(existing: Mapping[str, Any], template: Mapping[str, Any]) -> bool:
    """The binding belongs to an earlier template of the same name (to be garbage-collected first)."""
    uid = controller_uid(existing)
    return uid is not None and uid != (template.get("metadata") or {}).get("uid")


def merged_binding(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> Obj | None:
    """``existing`` with the detector's fields taken from ``desired``, or None when that changes nothing."""
    updated = copy.deepcopy(dict(existing))
    meta = updated.setdefault("metadata", {})
    want_meta = desired["metadata"]
    for field in ("labels", "annotations"):
        values = dict(meta.get(field) or {})
        values.update(want_meta.get(field) or {})
        meta[field] = values
    if desired["kind"] == "ResourceBinding" and PROPAGATION_POLICY_PERMANENT_ID_LABEL in (
        want_meta.get("labels") or {}
    ):
        # a PropagationPolicy took the template: the binding drops any ClusterPropagationPolicy claim
        for field, keys in (("labels", CPP_CLAIM_LABELS), ("annotations", CPP_CLAIM_ANNOTATIONS)):
            for key in keys:
                meta[field].pop(key, None)
    for field in ("labels", "annotations"):
        if not meta[field]:
            meta.pop(field)
    meta["ownerReferences"] = copy.deepcopy(want_meta["ownerReferences"])
    finalizers = list(meta.get("finalizers") or [])
    if not meta.get("deletionTimestamp"):  # no finalizer may be added to an object being deleted
        finalizers += [f for f in want_meta.get("finalizers") or [] if f not in finalizers]
    if finalizers:
        meta["finalizers"] = finalizers
    spec = updated.setdefault("spec", {})
    want_spec = desired["spec"]
    for field in OWNED_SPEC_FIELDS:
        if field in want_spec:
            spec[field] = copy.deepcopy(want_spec[field])
        else:
            spec.pop(field, None)
    suspension = merged_suspension(spec.get("suspension"), want_spec.get("suspension"))
    if suspension is None:
        spec.pop("suspension", None)
    else:
        spec["suspension"] = suspension
    return None if updated == existing else updated
