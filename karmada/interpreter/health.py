"""InterpretHealth: is the object in a member cluster healthy?

Kinds without a rule are healthy (Karmada reports them Healthy when no hook
exists).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karmada.interpreter.podspec import nested

HEALTH_KINDS = {
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "DaemonSet"),
    ("v1", "Service"),
    ("networking.k8s.io/v1", "Ingress"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Pod"),
    ("policy/v1", "PodDisruptionBudget"),
}


def _num(obj: Mapping[str, Any], *path: str) -> int:
    value = nested(obj, *path)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _has_lb_ingress(obj: Mapping[str, Any]) -> bool:
    return any(
        isinstance(i, Mapping) and (i.get("hostname") or i.get("ip"))
        for i in nested(obj, "status", "loadBalancer", "ingress") or []
    )


def interpret_health(obj: Mapping[str, Any]) -> bool:
    """Karmada's native health rules."""
    kind = (str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    generation = _num(obj, "metadata", "generation")
    observed = _num(obj, "status", "observedGeneration")
    replicas = nested(obj, "spec", "replicas")
    if kind in (("apps/v1", "Deployment"), ("apps/v1", "StatefulSet")):
        if observed != generation:
            return False
        if isinstance(replicas, int) and _num(obj, "status", "updatedReplicas") < replicas:
            return False
        return _num(obj, "status", "availableReplicas") >= _num(obj, "status", "updatedReplicas")
    if kind == ("apps/v1", "ReplicaSet"):
        if observed != generation:
            return False
        return not (isinstance(replicas, int) and _num(obj, "status", "availableReplicas") < replicas)
    if kind == ("apps/v1", "DaemonSet"):
        if observed != generation:
            return False
        updated = _num(obj, "status", "updatedNumberScheduled")
        if updated < _num(obj, "status", "desiredNumberScheduled"):
            return False
        return _num(obj, "status", "numberAvailable") >= updated
    if kind == ("v1", "Service"):
        return bool(nested(obj, "spec", "type") != "LoadBalancer") or _has_lb_ingress(obj)
    if kind == ("networking.k8s.io/v1", "Ingress"):
        return _has_lb_ingress(obj)
    if kind == ("v1", "PersistentVolumeClaim"):
        return bool(nested(obj, "status", "phase") == "Bound")
    if kind == ("v1", "Pod"):
        phase = nested(obj, "status", "phase")
        if phase == "Succeeded":
            return True
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in nested(obj, "status", "conditions") or []
            if isinstance(c, Mapping)
        )
        return phase == "Running" and ready
    if kind == ("policy/v1", "PodDisruptionBudget"):
        return _num(obj, "status", "currentHealthy") >= _num(obj, "status", "desiredHealthy")
    return True
