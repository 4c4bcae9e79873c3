"""Karmada's validating admission, per kind: one function that says whether a
request is allowed and, when not, the message its webhook denies with.

:func:`review` is what the webhook server calls for each AdmissionReview and
what ``kubectl karmada validate`` calls offline (with ``offline=True``: the
checks that need the mutating webhook's work or the server's state are skipped).
Pure: the caller passes what the rule needs to know about other objects (the
existing ResourceInterpreterCustomizations).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from karmada.api.keys import (
    CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    PROPAGATION_POLICY_PERMANENT_ID_LABEL,
)
from karmada.api.names import CLUSTER_NAME_MAX_LENGTH
from karmada.clusters.taints import label_value_problems
from karmada.quantity import parse
from karmada.validation.agent_cluster import agent_cluster_errors, is_agent
from karmada.validation.errors import FieldError, aggregate, duplicate, forbidden, invalid, not_supported, required
from karmada.validation.lua import compile_problem
from karmada.validation.policy import (
    annotations_errors,
    label_name_errors,
    labels_errors,
    override_spec_errors,
    propagation_spec_errors,
)

Obj = Mapping[str, Any]
DEPENDENCIES_ANNOTATION = "resourcebinding.karmada.io/dependencies"
DELETION_PROTECTION_LABEL = "resourcetemplate.karmada.io/deletion-protected"
# (operation name, customizations field) in Karmada's rule order
CUSTOMIZATION_RULES = (
    ("Retain", "retention"),
    ("InterpretReplica", "replicaResource"),
    ("InterpretComponent", "componentResource"),
    ("ReviseReplica", "replicaRevision"),
    ("InterpretStatus", "statusReflection"),
    ("AggregateStatus", "statusAggregation"),
    ("InterpretHealth", "healthInterpretation"),
    ("InterpretDependency", "dependencyInterpretation"),
)


@dataclass(frozen=True)
class Request:
    """The parts of an AdmissionRequest the rules read."""

    kind: str
    operation: str  # CREATE, UPDATE, DELETE
    object: Obj | None
    old_object: Obj | None = None
    namespace: str = ""
    groups: tuple[str, ...] = ()  # the requester's userInfo.groups


@dataclass(frozen=True)
class Context:
    """What a rule needs beyond the request."""

    customizations: Sequence[Obj] = ()  # existing ResourceInterpreterCustomizations
    allow_no_execute_taint_policy: bool = False
    offline: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _labels(obj: Obj | None) -> Obj:
    return _meta(obj).get("labels") or {}


def _propagation_policy(request: Request, context: Context, cluster_wide: bool) -> str | None:
    label = CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL if cluster_wide else PROPAGATION_POLICY_PERMANENT_ID_LABEL
    policy = request.object or {}
    if request.operation == "UPDATE" and request.old_object is not None:
        old = request.old_object
        if (policy.get("spec") or {}).get("schedulerName") != (old.get("spec") or {}).get("schedulerName"):
            return "the schedulerName should not be updated"
        if _labels(policy).get(label) != _labels(old).get(label):
            return f"label {label} is immutable, it can only be set by the system during creation"
    if not context.offline and label not in _labels(policy):
        return f"label {label} is required, it should be set by the mutating admission webhook during creation"
    namespace = "" if cluster_wide else request.namespace or str(_meta(policy).get("namespace") or "")
    errors = propagation_spec_errors(policy.get("spec"), namespace)
    return aggregate(errors) if errors else None


def _override_policy(request: Request, cluster_wide: bool) -> str | None:
    policy = request.object or {}
    namespace = "" if cluster_wide else request.namespace or str(_meta(policy).get("namespace") or "")
    errors = override_spec_errors(policy.get("spec"), namespace)
    return aggregate(errors) if errors else None


def binding_errors(binding: Obj) -> list[FieldError]:
    """The dependencies annotation must be JSON; component names non-empty and unique."""
    errors: list[FieldError] = []
    annotations = _meta(binding).get("annotations") or {}
    if DEPENDENCIES_ANNOTATION in annotations:
        value = annotations[DEPENDENCIES_ANNOTATION]
        try:
            parsed = json.loads(value)
            if parsed is not None and not isinstance(parsed, list):
                raise ValueError("not a list")
        except ValueError:
            errors.append(
                invalid(
                    f"metadata.annotations.{DEPENDENCIES_ANNOTATION}", value, "annotation value must be a valid JSON"
                )
            )
    if errors:
        return errors
    names: set[str] = set()
    for index, component in enumerate((binding.get("spec") or {}).get("components") or []):
        name = str((component or {}).get("name") or "")
        at = f"spec.components[{index}].name"
        if not name:
            errors.append(invalid(at, name, "component names must be non-empty"))
        elif name in names:
            errors.append(invalid(at, name, "component names must be unique"))
        else:
            names.add(name)
    return errors


def taint_policy_errors(spec: Obj, allow_no_execute: bool) -> list[FieldError]:
    """ClusterTaintPolicy: no NoExecute unless allowed, no two taints with one key and effect."""
    errors: list[FieldError] = []
    taints = list(spec.get("taints") or [])
    for i, taint in enumerate(taints):
        at = f"spec.taints[{i}]"
        if not allow_no_execute and taint.get("effect") == "NoExecute":
            errors.append(
                forbidden(
                    at,
                    "Configuring taint with NoExecute effect is not allowed, this capability must be explicitly "
                    "enabled by administrators through command-line flags",
                )
            )
        for other in taints[i + 1 :]:
            if (other.get("key"), other.get("effect")) == (taint.get("key"), taint.get("effect")):
                message = (
                    f"Duplicate taint with the same key({taint.get('key', '')}) and "
                    f"effect({taint.get('effect', '')}) is not allowed"
                )
                errors.append(duplicate(at, message))
                break
    return errors


def customization_problem(new: Obj, existing: Sequence[Obj]) -> str | None:
    """Another customization of the same target owning an operation, or a script that does not compile."""
    spec = new.get("spec") or {}
    target = spec.get("target") or {}
    rules = spec.get("customizations") or {}
    for other in existing:
        if _meta(other).get("name") == _meta(new).get("name"):
            continue
        other_spec = other.get("spec") or {}
        other_target = other_spec.get("target") or {}
        if (other_target.get("apiVersion"), other_target.get("kind")) != (target.get("apiVersion"), target.get("kind")):
            continue
        other_rules = other_spec.get("customizations") or {}
        for operation, key in CUSTOMIZATION_RULES:
            if operation == "InterpretDependency":
                continue  # several customizations may add dependencies
            if ((rules.get(key) or {}).get("luaScript")) and ((other_rules.get(key) or {}).get("luaScript")):
                return (
                    f"conflicting with InterpreterOperation({operation}) of existing "
                    f"ResourceInterpreterCustomization({_meta(other).get('name', '')})"
                )
    for operation, key in CUSTOMIZATION_RULES:
        script = (rules.get(key) or {}).get("luaScript")
        if script:
            problem = compile_problem(str(script))
            if problem:
                return f"InterpreterOperation({operation}) Lua script error: {problem}"
    return None


# -- Cluster (Karmada validates it in its aggregated API server) --------------------------------------


def cluster_name_problems(name: str) -> list[str]:
    if not name:
        return ["must be not empty"]
    if len(name) > CLUSTER_NAME_MAX_LENGTH:
        return [f"must be no more than {CLUSTER_NAME_MAX_LENGTH} characters"]
    problems = []
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name):
        problems.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
            "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        )
    return problems


# scheme://[userinfo@]host[/path][?query][#fragment], as Go's url.Parse splits it
_URL = re.compile(
    r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):)?(?://(?P<authority>[^/?#]*))?(?P<path>[^?#]*)"
    r"(?:\?(?P<query>[^#]*))?(?:#(?P<fragment>.*))?",
    re.S,
)


def _split_url(text: str) -> tuple[str, str, str, str, str]:
    """(scheme, userinfo, host, query, fragment); ValueError with Go's message when it cannot parse."""
    match = _URL.fullmatch(text)
    if match is None:  # pragma: no cover - the pattern matches any string
        raise ValueError(f'parse "{text}": invalid URL')
    scheme, authority = match["scheme"] or "", match["authority"]
    path = match["path"] or ""
    if not scheme and authority is None and ":" in path.split("/", 1)[0]:
        raise ValueError(f'parse "{text}": first path segment in URL cannot contain colon')
    userinfo, _, host = (authority or "").rpartition("@") if "@" in (authority or "") else ("", "", authority or "")
    return scheme, userinfo, host, match["query"] or "", match["fragment"] or ""


def _endpoint_errors(path: str, endpoint: str) -> list[FieldError]:
    form = "; desired format: hostname, hostname:port, IP or IP:port"
    try:
        _, userinfo, host, query, fragment = _split_url(endpoint)
    except ValueError as exc:
        return [invalid(path, endpoint, f"apiEndpoint must be a valid URL: {exc}{form}")]
    errors: list[FieldError] = []
    if not host:
        errors.append(invalid(path, host, "host must be provided" + form))
    if userinfo:
        errors.append(invalid(path, userinfo, "user information is not permitted in the URL"))
    if fragment:
        errors.append(invalid(path, fragment, "fragments are not permitted in the URL"))
    if query:
        errors.append(invalid(path, query, "query parameters are not permitted in the URL"))
    return errors


def _cluster_taint_errors(taints: list[Obj], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        at = f"{path}[{i}]"
        key, value, effect = str(taint.get("key") or ""), str(taint.get("value") or ""), taint.get("effect") or ""
        errors += label_name_errors(key, f"{at}.key")
        problems = label_value_problems(value)
        if problems:
            errors.append(invalid(f"{at}.value", value, ";".join(problems)))
        if not effect:
            errors.append(required(f"{at}.effect"))
        elif effect not in ("NoSchedule", "NoExecute"):
            errors.append(not_supported(f"{at}.effect", effect, ["NoSchedule", "NoExecute"]))
        if (key, effect) in seen:
            errors.append(duplicate(at, dict(taint), "taints must be unique by key and effect pair"))
            continue
        seen.add((key, effect))
    return errors


def _quantity(value: Any) -> Fraction:
    return parse(value if isinstance(value, int) else str(value))


def _resource_models_error(models: list[Obj], path: str) -> FieldError | None:
    max_int64 = 2**63 - 1
    for i, model in enumerate(models):
        ranges = model.get("ranges") or []
        if i and model.get("grade") == models[i - 1].get("grade"):
            return invalid(path, models, "The grade of each models should not be the same")
        if i and len(models[i - 1].get("ranges") or []) != len(ranges):
            return invalid(path, models, "The number of resource types should be the same")
        for j, item in enumerate(ranges):
            low, high = _quantity(item.get("min", 0)), _quantity(item.get("max", 0))
            if high <= low:
                return invalid(path, models, "The max value of each resource must be greater than the min value")
            if i == 0:
                if low != 0:
                    return invalid(path, models, "The min value of each resource in the first model should be 0")
            elif (models[i - 1]["ranges"][j]).get("name") != item.get("name"):
                return invalid(path, models, "The resource types of each models should be the same")
            elif _quantity(models[i - 1]["ranges"][j].get("max", 0)) != low:
                return invalid(path, models, "Model intervals for resources must be contiguous and non-overlapping")
            if i == len(models) - 1 and high < max_int64:
                return invalid(path, models, "The max value of each resource in the last model should be MaxInt64")
    return None


def cluster_errors(cluster: Obj) -> list[FieldError]:
    """Karmada's ``ValidateCluster``: the name, labels and annotations, then the spec."""
    meta = _meta(cluster)
    name = str(meta.get("name") or "")
    errors = [invalid("metadata.name", name, problem) for problem in cluster_name_problems(name)]
    errors += labels_errors(meta.get("labels"), "metadata.labels")
    errors += annotations_errors(meta.get("annotations"), "metadata.annotations")
    spec = cluster.get("spec") or {}
    sync_mode = spec.get("syncMode") or ""
    if not sync_mode:
        errors.append(required("spec.syncMode"))
    if sync_mode not in ("Pull", "Push"):
        errors.append(not_supported("spec.syncMode", sync_mode, ["Pull", "Push"]))
    if spec.get("apiEndpoint"):
        errors += _endpoint_errors("spec.apiEndpoint", str(spec["apiEndpoint"]))
    for ref in ("secretRef", "impersonatorSecretRef"):
        if isinstance(spec.get(ref), Mapping):
            for part in ("namespace", "name"):
                if not spec[ref].get(part):
                    errors.append(required(f"spec.{ref}.{part}"))
    proxy = spec.get("proxyURL")
    if proxy:
        try:
            scheme = _split_url(str(proxy))[0]
        except ValueError as exc:
            errors.append(invalid("spec.proxyURL", proxy, f"apiEndpoint must be a valid URL: {exc}"))
        else:
            if scheme not in ("http", "https", "socks5"):
                message = f'unsupported scheme "{scheme}", must be http, https, or socks5'
                errors.append(invalid("spec.proxyURL", proxy, message))
    for part in ("provider", "region"):
        problems = label_value_problems(str(spec.get(part) or ""))
        if problems:
            errors.append(invalid(f"spec.{part}", spec.get(part), "; ".join(problems)))
    if spec.get("zone") and spec.get("zones"):
        errors.append(invalid("spec.spec", dict(spec), "Zone and Zones cannot co-exist"))
    elif spec.get("zone"):
        problems = label_value_problems(str(spec["zone"]))
        if problems:
            errors.append(invalid("spec.Zone", spec["zone"], "; ".join(problems)))
    else:
        for zone in spec.get("zones") or []:
            problems = label_value_problems(str(zone))
            if problems:
                errors.append(invalid("spec.Zones", zone, "; ".join(problems)))
    if spec.get("taints"):
        errors += _cluster_taint_errors(list(spec["taints"]), "spec.taints")
    if spec.get("resourceModels"):
        model_error = _resource_models_error(list(spec["resourceModels"]), "spec.resourceModels")
        if model_error:
            errors.append(model_error)
    return errors


def cluster_update_errors(new: Obj, old: Obj) -> list[FieldError]:
    """``ValidateClusterUpdate``: the name may not change (the rest of ObjectMeta is the API server's)."""
    errors: list[FieldError] = []
    if _meta(new).get("name") != _meta(old).get("name"):
        errors.append(invalid("metadata.name", _meta(new).get("name"), "field is immutable"))
    return errors + cluster_errors(new)


def deletion_problem(old: Obj | None) -> str | None:
    """Deletion of an object labelled ``deletion-protected: Always`` is refused."""
    if _labels(old).get(DELETION_PROTECTION_LABEL) == "Always":
        return f"This resource is protected, please make sure to remove the label: {DELETION_PROTECTION_LABEL}"
    return None


VALIDATED_KINDS = (
    "PropagationPolicy",
    "ClusterPropagationPolicy",
    "OverridePolicy",
    "ClusterOverridePolicy",
    "ResourceBinding",
    "ClusterResourceBinding",
    "Work",
    "ResourceInterpreterCustomization",
    "ClusterTaintPolicy",
    "Cluster",
)


def review(request: Request, context: Context | None = None) -> str | None:
    """None when Karmada's webhook allows ``request``; otherwise the message it denies with."""
    context = context or Context()
    if request.operation == "DELETE":
        return deletion_problem(request.old_object)
    obj = request.object or {}
    kind = request.kind
    if kind == "PropagationPolicy":
        return _propagation_policy(request, context, cluster_wide=False)
    if kind == "ClusterPropagationPolicy":
        return _propagation_policy(request, context, cluster_wide=True)
    if kind == "OverridePolicy":
        return _override_policy(request, cluster_wide=False)
    if kind == "ClusterOverridePolicy":
        return _override_policy(request, cluster_wide=True)
    if kind == "ResourceBinding":
        errors = binding_errors(obj)
    elif kind == "ClusterTaintPolicy":
        errors = taint_policy_errors(obj.get("spec") or {}, context.allow_no_execute_taint_policy)
    elif kind == "ResourceInterpreterCustomization":
        return customization_problem(obj, context.customizations)
    elif kind == "Cluster":
        if request.operation == "UPDATE" and request.old_object is not None:
            errors = cluster_update_errors(obj, request.old_object)
        else:
            errors = cluster_errors(obj)
        if is_agent(request.groups):
            errors = agent_cluster_errors(obj, request.old_object if request.operation == "UPDATE" else None) + errors
    else:
        return None  # ClusterResourceBinding and Work have mutating admission only
    return aggregate(errors) if errors else None
