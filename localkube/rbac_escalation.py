"""RBAC escalation and bind prevention, as kube-apiserver's RBAC registry enforces it.

A Role or ClusterRole may be written only by someone who holds every right it
grants (or may ``escalate`` roles); a RoleBinding or ClusterRoleBinding only by
someone who holds every right of the role it references (or may ``bind`` that
role). ``system:masters`` may do both. Called synchronously from the write path
of the resource API, before validation, with the object as it would be stored.
"""

from __future__ import annotations

import copy
from typing import Any

from localkube.auth import MASTERS, Attributes, Identity
from localkube.errors import forbidden, not_found
from localkube.kinds import Context
from localkube.rbac import Authorizer, Rule, go_quote, strings
from localkube.resources import ResourceType

Obj = dict[str, Any]

RBAC_GROUP = "rbac.authorization.k8s.io"
ROLE_KINDS = {"Role": "roles", "ClusterRole": "clusterroles"}
BINDING_KINDS = {"RoleBinding": "rolebindings", "ClusterRoleBinding": "clusterrolebindings"}
FULL_AUTHORITY: list[Obj] = [
    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
    {"nonResourceURLs": ["*"], "verbs": ["*"]},
]


# ---- covers -------------------------------------------------------------------


def breakdown(rule: Obj) -> list[Obj]:
    """``rule`` as rules of one group, resource, verb and (at most) one name each;
    non-resource URLs pair only with verbs."""
    parts: list[Obj] = []
    names, verbs = strings(rule, "resourceNames"), strings(rule, "verbs")
    for group in strings(rule, "apiGroups"):
        for resource in strings(rule, "resources"):
            for verb in verbs:
                base = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                parts.extend({**base, "resourceNames": [n]} for n in names) if names else parts.append(base)
    for url in strings(rule, "nonResourceURLs"):
        parts.extend({"nonResourceURLs": [url], "verbs": [verb]} for verb in verbs)
    return parts


def _resources_cover(owned: frozenset[str], wanted: list[str]) -> bool:
    if "*" in owned:
        return True
    for resource in wanted:
        if resource in owned:
            continue
        if "/" not in resource or "*/" + resource.split("/", 1)[1] not in owned:
            return False
    return True


def _url_covers(owned: str, wanted: str) -> bool:
    return owned == wanted or (owned.endswith("*") and wanted.startswith(owned.rstrip("*")))


def rule_covers(owner: Rule, part: Obj) -> bool:
    """Whether ``owner`` grants all of ``part`` (one piece of :func:`breakdown`)."""
    verbs, groups = part.get("verbs") or [], part.get("apiGroups") or []
    names, urls = part.get("resourceNames") or [], part.get("nonResourceURLs") or []
    return (
        ("*" in owner.verbs or owner.verbs.issuperset(verbs))
        and ("*" in owner.groups or owner.groups.issuperset(groups))
        and _resources_cover(owner.resources, part.get("resources") or [])
        and all(any(_url_covers(o, u) for o in owner.urls) for u in urls)
        # a rule naming objects covers only those names; one without names covers every name
        and (not owner.names or (bool(names) and owner.names.issuperset(names)))
    )


def covers(owner_rules: list[Rule], servant_rules: list[Obj]) -> tuple[bool, list[Obj]]:
    """Whether ``owner_rules`` grant everything ``servant_rules`` grant, and the pieces they do not."""
    missing = [
        part
        for rule in servant_rules
        for part in breakdown(rule)
        if not any(rule_covers(owner, part) for owner in owner_rules)
    ]
    return not missing, missing


# ---- the message ----------------------------------------------------------------


def _simple_key(rule: Obj) -> tuple[str, str, str | None] | None:
    """The (group, resource, name) of a rule with one of each and only verbs besides."""
    if set(rule) - {"apiGroups", "resources", "verbs", "resourceNames"}:
        return None
    groups, resources, names = rule.get("apiGroups") or [], rule.get("resources") or [], rule.get("resourceNames") or []
    if len(groups) != 1 or len(resources) != 1 or len(names) > 1 or rule.get("nonResourceURLs"):
        return None
    return groups[0], resources[0], names[0] if names else None


def compact(rules: list[Obj]) -> list[Obj]:
    """Rules that differ only by verb merged into one (kube's CompactRules)."""
    merged: dict[tuple[str, str, str | None], Obj] = {}
    others: list[Obj] = []
    for rule in rules:
        key = _simple_key(rule)
        if key is None:
            others.append(rule)
        elif key in merged:
            merged[key]["verbs"] = [*merged[key].get("verbs", []), *(rule.get("verbs") or [])]
        else:
            merged[key] = copy.deepcopy(rule)
    return others + list(merged.values())


def _go_quoted(values: list[str]) -> str:
    """Go's ``%q`` of a []string: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


def compact_string(rule: Obj) -> str:
    """How kube prints a missing rule: ``{APIGroups:[""], Resources:["pods"], Verbs:["get"]}``."""
    fields = (
        ("APIGroups", "apiGroups"),
        ("Resources", "resources"),
        ("NonResourceURLs", "nonResourceURLs"),
        ("ResourceNames", "resourceNames"),
        ("Verbs", "verbs"),
    )
    shown = [f"{label}:{_go_quoted(rule[key])}" for label, key in fields if rule.get(key)]
    return "{" + ", ".join(shown) + "}"


def escalation_problem(authorizer: Authorizer, identity: Identity, namespace: str, rules: list[Obj]) -> str | None:
    """kube's ConfirmNoEscalation: why granting ``rules`` in ``namespace`` escalates, or None."""
    owned = [rule for rule, _ in authorizer.compiled_rules(identity, namespace)]
    held, missing = covers(owned, rules)
    if held:
        return None
    listed = "\n".join(sorted({compact_string(rule) for rule in compact(missing)}))
    return (
        f"user {go_quote(identity.user)} (groups={_go_quoted(identity.groups)}) is attempting to grant RBAC "
        f"permissions not currently held:\n{listed}"
    )


# ---- the checks on writes ---------------------------------------------------------


def only_gc_fields_change(new: Obj, old: Obj) -> bool:
    """An update that changes nothing but finalizers and owner references (what the GC writes)."""
    ignored = ("ownerReferences", "finalizers", "selfLink", "resourceVersion", "managedFields")

    def strip(obj: Obj) -> Obj:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ignored}
        return {**{k: v for k, v in obj.items() if k != "metadata"}, "metadata": meta}

    return strip(new) == strip(old)


def _identity(context: Context) -> Identity:
    return Identity(context.user, list(context.groups), context.uid, dict(context.extra))


def check_rbac_write(
    authorizer: Authorizer, rt: ResourceType, subresource: str, obj: Obj, old: Obj | None, context: Context
) -> None:
    """Refuse (403) a create or update of an RBAC object that would grant rights the writer lacks."""
    if rt.group != RBAC_GROUP or (rt.kind not in ROLE_KINDS and rt.kind not in BINDING_KINDS):
        return
    # the escalate check names what the request path names: nothing on a create
    name = old["metadata"]["name"] if old is not None else ""
    identity = _identity(context)
    if MASTERS in identity.groups:
        return
    namespace = (obj.get("metadata") or {}).get("namespace", "") if rt.namespaced else ""
    target = obj.get("metadata", {}).get("name", "")
    if rt.kind in ROLE_KINDS:
        escalate = Attributes("escalate", True, RBAC_GROUP, rt.plural, namespace=namespace, name=name)
        if authorizer.allowed(identity, escalate):
            return
        if old is not None and only_gc_fields_change(obj, old):
            return
        rules = [r for r in obj.get("rules") or [] if isinstance(r, dict)]
        problem = escalation_problem(authorizer, identity, namespace, rules)
        aggregating = problem is None and rt.kind == "ClusterRole" and _aggregates(obj, old)
        if aggregating and escalation_problem(authorizer, identity, namespace, FULL_AUTHORITY) is not None:
            problem = "must have cluster-admin privileges to use the aggregationRule"
    else:
        if old is not None and only_gc_fields_change(obj, old):
            return
        ref = obj.get("roleRef") or {}
        role_resource = ROLE_KINDS.get(ref.get("kind", ""))
        if role_resource is None:
            return  # validation refuses it
        role_name = ref.get("name", "")
        bind = Attributes("bind", True, ref.get("apiGroup", ""), role_resource, namespace=namespace, name=role_name)
        if authorizer.allowed(identity, bind):
            return
        role_rules = authorizer.index.role_rules(ref, namespace)
        if role_rules is None:
            raise not_found(role_resource, RBAC_GROUP, role_name)
        problem = escalation_problem(authorizer, identity, namespace, [r.source for r in role_rules])
    if problem is not None:
        where = f'{rt.plural}.{RBAC_GROUP} "{target}"' if target else f"{rt.plural}.{RBAC_GROUP}"
        raise forbidden(f"{where} is forbidden: {problem}", resource=rt.plural, group=RBAC_GROUP, name=target)


def _aggregates(obj: Obj, old: Obj | None) -> bool:
    def has(role: Obj | None) -> bool:
        return bool(((role or {}).get("aggregationRule") or {}).get("clusterRoleSelectors"))

    return has(obj) or has(old)
