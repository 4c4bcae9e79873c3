"""The resource detector: claims resource templates for (Cluster)PropagationPolicies and
keeps their (Cluster)ResourceBindings in step (Karmada's ``pkg/detector``).

What it watches. The policies themselves (plus OverridePolicies for
``dependentOverrides``, the bindings, and CRDs) come from shared caches made at
setup. Template caches are made on demand: when a policy's reconcile meets a
selector kind it resolves it through the shared discovery mapper and asks the
informer factory for that resource's cache (shared with the binding and
status controllers), so exactly the kinds some policy selects are watched,
built-in or custom, namespaced or cluster-scoped. A kind that does not resolve
(a CRD not installed yet) is retried when a CRD becomes Established, and with
backoff otherwise. When no policy selects a kind any more (an index of the kinds
each policy's selectors name, kept by the policy handler) its cache is released
(the watch ends unless another controller reads it; the binding and status
controllers read it without counting as readers).

Two work queues, one worker each:

* templates, keyed ``(apiVersion, kind, namespace, name)``, fed by template
  events whose update changed more than status/managedFields/resourceVersion,
  by binding deletions, and by policy reconciles. A reconcile reads only caches
  (policies, the template, the binding), then claims the template (UPDATE with
  the claim label/annotations) and creates or updates the binding, writing
  nothing when nothing changed.
* policies, keyed ``(kind, namespace, name)``. A reconcile writes the
  webhook's admission metadata (permanent id, finalizer) when missing, resolves
  the selected kinds, releases templates it no longer selects, re-enqueues the
  templates it holds (placement edits flow to bindings) and the unclaimed
  templates it selects, found in the caches (no listing) through indexes by
  kind+namespace and kind+name (kept by the template handlers), so it costs what
  it selects, not every template of the kind; and preempts when
  ``preemption: Always`` and the ``PropagationPolicyPreemption`` gate (off by
  default, as in Karmada) allow. A policy being deleted releases its templates
  (binding first, then template; bindings, Works and member objects stay), then
  its finalizer goes; the released templates are re-matched.

Spec defaults of the mutating webhook are applied when a policy is read, not
written (see :mod:`karmada.detection.admission`). A deleted template's binding
is garbage-collected through its ownerReference; a deleted binding whose
template remains is created again. Events on the template: ``ApplyPolicySucceed``
(only when the binding was created or changed), ``ApplyPolicyFailed``,
``PreemptPolicySucceed``/``Failed``, ``GetReplicasSucceed`` (only when the interpreted
replicas or requirements differ from the binding's) and ``GetReplicasFailed``, with
Karmada's messages.

Where this differs from Karmada, on purpose: the binding finalizer is left to
the binding controller (it owns it); a ``Lazy`` policy defers refreshes of an
*existing* binding only, so a template that raced its policy still gets one;
``GetReplicasSucceed`` is not recorded on every apply (an API write each time).

Everything is level-triggered: after a restart the initial lists enqueue every
policy and template again and the same decisions are reached with no writes.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from controlplane.context import Context
from controlplane.interpreter_webhooks import async_interpreter_for
from karmada.api.errors import APIValidationError
from karmada.api.keys import (
    CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    PROPAGATION_POLICY_PERMANENT_ID_LABEL,
)
from karmada.api.names import binding_name
from karmada.api.policy import ClusterPropagationPolicy, PropagationPolicy, ResourceSelector
from karmada.detection import (
    DIFFERENT_OWNER_MESSAGE,
    admission_metadata,
    binding_id_label,
    binding_kind,
    changed_by_karmada,
    claim_ids,
    defaulted_policy,
    deprioritized_preemptors,
    desired_binding,
    may_preempt,
    merged_binding,
    owned_by_other,
    policy_finalizer,
    policy_id_label,
    specification_changed,
    with_claim,
    without_claim,
)
from karmada.detection.bindings import GET_REPLICAS_SUCCEED_MESSAGE, replicas_changed
from karmada.interpreter import Operation
from karmada.interpreter_webhooks import AsyncInterpreter
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError, Resource, ResourceMapper, UnknownKind
from karmada.kube.controller import Controller
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import CLUSTER_RESOURCE_BINDINGS, CRDS, RESOURCE_BINDINGS
from karmada.matching import Claim, claim_of, claimed_by_other_feature, match_policy, skip_reason
from karmada.selectors.resources import ImplicitPriority, selector_priority, selectors_priority

log = logging.getLogger("controlplane.detector")
Obj = dict[str, Any]
TemplateKey = tuple[str, str, str, str]
"""(apiVersion, kind, namespace, name) of a resource template."""
PolicyKey = tuple[str, str, str]
"""(kind, namespace, name) of a PropagationPolicy or ClusterPropagationPolicy."""
Policy = PropagationPolicy | ClusterPropagationPolicy

PP, CPP = "PropagationPolicy", "ClusterPropagationPolicy"
PROPAGATION_POLICIES = Resource("policy.karmada.io", "v1alpha1", "propagationpolicies", PP, True)
CLUSTER_PROPAGATION_POLICIES = Resource("policy.karmada.io", "v1alpha1", "clusterpropagationpolicies", CPP, False)
OVERRIDE_POLICIES = Resource("policy.karmada.io", "v1alpha1", "overridepolicies", "OverridePolicy", True)
CLUSTER_OVERRIDE_POLICIES = Resource(
    "policy.karmada.io", "v1alpha1", "clusteroverridepolicies", "ClusterOverridePolicy", False
)
PRIORITY_CLASSES = Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False)

PREEMPTION_GATE = "PropagationPolicyPreemption"
PRIORITY_GATE = "PriorityBasedScheduling"
SYNC_TIMEOUT = 60.0
DELETING_POLICY_RETRY = 1.0
UNRESOLVED_FIRST_RETRY, UNRESOLVED_MAX_RETRY = 1.0, 60.0
CONFLICT_ATTEMPTS = 3
APPLY_FIRST_RETRY, APPLY_MAX_RETRY = 0.5, 60.0


@dataclass(frozen=True)
class ParsedPolicy:
    """A policy as the detector uses it: the model (for matching) and the defaulted JSON."""

    resource_version: str
    model: Policy
    data: Obj

    @property
    def cluster_wide(self) -> bool:
        return isinstance(self.model, ClusterPropagationPolicy)

    @property
    def key(self) -> PolicyKey:
        meta = self.model.metadata
        return (CPP if self.cluster_wide else PP, meta.namespace or "", meta.name or "")

    @property
    def permanent_id(self) -> str:
        labels = self.model.metadata.labels or {}
        return labels.get(policy_id_label(self.cluster_wide), "")

    @property
    def spec(self) -> Obj:
        spec: Obj = self.data["spec"]
        return spec

    def describe(self) -> str:
        """Karmada's wording in events: ``policy(ns/name)`` or ``cluster policy(name)``."""
        _, namespace, name = self.key
        return f"cluster policy({name})" if self.cluster_wide else f"policy({namespace}/{name})"


class PreconditionUnmet(Exception):
    """Applying must wait (another template's binding is still being collected, ...)."""


class Detector:
    """The detector's state: caches, indexes and both reconcilers."""

    def __init__(
        self,
        client: KubeClient,
        informers: InformerFactory,
        mapper: ResourceMapper,
        recorder: EventRecorder,
        *,
        skipped_namespaces: Iterable[str] = ("kube-.*",),
        preemption_enabled: bool = False,
        priority_scheduling_enabled: bool = True,
        workers: int = 5,
    ) -> None:
        self.client = client
        self.informers = informers
        self.mapper = mapper
        self.recorder = recorder
        self.skipped_namespaces = tuple(skipped_namespaces)
        self.preemption_enabled = preemption_enabled
        self.priority_scheduling_enabled = priority_scheduling_enabled
        self.interpreter = AsyncInterpreter()  # the shared one from async_interpreter_for in setup
        self.pps = informers.informer(PROPAGATION_POLICIES)
        self.cpps = informers.informer(CLUSTER_PROPAGATION_POLICIES)
        self.ops = informers.informer(OVERRIDE_POLICIES)
        self.cops = informers.informer(CLUSTER_OVERRIDE_POLICIES)
        self.rbs = informers.informer(RESOURCE_BINDINGS)
        self.crbs = informers.informer(CLUSTER_RESOURCE_BINDINGS)
        self.crds = informers.informer(CRDS)
        self.priority_classes: Informer | None = None  # made when a policy first names one
        self.templates: Controller[TemplateKey] = Controller("detector", self.reconcile_template, workers=workers)
        # resourceVersion of the last template update this process wrote, per template, until its echo
        self._own_writes: dict[TemplateKey, str | None] = {}
        self.policies: Controller[PolicyKey] = Controller("detector-policy", self.reconcile_policy)
        # (apiVersion, kind) -> the template cache; kinds that would never be propagated map to None
        self.kinds: dict[tuple[str, str], Informer | None] = {}
        self._resources: dict[tuple[str, str], Resource] = {}
        self._handlers: dict[tuple[str, str], Callable[[str, Obj, Obj | None], None]] = {}
        self._claimed: dict[str, set[TemplateKey]] = {}  # policy id -> templates carrying its claim label
        # the template caches by (apiVersion, kind, namespace) and by (apiVersion, kind, name), so a
        # policy's reconcile looks at the templates it may select, not every template of the kind
        self._in_namespace: dict[TemplateKey, set[str]] = {}  # (apiVersion, kind, namespace, "") -> names
        self._named: dict[TemplateKey, set[str]] = {}  # (apiVersion, kind, "", name) -> namespaces
        # (apiVersion, kind) -> the policies (being deleted too) whose selectors name it, and back
        self._selecting: dict[tuple[str, str], set[PolicyKey]] = {}
        self._selects: dict[PolicyKey, set[tuple[str, str]]] = {}
        self._pp_by_namespace: dict[str, set[str]] = {}
        self._parsed: dict[PolicyKey, ParsedPolicy] = {}
        self._user_changed: set[TemplateKey] = set()  # templates last changed by a user (Lazy activation)
        self._unresolved: dict[PolicyKey, float] = {}  # policies with unresolved kinds -> next retry delay
        self._failures: dict[TemplateKey, int] = {}  # failed applies in a row, for their backoff
        self.policies.watches(self.pps, self._on_policy)
        self.policies.watches(self.cpps, self._on_policy)
        self.templates.watches(self.rbs, self._on_binding)
        self.templates.watches(self.crbs, self._on_binding)
        self.policies.watches(self.crds, self._on_crd)
        self.policies.watches(self.ops, self._on_override)
        self.policies.watches(self.cops, self._on_override)

    # -- event handlers (run on the informers' tasks; never block) ---------------
    def _on_policy(self, event: str, obj: Obj, old: Obj | None) -> list[PolicyKey]:
        meta = obj.get("metadata") or {}
        kind = str(obj.get("kind") or (PP if meta.get("namespace") else CPP))
        key: PolicyKey = (kind, meta.get("namespace", ""), meta.get("name", ""))
        if kind == PP:
            names = self._pp_by_namespace.setdefault(key[1], set())
            if event == "DELETED":
                names.discard(key[2])
            else:
                names.add(key[2])
        self._index_selected_kinds(key, None if event == "DELETED" else obj)
        if event == "DELETED":
            self._parsed.pop(key, None)
            self._unresolved.pop(key, None)
            # a policy gone without its finalizer: its templates release themselves
            for policy_id in claim_ids(obj):
                for template in self._claimed.get(policy_id, set()):
                    self.templates.enqueue(template)
            return [key]  # its reconcile stops watching kinds no policy selects any more
        if event == "MODIFIED" and old is not None:
            if not specification_changed(old, obj):
                return []
            self._enqueue_deprioritized(kind, old, obj)
        return [key]

    def _index_selected_kinds(self, key: PolicyKey, obj: Obj | None) -> None:
        kinds = {
            (str(selector.get("apiVersion", "")), str(selector.get("kind", "")))
            for selector in ((obj or {}).get("spec") or {}).get("resourceSelectors") or []
            if isinstance(selector, dict)
        }
        for gone in self._selects.get(key, set()) - kinds:
            policies = self._selecting.get(gone)
            if policies is not None:
                policies.discard(key)
                if not policies:
                    del self._selecting[gone]
        for kind_key in kinds:
            self._selecting.setdefault(kind_key, set()).add(key)
        if kinds:
            self._selects[key] = kinds
        else:
            self._selects.pop(key, None)

    def _enqueue_deprioritized(self, kind: str, old: Obj, new: Obj) -> None:
        """A policy's priority fell: preempting policies between the old and new priority try again."""
        if not self.preemption_enabled:
            return
        old_priority = int((old.get("spec") or {}).get("priority") or 0)
        new_priority = int((new.get("spec") or {}).get("priority") or 0)
        if new_priority >= old_priority:
            return
        namespace = (new.get("metadata") or {}).get("namespace", "")
        cache = self.pps if kind == PP else self.cpps
        candidates = []
        for other in _items(cache):
            meta = other.get("metadata") or {}
            if kind == PP and meta.get("namespace") != namespace:
                continue
            spec = other.get("spec") or {}
            key = (kind, meta.get("namespace", ""), meta.get("name", ""))
            candidates.append((key, int(spec.get("priority") or 0), str(spec.get("preemption") or "Never")))
        by_name = {str(key): key for key, _, _ in candidates}
        for name in deprioritized_preemptors(old_priority, new_priority, [(str(k), p, m) for k, p, m in candidates]):
            self.policies.enqueue(by_name[name])

    def _on_override(self, event: str, obj: Obj, old: Obj | None) -> list[PolicyKey]:
        """An override policy appeared: the policies waiting for it (``dependentOverrides``) go on."""
        if event != "ADDED":
            return []
        meta = obj.get("metadata") or {}
        name, namespace = meta.get("name", ""), meta.get("namespace", "")
        if namespace:  # an OverridePolicy: PropagationPolicies of its namespace
            candidates = [(PP, namespace, n) for n in sorted(self._pp_by_namespace.get(namespace, ()))]
        else:
            candidates = [(CPP, "", o["metadata"]["name"]) for o in self.cpps.items()]
        waiting = []
        for key in candidates:
            policy = _get(self.pps if key[0] == PP else self.cpps, key[2], key[1])
            if policy is not None and name in ((policy.get("spec") or {}).get("dependentOverrides") or []):
                waiting.append(key)
        return waiting

    def _on_crd(self, event: str, obj: Obj, old: Obj | None) -> list[PolicyKey]:
        """A CRD became Established: policies waiting for a kind try to resolve it now."""
        if event == "DELETED" or not self._unresolved or not _established(obj):
            return []
        if old is not None and _established(old):
            return []
        return list(self._unresolved)

    def _on_binding(self, event: str, obj: Obj, old: Obj | None) -> list[TemplateKey]:
        """A binding was deleted (by a user, or collected): its template, if still there, gets it back."""
        if event != "DELETED":
            return []
        resource = (obj.get("spec") or {}).get("resource") or {}
        key = (
            str(resource.get("apiVersion", "")),
            str(resource.get("kind", "")),
            str(resource.get("namespace", "")),
            str(resource.get("name", "")),
        )
        return [key] if self.kinds.get(key[:2]) is not None else []

    def _template_handler(self, api_version: str, kind: str) -> Callable[[str, Obj, Obj | None], list[TemplateKey]]:
        def keys(event: str, obj: Obj, old: Obj | None) -> list[TemplateKey]:
            obj = {**obj, "apiVersion": api_version, "kind": kind}
            if old is not None:
                old = {**old, "apiVersion": api_version, "kind": kind}
            meta = obj.get("metadata") or {}
            key = (api_version, kind, meta.get("namespace", ""), meta.get("name", ""))
            self._index(key, old, None if event == "DELETED" else obj)
            if event == "DELETED":
                self._user_changed.discard(key)
                self._failures.pop(key, None)
                self._own_writes.pop(key, None)
                return []  # the binding is garbage-collected through its ownerReference
            if skip_reason(obj, self.skipped_namespaces) is not None:
                return []
            if event == "MODIFIED" and self._own_writes.pop(key, None) == meta.get("resourceVersion"):
                # the echo of our own claim: its binding was built from exactly this version, and
                # reconciling it now would stamp a later (status-only) version onto the binding
                return []
            if event == "MODIFIED" and old is not None:
                if not specification_changed(old, obj):
                    return []
                if not changed_by_karmada(old, obj):
                    self._user_changed.add(key)
            else:
                self._user_changed.add(key)
            return [key]

        return keys

    def _index(self, key: TemplateKey, old: Obj | None, new: Obj | None) -> None:
        api_version, kind, namespace, name = key
        by_namespace, by_name = (api_version, kind, namespace, ""), (api_version, kind, "", name)
        if new is None:
            for table, index_key, value in (
                (self._in_namespace, by_namespace, name),
                (self._named, by_name, namespace),
            ):
                values = table.get(index_key)
                if values is not None:
                    values.discard(value)
                    if not values:
                        del table[index_key]
        else:
            self._in_namespace.setdefault(by_namespace, set()).add(name)
            self._named.setdefault(by_name, set()).add(namespace)
        before = claim_ids(old) if old is not None else set()
        after = claim_ids(new) if new is not None else set()
        for policy_id in before - after:
            held = self._claimed.get(policy_id)
            if held is not None:
                held.discard(key)
                if not held:
                    del self._claimed[policy_id]
        for policy_id in after:
            self._claimed.setdefault(policy_id, set()).add(key)

    # -- caches ------------------------------------------------------------------
    async def _watch_kind(self, api_version: str, kind: str) -> bool:
        """Make sure the kind's templates are cached and handled; False when the server does not serve it."""
        if (api_version, kind) in self.kinds:
            return True
        try:
            resource = await self.mapper.resource_for(api_version, kind)
        except UnknownKind:
            return False
        if (api_version, kind) in self.kinds:  # resolved meanwhile by another reconcile
            return True
        probe = {"apiVersion": api_version, "kind": kind, "metadata": {}}
        if skip_reason(probe, self.skipped_namespaces) is not None:
            log.info("%s in %s is never propagated; not watching it", kind, api_version)
            self.kinds[(api_version, kind)] = None
            return True
        informer = self.informers.informer(resource)
        # a cache another controller started earlier replays what it holds to the new handler
        handler = self._template_handler(api_version, kind)
        self._handlers[(api_version, kind)] = self.templates.watches(informer, handler)
        self.kinds[(api_version, kind)] = informer
        self._resources[(api_version, kind)] = resource
        log.info("watching %s (%s)", resource.plural, resource.api_version)
        await informer.wait_synced(SYNC_TIMEOUT)
        return True

    def _template(self, key: TemplateKey) -> Obj | None:
        informer = self.kinds.get(key[:2])
        return _get(informer, key[3], key[2]) if informer is not None else None

    def _policy(self, key: PolicyKey) -> ParsedPolicy | None:
        kind, namespace, name = key
        obj = _get(self.pps if kind == PP else self.cpps, name, namespace)
        if obj is None:
            return None
        version = str(obj["metadata"].get("resourceVersion", ""))
        parsed = self._parsed.get(key)
        if parsed is not None and parsed.resource_version == version:
            return parsed
        data = defaulted_policy(obj)
        try:
            model: Policy = (PropagationPolicy if kind == PP else ClusterPropagationPolicy).from_dict(data)
        except APIValidationError as exc:
            log.warning("%s %s/%s is invalid and ignored: %s", kind, namespace, name, exc)
            return None
        parsed = ParsedPolicy(version, model, data)
        self._parsed[key] = parsed
        return parsed

    def _namespace_policies(self, namespace: str) -> list[PropagationPolicy]:
        found = []
        for name in sorted(self._pp_by_namespace.get(namespace, ())):
            parsed = self._policy((PP, namespace, name))
            if parsed is not None and isinstance(parsed.model, PropagationPolicy):
                found.append(parsed.model)
        return found

    def _cluster_policies(self) -> list[ClusterPropagationPolicy]:
        found = []
        for obj in _items(self.cpps):
            parsed = self._policy((CPP, "", obj["metadata"]["name"]))
            if parsed is not None and isinstance(parsed.model, ClusterPropagationPolicy):
                found.append(parsed.model)
        return found

    def _claim_policy(self, claim: Claim) -> PolicyKey:
        return (CPP, "", claim.name) if claim.cluster_wide else (PP, claim.namespace, claim.name)

    def _overrides_present(self, policy: ParsedPolicy) -> bool:
        names = policy.model.spec.dependent_overrides or []
        _, namespace, _ = policy.key
        cache = self.cops if policy.cluster_wide else self.ops
        return all(_get(cache, name, namespace) is not None for name in names)

    # -- template reconcile ------------------------------------------------------
    async def reconcile_template(self, key: TemplateKey) -> float | None:
        # the flag stays until a policy's apply consumes it (an apply that must wait keeps it)
        user_change = key in self._user_changed
        template = self._template(key)
        log.debug("reconciling %s (in cache: %s)", key, template is not None)
        if template is None:
            return None
        if claimed_by_other_feature(template) or skip_reason(template, self.skipped_namespaces) is not None:
            return None
        if template["metadata"].get("deletionTimestamp"):
            return None  # its binding goes with it
        claim = claim_of(template)
        if claim is not None:
            policy_key = self._claim_policy(claim)
            raw = _get(self.pps if not claim.cluster_wide else self.cpps, policy_key[2], policy_key[1])
            if raw is not None and raw["metadata"].get("deletionTimestamp"):
                return DELETING_POLICY_RETRY  # its reconcile releases the template first
            if raw is not None:
                policy = self._policy(policy_key)
                if policy is None:
                    return None
                if selectors_priority(template, policy.model.spec.resource_selectors) == ImplicitPriority.MISMATCH:
                    return None  # the policy's own reconcile releases templates it no longer selects
                return await self._apply(template, policy, user_change)
            # the policy is gone but its claim stayed (deleted without its finalizer, or before the
            # claim reached our cache): release, then match at once with the remaining policies
            # (the echo of our write is not reconciled, and no other event would bring it back)
            await self._release(template, claim.cluster_wide, claim.permanent_id)
            template = self._template(key)
            if template is None or claim_of(template) is not None:
                return None
        namespace = template["metadata"].get("namespace", "")
        match = match_policy(
            template, self._namespace_policies(namespace) if namespace else [], self._cluster_policies()
        )
        if match is None:
            log.debug("no policy matches %s", key)
            self._user_changed.discard(key)
            return None
        meta = match.winner.policy.metadata
        policy = self._policy((match.winner.policy.kind, meta.namespace or "", meta.name or ""))
        if policy is None:
            return None
        log.info("%s %s: %s", key[1], _name_of(template), match.reason)
        return await self._apply(template, policy, user_change)

    async def _apply(self, template: Obj, policy: ParsedPolicy, user_change: bool) -> float | None:
        """Claim ``template`` for ``policy`` and converge its binding (Karmada's ApplyPolicy)."""
        if not policy.permanent_id:
            return None  # admission metadata not written yet; the policy's reconcile enqueues us after it
        if not self._overrides_present(policy):
            # the override's arrival re-enqueues the policy, hence its templates; the backoff is a fallback
            log.info("waiting for dependent overrides of %s", policy.describe())
            return self._backoff(_template_key(template))
        what = f"{template.get('kind')} {_name_of(template)}"
        try:
            template = await self._claim(template, policy)
            self._user_changed.discard(_template_key(template))
            # Lazy defers refreshes of an existing binding to the next user change; a template
            # without one gets it now (Karmada would wait here too when it raced the policy)
            if policy.spec.get("activationPreference") == "Lazy" and not user_change and self._binding_of(template):
                log.info("%s: %s is Lazy and the change came from Karmada; binding kept", what, policy.describe())
                return None
            desired = await self._desired_binding(template, policy)
            result = await self._write_binding(template, desired)
        except KubeError as exc:
            if exc.conflict:
                log.info("%s: conflict applying %s; retrying", what, policy.describe())
                raise
            if exc.not_found and self._template(_template_key(template)) is None:
                return None  # the template went meanwhile
            await self._apply_failed(template, policy, exc.message or str(exc))
            raise
        except (PreconditionUnmet, ValueError, KeyError, LookupError) as exc:
            # an old binding not yet collected, the interpreter or a missing PriorityClass said no:
            # look again with backoff, as Karmada's queue does with the error
            await self._apply_failed(template, policy, str(exc))
            return self._backoff(_template_key(template))
        self._failures.pop(_template_key(template), None)
        if result is not None:
            log.info(
                "%s: %s %s %s for %s",
                what,
                result,
                desired["kind"],
                _name_of(desired),
                policy.describe(),
            )
            message = f"Apply {policy.describe()} succeed"
            await self.recorder.record(template, "Normal", "ApplyPolicySucceed", message)
        return None

    def _backoff(self, key: TemplateKey) -> float:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        return float(min(APPLY_FIRST_RETRY * 2**failures, APPLY_MAX_RETRY))

    async def _apply_failed(self, template: Obj, policy: ParsedPolicy, why: str) -> None:
        log.warning("%s %s: apply %s failed: %s", template.get("kind"), _name_of(template), policy.describe(), why)
        await self.recorder.record(template, "Warning", "ApplyPolicyFailed", f"Apply {policy.describe()} failed: {why}")

    async def _claim(self, template: Obj, policy: ParsedPolicy) -> Obj:
        """The template carrying the policy's claim (one UPDATE when it did not yet)."""
        _, namespace, name = policy.key
        updated = with_claim(template, policy.cluster_wide, policy.permanent_id, name, namespace)
        if updated is None:
            return template
        stored = await self._update_template(updated)
        log.info("%s %s claimed by %s", template.get("kind"), _name_of(template), policy.describe())
        return stored

    async def _update_template(self, obj: Obj) -> Obj:
        key = _template_key(obj)
        resource = self._resources.get(key[:2]) or await self.mapper.resource_for(key[0], key[1])
        stored = await self.client.update(resource, obj, key[2] or None)
        self._own_writes[key] = stored["metadata"].get("resourceVersion")
        informer = self.kinds.get(key[:2])
        if informer is not None:
            informer.store(stored)
        return stored

    async def _desired_binding(self, template: Obj, policy: ParsedPolicy) -> Obj:
        replicas, requirements = 0, None
        # customizations and interpreter webhooks known before the first answer
        await self.interpreter.wait_synced(SYNC_TIMEOUT)
        if self.interpreter.hook_enabled(
            str(template.get("apiVersion")), str(template.get("kind")), Operation.INTERPRET_REPLICA
        ):
            try:
                count, needs = await self.interpreter.a_get_replicas(template)
            except (ValueError, KeyError, TypeError) as exc:
                await self.recorder.record(template, "Warning", "GetReplicasFailed", str(exc))
                raise ValueError(f"interpreting replicas: {exc}") from exc
            replicas, requirements = count, needs.to_dict() if needs is not None else None
            if replicas_changed(self._binding_of(template), replicas, requirements):
                await self.recorder.record(template, "Normal", "GetReplicasSucceed", GET_REPLICAS_SUCCEED_MESSAGE)
        _, namespace, name = policy.key
        return desired_binding(
            template,
            policy.spec,
            cluster_wide_policy=policy.cluster_wide,
            policy_id=policy.permanent_id,
            policy_name=name,
            policy_namespace=namespace,
            replicas=replicas,
            replica_requirements=requirements,
            schedule_priority=await self._schedule_priority(policy),
        )

    async def _schedule_priority(self, policy: ParsedPolicy) -> int | None:
        """The value of the policy's Kubernetes PriorityClass (gate PriorityBasedScheduling, on by default)."""
        source = policy.model.spec.schedule_priority
        if source is None or not self.priority_scheduling_enabled:
            return None
        if self.priority_classes is None:
            self.priority_classes = self.informers.informer(PRIORITY_CLASSES)
            await self.priority_classes.wait_synced(SYNC_TIMEOUT)
        found = _get(self.priority_classes, source.priority_class_name)
        if found is None:
            raise LookupError(f'priorityclasses.scheduling.k8s.io "{source.priority_class_name}" not found')
        return int(found.get("value") or 0)

    def _binding_of(self, template: Obj) -> Obj | None:
        meta = template["metadata"]
        name = binding_name(str(template.get("kind")), meta["name"])
        if binding_kind(template) == "ResourceBinding":
            return _get(self.rbs, name, meta["namespace"])
        return _get(self.crbs, name)

    async def _write_binding(self, template: Obj, desired: Obj) -> str | None:
        """Create or update the binding; which of the two, or None when it was already right."""
        kind = desired["kind"]
        resource, cache = (
            (RESOURCE_BINDINGS, self.rbs) if kind == "ResourceBinding" else (CLUSTER_RESOURCE_BINDINGS, self.crbs)
        )
        name, namespace = desired["metadata"]["name"], desired["metadata"].get("namespace")
        existing = _get(cache, name, namespace or "")
        if existing is None:
            body = {**desired, "metadata": {**desired["metadata"]}}
            body["metadata"]["labels"] = {**desired["metadata"]["labels"], binding_id_label(kind): str(uuid.uuid4())}
            try:
                stored = await self.client.create(resource, body, namespace)
            except KubeError as exc:
                if not exc.already_exists:
                    raise
                existing = await self.client.get(resource, name, namespace)  # our cache lags behind
            else:
                cache.store(stored)
                return "created"
        if owned_by_other(existing, template):
            raise PreconditionUnmet(DIFFERENT_OWNER_MESSAGE)
        merged = merged_binding(existing, desired)
        if merged is not None and not (merged["metadata"].get("labels") or {}).get(binding_id_label(kind)):
            merged["metadata"].setdefault("labels", {})[binding_id_label(kind)] = str(uuid.uuid4())
        if merged is None:
            return None
        cache.store(await self.client.update(resource, merged, namespace))
        return "updated"

    async def _release(self, template: Obj, cluster_wide: bool, policy_id: str) -> None:
        """Remove a policy's claim from the template's binding, then from the template."""
        kind = binding_kind(template)
        resource, cache = (
            (RESOURCE_BINDINGS, self.rbs) if kind == "ResourceBinding" else (CLUSTER_RESOURCE_BINDINGS, self.crbs)
        )
        meta = template["metadata"]
        name, namespace = binding_name(str(template.get("kind")), meta["name"]), meta.get("namespace")

        async def fresh_binding() -> Obj | None:
            return await self.client.get_or_none(resource, name, namespace)

        async def write_binding(obj: Obj) -> Obj:
            stored = await self.client.update(resource, obj, namespace)
            cache.store(stored)
            return stored

        await _update_with_retry(
            _get(cache, name, namespace or ""),
            fresh_binding,
            lambda b: without_claim(b, cluster_wide, policy_id),
            write_binding,
        )
        key = _template_key(template)
        resource_t = self._resources.get(key[:2]) or await self.mapper.resource_for(key[0], key[1])

        async def fresh_template() -> Obj | None:
            return await self.client.get_or_none(resource_t, key[3], key[2] or None)

        released = await _update_with_retry(
            template, fresh_template, lambda t: without_claim(t, cluster_wide, policy_id), self._update_template
        )
        if released:
            log.info("%s %s released by policy id %s", key[1], _name_of(template), policy_id)

    # -- policy reconcile --------------------------------------------------------
    async def reconcile_policy(self, key: PolicyKey) -> float | None:
        kind, namespace, name = key
        cluster_wide = kind == CPP
        resource = CLUSTER_PROPAGATION_POLICIES if cluster_wide else PROPAGATION_POLICIES
        cache = self.cpps if cluster_wide else self.pps
        obj = _get(cache, name, namespace)
        if obj is None:
            await self._unwatch_unselected()
            return None
        if obj["metadata"].get("deletionTimestamp"):
            await self._policy_deleted(obj, cluster_wide, resource, cache)
            return None
        admitted = admission_metadata(obj, cluster_wide)
        if admitted is not None:
            stored = await self.client.update(resource, admitted, namespace or None)
            cache.store(stored)
            log.info("%s %s: added permanent id and finalizer", kind, _name_of(stored))
        policy = self._policy(key)
        if policy is None:
            return None
        delay = await self._resolve_kinds(policy)
        self._converge_held(policy)
        await self._release_unselected(policy)
        self._enqueue_selected(policy)
        if policy.model.spec.preemption == "Always":
            if self.preemption_enabled:
                await self._preempt(policy)
            else:
                log.warning(
                    "%s asks for preemption but feature gate %s is not enabled",
                    policy.describe(),
                    PREEMPTION_GATE,
                )
        await self._unwatch_unselected()  # kinds only its old selectors named
        return delay

    async def _unwatch_unselected(self) -> None:
        """Stop watching the kinds no policy selects any more (its templates were released first:
        a policy being deleted still counts as selecting until its finalizer is gone)."""
        for kind_key in [k for k in self.kinds if not self._selecting.get(k)]:
            informer = self.kinds.pop(kind_key)
            self._resources.pop(kind_key, None)
            handler = self._handlers.pop(kind_key, None)
            if informer is None:
                continue
            if handler is not None:
                informer.remove_handler(handler)
            for held in self._claimed.values():
                held.difference_update([k for k in held if k[:2] == kind_key])
            self._user_changed.difference_update([k for k in self._user_changed if k[:2] == kind_key])
            for table in (self._in_namespace, self._named):
                for index_key in [k for k in table if k[:2] == kind_key]:
                    del table[index_key]
            await self.informers.release(informer)
            log.info("no policy selects %s in %s any more; not watching it", kind_key[1], kind_key[0])

    async def _resolve_kinds(self, policy: ParsedPolicy) -> float | None:
        missing = []
        for selector in policy.model.spec.resource_selectors:
            if not await self._watch_kind(selector.api_version, selector.kind):
                missing.append(f"{selector.kind} in {selector.api_version}")
        if not missing:
            self._unresolved.pop(policy.key, None)
            return None
        delay = self._unresolved.get(policy.key, UNRESOLVED_FIRST_RETRY)
        self._unresolved[policy.key] = min(delay * 2, UNRESOLVED_MAX_RETRY)
        log.info(
            "%s selects kinds not served yet (%s); retrying in %gs",
            policy.describe(),
            ", ".join(missing),
            delay,
        )
        return delay

    def _held(self, policy: ParsedPolicy) -> list[tuple[TemplateKey, Obj]]:
        """Templates carrying this policy's claim (from the claim index)."""
        label = (
            CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL
            if policy.cluster_wide
            else PROPAGATION_POLICY_PERMANENT_ID_LABEL
        )
        found = []
        for key in sorted(self._claimed.get(policy.permanent_id, set()) if policy.permanent_id else ()):
            template = self._template(key)
            if template is not None and (template["metadata"].get("labels") or {}).get(label) == policy.permanent_id:
                found.append((key, template))
        return found

    def _converge_held(self, policy: ParsedPolicy) -> None:
        """Templates the policy holds and still selects get its current settings."""
        for key, template in self._held(policy):
            if selectors_priority(template, policy.model.spec.resource_selectors) > ImplicitPriority.MISMATCH:
                self.templates.enqueue(key)

    async def _release_unselected(self, policy: ParsedPolicy) -> None:
        for key, template in self._held(policy):
            if selectors_priority(template, policy.model.spec.resource_selectors) == ImplicitPriority.MISMATCH:
                await self._release(template, policy.cluster_wide, policy.permanent_id)
                self.templates.enqueue(key)  # another policy may want it

    def _enqueue_selected(self, policy: ParsedPolicy) -> None:
        """Unclaimed templates the policy selects, found in the caches (Karmada's waiting list):
        only those of the selector's namespace and name are looked at (from the indexes)."""
        for selector in policy.model.spec.resource_selectors:
            informer = self.kinds.get((selector.api_version, selector.kind))
            if informer is None:
                continue
            for obj in self._candidates(informer, selector.api_version, selector.kind, selector):
                if claim_of(obj) is None and selector_priority(obj, selector) > ImplicitPriority.MISMATCH:
                    self.templates.enqueue(_template_key(obj))

    def _candidates(self, informer: Informer, api_version: str, kind: str, selector: ResourceSelector) -> list[Obj]:
        namespace = selector.namespace or ""
        if selector.name and namespace:
            places = [(namespace, selector.name)]
        elif selector.name:  # a cluster-scoped template, or one of that name in any namespace
            places = [(ns, selector.name) for ns in sorted(self._named.get((api_version, kind, "", selector.name), ()))]
        elif namespace:
            places = [(namespace, n) for n in sorted(self._in_namespace.get((api_version, kind, namespace, ""), ()))]
        else:
            return _items(informer)  # every template of the kind: what the selector selects
        found = (_get(informer, name, ns) for ns, name in places)
        return [obj for obj in found if obj is not None]

    async def _preempt(self, policy: ParsedPolicy) -> None:
        """Take the named templates from lower-priority holders (Karmada's preemption rules)."""
        if not policy.permanent_id:
            return
        _, namespace, name = policy.key
        for selector in policy.model.spec.resource_selectors:
            informer = self.kinds.get((selector.api_version, selector.kind))
            if informer is None or not selector.name:
                continue
            if not policy.cluster_wide and selector.namespace != namespace:
                continue  # Karmada's webhook refuses such selectors: a PropagationPolicy stays in its namespace
            template = _get(informer, selector.name, selector.namespace or "")
            if template is None or template["metadata"].get("deletionTimestamp"):
                continue
            if skip_reason(template, self.skipped_namespaces) is not None or claimed_by_other_feature(template):
                continue
            claim = claim_of(template)
            if claim is None:
                continue
            holder = self._policy(self._claim_policy(claim))
            holder_priority = holder.model.spec.priority if holder is not None else None
            if not may_preempt(
                policy.cluster_wide, name, namespace, policy.model.spec.priority, claim, holder_priority
            ):
                continue
            held_by = (
                f"cluster propagation policy({claim.name})"
                if claim.cluster_wide
                else (f"propagation policy({claim.namespace}/{claim.name})")
            )
            mine = (
                f"Cluster propagation policy({name})"
                if policy.cluster_wide
                else f"Propagation policy({namespace}/{name})"
            )
            try:
                stored = await self._claim(template, policy)
            except KubeError as exc:
                await self.recorder.record(
                    template, "Warning", "PreemptPolicyFailed", f"{mine} failed to preempt {held_by}: {exc.message}"
                )
                raise
            await self.recorder.record(
                stored, "Normal", "PreemptPolicySucceed", f"{mine} preempted {held_by} successfully"
            )
            log.info("%s %s: %s preempted %s", template.get("kind"), _name_of(template), mine, held_by)
            self._user_changed.add(_template_key(stored))  # the binding follows the new policy even if Lazy
            self.templates.enqueue(_template_key(stored))

    async def _policy_deleted(self, obj: Obj, cluster_wide: bool, resource: Resource, cache: Informer) -> None:
        finalizer = policy_finalizer(cluster_wide)
        finalizers = obj["metadata"].get("finalizers") or []
        if finalizer not in finalizers:
            return
        policy_id = (obj["metadata"].get("labels") or {}).get(policy_id_label(cluster_wide), "")
        label = policy_id_label(cluster_wide)
        # after a restart the selected kinds may not be cached yet: they must be, to find the claimed templates
        for selector in (obj.get("spec") or {}).get("resourceSelectors") or []:
            await self._watch_kind(str(selector.get("apiVersion", "")), str(selector.get("kind", "")))
        for key in sorted(self._claimed.get(policy_id, set()) if policy_id else ()):
            template = self._template(key)
            if template is not None and (template["metadata"].get("labels") or {}).get(label) == policy_id:
                await self._release(template, cluster_wide, policy_id)
                self.templates.enqueue(key)  # re-matched by the remaining policies
        namespace = obj["metadata"].get("namespace")

        def strip(policy: Obj) -> Obj | None:
            current = policy["metadata"].get("finalizers") or []
            if finalizer not in current:
                return None
            return {
                **policy,
                "metadata": {**policy["metadata"], "finalizers": [f for f in current if f != finalizer]},
            }

        async def fresh() -> Obj | None:
            return await self.client.get_or_none(resource, obj["metadata"]["name"], namespace)

        async def write(policy: Obj) -> Obj:
            stored = await self.client.update(resource, policy, namespace)
            cache.store(stored)
            return stored

        if await _update_with_retry(obj, fresh, strip, write):
            log.info("%s %s released its templates; finalizer removed", obj.get("kind"), _name_of(obj))


async def _update_with_retry(
    current: Obj | None,
    fresh: Callable[[], Awaitable[Obj | None]],
    change: Callable[[Obj], Obj | None],
    write: Callable[[Obj], Awaitable[Obj]],
) -> bool:
    """Write ``change(current)``; on a conflict re-read and try again (client-go's RetryOnConflict).
    False when there was nothing to change or the object is gone."""
    for attempt in range(CONFLICT_ATTEMPTS):
        if current is None:
            return False
        updated = change(current)
        if updated is None:
            return False
        try:
            await write(updated)
            return True
        except KubeError as exc:
            if exc.not_found:
                return False
            if not exc.conflict or attempt == CONFLICT_ATTEMPTS - 1:
                raise
        current = await fresh()
    return False


def _typed(informer: Informer, obj: Obj) -> Obj:
    """List items come without apiVersion and kind (as from kube-apiserver); put them back."""
    if obj.get("apiVersion") and obj.get("kind"):
        return obj
    return {**obj, "apiVersion": informer.resource.api_version, "kind": informer.resource.kind}


def _get(informer: Informer, name: str, namespace: str = "") -> Obj | None:
    found = informer.get(name, namespace)
    return _typed(informer, found) if found is not None else None


def _items(informer: Informer) -> list[Obj]:
    return [_typed(informer, obj) for obj in informer.items()]


def _established(crd: Obj) -> bool:
    return any(
        c.get("type") == "Established" and c.get("status") == "True"
        for c in (crd.get("status") or {}).get("conditions") or []
    )


def _template_key(obj: Obj) -> TemplateKey:
    meta = obj.get("metadata") or {}
    return (str(obj.get("apiVersion", "")), str(obj.get("kind", "")), meta.get("namespace", ""), meta.get("name", ""))


def _name_of(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))


def setup(context: Context) -> list[Controller[Any]]:
    """The detector's two reconcilers (templates and policies)."""
    options = context.options
    detector = Detector(
        context.client,
        context.informers,
        context.mapper,
        context.recorder,
        skipped_namespaces=options.skipped_propagating_namespaces,
        preemption_enabled=options.feature_enabled(PREEMPTION_GATE),
        priority_scheduling_enabled=options.feature_enabled(PRIORITY_GATE),
        workers=options.concurrent_resource_template_syncs,
    )
    detector.interpreter = async_interpreter_for(context)
    return [detector.templates, detector.policies]
