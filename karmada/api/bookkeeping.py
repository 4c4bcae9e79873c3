"""Label and annotation bookkeeping on objects, with Karmada's exact keys.

Pure functions over JSON objects (dicts), used by the detector (claims) and
the binding controller (which keys of a manifest the control plane owns).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from karmada.api.keys import (
    CLUSTER_PROPAGATION_POLICY_ANNOTATION,
    CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    MANAGED_ANNOTATIONS_ANNOTATION,
    MANAGED_LABELS_ANNOTATION,
    PROPAGATION_POLICY_NAME_ANNOTATION,
    PROPAGATION_POLICY_NAMESPACE_ANNOTATION,
    PROPAGATION_POLICY_PERMANENT_ID_LABEL,
)


def _meta(obj: MutableMapping[str, Any], field: str) -> dict[str, str]:
    metadata = obj.setdefault("metadata", {})
    current = metadata.get(field)
    if not isinstance(current, dict):
        current = metadata[field] = {}
    result: dict[str, str] = current
    return result


def record_managed_annotations(obj: MutableMapping[str, Any]) -> None:
    """Set ``managed-annotations`` to the sorted keys of every annotation, including
    itself and ``managed-labels`` (Karmada's ``RecordManagedAnnotations``)."""
    annotations = _meta(obj, "annotations")
    keys = {MANAGED_ANNOTATIONS_ANNOTATION, MANAGED_LABELS_ANNOTATION, *annotations}
    annotations[MANAGED_ANNOTATIONS_ANNOTATION] = ",".join(sorted(keys))


def record_managed_labels(obj: MutableMapping[str, Any]) -> None:
    """Set ``managed-labels`` to the sorted keys of every label."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    _meta(obj, "annotations")[MANAGED_LABELS_ANNOTATION] = ",".join(sorted(labels))


def claim_by_propagation_policy(obj: MutableMapping[str, Any], namespace: str, name: str, permanent_id: str) -> None:
    """Mark ``obj`` as claimed by a PropagationPolicy; any ClusterPropagationPolicy claim is dropped."""
    remove_cluster_propagation_policy_claim(obj)
    _meta(obj, "labels")[PROPAGATION_POLICY_PERMANENT_ID_LABEL] = permanent_id
    annotations = _meta(obj, "annotations")
    annotations[PROPAGATION_POLICY_NAMESPACE_ANNOTATION] = namespace
    annotations[PROPAGATION_POLICY_NAME_ANNOTATION] = name


def claim_by_cluster_propagation_policy(obj: MutableMapping[str, Any], name: str, permanent_id: str) -> None:
    """Mark ``obj`` as claimed by a ClusterPropagationPolicy."""
    _meta(obj, "labels")[CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL] = permanent_id
    _meta(obj, "annotations")[CLUSTER_PROPAGATION_POLICY_ANNOTATION] = name


def _drop(obj: MutableMapping[str, Any], field: str, *keys: str) -> None:
    values = (obj.get("metadata") or {}).get(field)
    if isinstance(values, dict):
        for key in keys:
            values.pop(key, None)


def remove_propagation_policy_claim(obj: MutableMapping[str, Any]) -> None:
    """Drop a PropagationPolicy claim."""
    _drop(obj, "labels", PROPAGATION_POLICY_PERMANENT_ID_LABEL)
    _drop(obj, "annotations", PROPAGATION_POLICY_NAMESPACE_ANNOTATION, PROPAGATION_POLICY_NAME_ANNOTATION)


def remove_cluster_propagation_policy_claim(obj: MutableMapping[str, Any]) -> None:
    """Drop a ClusterPropagationPolicy claim."""
    _drop(obj, "labels", CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL)
    _drop(obj, "annotations", CLUSTER_PROPAGATION_POLICY_ANNOTATION)
