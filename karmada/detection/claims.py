"""The claim metadata a policy puts on the templates and bindings it owns.

A PropagationPolicy claim is the label ``propagationpolicy.karmada.io/permanent-id``
plus the annotations naming the policy's namespace and name; a
ClusterPropagationPolicy claim is the cluster label plus the name annotation.
These functions work on copies of JSON objects and say whether they changed
anything, so the caller can skip writes that would change nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from karmada.api.keys import (
    CLUSTER_PROPAGATION_POLICY_ANNOTATION,
    CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    PROPAGATION_POLICY_NAME_ANNOTATION,
    PROPAGATION_POLICY_NAMESPACE_ANNOTATION,
    PROPAGATION_POLICY_PERMANENT_ID_LABEL,
)

Obj = dict[str, Any]

PP_CLAIM_LABELS = (PROPAGATION_POLICY_PERMANENT_ID_LABEL,)
PP_CLAIM_ANNOTATIONS = (PROPAGATION_POLICY_NAMESPACE_ANNOTATION, PROPAGATION_POLICY_NAME_ANNOTATION)
CPP_CLAIM_LABELS = (CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,)
CPP_CLAIM_ANNOTATIONS = (CLUSTER_PROPAGATION_POLICY_ANNOTATION,)


def claim_metadata(cluster_wide: bool, policy_id: str, name: str, namespace: str = "") -> tuple[Obj, Obj]:
    """``(labels, annotations)`` of a claim by the given policy."""
    if cluster_wide:
        return {CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL: policy_id}, {CLUSTER_PROPAGATION_POLICY_ANNOTATION: name}
    return (
        {PROPAGATION_POLICY_PERMANENT_ID_LABEL: policy_id},
        {PROPAGATION_POLICY_NAMESPACE_ANNOTATION: namespace, PROPAGATION_POLICY_NAME_ANNOTATION: name},
    )


def _strip(metadata: Obj, labels: tuple[str, ...], annotations: tuple[str, ...]) -> bool:
    changed = False
    for field, keys in (("labels", labels), ("annotations", annotations)):
        values = metadata.get(field)
        if not values:
            continue
        for key in keys:
            if key in values:
                del values[key]
                changed = True
        if not values:
            metadata.pop(field, None)
    return changed


def with_claim(
    obj: Mapping[str, Any], cluster_wide: bool, policy_id: str, name: str, namespace: str = ""
) -> Obj | None:
    """A copy of ``obj`` claimed by the policy, or None when it already is exactly so.

    A PropagationPolicy claim strips any ClusterPropagationPolicy claim, so an
    object never carries both (Karmada's claim switching; no reverse path).
    """
    updated = copy.deepcopy(dict(obj))
    metadata = updated.setdefault("metadata", {})
    changed = False
    if not cluster_wide:
        changed = _strip(metadata, CPP_CLAIM_LABELS, CPP_CLAIM_ANNOTATIONS)
    labels, annotations = claim_metadata(cluster_wide, policy_id, name, namespace)
    for field, wanted in (("labels", labels), ("annotations", annotations)):
        values = metadata.setdefault(field, {})
        for key, value in wanted.items():
            if values.get(key) != value:
                values[key] = value
                changed = True
    return updated if changed else None


def without_claim(obj: Mapping[str, Any], cluster_wide: bool, policy_id: str) -> Obj | None:
    """A copy of ``obj`` with the policy's claim removed, or None when there is nothing to remove.

    Only a claim by ``policy_id`` is removed: if the id label changed meanwhile
    (another policy took the object) the object is left alone.
    """
    label = CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL if cluster_wide else PROPAGATION_POLICY_PERMANENT_ID_LABEL
    if ((obj.get("metadata") or {}).get("labels") or {}).get(label) != policy_id:
        return None
    updated = copy.deepcopy(dict(obj))
    if cluster_wide:
        _strip(updated["metadata"], CPP_CLAIM_LABELS, CPP_CLAIM_ANNOTATIONS)
    else:
        _strip(updated["metadata"], PP_CLAIM_LABELS, PP_CLAIM_ANNOTATIONS)
    return updated


def claim_ids(obj: Mapping[str, Any]) -> set[str]:
    """The policy ids an object's claim labels name (for indexing templates and bindings by policy)."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return {
        labels[key]
        for key in (PROPAGATION_POLICY_PERMANENT_ID_LABEL, CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL)
        if labels.get(key)
    }
