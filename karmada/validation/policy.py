"""Karmada's rules for PropagationSpec and OverrideSpec (its ``pkg/util/validation``).

Plain functions over the JSON form of a spec (what an AdmissionReview carries and
what ``kubectl karmada validate`` reads), each returning the field errors in
Karmada's order with Karmada's field paths and sentences.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karmada.clusters.taints import label_value_problems, qualified_name_problems
from karmada.validation.errors import FieldError, invalid, not_supported, required

Obj = Mapping[str, Any]
FIELD_SELECTOR_KEYS = ("provider", "region", "zone")
_TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _map(value: Any) -> Obj:
    return value if isinstance(value, Mapping) else {}


def _maps(value: Any) -> list[Obj]:
    return [_map(item) for item in _items(value)]


def json_pointer_problem(pointer: Any) -> str | None:
    """go-openapi's ``jsonpointer.New`` error, or None for a valid pointer."""
    text = pointer if isinstance(pointer, str) else ""
    if text and not text.startswith("/"):
        return 'JSON pointer must be empty or start with a "/"'
    return None


def label_name_errors(name: str, path: str) -> list[FieldError]:
    """``metav1validation.ValidateLabelName``."""
    return [invalid(path, name, problem) for problem in qualified_name_problems(name)]


def labels_errors(labels: Any, path: str) -> list[FieldError]:
    """``metav1validation.ValidateLabels``: each key a qualified name, each value a label value."""
    errors: list[FieldError] = []
    for key, value in _map(labels).items():
        errors += label_name_errors(str(key), path)
        errors += [invalid(path, value, problem) for problem in label_value_problems(str(value))]
    return errors


def annotations_errors(annotations: Any, path: str) -> list[FieldError]:
    """``apivalidation.ValidateAnnotations``: keys are qualified names (lower-cased), 256 KiB in all."""
    errors: list[FieldError] = []
    total = 0
    for key, value in _map(annotations).items():
        errors += [invalid(path, key, problem) for problem in qualified_name_problems(str(key).lower())]
        total += len(str(key)) + len(str(value))
    if total > _TOTAL_ANNOTATION_SIZE_LIMIT:
        errors.append(FieldError("Too long", path, f"must have at most {_TOTAL_ANNOTATION_SIZE_LIMIT} bytes"))
    return errors


# -- placement -------------------------------------------------------------------------------------


def field_selector_problem(selector: Any) -> str | None:
    """``ValidatePolicyFieldSelector``: keys provider/region/zone, operators In/NotIn."""
    for expression in _items(_map(selector).get("matchExpressions")):
        key = _map(expression).get("key", "")
        if key not in FIELD_SELECTOR_KEYS:
            return f'unsupported key "{key}", must be provider, region, or zone'
        operator = _map(expression).get("operator", "")
        if operator not in ("In", "NotIn"):
            return f'unsupported operator "{operator}", must be In or NotIn'
    return None


def cluster_affinity_errors(affinity: Any, path: str) -> list[FieldError]:
    if not isinstance(affinity, Mapping):
        return []
    selector = affinity.get("fieldSelector")
    problem = field_selector_problem(selector)
    return [invalid(f"{path}.fieldSelector", selector, problem)] if problem else []


def _empty_cluster_affinity(affinity: Obj) -> bool:
    return (
        affinity.get("labelSelector") is None
        and affinity.get("fieldSelector") is None
        and not affinity.get("clusterNames")
        and not affinity.get("excludeClusters")
    )


def overflow_allowed(strategy: Any) -> bool:
    """``util.IsOverflowSchedulingAllowed``: Divided with Aggregated, or Weighted by dynamic weight."""
    if not isinstance(strategy, Mapping) or strategy.get("replicaSchedulingType", "Divided") != "Divided":
        return False
    preference = strategy.get("replicaDivisionPreference")
    if preference == "Aggregated":
        return True
    if preference == "Weighted":
        return bool(_map(strategy.get("weightPreference")).get("dynamicWeight"))
    return False


def _overflow_errors(term: Obj, path: str) -> list[FieldError]:
    overflows = term.get("overflowAffinities")
    if overflows is None:
        return []
    errors: list[FieldError] = []
    if _empty_cluster_affinity(term):
        errors.append(
            invalid(
                f"{path}.overflowAffinities",
                overflows,
                "overflowAffinities can only be used together with the inline ClusterAffinity",
            )
        )
    names = {term.get("affinityName", "")}
    for index, overflow in enumerate(_items(overflows)):
        at = f"{path}.overflowAffinities[{index}]"
        name = str(_map(overflow).get("affinityName", ""))
        errors += [invalid(f"{at}.affinityName", name, problem) for problem in qualified_name_problems(name)]
        if name in names:
            errors.append(
                invalid(
                    f"{at}.affinityName",
                    name,
                    "overflow affinity name must be unique and must not duplicate the primary group's affinityName",
                )
            )
        else:
            names.add(name)
        errors += cluster_affinity_errors(overflow, at)
    return errors


def cluster_affinities_errors(terms: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for index, term in enumerate(_maps(terms)):
        name = str(term.get("affinityName", ""))
        errors += [invalid(f"{path}[{index}]", name, problem) for problem in qualified_name_problems(name)]
        if name in seen:
            errors.append(invalid(path, terms, "each affinity term in a policy must have a unique name"))
        else:
            seen.add(name)
        errors += cluster_affinity_errors(term, f"{path}[{index}]")
        errors += _overflow_errors(term, f"{path}[{index}]")
    return errors


def spread_constraint_errors(constraints: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    by_field: dict[str, bool] = {}  # spreadByField -> whether its duplicate was reported
    for index, constraint in enumerate(_maps(constraints)):
        at = f"{path}[{index}]"
        spread_field = constraint.get("spreadByField") or ""
        min_groups = int(constraint.get("minGroups") or 0)
        max_groups = int(constraint.get("maxGroups") or 0)
        if spread_field and constraint.get("spreadByLabel"):
            errors.append(invalid(at, constraint, "spreadByLabel should not co-exist with spreadByField"))
        if min_groups < 0:
            errors.append(invalid(at, constraint, "minGroups lower than 0 is not allowed"))
        if max_groups < 0:
            errors.append(invalid(at, constraint, "maxGroups lower than 0 is not allowed"))
        if max_groups > 0 and max_groups < min_groups:
            errors.append(invalid(at, constraint, "maxGroups lower than minGroups is not allowed"))
        if spread_field:
            if spread_field in by_field and not by_field[spread_field]:
                errors.append(invalid(path, constraints, f"multiple {spread_field} spread constraints are not allowed"))
                by_field[spread_field] = True
            by_field.setdefault(spread_field, False)
    if by_field and "cluster" not in by_field:
        errors.append(
            invalid(
                path,
                constraints,
                "the cluster spread constraint must be enabled in one of the constraints "
                "in case of SpreadByField is enabled",
            )
        )
    return errors


def workload_affinity_errors(affinity: Any, path: str) -> list[FieldError]:
    if not isinstance(affinity, Mapping):
        return []
    errors: list[FieldError] = []
    keys: dict[str, str] = {}
    for part in ("affinity", "antiAffinity"):
        term = affinity.get(part)
        if isinstance(term, Mapping):
            key = str(term.get("groupByLabelKey", ""))
            keys[part] = key
            at = f"{path}.{part}.groupByLabelKey"
            errors += [invalid(at, key, problem) for problem in qualified_name_problems(key)]
    if len(keys) == 2 and keys["affinity"] == keys["antiAffinity"]:
        errors.append(invalid(path, affinity, "affinity and antiAffinity must not use the same groupByLabelKey"))
    return errors


def cluster_tolerations_errors(tolerations: Any, path: str) -> list[FieldError]:
    """Lt and Gt (node-only comparison operators) are refused for clusters."""
    return [
        not_supported(f"{path}[{index}].operator", _map(t).get("operator"), ["", "Exists", "Equal"])
        for index, t in enumerate(_items(tolerations))
        if _map(t).get("operator") in ("Lt", "Gt")
    ]


def placement_errors(placement: Any, path: str) -> list[FieldError]:
    placement = _map(placement)
    errors: list[FieldError] = []
    if placement.get("clusterAffinity") is not None and placement.get("clusterAffinities") is not None:
        errors.append(invalid(path, placement, "clusterAffinities cannot co-exist with clusterAffinity"))
    allowed = overflow_allowed(placement.get("replicaScheduling"))
    for index, term in enumerate(_items(placement.get("clusterAffinities"))):
        overflows = _map(term).get("overflowAffinities")
        if overflows is not None and not allowed:
            errors.append(
                invalid(
                    f"{path}.clusterAffinities[{index}].overflowAffinities",
                    overflows,
                    "overflowAffinities can only be used together with dynamic weight or aggregated scheduling",
                )
            )
    errors += cluster_affinity_errors(placement.get("clusterAffinity"), f"{path}.clusterAffinity")
    errors += cluster_affinities_errors(placement.get("clusterAffinities"), f"{path}.clusterAffinities")
    errors += spread_constraint_errors(placement.get("spreadConstraints"), f"{path}.spreadConstraints")
    errors += workload_affinity_errors(placement.get("workloadAffinity"), f"{path}.workloadAffinity")
    errors += cluster_tolerations_errors(placement.get("clusterTolerations"), f"{path}.clusterTolerations")
    return errors


# -- failover --------------------------------------------------------------------------------------


def _state_preservation_errors(preservation: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for index, rule in enumerate(_items(_map(preservation).get("rules"))):
        name = str(_map(rule).get("aliasLabelName", ""))
        errors += label_name_errors(name, f"{path}.rules[{index}].aliasLabelName")
    return errors


def application_failover_errors(application: Any, path: str) -> list[FieldError]:
    if not isinstance(application, Mapping):
        return []
    errors: list[FieldError] = []
    conditions = _map(application.get("decisionConditions"))
    toleration = conditions.get("tolerationSeconds", 300)  # the CRD's default
    if isinstance(toleration, int) and toleration < 0:
        errors.append(
            invalid(f"{path}.decisionConditions.tolerationSeconds", toleration, "must be greater than or equal to 0")
        )
    purge_mode = application.get("purgeMode", "")  # the API server has filled in the CRD's default
    grace = application.get("gracePeriodSeconds")
    if purge_mode != "Gracefully" and grace is not None:
        errors.append(invalid(f"{path}.gracePeriodSeconds", grace, "only takes effect when purgeMode is gracefully"))
    if purge_mode == "Gracefully" and grace is None:
        errors.append(invalid(f"{path}.gracePeriodSeconds", None, "should not be empty when purgeMode is gracefully"))
    if isinstance(grace, int) and grace <= 0:
        errors.append(invalid(f"{path}.gracePeriodSeconds", grace, "must be greater than 0"))
    if application.get("statePreservation") is not None:
        errors += _state_preservation_errors(application["statePreservation"], f"{path}.statePreservation")
    return errors


def failover_errors(failover: Any, path: str) -> list[FieldError]:
    if not isinstance(failover, Mapping):
        return []
    errors = application_failover_errors(failover.get("application"), f"{path}.application")
    cluster = failover.get("cluster")
    if isinstance(cluster, Mapping) and cluster.get("statePreservation") is not None:
        errors += _state_preservation_errors(cluster["statePreservation"], f"{path}.cluster.statePreservation")
    return errors


# -- specs -----------------------------------------------------------------------------------------


def _selector_namespace_errors(selectors: Any, namespace: str, path: str) -> list[FieldError]:
    if not namespace:
        return []
    return [
        invalid(
            f"{path}[{index}].namespace",
            _map(s).get("namespace", ""),
            "namespace of resource selector must be the same as the namespace of the policy",
        )
        for index, s in enumerate(_items(selectors))
        if _map(s).get("namespace", "") != namespace
    ]


def propagation_spec_errors(spec: Any, namespace: str = "") -> list[FieldError]:
    """``ValidatePropagationSpec``; ``namespace`` is a PropagationPolicy's (empty for a cluster-wide one)."""
    spec = _map(spec)
    errors = placement_errors(spec.get("placement"), "spec.placement")
    failover = _map(spec.get("failover"))
    propagate_deps = bool(spec.get("propagateDeps", False))
    if failover.get("application") is not None and not propagate_deps:
        errors.append(
            invalid("spec.propagateDeps", propagate_deps, "application failover is set, propagateDeps must be true")
        )
    errors += failover_errors(spec.get("failover"), "spec.failover")
    errors += _selector_namespace_errors(spec.get("resourceSelectors"), namespace, "spec.resourceSelectors")
    if spec.get("preemption") == "Always":
        message = (
            "name cannot be empty if preemption is Always, the empty name may cause unexpected resources preemption"
        )
        errors += [
            invalid(f"spec.resourceSelectors[{index}].name", "", message)
            for index, s in enumerate(_items(spec.get("resourceSelectors")))
            if not _map(s).get("name")
        ]
    suspension = spec.get("suspension")
    dispatching = isinstance(suspension, Mapping) and suspension.get("dispatching") is True
    if dispatching and _map(_map(suspension).get("dispatchingOnClusters")).get("clusterNames"):
        errors.append(
            invalid(
                "spec.suspension.suspension",  # Karmada's path: the child of the suspension path
                suspension,
                "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames",
            )
        )
    return errors


_DEPRECATED_OVERRIDERS = (
    "plaintext",
    "imageOverrider",
    "commandOverrider",
    "argsOverrider",
    "labelsOverrider",
    "annotationsOverrider",
)


def _operator_errors(operator: Any, patch: Obj, path: str) -> list[FieldError]:
    has_value = patch.get("value") is not None
    if operator in ("add", "replace") and not has_value:
        return [invalid(path, patch.get("value"), "value is required for add or replace operation")]
    if operator == "remove" and has_value:
        return [invalid(path, patch.get("value"), "value is not allowed for remove operation")]
    return []


def _patch_errors(patches: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for index, patch in enumerate(_maps(patches)):
        at = f"{path}[{index}]"
        problem = json_pointer_problem(patch.get("subPath"))
        if problem:
            errors.append(invalid(f"{at}.subPath", patch.get("subPath"), problem))
        errors += _operator_errors(patch.get("operator"), patch, f"{at}.value")
    return errors


def override_rules_errors(rules: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for rule_index, rule in enumerate(_maps(rules)):
        at = f"{path}.overrideRules[{rule_index}]"
        overriders = _map(rule.get("overriders"))
        for index, item in enumerate(_items(overriders.get("annotationsOverrider"))):
            value_path = f"{at}.overriders.annotationsOverrider[{index}].value"
            errors += annotations_errors(_map(item).get("value"), value_path)
        for index, item in enumerate(_items(overriders.get("labelsOverrider"))):
            errors += labels_errors(_map(item).get("value"), f"{at}.overriders.labelsOverrider[{index}].value")
        for index, item in enumerate(_items(overriders.get("imageOverrider"))):
            predicate = _map(item).get("predicate")
            if isinstance(predicate, Mapping):
                problem = json_pointer_problem(predicate.get("path"))
                if problem:
                    pointer_path = f"{at}.overriders.imageOverrider[{index}].predicate.path"
                    errors.append(invalid(pointer_path, predicate.get("path"), problem))
        for index, item in enumerate(_maps(overriders.get("fieldOverrider"))):
            field_path = f"{at}.overriders.fieldOverrider[{index}]"
            if item.get("yaml") and item.get("json"):
                errors.append(
                    invalid(field_path, item, "FieldOverrider has both YAML and JSON set. Only one is allowed")
                )
            if not item.get("yaml") and not item.get("json"):
                errors.append(required(field_path, "FieldOverrider must have either JSON or YAML set"))
            problem = json_pointer_problem(item.get("fieldPath"))
            if problem:
                errors.append(invalid(f"{field_path}.fieldPath", item.get("fieldPath"), problem))
            errors += _patch_errors(item.get("json"), f"{field_path}.json")
            errors += _patch_errors(item.get("yaml"), f"{field_path}.yaml")
        errors += cluster_affinity_errors(rule.get("targetCluster"), f"{at}.targetCluster")
    return errors


def override_spec_errors(spec: Any, namespace: str = "") -> list[FieldError]:
    """``ValidateOverrideSpec``; ``namespace`` is an OverridePolicy's (empty for a cluster-wide one)."""
    spec = _map(spec)
    errors: list[FieldError] = []
    target = spec.get("targetCluster")
    rules = spec.get("overrideRules")
    if target is not None:
        errors += cluster_affinity_errors(target, "spec.targetCluster")
    if target is not None and rules is not None:
        errors.append(invalid("spec.targetCluster", target, "overrideRules and targetCluster can't co-exist"))
    overriders = _map(spec.get("overriders"))
    if any(overriders.get(name) for name in _DEPRECATED_OVERRIDERS) and rules is not None:
        errors.append(invalid("spec.overriders", overriders, "overrideRules and overriders can't co-exist"))
    errors += override_rules_errors(rules, "spec")
    errors += _selector_namespace_errors(spec.get("resourceSelectors"), namespace, "spec.resourceSelectors")
    return errors
