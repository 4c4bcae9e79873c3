"""RBAC authorization: which stored rules apply to a user, and whether one allows a request.

Bindings are indexed by subject (user name, group name; a ServiceAccount
subject is its user name), so a request looks only at the bindings naming its
user or one of its groups, and each role's rules are compiled once and cached.

Concurrency: everything runs on the server's event loop. The index reads the
stored roles and bindings and subscribes to their changes in one synchronous
step (so it misses none), and applies the queued changes at the start of every
lookup, so a role or binding written by one request is in force for the next.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from localkube.auth import MASTERS, Attributes, Identity
from localkube.store import Event, Store, Watcher

Obj = dict[str, Any]

CLUSTER_ROLES = "rbac.authorization.k8s.io/clusterroles"
ROLES = "rbac.authorization.k8s.io/roles"
CLUSTER_BINDINGS = "rbac.authorization.k8s.io/clusterrolebindings"
ROLE_BINDINGS = "rbac.authorization.k8s.io/rolebindings"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"

Subject = tuple[str, str]  # ("user" | "group", name)
RoleKey = tuple[str, str, str]  # (storage, namespace, name)


@dataclass(frozen=True)
class Rule:
    """One PolicyRule, with sets for matching; ``source`` is the stored rule."""

    source: Obj
    verbs: frozenset[str]
    groups: frozenset[str]
    resources: frozenset[str]
    names: frozenset[str]
    urls: tuple[str, ...]

    @classmethod
    def compile(cls, rule: Obj) -> Rule:
        return cls(
            rule,
            frozenset(strings(rule, "verbs")),
            frozenset(strings(rule, "apiGroups")),
            frozenset(strings(rule, "resources")),
            frozenset(strings(rule, "resourceNames")),
            tuple(strings(rule, "nonResourceURLs")),
        )

    def allows(self, attrs: Attributes) -> bool:
        """kube's RuleAllows."""
        if "*" not in self.verbs and attrs.verb not in self.verbs:
            return False
        if not attrs.resource_request:
            return any(url_matches(url, attrs.path) for url in self.urls)
        if "*" not in self.groups and attrs.group not in self.groups:
            return False
        if attrs.subresource:
            combined = f"{attrs.resource}/{attrs.subresource}"
            if not ({"*", combined, f"*/{attrs.subresource}"} & self.resources):
                return False
        elif "*" not in self.resources and attrs.resource not in self.resources:
            return False
        return not self.names or attrs.name in self.names


def strings(rule: Any, key: str) -> list[str]:
    """A rule's list field; anything malformed grants nothing (never an error on every request)."""
    value = rule.get(key) if isinstance(rule, dict) else None
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def url_matches(rule_url: str, path: str) -> bool:
    """A nonResourceURLs entry: exact, ``*``, or a prefix ending in ``*``."""
    return rule_url in ("*", path) or (rule_url.endswith("*") and path.startswith(rule_url.rstrip("*")))


def service_account_user(namespace: str, name: str) -> str:
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def binding_subjects(binding: Obj) -> set[Subject]:
    """The users and groups a binding names (a ServiceAccount by its user name;
    one without a namespace in a ClusterRoleBinding names nobody)."""
    namespace = binding.get("metadata", {}).get("namespace", "")
    found: set[Subject] = set()
    subjects = binding.get("subjects")
    for subject in subjects if isinstance(subjects, list) else []:
        if not isinstance(subject, dict):
            continue
        kind, name = subject.get("kind"), subject.get("name") or ""
        if kind == "User":
            found.add(("user", name))
        elif kind == "Group":
            found.add(("group", name))
        elif kind == "ServiceAccount":
            sa_namespace = subject.get("namespace") or namespace
            if sa_namespace:
                found.add(("user", service_account_user(sa_namespace, name)))
    return found


def identity_subjects(identity: Identity) -> list[Subject]:
    return [("user", identity.user), *(("group", g) for g in identity.groups)]


class BindingIndex:
    """Bindings by subject and compiled rules by role, kept current from the store's events."""

    def __init__(self, store: Store) -> None:
        self.store = store
        # subject -> names of the ClusterRoleBindings naming it
        self._cluster: dict[Subject, set[str]] = {}
        # (namespace, subject) -> names of that namespace's RoleBindings naming it
        self._namespaced: dict[tuple[str, Subject], set[str]] = {}
        self._rules: dict[RoleKey, tuple[Rule, ...]] = {}
        self._watchers: dict[str, Watcher] = {}
        # bumped by every change applied: what was looked up under another generation may be stale
        self.generation = 0
        self._build()

    def _build(self) -> None:
        """Index what is stored and subscribe to its changes, in one synchronous step."""
        for storage, watcher in self._watchers.items():
            self.store.unsubscribe(storage, watcher)
        self._cluster.clear()
        self._namespaced.clear()
        self._rules.clear()
        self.generation += 1
        for binding in self.store.items(CLUSTER_BINDINGS):
            self._add(CLUSTER_BINDINGS, binding)
        for binding in self.store.items(ROLE_BINDINGS):
            self._add(ROLE_BINDINGS, binding)
        self._watchers = {
            storage: self.store.subscribe(storage)
            for storage in (CLUSTER_ROLES, ROLES, CLUSTER_BINDINGS, ROLE_BINDINGS)
        }

    # -- keeping current ---------------------------------------------------------
    def _slot(self, storage: str, namespace: str, subject: Subject) -> tuple[dict[Any, set[str]], Any]:
        if storage == CLUSTER_BINDINGS:
            return self._cluster, subject
        return self._namespaced, (namespace, subject)

    def _add(self, storage: str, binding: Obj) -> None:
        meta = binding["metadata"]
        for subject in binding_subjects(binding):
            table, key = self._slot(storage, meta.get("namespace", ""), subject)
            table.setdefault(key, set()).add(meta["name"])

    def _remove(self, storage: str, binding: Obj) -> None:
        meta = binding["metadata"]
        for subject in binding_subjects(binding):
            table, key = self._slot(storage, meta.get("namespace", ""), subject)
            names = table.get(key)
            if names is not None:
                names.discard(meta["name"])
                if not names:
                    del table[key]

    def _apply(self, storage: str, event: Event) -> None:
        self.generation += 1
        if storage in (CLUSTER_ROLES, ROLES):
            meta = event.obj["metadata"]
            self._rules.pop((storage, meta.get("namespace", ""), meta["name"]), None)
            return
        if event.old is not None:
            self._remove(storage, event.old)
        if event.type != "DELETED":
            self._add(storage, event.obj)

    def sync(self) -> None:
        """Apply every change stored since the last lookup."""
        if any(watcher.closed for watcher in self._watchers.values()):
            self._build()  # the store dropped a subscription: start again from what is stored
            return
        for storage, watcher in self._watchers.items():
            queue = watcher.queue
            while not queue.empty():
                self._apply(storage, queue.get_nowait())

    # -- lookups -----------------------------------------------------------------
    def role_rules(self, ref: Obj, namespace: str) -> tuple[Rule, ...] | None:
        """The compiled rules of a roleRef (a Role in ``namespace``), None when it does not exist."""
        self.sync()
        storage = CLUSTER_ROLES if ref.get("kind") == "ClusterRole" else ROLES
        key = (storage, "" if storage == CLUSTER_ROLES else namespace, ref.get("name", ""))
        cached = self._rules.get(key)
        if cached is not None:
            return cached
        role = self.store.get(*key)
        if role is None:
            return None
        listed = role.get("rules")
        rules = self._rules[key] = (
            tuple(Rule.compile(r) for r in listed if isinstance(r, dict)) if isinstance(listed, list) else ()
        )
        return rules

    def bindings_for(self, subjects: Iterable[Subject], namespace: str) -> list[tuple[Obj, str]]:
        """``(binding, its namespace)`` naming any of ``subjects``: the ClusterRoleBindings,
        then (with a namespace) that namespace's RoleBindings, each sorted by name."""
        self.sync()
        subjects = list(subjects)
        found: list[tuple[Obj, str]] = []
        names = sorted(set().union(*(self._cluster.get(s, ()) for s in subjects)))
        for name in names:
            binding = self.store.get(CLUSTER_BINDINGS, "", name)
            if binding is not None:
                found.append((binding, ""))
        if namespace:
            names = sorted(set().union(*(self._namespaced.get((namespace, s), ()) for s in subjects)))
            for name in names:
                binding = self.store.get(ROLE_BINDINGS, namespace, name)
                if binding is not None:
                    found.append((binding, namespace))
        return found


_Grant = tuple[Obj, str, "tuple[Rule, ...] | None"]  # (binding, its namespace, its role's rules)


class Authorizer:
    """RBAC over the stored roles and bindings; ``system:masters`` may do anything."""

    # what applies to one (user, groups, namespace), kept while no role or binding changes: an
    # agent asks about the same namespace thousands of times, and each lookup walks its bindings
    GRANTS = 4096

    def __init__(self, store: Store) -> None:
        self.store = store
        self.index = BindingIndex(store)
        self._grants: dict[tuple[str, tuple[str, ...], str], tuple[_Grant, ...]] = {}
        self._generation = -1

    def _grants_of(self, identity: Identity, namespace: str) -> tuple[_Grant, ...]:
        """Every binding naming ``identity`` cluster-wide or in ``namespace``, with its role's rules
        (None: the role does not exist), in kube's order."""
        self.index.sync()
        if self._generation != self.index.generation or len(self._grants) >= self.GRANTS:
            self._grants.clear()
            self._generation = self.index.generation
        key = (identity.user, tuple(identity.groups), namespace)
        grants = self._grants.get(key)
        if grants is None:
            grants = self._grants[key] = tuple(
                (binding, binding_namespace, self.index.role_rules(binding.get("roleRef") or {}, binding_namespace))
                for binding, binding_namespace in self.index.bindings_for(identity_subjects(identity), namespace)
            )
        return grants

    def compiled_rules(self, identity: Identity, namespace: str) -> list[tuple[Rule, bool]]:
        """``(rule, cluster_wide)`` for every rule bound to ``identity`` cluster-wide or in ``namespace``."""
        return [
            (rule, not binding_namespace)
            for _, binding_namespace, rules in self._grants_of(identity, namespace)
            for rule in rules or ()
        ]

    def rules_for(self, identity: Identity, namespace: str) -> list[tuple[Obj, bool]]:
        """``(rule, cluster_wide)`` pairs that apply to ``identity`` in ``namespace``."""
        return [(rule.source, cluster) for rule, cluster in self.compiled_rules(identity, namespace)]

    def decide(self, identity: Identity, attrs: Attributes) -> tuple[bool, str]:
        """Whether RBAC allows ``attrs``, and kube's reason: the binding that allows it, or
        (denied) the roles its bindings name that do not exist."""
        if MASTERS in identity.groups:
            return True, ""  # kube-apiserver's privileged-group authorizer gives no reason
        grant = self._granting(identity, attrs)
        if grant is not None:
            binding, binding_namespace, _ = grant
            return True, f"RBAC: allowed by {describe(binding, binding_namespace, identity)}"
        return False, self._denial(identity, attrs)

    def denial(self, identity: Identity, attrs: Attributes) -> str | None:
        """None when RBAC allows ``attrs``, else kube's reason (maybe empty): :meth:`decide`
        without describing the binding that allows it, for the path every request takes."""
        if MASTERS in identity.groups or self._granting(identity, attrs) is not None:
            return None
        return self._denial(identity, attrs)

    def _granting(self, identity: Identity, attrs: Attributes) -> _Grant | None:
        namespace = attrs.namespace if attrs.resource_request else ""
        for grant in self._grants_of(identity, namespace):
            rules = grant[2]
            if rules is not None and any(rule.allows(attrs) for rule in rules):
                return grant
        return None

    def _denial(self, identity: Identity, attrs: Attributes) -> str:
        namespace = attrs.namespace if attrs.resource_request else ""
        errors = [missing_role(b.get("roleRef") or {}) for b, _, r in self._grants_of(identity, namespace) if r is None]
        return f"RBAC: {aggregate(errors)}" if errors else ""

    def allowed(self, identity: Identity, attrs: Attributes) -> bool:
        return self.denial(identity, attrs) is None


def go_quote(value: str) -> str:
    """Go's ``%q`` of a string (for the texts kube-apiserver prints)."""
    return json.dumps(value, ensure_ascii=False)


def missing_role(ref: Obj) -> str:
    kind = ref.get("kind", "")
    if kind not in ("Role", "ClusterRole"):
        return f"unsupported role reference kind: {go_quote(kind)}"
    # the listers' NotFound names the singular resource
    return f"{kind.lower()}.rbac.authorization.k8s.io {go_quote(ref.get('name', ''))} not found"


def aggregate(errors: list[str]) -> str:
    """apimachinery's error aggregate: one error as is, several de-duplicated in brackets."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def describe(binding: Obj, namespace: str, identity: Identity) -> str:
    """``RoleBinding "name/ns" of ClusterRole "view" to User "jane"``: a binding and its first
    subject that names ``identity``."""
    meta, ref = binding["metadata"], binding.get("roleRef") or {}
    wanted = set(identity_subjects(identity))
    subject_text = ""
    for subject in binding.get("subjects") or []:
        if binding_subjects({"metadata": meta, "subjects": [subject]}) & wanted:
            name = subject.get("name", "")
            if subject.get("kind") == "ServiceAccount":
                name = f"{name}/{subject.get('namespace') or namespace}"
            subject_text = f"{subject.get('kind')} {go_quote(name)}"
            break
    if namespace:
        what = f"RoleBinding {go_quote(meta['name'] + '/' + namespace)}"
    else:
        what = f"ClusterRoleBinding {go_quote(meta['name'])}"
    return f"{what} of {ref.get('kind')} {go_quote(ref.get('name', ''))} to {subject_text}"
