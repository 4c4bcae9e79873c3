"""Workloads: Deployment, ReplicaSet, StatefulSet, DaemonSet (pkg/apis/apps/validation),
Job and CronJob (pkg/apis/batch/validation): selectors, replica counts,
strategies and their pod templates."""

from __future__ import annotations

import re
from typing import Any

from localkube.errors import Cause, GoLiteral, field_forbidden, field_invalid, field_required
from localkube.validation.fields import (
    go_map,
    label_selector,
    list_at,
    non_negative,
    obj_at,
    one_of,
)
from localkube.validation.pods import validate_pod_template

Obj = dict[str, Any]

# a pod managed by a replicating controller must always restart
ALWAYS = ["Always"]
JOB_RESTART_POLICIES = ["OnFailure", "Never"]
_PERCENT = re.compile(r"[0-9]+%")
PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used"
    " for validation is '[0-9]+%')"
)
PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used"
    " for validation is '[0-9]+%')"
)


def _selector_and_template(
    spec: Obj, kind: str, restart_policies: list[str] | None, claimed: frozenset[str] = frozenset()
) -> list[Cause]:
    causes: list[Cause] = []
    selector = spec.get("selector")
    template = obj_at(spec.get("template"))
    template_labels = obj_at(obj_at(template.get("metadata")).get("labels"))
    if selector is None:
        causes.append(field_required("spec.selector"))
    else:
        selector = obj_at(selector)
        causes += label_selector("spec.selector", selector)
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            causes.append(field_invalid("spec.selector", "", f"empty selector is invalid for {kind}"))
        elif not _selects(selector, template_labels):
            causes.append(
                field_invalid(
                    "spec.template.metadata.labels",
                    go_map(template_labels),
                    "`selector` does not match template `labels`",
                )
            )
    if spec.get("template") is None:
        causes.append(field_required("spec.template"))
    else:
        causes += validate_pod_template(template, "spec.template", restart_policies, claimed)
    return causes


def _selects(selector: Obj, labels: Obj) -> bool:
    if any(labels.get(k) != v for k, v in obj_at(selector.get("matchLabels")).items()):
        return False
    for raw_requirement in list_at(selector.get("matchExpressions")):
        requirement = obj_at(raw_requirement)
        key, operator = str(requirement.get("key", "")), requirement.get("operator")
        values = list_at(requirement.get("values"))
        present = key in labels
        if (
            (operator == "In" and (not present or labels[key] not in values))
            or (operator == "NotIn" and present and labels[key] in values)
            or (operator == "Exists" and not present)
            or (operator == "DoesNotExist" and present)
        ):
            return False
    return True


def _int_or_percent(path: str, value: Any) -> list[Cause]:
    if value is None:
        return []
    if isinstance(value, str):
        if not _PERCENT.fullmatch(value):
            return [field_invalid(path, value, PERCENT_MSG)]
        if int(value[:-1]) > 100:
            return [field_invalid(path, value, "must not be greater than 100%")]
        return []
    return non_negative(path, value)


def _is_zero(value: Any) -> bool:
    return value in (0, "0%")


def validate_deployment(obj: Obj) -> list[Cause]:
    spec = obj_at(obj.get("spec"))
    causes = non_negative("spec.replicas", spec.get("replicas"))
    causes += _selector_and_template(spec, "deployment", ALWAYS)
    strategy = obj_at(spec.get("strategy"))
    kind = strategy.get("type")
    causes += one_of("spec.strategy.type", kind, ["Recreate", "RollingUpdate"], required=True)
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate" and rolling is not None:
        causes.append(
            field_forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")
        )
    if kind == "RollingUpdate" and rolling is not None:
        rolling = obj_at(rolling)
        unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
        causes += _int_or_percent("spec.strategy.rollingUpdate.maxUnavailable", unavailable)
        causes += _int_or_percent("spec.strategy.rollingUpdate.maxSurge", surge)
        if _is_zero(unavailable) and _is_zero(surge):
            causes.append(
                field_invalid(
                    "spec.strategy.rollingUpdate.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0"
                )
            )
    causes += non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
    causes += non_negative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    deadline = spec.get("progressDeadlineSeconds")
    if deadline is not None:
        causes += non_negative("spec.progressDeadlineSeconds", deadline)
        if isinstance(deadline, int) and deadline <= int(spec.get("minReadySeconds") or 0):
            causes.append(
                field_invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds")
            )
    return causes


def validate_replicaset(obj: Obj) -> list[Cause]:
    spec = obj_at(obj.get("spec"))
    causes = non_negative("spec.replicas", spec.get("replicas"))
    causes += non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
    return causes + _selector_and_template(spec, "replicaset", ALWAYS)


def validate_statefulset(obj: Obj) -> list[Cause]:
    spec = obj_at(obj.get("spec"))
    causes = non_negative("spec.replicas", spec.get("replicas"))
    causes += one_of(
        "spec.podManagementPolicy", spec.get("podManagementPolicy"), ["OrderedReady", "Parallel"], required=True
    )
    strategy = obj_at(spec.get("updateStrategy"))
    causes += one_of("spec.updateStrategy.type", strategy.get("type"), ["OnDelete", "RollingUpdate"], required=True)
    if strategy.get("type") == "OnDelete" and strategy.get("rollingUpdate") is not None:
        causes.append(
            field_forbidden("spec.updateStrategy.rollingUpdate", "only allowed for updateStrategy 'RollingUpdate'")
        )
    partition = obj_at(strategy.get("rollingUpdate")).get("partition")
    causes += non_negative("spec.updateStrategy.rollingUpdate.partition", partition)
    causes += non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
    # the pods' volumes include one per claim template, which their containers mount by name
    claims = {obj_at(obj_at(c).get("metadata")).get("name") for c in list_at(spec.get("volumeClaimTemplates"))}
    claimed = frozenset(str(name) for name in claims if name)
    return causes + _selector_and_template(spec, "statefulset", ALWAYS, claimed)


def validate_daemonset(obj: Obj) -> list[Cause]:
    spec = obj_at(obj.get("spec"))
    causes = _selector_and_template(spec, "daemonset", ALWAYS)
    strategy = obj_at(spec.get("updateStrategy"))
    causes += one_of("spec.updateStrategy.type", strategy.get("type"), ["OnDelete", "RollingUpdate"], required=True)
    rolling = obj_at(strategy.get("rollingUpdate"))
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    causes += _int_or_percent("spec.updateStrategy.rollingUpdate.maxUnavailable", unavailable)
    causes += _int_or_percent("spec.updateStrategy.rollingUpdate.maxSurge", surge)
    if strategy.get("type") == "RollingUpdate" and _is_zero(unavailable) and _is_zero(surge):
        causes.append(
            field_invalid(
                "spec.updateStrategy.rollingUpdate.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0"
            )
        )
    causes += non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
    causes += non_negative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    return causes


def _job_spec(spec: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for field in ("parallelism", "completions", "backoffLimit", "ttlSecondsAfterFinished"):
        causes += non_negative(f"{path}.{field}", spec.get(field))
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and (not isinstance(deadline, int) or deadline <= 0):
        causes.append(field_invalid(f"{path}.activeDeadlineSeconds", deadline, "must be greater than 0"))
    causes += one_of(f"{path}.completionMode", spec.get("completionMode"), ["NonIndexed", "Indexed"])
    if spec.get("completionMode") == "Indexed" and spec.get("completions") is None:
        causes.append(field_required(f"{path}.completions", "when completion mode is Indexed"))
    template = obj_at(spec.get("template"))
    if spec.get("template") is None:
        causes.append(field_required(f"{path}.template"))
    else:
        causes += validate_pod_template(template, f"{path}.template", JOB_RESTART_POLICIES)
    return causes


def validate_job(obj: Obj) -> list[Cause]:
    spec = obj_at(obj.get("spec"))
    causes = _job_spec(spec, "spec")
    selector = spec.get("selector")
    if selector is None:
        causes.append(field_required("spec.selector"))
    else:
        causes += label_selector("spec.selector", obj_at(selector))
        labels = obj_at(obj_at(obj_at(spec.get("template")).get("metadata")).get("labels"))
        if not _selects(obj_at(selector), labels):
            causes.append(
                field_invalid(
                    "spec.template.metadata.labels", go_map(labels), "`selector` does not match template `labels`"
                )
            )
    return causes


_CRON_FIELD = re.compile(
    r"(\*|\?|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(/[0-9]+)?(,(\*|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(/[0-9]+)?)*"
)
_CRON_MACROS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}


def validate_cronjob(obj: Obj) -> list[Cause]:
    spec = obj_at(obj.get("spec"))
    causes: list[Cause] = []
    schedule = spec.get("schedule")
    if not schedule:
        causes.append(field_required("spec.schedule"))
    else:
        text = str(schedule)
        fields = text.split()
        if text.startswith(("TZ=", "CRON_TZ=")):
            causes.append(
                field_invalid("spec.schedule", text, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
            )
        elif not (text in _CRON_MACROS or text.startswith("@every ")) and (
            len(fields) != 5 or not all(_CRON_FIELD.fullmatch(f) for f in fields)
        ):
            problem = (
                f"expected exactly 5 fields, found {len(fields)}: {text}"
                if len(fields) != 5
                else f"failed to parse: {text}"
            )
            causes.append(field_invalid("spec.schedule", text, problem))
    causes += one_of(
        "spec.concurrencyPolicy", spec.get("concurrencyPolicy"), ["Allow", "Forbid", "Replace"], required=True
    )
    for field in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit", "startingDeadlineSeconds"):
        causes += non_negative(f"spec.{field}", spec.get(field))
    job = obj_at(spec.get("jobTemplate"))
    causes += _job_spec(obj_at(job.get("spec")), "spec.jobTemplate.spec")
    return causes


def selector_immutable(obj: Obj, old: Obj) -> list[Cause]:
    new = obj_at(obj.get("spec")).get("selector")
    if new != obj_at(old.get("spec")).get("selector"):
        return [field_invalid("spec.selector", _selector_text(new), "field is immutable")]
    return []


def _selector_text(selector: Any) -> Any:
    labels = obj_at(obj_at(selector).get("matchLabels"))
    items = ", ".join(f'"{k}":"{v}"' for k, v in sorted(labels.items()))
    return GoLiteral(
        "v1.LabelSelector{MatchLabels:map[string]string{"
        + items
        + "}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
    )


__all__ = [
    "selector_immutable",
    "validate_cronjob",
    "validate_daemonset",
    "validate_deployment",
    "validate_job",
    "validate_replicaset",
    "validate_statefulset",
]
