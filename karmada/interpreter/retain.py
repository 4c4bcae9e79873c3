"""Retain: fields the member cluster owns survive an update from the control plane.

Given the desired manifest and the object observed in the member, returns
what to write: Deployment replicas (only with the retain-replicas label, for
member HPAs), a Pod's node, service account and volumes, a Service's cluster
IP and health-check node port, a ServiceAccount's secrets, a PVC's volume, a
PV's claim, a Job's generated selector labels, and a service-account-token
Secret's data.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from karmada.api.keys import RETAIN_REPLICAS_LABEL, RETAIN_REPLICAS_VALUE
from karmada.interpreter.podspec import nested

RETAIN_KINDS = {
    ("apps/v1", "Deployment"),
    ("v1", "Pod"),
    ("v1", "Service"),
    ("v1", "ServiceAccount"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "PersistentVolume"),
    ("batch/v1", "Job"),
    ("v1", "Secret"),
}


class RetainError(ValueError):
    """The observed object lacks a field the desired one asks to retain."""


def _set(obj: dict[str, Any], value: Any, *path: str) -> None:
    node = obj
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[path[-1]] = copy.deepcopy(value)


def _merge_by_name(desired: list[Any] | None, observed: list[Any] | None) -> list[Any] | None:
    merged: list[Any] = []
    seen: set[str] = set()
    for item in (desired or []) + (observed or []):
        name = str(item.get("name")) if isinstance(item, Mapping) else ""
        if name in seen:
            continue
        seen.add(name)
        merged.append(copy.deepcopy(item))
    return merged or None


def _retain_pod(desired: dict[str, Any], observed: Mapping[str, Any]) -> None:
    spec = desired.setdefault("spec", {})
    observed_spec = observed.get("spec") or {}
    for field in ("nodeName", "serviceAccountName", "volumes"):
        if field in observed_spec:
            spec[field] = copy.deepcopy(observed_spec[field])
        else:
            spec.pop(field, None)
    for field in ("containers", "initContainers"):
        mounts = {
            c.get("name"): c.get("volumeMounts") for c in observed_spec.get(field) or [] if isinstance(c, Mapping)
        }
        for container in spec.get(field) or []:
            if isinstance(container, dict) and container.get("name") in mounts:
                if mounts[container["name"]] is None:
                    container.pop("volumeMounts", None)
                else:
                    container["volumeMounts"] = copy.deepcopy(mounts[container["name"]])


def retain(desired: Mapping[str, Any], observed: Mapping[str, Any]) -> dict[str, Any]:
    """The object to write to the member; ``desired`` itself is not modified."""
    kind = (str(desired.get("apiVersion", "")), str(desired.get("kind", "")))
    if kind not in RETAIN_KINDS:
        raise KeyError(f"no built-in retention for {kind[1]} in {kind[0]}")
    result = copy.deepcopy(dict(desired))
    if kind == ("apps/v1", "Deployment"):
        labels = nested(result, "metadata", "labels") or {}
        if labels.get(RETAIN_REPLICAS_LABEL) == RETAIN_REPLICAS_VALUE:
            replicas = nested(observed, "spec", "replicas")
            if not isinstance(replicas, int):
                raise RetainError(
                    f"failed to get spec.replicas from Deployment "
                    f"{nested(observed, 'metadata', 'namespace')}/{nested(observed, 'metadata', 'name')}"
                )
            _set(result, replicas, "spec", "replicas")
    elif kind == ("v1", "Pod"):
        _retain_pod(result, observed)
    elif kind == ("v1", "Service"):
        port = nested(observed, "spec", "healthCheckNodePort")
        if isinstance(port, int) and port > 0:
            _set(result, port, "spec", "healthCheckNodePort")
        cluster_ip = nested(observed, "spec", "clusterIP")
        if isinstance(cluster_ip, str) and cluster_ip:
            _set(result, cluster_ip, "spec", "clusterIP")
    elif kind == ("v1", "ServiceAccount"):
        for field in ("secrets", "imagePullSecrets"):
            merged = _merge_by_name(result.get(field), observed.get(field))
            if merged is None:
                result.pop(field, None)
            else:
                result[field] = merged
    elif kind == ("v1", "PersistentVolumeClaim"):
        volume = nested(observed, "spec", "volumeName")
        if isinstance(volume, str) and volume:
            _set(result, volume, "spec", "volumeName")
    elif kind == ("v1", "PersistentVolume"):
        claim = nested(observed, "spec", "claimRef")
        if claim is not None:
            _set(result, claim, "spec", "claimRef")
    elif kind == ("batch/v1", "Job"):
        for path in (("spec", "selector", "matchLabels"), ("spec", "template", "metadata", "labels")):
            labels = nested(observed, *path)
            if isinstance(labels, Mapping):
                _set(result, labels, *path)
    elif kind == ("v1", "Secret") and result.get("type") == "kubernetes.io/service-account-token":
        data = observed.get("data")
        if isinstance(data, Mapping):
            result["data"] = copy.deepcopy(dict(data))
    return result
