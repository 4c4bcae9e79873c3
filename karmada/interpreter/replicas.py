"""InterpretReplica and ReviseReplica for the built-in workloads.

Replicas: Deployment, ReplicaSet and StatefulSet ``spec.replicas`` (absent
means 0); Job ``min(parallelism, completions)`` (absent completions mean
parallelism); Pod 1. Requirements come from the pod template: the per-pod
resource request and the node claim (None when both are empty).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from karmada.interpreter.podspec import nested, node_claim, pod_requests, pod_spec

if TYPE_CHECKING:  # the API models load pydantic, which an agent never needs (its memory)
    from karmada.api.binding import ReplicaRequirements

REPLICA_KINDS = {
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
    ("batch/v1", "Job"),
    ("v1", "Pod"),
}
REVISE_KINDS = {
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
    ("batch/v1", "Job"),
}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def replica_requirements(spec: Mapping[str, Any]) -> ReplicaRequirements | None:
    """What one replica needs, or None when it requests nothing and has no node constraints."""
    claim = node_claim(spec)
    requests = pod_requests(spec)
    if claim is None and requests is None:
        return None
    data: dict[str, Any] = {}
    if claim is not None:
        data["nodeClaim"] = claim
    if requests is not None:
        data["resourceRequest"] = requests
    from karmada.api.binding import ReplicaRequirements

    return ReplicaRequirements.from_dict(data)


def get_replicas(obj: Mapping[str, Any]) -> tuple[int, ReplicaRequirements | None]:
    """``(replicas, requirements)`` of a built-in workload."""
    kind = (str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if kind not in REPLICA_KINDS:
        raise KeyError(f"no built-in replica interpretation for {kind[1]} in {kind[0]}")
    spec = pod_spec(obj) or {}
    if kind == ("v1", "Pod"):
        replicas = 1
    elif kind == ("batch/v1", "Job"):
        replicas = _int(nested(obj, "spec", "parallelism")) or 0
        completions = _int(nested(obj, "spec", "completions"))
        if completions is not None and replicas > completions:
            replicas = completions
    else:
        replicas = _int(nested(obj, "spec", "replicas")) or 0
    return replicas, replica_requirements(spec)


def revise_replica(obj: Mapping[str, Any], replicas: int) -> dict[str, Any]:
    """A copy with the replica count set (Job: ``spec.parallelism``)."""
    kind = (str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if kind not in REVISE_KINDS:
        raise KeyError(f"no built-in replica revision for {kind[1]} in {kind[0]}")
    revised = copy.deepcopy(dict(obj))
    field = "parallelism" if kind == ("batch/v1", "Job") else "replicas"
    revised.setdefault("spec", {})[field] = replicas
    return revised
