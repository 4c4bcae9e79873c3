"""HorizontalPodAutoscalers: stored as autoscaling/v2, also served as autoscaling/v1.

The v1 view carries only a CPU-utilization target; as kube-apiserver does, the
v2 fields v1 cannot express travel in annotations (``autoscaling.alpha.kubernetes.io/
metrics``, ``current-metrics``, ``conditions``, ``behavior``), so an object written
through one version and read through the other loses nothing. Deviation: the
annotations hold the v2 JSON of those fields, where kube-apiserver writes v1's
older MetricSpec shape. Defaults are v2's (minReplicas 1, CPU at 80 %, and the
scale-up/scale-down rules of a given ``behavior``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from localkube.kinds import Context, Strategy, register

Obj = dict[str, Any]

PREFIX = "autoscaling.alpha.kubernetes.io/"
DEFAULT_CPU_UTILIZATION = 80


def _cpu_metric(utilization: int) -> Obj:
    return {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}},
    }


def _is_cpu_utilization(metric: Obj) -> bool:
    resource = metric.get("resource") or {}
    target = resource.get("target") or {}
    return metric.get("type") == "Resource" and resource.get("name") == "cpu" and target.get("type") == "Utilization"


def _scale_rules(rules: Obj | None, window: int, policies: list[Obj]) -> Obj:
    filled = dict(rules or {})
    filled.setdefault("stabilizationWindowSeconds", window)
    filled.setdefault("selectPolicy", "Max")
    if not filled.get("policies"):
        filled["policies"] = policies
    return filled


def default_v2(obj: Obj) -> None:
    """autoscaling/v2 defaults (pkg/apis/autoscaling/v2/defaults.go)."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _scale_rules(
            behavior.get("scaleUp"),
            0,
            [{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}],
        )
        behavior["scaleDown"] = _scale_rules(
            behavior.get("scaleDown"), 300, [{"type": "Percent", "value": 100, "periodSeconds": 15}]
        )


def _take_annotation(annotations: Obj, key: str) -> Any:
    raw = annotations.pop(PREFIX + key, None)
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def to_v1(stored: Obj) -> Obj:
    """The stored v2 object as autoscaling/v1 shows it."""
    view = copy.deepcopy(stored)
    spec = view.get("spec") or {}
    annotations = dict(view["metadata"].get("annotations") or {})
    metrics = spec.pop("metrics", None) or []
    cpu = next((m for m in metrics if _is_cpu_utilization(m)), None)
    others = [m for m in metrics if m is not cpu]
    if cpu is not None:
        spec["targetCPUUtilizationPercentage"] = cpu["resource"]["target"].get("averageUtilization")
    if others:
        annotations[PREFIX + "metrics"] = json.dumps(others, separators=(",", ":"))
    behavior = spec.pop("behavior", None)
    if behavior:
        annotations[PREFIX + "behavior"] = json.dumps(behavior, separators=(",", ":"))
    status = view.get("status")
    if isinstance(status, dict):
        current = status.pop("currentMetrics", None) or []
        current_cpu = next(
            (m for m in current if m.get("type") == "Resource" and (m.get("resource") or {}).get("name") == "cpu"),
            None,
        )
        if current_cpu is not None:
            usage = (current_cpu["resource"].get("current") or {}).get("averageUtilization")
            if usage is not None:
                status["currentCPUUtilizationPercentage"] = usage
        if current:
            annotations[PREFIX + "current-metrics"] = json.dumps(current, separators=(",", ":"))
        conditions = status.pop("conditions", None)
        if conditions:
            annotations[PREFIX + "conditions"] = json.dumps(conditions, separators=(",", ":"))
        status.setdefault("currentReplicas", 0)
        status.setdefault("desiredReplicas", 0)
    if annotations:
        view["metadata"]["annotations"] = annotations
    view["apiVersion"] = "autoscaling/v1"
    return view


def from_v1(written: Obj) -> Obj:
    """An object written through autoscaling/v1, in the stored v2 shape."""
    stored = copy.deepcopy(written)
    meta = stored.setdefault("metadata", {})
    annotations = dict(meta.get("annotations") or {})
    spec = stored.setdefault("spec", {})
    metrics = _take_annotation(annotations, "metrics") or []
    target = spec.pop("targetCPUUtilizationPercentage", None)
    if target is not None:
        metrics = [_cpu_metric(target), *metrics]
    if metrics:
        spec["metrics"] = metrics
    behavior = _take_annotation(annotations, "behavior")
    if behavior:
        spec["behavior"] = behavior
    status = stored.get("status")
    current = _take_annotation(annotations, "current-metrics")
    conditions = _take_annotation(annotations, "conditions")
    if isinstance(status, dict):
        usage = status.pop("currentCPUUtilizationPercentage", None)
        if current:
            status["currentMetrics"] = current
        elif usage is not None:
            status["currentMetrics"] = [
                {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": usage}}}
            ]
        if conditions:
            status["conditions"] = conditions
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    stored["apiVersion"] = "autoscaling/v2"
    return stored


class HorizontalPodAutoscalerStrategy(Strategy):
    def prepare_create(self, obj: Obj, context: Context) -> None:
        default_v2(obj)

    def prepare_update(self, obj: Obj, old: Obj, context: Context) -> None:
        default_v2(obj)


register("HorizontalPodAutoscaler", HorizontalPodAutoscalerStrategy())
