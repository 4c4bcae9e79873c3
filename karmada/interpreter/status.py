"""InterpretStatus (member object -> reflected status) and AggregateStatus
(per-cluster statuses -> the template's status).

Reflection keeps only what aggregation needs: workload counters plus the
member's ``generation`` and the template generation the manifest was rendered
from (``resourceTemplateGeneration``), so the template's ``observedGeneration``
only advances once every member has caught up. Kinds without a rule reflect
their whole ``status``.

One deliberate difference: Karmada reflects no ``observedGeneration`` for
StatefulSets (and compares against the member's generation), so a
StatefulSet template's ``observedGeneration`` never advances there; here
StatefulSets follow the same rule as Deployments. Field presence follows Go's ``omitempty`` on the
Kubernetes status types, so reflected statuses compare equal to Karmada's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karmada.api.keys import RESOURCE_TEMPLATE_GENERATION_ANNOTATION
from karmada.json_copy import copy_json

if TYPE_CHECKING:
    from karmada.api.binding import AggregatedStatusItem
from karmada.interpreter.podspec import nested

AGGREGATE_KINDS = {
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("v1", "Service"),
    ("networking.k8s.io/v1", "Ingress"),
    ("batch/v1", "Job"),
    ("batch/v1", "CronJob"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "StatefulSet"),
    ("v1", "Pod"),
    ("v1", "PersistentVolume"),
    ("v1", "PersistentVolumeClaim"),
    ("policy/v1", "PodDisruptionBudget"),
    ("autoscaling/v2", "HorizontalPodAutoscaler"),
}

# (field, kept when zero): Go's json tags on the status types
_DEPLOYMENT = [
    ("observedGeneration", False),
    ("replicas", False),
    ("updatedReplicas", False),
    ("readyReplicas", False),
    ("availableReplicas", False),
    ("unavailableReplicas", False),
]
_REPLICASET = [
    ("replicas", True),
    ("readyReplicas", False),
    ("availableReplicas", False),
    ("observedGeneration", False),
]
_STATEFULSET = [
    ("observedGeneration", False),
    ("replicas", True),
    ("readyReplicas", False),
    ("currentReplicas", False),
    ("updatedReplicas", False),
    ("availableReplicas", True),
]
_DAEMONSET = [
    ("currentNumberScheduled", True),
    ("numberMisscheduled", True),
    ("desiredNumberScheduled", True),
    ("numberReady", True),
    ("observedGeneration", False),
    ("updatedNumberScheduled", False),
    ("numberAvailable", False),
    ("numberUnavailable", False),
]
_PDB = [
    ("disruptionsAllowed", True),
    ("currentHealthy", True),
    ("desiredHealthy", True),
    ("expectedPods", True),
]
_COUNTERS = {
    ("apps/v1", "Deployment"): _DEPLOYMENT,
    ("apps/v1", "ReplicaSet"): _REPLICASET,
    ("apps/v1", "StatefulSet"): _STATEFULSET,
    ("apps/v1", "DaemonSet"): _DAEMONSET,
}


def _status_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    value = obj.get("status")
    return dict(value) if isinstance(value, Mapping) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _pick(status: Mapping[str, Any], fields: Sequence[tuple[str, bool]]) -> dict[str, Any]:
    picked: dict[str, Any] = {}
    for name, keep_zero in fields:
        value = _int(status.get(name))
        if value or keep_zero:
            picked[name] = value
    return picked


def _template_generation(obj: Mapping[str, Any]) -> int:
    raw = (nested(obj, "metadata", "annotations") or {}).get(RESOURCE_TEMPLATE_GENERATION_ANNOTATION, "")
    if raw == "":
        return 0
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"annotation {RESOURCE_TEMPLATE_GENERATION_ANNOTATION}={raw!r} is not an integer") from None


def reflect_status(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The status to store in the Work for a member object, or None."""
    kind = (str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    status = obj.get("status")
    if kind == ("v1", "Service"):
        if nested(obj, "spec", "type") != "LoadBalancer" or not isinstance(status, Mapping):
            return None
        return {"loadBalancer": copy.deepcopy(status.get("loadBalancer") or {})}
    if not isinstance(status, Mapping):
        return None
    if kind in _COUNTERS:
        fields = _COUNTERS[kind]
        reflected: dict[str, Any] = {}
        generation = _int(nested(obj, "metadata", "generation"))
        template_generation = _template_generation(obj)
        if generation:
            reflected["generation"] = generation
        if template_generation:
            reflected["resourceTemplateGeneration"] = template_generation
        reflected.update(_pick(status, fields))
        if kind[1] in ("Deployment", "ReplicaSet") and not reflected:
            return None
        return reflected
    if kind == ("batch/v1", "Job"):
        job = _pick(status, [("active", False), ("succeeded", False), ("failed", False)])
        for name in ("conditions", "startTime", "completionTime"):
            if status.get(name):
                job[name] = copy.deepcopy(status[name])
        return job
    if kind == ("policy/v1", "PodDisruptionBudget"):
        pdb = _pick(status, _PDB)
        if status.get("disruptedPods"):
            pdb["disruptedPods"] = copy.deepcopy(status["disruptedPods"])
        return pdb
    if kind == ("autoscaling/v2", "HorizontalPodAutoscaler"):
        return _pick(status, [("currentReplicas", False), ("desiredReplicas", True)])
    return copy.deepcopy(dict(status))


def _sum_counters(
    template: Mapping[str, Any], items: Sequence[AggregatedStatusItem], fields: Sequence[tuple[str, bool]]
) -> dict[str, Any]:
    """Counters summed over members; ``observedGeneration`` advances to the
    template's generation only when every member has caught up."""
    generation = _int(nested(template, "metadata", "generation"))
    old = _status_of(template)
    totals = {name: 0 for name, _ in fields}
    caught_up = 0
    for item in items:
        member = item.status
        if member is None:
            continue
        member_generation = _int(member.get("generation"))
        if (
            _int(member.get("observedGeneration")) >= member_generation
            and _int(member.get("resourceTemplateGeneration")) >= generation
        ):
            caught_up += 1
        for name in totals:
            if name != "observedGeneration":
                totals[name] += _int(member.get(name))
    totals["observedGeneration"] = generation if caught_up == len(items) else _int(old.get("observedGeneration"))
    keep_zero = dict(fields)
    new = {k: v for k, v in old.items() if k not in totals}
    for name, value in totals.items():
        if value or keep_zero.get(name, False):
            new[name] = value
    return new


def _lb_ingress(entries: Sequence[Any]) -> list[dict[str, Any]]:
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    ports: dict[tuple[str, str, str], dict[str, Any]] = {}
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        key = (str(entry.get("hostname", "")), str(entry.get("ip", "")), str(entry.get("ipMode", "")))
        merged.setdefault(key, {k: copy.deepcopy(v) for k, v in entry.items() if k != "ports"})
        for port in entry.get("ports") or []:
            ports.setdefault(key, {})[repr(sorted(port.items()))] = copy.deepcopy(port)
    result = []
    for key in sorted(merged, key=lambda k: (k[1], k[0], k[2])):
        entry = merged[key]
        if key in ports:
            entry["ports"] = sorted(
                ports[key].values(),
                key=lambda p: (p.get("port", 0), p.get("protocol", ""), p.get("error", "")),
            )
        result.append(entry)
    return result


def _job_status(template: Mapping[str, Any], items: Sequence[AggregatedStatusItem], now: str) -> dict[str, Any] | None:
    old = _status_of(template)
    if any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in old.get("conditions") or []):
        return None  # a finished job's status is final
    totals = {"active": 0, "succeeded": 0, "failed": 0}
    failed: list[str] = []
    succeeded = started = completed = criteria_met = 0
    start: str | None = None
    completion: str | None = None
    for item in items:
        member = item.status
        if member is None:
            continue
        for name in totals:
            totals[name] += _int(member.get(name))
        member_conditions = member.get("conditions") or []
        finished = next(
            (
                c["type"]
                for c in member_conditions
                if c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
            ),
            None,
        )
        if finished == "Complete":
            succeeded += 1
        elif finished == "Failed":
            failed.append(item.cluster_name)
        if any(c.get("type") == "SuccessCriteriaMet" and c.get("status") == "True" for c in member_conditions):
            criteria_met += 1
        member_start = member.get("startTime")
        if member_start:
            started += 1
            if start is None or member_start < start:
                start = member_start
        member_completion = member.get("completionTime")
        if member_completion:
            completed += 1
            if completion is None or completion < member_completion:
                completion = member_completion
    status: dict[str, Any] = {k: v for k, v in totals.items() if v}
    conditions: list[dict[str, Any]] = []
    if failed:
        conditions.append(
            _job_condition("Failed", "JobFailed", f"Job executed failed in member clusters {','.join(failed)}", now)
        )
    if succeeded == len(items) and succeeded > 0:
        conditions.append(_job_condition("Complete", "Completed", "Job completed", now))
        if criteria_met == len(items):
            conditions.append(
                _job_condition(
                    "SuccessCriteriaMet",
                    "CompletionsReached",
                    "All member clusters have met success criteria",
                    now,
                )
            )
    if conditions:
        status["conditions"] = conditions
    if old.get("startTime"):
        status["startTime"] = old["startTime"]
    elif started == len(items) and started > 0 and start:
        status["startTime"] = start
    if completion and completed == len(items):
        status["completionTime"] = completion
    return status


def _job_condition(kind: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True",
        "lastProbeTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def _phase(items: Sequence[AggregatedStatusItem], order: Sequence[str], missing: str) -> str:
    phases = {str(i.status.get("phase", "")) if i.status is not None else missing for i in items}
    return next((p for p in order if p in phases), "")


def aggregate_status(template: Mapping[str, Any], items: Sequence[AggregatedStatusItem], now: str) -> dict[str, Any]:
    """The template with its status aggregated from ``items`` (unchanged when nothing differs).

    ``now`` (RFC 3339) stamps the Job conditions this creates: the engine reads no clock.
    """
    kind = (str(template.get("apiVersion", "")), str(template.get("kind", "")))
    if kind not in AGGREGATE_KINDS:
        raise KeyError(f"no built-in status aggregation for {kind[1]} in {kind[0]}")
    result = copy_json(dict(template))
    old = _status_of(result)
    new: dict[str, Any] | None
    if kind in _COUNTERS:
        new = _sum_counters(result, items, _COUNTERS[kind])
    elif kind in (("v1", "Service"), ("networking.k8s.io/v1", "Ingress")):
        if kind[1] == "Service" and nested(result, "spec", "type") != "LoadBalancer":
            return result
        entries = [e for i in items if i.status is not None for e in nested(i.status, "loadBalancer", "ingress") or []]
        ingress = _lb_ingress(entries)
        new = {**old, "loadBalancer": {"ingress": ingress} if ingress else {}}
    elif kind == ("batch/v1", "Job"):
        new = _job_status(result, items, now)
        if new is None:
            return result
    elif kind == ("batch/v1", "CronJob"):
        active: list[Any] = []
        schedule: str | None = None
        success: str | None = None
        for item in items:
            if item.status is None:
                continue
            active.extend(copy.deepcopy(item.status.get("active") or []))
            if item.status.get("lastScheduleTime") and (schedule is None or schedule < item.status["lastScheduleTime"]):
                schedule = item.status["lastScheduleTime"]
            if item.status.get("lastSuccessfulTime") and (
                success is None or success < item.status["lastSuccessfulTime"]
            ):
                success = item.status["lastSuccessfulTime"]
        new = {
            k: v for k, v in (("active", active), ("lastScheduleTime", schedule), ("lastSuccessfulTime", success)) if v
        }
    elif kind == ("v1", "Pod"):
        new = {"phase": _phase(items, ("Failed", "Pending", "Running", "Succeeded"), "Pending")}
        for field in ("containerStatuses", "initContainerStatuses"):
            statuses = [
                {"ready": bool(s.get("ready")), "state": copy.deepcopy(s.get("state") or {})}
                for i in items
                if i.status is not None
                for s in i.status.get(field) or []
            ]
            if statuses or field == "containerStatuses":
                new[field] = statuses
        if not new["phase"]:
            del new["phase"]
    elif kind == ("v1", "PersistentVolume"):
        phase = _phase(items, ("Failed", "Pending", "Available", "Bound", "Released"), "Pending")
        new = {"phase": phase} if phase else {}
    elif kind == ("v1", "PersistentVolumeClaim"):
        phase = "Bound"
        for item in items:
            if item.status is None:
                continue
            member_phase = item.status.get("phase")
            if member_phase == "Lost":
                phase = "Lost"
                break
            if member_phase != "Bound" and member_phase:
                phase = member_phase
        new = {"phase": phase}
    elif kind == ("policy/v1", "PodDisruptionBudget"):
        new = {name: 0 for name, _ in _PDB}
        disrupted: dict[str, Any] = {}
        for item in items:
            if item.status is None:
                continue
            for name in new:
                new[name] += _int(item.status.get(name))
            for pod, when in (item.status.get("disruptedPods") or {}).items():
                disrupted[f"{item.cluster_name}/{pod}"] = when
        if disrupted:
            new["disruptedPods"] = disrupted
    else:  # HorizontalPodAutoscaler
        current = sum(_int(i.status.get("currentReplicas")) for i in items if i.status is not None)
        desired = sum(_int(i.status.get("desiredReplicas")) for i in items if i.status is not None)
        new = {"desiredReplicas": desired, **({"currentReplicas": current} if current else {})}
    if new != old:
        result["status"] = new
    return result
