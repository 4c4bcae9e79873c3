"""Pod templates inside workloads, and what a pod asks for.

Shared by replica interpretation (requests and node constraints per replica)
and dependency extraction (the ConfigMaps, Secrets, ServiceAccounts and
PersistentVolumeClaims a pod references).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from karmada import quantity

# Where each built-in workload keeps its pod spec.
POD_SPEC_PATHS: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps/v1", "Deployment"): ("spec", "template", "spec"),
    ("apps/v1", "ReplicaSet"): ("spec", "template", "spec"),
    ("apps/v1", "StatefulSet"): ("spec", "template", "spec"),
    ("apps/v1", "DaemonSet"): ("spec", "template", "spec"),
    ("batch/v1", "Job"): ("spec", "template", "spec"),
    ("batch/v1", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
    ("v1", "Pod"): ("spec",),
}

NATIVE_RESOURCES = ("cpu", "memory", "pods", "ephemeral-storage")


def nested(obj: Mapping[str, Any], *path: str) -> Any:
    """The value at ``path`` or None (like Go's ``unstructured.Nested*``)."""
    node: Any = obj
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def pod_spec(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod spec of a built-in workload, or None for other kinds."""
    path = POD_SPEC_PATHS.get((str(obj.get("apiVersion", "")), str(obj.get("kind", ""))))
    if path is None:
        return None
    spec = nested(obj, *path)
    return spec if isinstance(spec, Mapping) else {}


def _containers(spec: Mapping[str, Any], field: str) -> Iterator[Mapping[str, Any]]:
    for container in spec.get(field) or []:
        if isinstance(container, Mapping):
            yield container


def is_scalar_resource(name: str) -> bool:
    """Extended (``example.com/gpu``), hugepages and attachable-volume resources."""
    return name.startswith(("hugepages-", "attachable-volumes-")) or "/" in name


def _amount(name: str, value: int | str) -> int:
    # CPU is counted in milli-units, everything else in whole units rounded up (Go's Value()).
    return quantity.milli_value(value) if name == "cpu" else quantity.value(value)


def _effective_requests(container: Mapping[str, Any]) -> dict[str, int]:
    resources = container.get("resources") or {}
    requests = dict(resources.get("requests") or {})
    for name, value in (resources.get("limits") or {}).items():
        requests.setdefault(name, value)  # a limit stands in for a missing request
    return {
        name: _amount(name, value)
        for name, value in requests.items()
        if name in NATIVE_RESOURCES or is_scalar_resource(name)
    }


def pod_requests(spec: Mapping[str, Any]) -> dict[str, int | str] | None:
    """Karmada's per-pod request: containers summed, init containers max-ed in,
    overhead added; zero entries dropped; None when nothing is requested."""
    total: dict[str, int] = {}
    for container in _containers(spec, "containers"):
        for name, amount in _effective_requests(container).items():
            total[name] = total.get(name, 0) + amount
    for container in _containers(spec, "initContainers"):
        for name, amount in _effective_requests(container).items():
            total[name] = max(total.get(name, 0), amount)
    for name, value in (spec.get("overhead") or {}).items():
        if name in NATIVE_RESOURCES or is_scalar_resource(name):
            total[name] = total.get(name, 0) + _amount(name, value)
    result: dict[str, int | str] = {}
    for name in sorted(total):
        amount = total[name]
        if amount <= 0:
            continue
        if name == "cpu":
            result[name] = quantity.format_quantity(quantity.Fraction(amount, 1000))
        else:
            binary = name in ("memory", "ephemeral-storage") or name.startswith("hugepages-")
            result[name] = quantity.format_quantity(quantity.Fraction(amount), binary=binary)
    return result or None


def node_claim(spec: Mapping[str, Any]) -> dict[str, Any] | None:
    """nodeSelector, tolerations and required node affinity; None when all are empty."""
    claim: dict[str, Any] = {}
    affinity = nested(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    if affinity is not None:
        claim["hardNodeAffinity"] = affinity
    if spec.get("nodeSelector") is not None:
        claim["nodeSelector"] = spec["nodeSelector"]
    if spec.get("tolerations"):
        claim["tolerations"] = spec["tolerations"]
    if "nodeSelector" not in claim and "hardNodeAffinity" not in claim and "tolerations" not in claim:
        return None
    return claim
