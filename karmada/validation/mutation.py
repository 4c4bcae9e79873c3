"""Karmada's mutating admission, per kind, and the JSONPatch that carries it.

:func:`mutate` returns the object as Karmada's mutating webhook would store it;
:func:`json_patch` turns (before, after) into the RFC 6902 operations an
AdmissionResponse carries. The policy defaults are
:mod:`karmada.detection.admission`'s (the detector applies the same ones when
reading policies a server without the webhook stored); this module only
decides which apply to which kind and operation. ``new_id`` and ``now`` are
parameters so tests are deterministic.
"""

from __future__ import annotations

import copy
import datetime
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from karmada.api.keys import (
    CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL,
    RESOURCE_BINDING_PERMANENT_ID_LABEL,
    WORK_PERMANENT_ID_LABEL,
)
from karmada.clusters.mutation import mutate as mutate_cluster_spec
from karmada.clusters.mutation import prepare_new_cluster
from karmada.detection.admission import admission_metadata, defaulted_spec, policy_id_label
from karmada.works import prune, record_managed_keys

Obj = dict[str, Any]
MUTATED_KINDS = (
    "PropagationPolicy",
    "ClusterPropagationPolicy",
    "OverridePolicy",
    "ResourceBinding",
    "ClusterResourceBinding",
    "Work",
    "Cluster",
)


def _new_id() -> str:
    return str(uuid.uuid4())


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _labels(obj: Obj) -> dict[str, str]:
    metadata = obj.setdefault("metadata", {})
    labels = metadata.get("labels")
    if not isinstance(labels, dict):
        labels = metadata["labels"] = {}
    result: dict[str, str] = labels
    return result


def _policy(obj: Obj, operation: str, cluster_wide: bool, namespace: str, new_id: Callable[[], str]) -> Obj:
    if isinstance(obj.get("spec"), dict):
        obj["spec"] = defaulted_spec(obj["spec"], None if cluster_wide else namespace or None)
    if operation != "CREATE":
        return obj
    # Karmada gives every new policy a fresh id, even one copied with another's label
    _labels(obj).pop(policy_id_label(cluster_wide), None)
    return admission_metadata(obj, cluster_wide, new_id) or obj


def _override_policy(obj: Obj, namespace: str) -> Obj:
    for selector in (obj.get("spec") or {}).get("resourceSelectors") or []:
        if isinstance(selector, dict) and not selector.get("namespace"):
            selector["namespace"] = namespace
    return obj


def _with_id(obj: Obj, label: str, new_id: Callable[[], str]) -> Obj:
    labels = _labels(obj)
    if not labels.get(label):
        labels[label] = new_id()
    return obj


def _work(obj: Obj, new_id: Callable[[], str]) -> Obj:
    _with_id(obj, WORK_PERMANENT_ID_LABEL, new_id)
    work_id = _labels(obj)[WORK_PERMANENT_ID_LABEL]
    workload = (obj.get("spec") or {}).get("workload") or {}
    manifests = []
    for manifest in workload.get("manifests") or []:
        pruned = prune(manifest)
        record_managed_keys(pruned, work_id)
        manifests.append(pruned)
    if "manifests" in workload:
        workload["manifests"] = manifests
    return obj


def _cluster(obj: Obj, operation: str, now: Callable[[], str]) -> Obj:
    spec = obj.setdefault("spec", {})
    if operation == "CREATE":
        prepare_new_cluster(spec)
    mutate_cluster_spec(spec, now())
    return obj


def mutate(
    kind: str,
    obj: Mapping[str, Any],
    operation: str,
    namespace: str = "",
    new_id: Callable[[], str] = _new_id,
    now: Callable[[], str] = _now,
) -> Obj:
    """A copy of ``obj`` as Karmada's mutating admission leaves it (unchanged for other kinds)."""
    out: Obj = copy.deepcopy(dict(obj))
    namespace = namespace or str((out.get("metadata") or {}).get("namespace") or "")
    if operation not in ("CREATE", "UPDATE"):
        return out
    if kind == "PropagationPolicy":
        return _policy(out, operation, False, namespace, new_id)
    if kind == "ClusterPropagationPolicy":
        return _policy(out, operation, True, namespace, new_id)
    if kind == "OverridePolicy":
        return _override_policy(out, namespace)
    if kind == "ResourceBinding" and operation == "CREATE":
        return _with_id(out, RESOURCE_BINDING_PERMANENT_ID_LABEL, new_id)
    if kind == "ClusterResourceBinding" and operation == "CREATE":
        return _with_id(out, CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL, new_id)
    if kind == "Work":
        return _work(out, new_id)
    if kind == "Cluster":
        return _cluster(out, operation, now)
    return out


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def json_patch(before: Any, after: Any, path: str = "") -> list[Obj]:
    """RFC 6902 operations that turn ``before`` into ``after`` (maps key by key, lists of
    equal length item by item, anything else replaced whole)."""
    if before == after:
        return []
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        ops: list[Obj] = []
        for key in before:
            if key not in after:
                ops.append({"op": "remove", "path": f"{path}/{_escape(str(key))}"})
        for key, value in after.items():
            at = f"{path}/{_escape(str(key))}"
            if key not in before:
                ops.append({"op": "add", "path": at, "value": value})
            else:
                ops += json_patch(before[key], value, at)
        return ops
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        ops = []
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            ops += json_patch(old, new, f"{path}/{index}")
        return ops
    return [{"op": "replace", "path": path, "value": after}]
