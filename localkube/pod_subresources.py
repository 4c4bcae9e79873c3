"""The Pod subresources that change Pods through the API: ``binding`` (and the
``bindings`` resource), ``eviction`` and ``ephemeralcontainers``, with
kube-apiserver's rules (pkg/registry/core/pod/storage).

Eviction honours PodDisruptionBudgets. localkube runs no disruption
controller, so the budget's status (healthy pods, disruptions allowed) is
computed from the Pods when an eviction asks, and written to the budget as the
controller would; the eviction then spends one disruption.
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Any

from localkube.errors import APIError, Cause, bad_request, conflict, invalid
from localkube.meta import now_time
from localkube.selectors import selector_matches

if TYPE_CHECKING:
    from localkube.api import ResourceAPI, WriteOptions
    from localkube.resources import ResourceType

Obj = dict[str, Any]

PDB_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."


def success(code: int = 201) -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}


def bind(api: ResourceAPI, pods: ResourceType, namespace: str, name: str, body: Any) -> Obj:
    """Assign a Pod to a node, as the scheduler does (``pods/binding`` or ``bindings``)."""
    if not isinstance(body, dict):
        raise bad_request("the body of a Binding must be an object")
    meta = body.get("metadata") or {}
    pod_name = name or meta.get("name", "")
    if name and meta.get("name") and meta["name"] != name:
        raise bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")
    target = body.get("target") or {}
    causes = []
    if not pod_name:
        causes.append(Cause("FieldValueRequired", "Required value: name or generateName is required", "metadata.name"))
    if not target.get("name"):
        causes.append(Cause("FieldValueRequired", "Required value", "target.name"))
    if target.get("kind") not in (None, "", "Node"):
        causes.append(Cause("FieldValueNotSupported", f'Unsupported value: "{target["kind"]}"', "target.kind"))
    if causes:
        raise invalid("Binding", "", pod_name, causes)
    old = api.stored(pods, namespace, pod_name)
    if old is None:
        raise api._not_found(pods, pod_name)
    if old["metadata"].get("deletionTimestamp"):
        raise conflict("pods", "", pod_name, f"pod {pod_name} is being deleted, cannot be assigned to a host")
    spec = old.get("spec") or {}
    if spec.get("nodeName"):
        raise conflict("pods", "", pod_name, f'pod {pod_name} is already assigned to node "{spec["nodeName"]}"')
    pod = copy.deepcopy(old)
    pod.setdefault("spec", {})["nodeName"] = target["name"]
    annotations = meta.get("annotations") or {}
    if annotations:
        pod["metadata"].setdefault("annotations", {}).update(annotations)
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    scheduled = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
    if scheduled is None:
        conditions.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": now_time()})
    elif scheduled.get("status") != "True":
        scheduled.update({"status": "True", "lastTransitionTime": now_time()})
        scheduled.pop("reason", None)
        scheduled.pop("message", None)
    api.write_internal(pods, pod, old, "binding")
    return success()


def set_ephemeral_containers(obj: Obj, old: Obj) -> Obj:
    """An update through ``pods/ephemeralcontainers`` changes only ``spec.ephemeralContainers``,
    and may only add containers (kube refuses changing or removing one)."""
    new = copy.deepcopy(old)
    given = (obj.get("spec") or {}).get("ephemeralContainers") or []
    existing = {c.get("name"): c for c in (old.get("spec") or {}).get("ephemeralContainers") or []}
    names = [c.get("name") for c in given if isinstance(c, dict)]
    for index, (name, current) in enumerate(existing.items()):
        if name not in names:
            raise invalid(
                "Pod",
                "",
                old["metadata"]["name"],
                [
                    Cause(
                        "FieldValueForbidden",
                        "Forbidden: existing ephemeral containers may not be removed",
                        "spec.ephemeralContainers",
                    )
                ],
            )
        if given[names.index(name)] != current:
            path = f"spec.ephemeralContainers[{index}]"
            raise invalid(
                "Pod",
                "",
                old["metadata"]["name"],
                [Cause("FieldValueForbidden", "Forbidden: existing ephemeral containers may not be changed", path)],
            )
    new.setdefault("spec", {})["ephemeralContainers"] = given
    new["metadata"]["resourceVersion"] = obj["metadata"].get("resourceVersion")
    return new


# -- eviction -------------------------------------------------------------------
def _ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _count(value: Any, expected: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        share = int(value[:-1]) * expected / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(value)


def budget_status(pdb: Obj, pods: list[Obj]) -> Obj:
    """A PodDisruptionBudget's status from the Pods it selects (the disruption controller's sums)."""
    selector = (pdb.get("spec") or {}).get("selector")
    selected = [
        p
        for p in pods
        if selector_matches(selector, p["metadata"].get("labels")) and not p["metadata"].get("deletionTimestamp")
    ]
    expected = len(selected)
    healthy = sum(1 for p in selected if _ready(p))
    spec = pdb.get("spec") or {}
    if spec.get("maxUnavailable") is not None:
        desired = max(0, expected - _count(spec["maxUnavailable"], expected, round_up=True))
    elif spec.get("minAvailable") is not None:
        desired = _count(spec["minAvailable"], expected, round_up=True)
    else:
        desired = expected
    status = dict(pdb.get("status") or {})
    status.update(
        {
            "observedGeneration": pdb["metadata"].get("generation", 1),
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
            "disruptionsAllowed": max(0, healthy - desired),
        }
    )
    return status


def evict(
    api: ResourceAPI,
    pods: ResourceType,
    pdbs: ResourceType,
    namespace: str,
    name: str,
    body: Any,
    options: WriteOptions,
) -> Obj:
    """``pods/eviction``: delete the Pod unless that would break its disruption budget."""
    if not isinstance(body, dict):
        raise bad_request("the body of an Eviction must be an object")
    given = (body.get("metadata") or {}).get("name")
    if given and given != name:
        raise bad_request("name in URL does not match name in Eviction object")
    pod = api.stored(pods, namespace, name)
    if pod is None:
        raise api._not_found(pods, name)
    delete_options = body.get("deleteOptions") or {}
    phase = (pod.get("status") or {}).get("phase", "")
    if not (pod["metadata"].get("deletionTimestamp") or phase in ("Succeeded", "Failed", "Pending")):
        labels = pod["metadata"].get("labels") or {}
        budgets = [
            b
            for b in api.store.items(pdbs.storage_key, namespace)
            if selector_matches((b.get("spec") or {}).get("selector"), labels)
        ]
        if len(budgets) > 1:
            raise APIError(
                500,
                "InternalError",
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            )
        if budgets:
            _spend_disruption(api, pods, pdbs, namespace, name, budgets[0], options)
    if not options.dry_run:
        api.delete(pods, namespace, name, delete_options, False)
    return success()


def _spend_disruption(
    api: ResourceAPI,
    pods: ResourceType,
    pdbs: ResourceType,
    namespace: str,
    name: str,
    budget: Obj,
    options: WriteOptions,
) -> None:
    status = budget_status(budget, api.store.items(pods.storage_key, namespace))
    if status["disruptionsAllowed"] <= 0:
        message = (
            f"The disruption budget {budget['metadata']['name']} needs {status['desiredHealthy']} healthy pods "
            f"and has {status['currentHealthy']} currently"
        )
        error = APIError(429, "TooManyRequests", PDB_VIOLATION, retry_after=0)
        error.causes = [Cause("DisruptionBudget", message)]
        _write_budget_status(api, pdbs, budget, status)
        raise error
    status["disruptionsAllowed"] -= 1
    status["disruptedPods"] = {**(status.get("disruptedPods") or {}), name: now_time()}
    if not options.dry_run:
        _write_budget_status(api, pdbs, budget, status)


def _write_budget_status(api: ResourceAPI, pdbs: ResourceType, budget: Obj, status: Obj) -> None:
    if budget.get("status") == status:
        return
    updated = copy.deepcopy(budget)
    updated["status"] = status
    api.write_internal(pdbs, updated, budget, "status")
