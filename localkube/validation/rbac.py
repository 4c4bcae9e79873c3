"""Roles, ClusterRoles and their bindings (pkg/apis/rbac/validation)."""

from __future__ import annotations

from typing import Any

from localkube.errors import Cause, GoLiteral, field_invalid, field_required, field_unsupported
from localkube.validation.fields import go_strings, list_at, obj_at

Obj = dict[str, Any]


def _rule(rule: Obj, path: str, namespaced: bool) -> list[Cause]:
    causes: list[Cause] = []
    if not rule.get("verbs"):
        causes.append(field_required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = list_at(rule.get("nonResourceURLs"))
    if urls:
        if namespaced:
            causes.append(
                field_invalid(
                    f"{path}.nonResourceURLs", go_strings(urls), "namespaced rules cannot apply to non-resource URLs"
                )
            )
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            causes.append(
                field_invalid(
                    f"{path}.nonResourceURLs",
                    go_strings(urls),
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return causes
    if not rule.get("apiGroups"):
        causes.append(field_required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
    if not rule.get("resources"):
        causes.append(field_required(f"{path}.resources", "resource rules must supply at least one resource"))
    return causes


def validate_role(obj: Obj) -> list[Cause]:
    return [c for i, r in enumerate(list_at(obj.get("rules"))) for c in _rule(obj_at(r), f"rules[{i}]", True)]


def validate_clusterrole(obj: Obj) -> list[Cause]:
    causes = [c for i, r in enumerate(list_at(obj.get("rules"))) for c in _rule(obj_at(r), f"rules[{i}]", False)]
    aggregation = obj.get("aggregationRule")
    if aggregation is not None and not list_at(obj_at(aggregation).get("clusterRoleSelectors")):
        causes.append(
            field_required(
                "aggregationRule.clusterRoleSelectors",
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            )
        )
    return causes


def validate_binding(obj: Obj, cluster: bool) -> list[Cause]:
    causes: list[Cause] = []
    ref = obj_at(obj.get("roleRef"))
    if ref.get("apiGroup") != "rbac.authorization.k8s.io":
        causes.append(field_unsupported("roleRef.apiGroup", ref.get("apiGroup", ""), ["rbac.authorization.k8s.io"]))
    allowed = ["ClusterRole"] if cluster else ["Role", "ClusterRole"]
    if ref.get("kind") not in allowed:
        causes.append(field_unsupported("roleRef.kind", ref.get("kind", ""), allowed))
    if not ref.get("name"):
        causes.append(field_required("roleRef.name"))
    for index, raw_subject in enumerate(list_at(obj.get("subjects"))):
        item = f"subjects[{index}]"
        subject = obj_at(raw_subject)
        kind = subject.get("kind")
        if not subject.get("name"):
            causes.append(field_required(f"{item}.name"))
        if kind == "ServiceAccount":
            if subject.get("apiGroup"):
                causes.append(field_unsupported(f"{item}.apiGroup", subject["apiGroup"], [""]))
            if not subject.get("namespace") and cluster:
                causes.append(field_required(f"{item}.namespace"))
        elif kind in ("User", "Group"):
            if subject.get("apiGroup") != "rbac.authorization.k8s.io":
                causes.append(
                    field_unsupported(f"{item}.apiGroup", subject.get("apiGroup", ""), ["rbac.authorization.k8s.io"])
                )
        else:
            causes.append(field_unsupported(f"{item}.kind", kind or "", ["ServiceAccount", "User", "Group"]))
    return causes


def validate_binding_update(obj: Obj, old: Obj, cluster: bool) -> list[Cause]:
    causes = validate_binding(obj, cluster)
    if obj.get("roleRef") != old.get("roleRef"):
        ref = obj_at(obj.get("roleRef"))
        group, kind, name = (ref.get(k, "") for k in ("apiGroup", "kind", "name"))
        shown = GoLiteral(f'rbac.RoleRef{{APIGroup:"{group}", Kind:"{kind}", Name:"{name}"}}')
        causes.append(field_invalid("roleRef", shown, "cannot change roleRef"))
    return causes
