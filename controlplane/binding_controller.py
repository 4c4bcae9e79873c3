"""The binding controller: ResourceBindings and ClusterResourceBindings become
one Work per target cluster in ``karmada-es-<cluster>`` (reference 6.1-6.3;
Karmada's ``binding-controller`` and ``cluster-resource-binding-controller``).

A reconcile of one binding, from the shared caches:

1. Being deleted: delete its Works (found by the binding's id label through
   :class:`WorkIndex`), then drop the binding finalizer.
2. Otherwise make sure the binding carries its finalizer and permanent id
   label (one update, only when missing).
3. Delete the Works of clusters no longer targeted (graceful eviction tasks
   keep theirs; while a ``Directly`` evicted cluster still has a Work, nothing
   else is synced and the binding is looked at again in 5 s, or when that Work
   goes). The agent lets such a Work go only once its member objects are
   confirmed gone, so the new copy's Work is created after the old copy is
   gone; events with the times to the microsecond show the order
   (:mod:`karmada.works.direct_purge`; which clusters were seen waiting is kept
   in memory, so after a restart mid-purge only the creation is reported).
4. Render each target cluster's Work with :mod:`karmada.works` from a fresh
   template (shared informer; the API when the cache is older than the
   binding's reference), the Cluster and the (Cluster)OverridePolicies, and
   write it only when spec, labels, annotations or finalizers differ from the
   stored Work, so repeated reconciles make no API writes. Rendering is pure
   and runs first; the writes (and the deletes of steps 1 and 3) then go 8
   at a time, since a binding to 1,000 clusters is 1,000 round trips, and 16
   at a time over all bindings, leaving the client's pool room for the rest.

A cluster whose override fails keeps its stored Work untouched; the binding
gets the condition ``OverridesApplied=False`` (reason
``ApplyOverridePolicyFailed``, naming cluster, policy, rule and path; our
addition, Karmada only logs) and a Warning event on binding and template. The
other clusters are synced as Karmada does. Events (``SyncWorkSucceed``,
``ApplyOverridePolicySucceed``) are recorded when something was written, not
on every no-op reconcile as Karmada does, since events are API writes too.

What enqueues a binding: its own changes that bump ``generation`` (or start
its deletion), a change of any (Cluster)OverridePolicy whose selectors pick the
binding's template (old and new selectors; selector-less policies pick every
binding in their scope), a Cluster added or relabelled that the binding
targets, and the deletion of one of its Works (so a Work deleted by hand comes
back). Templates are not watched: the detector updates the binding's
``spec.resource.resourceVersion`` when they change.

Knowingly different from Karmada: the finalizer and the binding's permanent id
are added here when missing (Karmada's detector and webhook add them on
create); a Work no longer overridden loses its applied-overrides annotations
(Karmada merges annotations and keeps naming policies that no longer apply).
With Karmada's alpha StatefulFailoverInjection gate (off by default) a workload
moved by a ``Directly`` eviction gets the task's preserved labels.

Each controller runs ``--concurrent-(cluster)resourcebinding-syncs`` workers
(5) on the manager's event loop; a key is never reconciled by two workers at
once (the work queue guarantees it). On
restart every binding is reconciled once from the fresh caches; up-to-date
Works are left alone.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any, Generic, TypeVar

from controlplane.context import Context
from controlplane.failover_bindings import template_ref
from controlplane.interpreter_webhooks import async_interpreter_for
from karmada.api import KubeObject, ResourceBindingSpec
from karmada.api.binding import ObjectReference
from karmada.api.cluster import Cluster
from karmada.api.errors import APIValidationError
from karmada.api.keys import (
    CLUSTER_RESOURCE_BINDING_ANNOTATION,
    CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL,
    RESOURCE_BINDING_NAME_ANNOTATION,
    RESOURCE_BINDING_NAMESPACE_ANNOTATION,
    RESOURCE_BINDING_PERMANENT_ID_LABEL,
)
from karmada.api.names import cluster_of_execution_space
from karmada.api.override import ClusterOverridePolicy, OverridePolicy
from karmada.bounded import map_bounded
from karmada.interpreter_webhooks import AsyncInterpreter
from karmada.json_copy import copy_json
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError, Resource, ResourceMapper, UnknownKind
from karmada.kube.controller import Controller
from karmada.kube.informer import object_key
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import CLUSTER_RESOURCE_BINDINGS, CLUSTERS, RESOURCE_BINDINGS, WORKS
from karmada.overrides import OverrideError
from karmada.timestamps import format_micro_time, now_time, utcnow
from karmada.works import (
    CLUSTER_RESOURCE_BINDING,
    CONDITION_OVERRIDES_APPLIED,
    EVENT_APPLY_OVERRIDE_POLICY_FAILED,
    EVENT_APPLY_OVERRIDE_POLICY_SUCCEED,
    EVENT_CLEANUP_WORK_FAILED,
    EVENT_CREATE_WORK_SUCCEED,
    EVENT_PURGE_PENDING,
    EVENT_PURGE_SUCCEED,
    EVENT_SYNC_WORK_FAILED,
    EVENT_SYNC_WORK_SUCCEED,
    REASON_APPLY_OVERRIDE_POLICY_FAILED,
    REASON_APPLY_OVERRIDE_POLICY_SUCCEED,
    RESOURCE_BINDING,
    RenderedWork,
    RenderError,
    Scope,
    completions_by_cluster,
    created_message,
    desired_work,
    directly_purged_clusters,
    expected_clusters,
    is_workload,
    pending_message,
    policy_selectors,
    policy_selects,
    purge_progress,
    purged_message,
    render_work,
    target_clusters,
    work_changed,
)

log = logging.getLogger("controlplane.binding")
Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name); namespace "" for ClusterResourceBindings
M = TypeVar("M", bound=KubeObject)

OVERRIDE_POLICIES = Resource("policy.karmada.io", "v1alpha1", "overridepolicies", "OverridePolicy", True)
CLUSTER_OVERRIDE_POLICIES = Resource(
    "policy.karmada.io", "v1alpha1", "clusteroverridepolicies", "ClusterOverridePolicy", False
)
DIRECTLY_PURGE_REQUEUE = 5.0  # Karmada's requeueIntervalForDirectlyPurge
UNKNOWN_KIND_REQUEUE = 60.0
WRITE_ATTEMPTS = 3
MESSAGE_LIMIT = 4096
MESSAGE_OVERRIDES_APPLIED = "All override policies were applied."
WORK_WRITES_IN_FLIGHT = 8  # per binding; a binding to 1,000 clusters is 1,000 round trips otherwise
YIELD_EVERY = 16  # Works rendered between two turns given to the rest of the loop
# and over every binding at once: the client's pool has 64 connections, the other controllers need some
WORK_WRITES_IN_FLIGHT_TOTAL = 16


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _version(obj: Obj | None) -> int | None:
    rv = str(_meta(obj or {}).get("resourceVersion", ""))
    return int(rv) if rv.isdigit() else None


def _binding_key(binding: Obj) -> Key:
    return str(_meta(binding).get("namespace", "")), str(_meta(binding).get("name", ""))


class WorkIndex:
    """Works by their binding id label (ResourceBinding or ClusterResourceBinding),
    kept from the shared Work informer's events."""

    LABELS = (RESOURCE_BINDING_PERMANENT_ID_LABEL, CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL)

    def __init__(self, works: Informer) -> None:
        self.works = works
        self._by_id: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
        works.add_handler(self._on_event)

    def _entries(self, obj: Obj) -> Iterator[tuple[str, str]]:
        labels = _meta(obj).get("labels") or {}
        for label in self.LABELS:
            if labels.get(label):
                yield label, str(labels[label])

    def _on_event(self, kind: str, obj: Obj, old: Obj | None) -> None:
        key = object_key(obj)
        for entry in self._entries(old) if old is not None else ():
            self._by_id[entry].discard(key)
            if not self._by_id[entry]:
                del self._by_id[entry]
        if kind != "DELETED":
            for entry in self._entries(obj):
                self._by_id[entry].add(key)

    def add(self, work: Obj) -> None:
        """Index a Work this process just wrote, before its watch event arrives (a binding
        deleted at once must still find it)."""
        for entry in self._entries(work):
            self._by_id[entry].add(object_key(work))

    def works_of(self, scope: Scope, binding_id: str) -> list[Obj]:
        """The cached Works carrying ``binding_id`` under the scope's label."""
        found = []
        for namespace, name in sorted(self._by_id.get((scope.id_label, binding_id), ())):
            work = self.works.get(name, namespace)
            if work is not None:
                found.append(work)
        return found


class Models(Generic[M]):
    """Parsed models of an informer's objects, parsed once per resourceVersion (a version that
    does not parse keeps the last valid one), and the names of each namespace's objects (so a
    reconcile reads only its namespace's policies)."""

    def __init__(self, informer: Informer, model: type[M]) -> None:
        self.informer = informer
        self.model = model
        self._parsed: dict[tuple[str, str], tuple[str, M | None]] = {}
        self._by_namespace: dict[str, set[str]] = defaultdict(set)
        informer.add_handler(self._on_event)

    def _on_event(self, kind: str, obj: Obj, old: Obj | None) -> None:
        namespace, name = object_key(obj)
        if kind == "DELETED":
            self._parsed.pop((namespace, name), None)
            self._by_namespace[namespace].discard(name)
            if not self._by_namespace[namespace]:
                del self._by_namespace[namespace]
        else:
            self._by_namespace[namespace].add(name)

    def _parse(self, obj: Obj) -> M | None:
        key = object_key(obj)
        rv = str(_meta(obj).get("resourceVersion", ""))
        cached = self._parsed.get(key)
        if cached is not None and cached[0] == rv:
            return cached[1]
        try:
            model: M | None = self.model.from_dict(obj)
        except APIValidationError as exc:
            # fail safe: a version this model refuses (a newer Karmada wrote it) does not make the
            # object vanish; its last valid version stands in (the scheduler does the same)
            model = cached[1] if cached is not None else None
            kept = "its last valid version is used" if model is not None else "ignored"
            log.warning("invalid %s %s/%s (%s): %s", self.model.__name__, key[0], key[1], kept, exc)
        self._parsed[key] = (rv, model)
        return model

    def get(self, name: str, namespace: str = "") -> M | None:
        obj = self.informer.get(name, namespace)
        return None if obj is None else self._parse(obj)

    def items(self, namespace: str = "") -> list[M]:
        """The valid objects of ``namespace`` ("" for cluster-scoped ones), by name."""
        found = []
        for name in sorted(self._by_namespace.get(namespace, ())):
            model = self.get(name, namespace)
            if model is not None:
                found.append(model)
        return found


class Templates:
    """Resource templates, from the detector's cache of their kind when it holds one, else from
    the API. Never a reader of that cache itself: a kind no policy selects any more stops being
    watched (a released template's binding still gets its Works, with a GET each time)."""

    def __init__(self, client: KubeClient, informers: InformerFactory, mapper: ResourceMapper) -> None:
        self.client = client
        self.informers = informers
        self.mapper = mapper
        self._resources: dict[tuple[str, str], Resource] = {}  # resolved kinds

    def _informer(self, api_version: str, kind: str) -> Informer | None:
        resource = self._resources.get((api_version, kind))
        return self.informers.existing(resource) if resource is not None else None

    def cached(self, api_version: str, kind: str, name: str, namespace: str) -> Obj | None:
        """The cached template, only if its kind's cache is running already."""
        informer = self._informer(api_version, kind)
        found = None if informer is None else informer.get(name, namespace)
        return None if found is None else {**found, "apiVersion": api_version, "kind": kind}

    async def get(self, reference: ObjectReference) -> Obj | None:
        """A copy of the template; from the API when no cache holds it or the cache is behind the
        binding's reference."""
        resource = await self.mapper.resource_for(reference.api_version, reference.kind)
        self._resources[(reference.api_version, reference.kind)] = resource
        informer = self.informers.existing(resource)
        namespace = (reference.namespace or "") if resource.namespaced else ""
        cached = informer.get(reference.name, namespace) if informer is not None else None
        version = reference.resource_version or ""
        wanted = int(version) if version.isdigit() else None
        seen = _version(cached)
        if cached is not None and (wanted is None or seen is None or seen >= wanted):
            found: Obj | None = copy_json(cached)
        else:
            found = await self.client.get_or_none(resource, reference.name, namespace or None)
        if found is not None:
            # list responses carry no apiVersion/kind per item; the manifest needs them
            found["apiVersion"], found["kind"] = resource.api_version, resource.kind
        return found


class BindingController:
    """Reconciles the bindings of one scope (ResourceBinding or ClusterResourceBinding)."""

    def __init__(
        self,
        scope: Scope,
        resource: Resource,
        client: KubeClient,
        recorder: EventRecorder,
        bindings: Informer,
        works: Informer,
        index: WorkIndex,
        clusters: Models[Cluster],
        cluster_override_policies: Models[ClusterOverridePolicy],
        override_policies: Models[OverridePolicy] | None,
        templates: Templates,
    ) -> None:
        self.scope = scope
        self.resource = resource
        self.client = client
        self.recorder = recorder
        self.bindings = bindings
        self.works = works
        self.index = index
        self.clusters = clusters
        self.cops = cluster_override_policies
        self.ops = override_policies
        self.templates = templates
        self.interpreter = AsyncInterpreter()  # the shared one from async_interpreter_for in setup
        self.stateful_failover_injection = False  # Karmada's StatefulFailoverInjection gate
        self.write_gate = asyncio.Semaphore(WORK_WRITES_IN_FLIGHT_TOTAL)  # shared by both scopes in setup
        # per binding, the Directly-evicted clusters seen still holding a Work (for the purge events)
        self.purging: dict[Key, set[str]] = {}
        # who to wake up: bindings by their template's (apiVersion, kind), and by target cluster
        self._by_kind: dict[tuple[str, str], set[Key]] = defaultdict(set)
        self._by_cluster: dict[str, set[Key]] = defaultdict(set)
        self._indexed: dict[Key, tuple[tuple[str, str], frozenset[str]]] = {}
        bindings.add_handler(self.index_binding)

    # -- event mapping ------------------------------------------------------------------------
    def index_binding(self, kind: str, obj: Obj, old: Obj | None) -> None:
        key = _binding_key(obj)
        previous = self._indexed.pop(key, None)
        if previous is not None:
            self._by_kind[previous[0]].discard(key)
            for name in previous[1]:
                self._by_cluster[name].discard(key)
        if kind == "DELETED":
            return
        spec = obj.get("spec") or {}
        resource = spec.get("resource") or {}
        gvk = (str(resource.get("apiVersion", "")), str(resource.get("kind", "")))
        names = {str(t.get("name", "")) for t in spec.get("clusters") or [] if isinstance(t, dict)}
        for snapshot in spec.get("requiredBy") or []:
            names.update(str(t.get("name", "")) for t in (snapshot or {}).get("clusters") or [] if isinstance(t, dict))
        self._indexed[key] = (gvk, frozenset(names))
        self._by_kind[gvk].add(key)
        for name in names:
            self._by_cluster[name].add(key)

    def binding_keys(self, kind: str, obj: Obj, old: Obj | None) -> list[Key]:
        """Karmada's GenerationChangedPredicate, plus deletion and a changed id label."""
        if kind == "DELETED":
            return []
        if kind == "MODIFIED" and old is not None:
            new_meta, old_meta = _meta(obj), _meta(old)
            if (
                new_meta.get("generation") == old_meta.get("generation")
                and new_meta.get("deletionTimestamp") == old_meta.get("deletionTimestamp")
                and (new_meta.get("labels") or {}).get(self.scope.id_label)
                == (old_meta.get("labels") or {}).get(self.scope.id_label)
            ):
                return []
        return [_binding_key(obj)]

    def policy_keys(self, kind: str, obj: Obj, old: Obj | None) -> list[Key]:
        """Bindings whose template an (Cluster)OverridePolicy selects, before or after the change."""
        if kind == "MODIFIED" and old is not None and _meta(obj).get("generation") == _meta(old).get("generation"):
            return []
        keys: set[Key] = set()
        for policy in [obj] if old is None or old is obj else [obj, old]:
            # an OverridePolicy is the namespaced one (listed items carry no kind to tell)
            namespace = str(_meta(policy).get("namespace") or "") or None
            if namespace is not None and not self.scope.namespaced:
                continue  # OverridePolicies never touch cluster-scoped templates
            keys.update(self._selected(policy, namespace))
        return sorted(keys)

    def _selected(self, policy: Obj, namespace: str | None) -> Iterable[Key]:
        selectors = policy_selectors(policy)
        if selectors is None:
            return [
                _binding_key(b)
                for b in self.bindings.items()
                if namespace is None or _meta(b).get("namespace", "") == namespace
            ]
        found: list[Key] = []
        for gvk in {(s.api_version, s.kind) for s in selectors}:
            for key in self._by_kind.get(gvk, ()):
                if namespace is not None and key[0] != namespace:
                    continue
                binding = self.bindings.get(key[1], key[0])
                resource = ((binding or {}).get("spec") or {}).get("resource") or {}
                template = self.templates.cached(gvk[0], gvk[1], str(resource.get("name", "")), key[0])
                if policy_selects(selectors, template):
                    found.append(key)
        return found

    def cluster_keys(self, kind: str, obj: Obj, old: Obj | None) -> list[Key]:
        """Bindings targeting a Cluster that appeared or whose labels or spec changed
        (override rules select clusters by them)."""
        if kind == "DELETED":
            return []
        same_labels = old is not None and (_meta(obj).get("labels") or {}) == (_meta(old).get("labels") or {})
        if kind == "MODIFIED" and old is not None and same_labels and obj.get("spec") == old.get("spec"):
            return []
        return sorted(self._by_cluster.get(str(_meta(obj).get("name", "")), ()))

    def work_keys(self, kind: str, obj: Obj, old: Obj | None) -> list[Key]:
        """The binding of a deleted Work, so a Work removed by hand is written again."""
        if kind != "DELETED":
            return []
        annotations = _meta(obj).get("annotations") or {}
        if self.scope.namespaced:
            name = annotations.get(RESOURCE_BINDING_NAME_ANNOTATION)
            namespace = annotations.get(RESOURCE_BINDING_NAMESPACE_ANNOTATION)
            return [(str(namespace), str(name))] if name and namespace else []
        name = annotations.get(CLUSTER_RESOURCE_BINDING_ANNOTATION)
        return [("", str(name))] if name else []

    # -- reconcile ------------------------------------------------------------------------------
    def _describe(self, binding: Obj) -> str:
        namespace, name = _binding_key(binding)
        return self.scope.description(namespace, name)

    async def reconcile(self, key: Key) -> float | None:
        namespace, name = key
        binding = self.bindings.get(name, namespace)
        if binding is None or _meta(binding).get("deletionTimestamp"):
            self.purging.pop(key, None)
        if binding is None:
            return None
        if _meta(binding).get("deletionTimestamp"):
            await self._remove(binding)
            return None
        binding = await self._ensure_identity(binding)
        try:
            spec = ResourceBindingSpec.from_dict(binding.get("spec") or {}, path="spec")
        except APIValidationError as exc:
            message = f"invalid {self._describe(binding)}: {exc}"
            log.warning("%s", message)
            await self.recorder.record(binding, "Warning", EVENT_SYNC_WORK_FAILED, message)
            return None
        binding_id = str((_meta(binding).get("labels") or {}).get(self.scope.id_label, ""))
        removed = await self._remove_orphans(binding, spec, binding_id)
        directly = directly_purged_clusters(spec)
        if directly and await self._purge_pending(key, binding, binding_id, directly):
            return DIRECTLY_PURGE_REQUEUE
        if not directly:
            self.purging.pop(key, None)
        try:
            template = await self.templates.get(spec.resource)
        except UnknownKind as exc:
            # a CRD not installed (yet): say so, and look again later rather than in a tight loop
            message = f"Failed to sync work of {self._describe(binding)}: {exc}"
            log.warning("binding=%s: sync failed: %s", self._describe(binding), exc)
            await self.recorder.record(binding, "Warning", EVENT_SYNC_WORK_FAILED, message)
            return UNKNOWN_KIND_REQUEUE
        if template is None:
            # the template is gone and the garbage collector will take the binding (and so its Works)
            log.info(
                "binding=%s: template %s %s not found; nothing to sync",
                self._describe(binding),
                spec.resource.kind,
                spec.resource.name,
            )
            return None
        await self._sync(binding, spec, template, removed, directly)
        return None

    async def _purge_pending(self, key: Key, binding: Obj, binding_id: str, directly: set[str]) -> bool:
        """Whether a ``Directly`` evicted cluster still holds a Work of the binding (then nothing is
        synced); records the purge's start and, once a Work is gone, its confirmation."""
        seen = self.purging.setdefault(key, set())
        with_works = [
            c
            for c in (
                cluster_of_execution_space(_meta(w)["namespace"]) for w in self.index.works_of(self.scope, binding_id)
            )
            if c is not None
        ]
        progress = purge_progress(directly, with_works, seen)
        when = format_micro_time(utcnow())
        for cluster in sorted(progress.confirmed):
            log.info(
                "binding=%s: workload purged from cluster %s (purgeMode Directly)", self._describe(binding), cluster
            )
            await self._record_both(binding, EVENT_PURGE_SUCCEED, purged_message(cluster, when))
        if progress.started:
            await self._record_both(
                binding, EVENT_PURGE_PENDING, pending_message(self._describe(binding), progress.started, when)
            )
        seen.clear()
        seen.update(progress.waiting)
        if progress.waiting:
            log.info(
                "binding=%s: works in clusters evicted with purgeMode Directly not deleted yet (%s); not syncing",
                self._describe(binding),
                ", ".join(sorted(progress.waiting)),
            )
        return bool(progress.waiting)

    async def _record_both(self, binding: Obj, reason: str, message: str) -> None:
        for obj in (binding, template_ref(binding)):
            await self.recorder.record(obj, "Normal", reason, message)

    async def _ensure_identity(self, binding: Obj) -> Obj:
        """The finalizer (ours to remove) and the permanent id (Karmada's webhook would add it)."""
        meta = _meta(binding)
        finalizers = list(meta.get("finalizers") or [])
        labels = dict(meta.get("labels") or {})
        if self.scope.finalizer in finalizers and labels.get(self.scope.id_label):
            return binding
        updated = copy.deepcopy(binding)
        added = []
        if self.scope.finalizer not in finalizers:
            updated["metadata"]["finalizers"] = [*finalizers, self.scope.finalizer]
            added.append(f"finalizer {self.scope.finalizer}")
        if not labels.get(self.scope.id_label):
            labels[self.scope.id_label] = str(uuid.uuid4())
            updated["metadata"]["labels"] = labels
            added.append(f"label {self.scope.id_label}={labels[self.scope.id_label]}")
        namespace, _ = _binding_key(binding)
        stored = await self.client.update(self.resource, updated, namespace or None)
        self.bindings.store(stored)
        log.info("binding=%s: added %s", self._describe(binding), " and ".join(added))
        return stored

    async def _delete_work(self, work: Obj) -> bool:
        meta = _meta(work)
        if meta.get("deletionTimestamp"):
            return False  # already on its way (the agent runs the execution finalizer)
        try:
            async with self.write_gate:
                await self.client.delete(WORKS, meta["name"], meta["namespace"])
        except KubeError as exc:
            if exc.not_found:
                return False
            raise
        return True

    async def _remove(self, binding: Obj) -> None:
        namespace, _ = _binding_key(binding)
        binding_id = str((_meta(binding).get("labels") or {}).get(self.scope.id_label, ""))
        works = self.index.works_of(self.scope, binding_id) if binding_id else []
        for work, deleted in zip(
            works, await map_bounded(WORK_WRITES_IN_FLIGHT, self._delete_work, works), strict=True
        ):
            if deleted:
                log.info(
                    "binding=%s being deleted: deleted work %s/%s",
                    self._describe(binding),
                    _meta(work)["namespace"],
                    _meta(work)["name"],
                )
        finalizers = list(_meta(binding).get("finalizers") or [])
        if self.scope.finalizer not in finalizers:
            return
        updated = copy.deepcopy(binding)
        updated["metadata"]["finalizers"] = [f for f in finalizers if f != self.scope.finalizer]
        try:
            stored = await self.client.update(self.resource, updated, namespace or None)
        except KubeError as exc:
            if exc.not_found:
                return
            raise
        self.bindings.store(stored)
        log.info("binding=%s: works deleted, removed finalizer %s", self._describe(binding), self.scope.finalizer)

    async def _remove_orphans(self, binding: Obj, spec: ResourceBindingSpec, binding_id: str) -> int:
        expected = expected_clusters(spec)
        orphans = []
        for work in self.index.works_of(self.scope, binding_id):
            cluster = cluster_of_execution_space(_meta(work)["namespace"])
            if cluster is not None and cluster not in expected:
                orphans.append(work)

        async def delete(work: Obj) -> bool | KubeError:
            try:
                return await self._delete_work(work)
            except KubeError as exc:
                return exc

        removed = 0
        failure: KubeError | None = None
        for work, outcome in zip(orphans, await map_bounded(WORK_WRITES_IN_FLIGHT, delete, orphans), strict=True):
            if isinstance(outcome, KubeError):
                failure = failure or outcome
            elif outcome:
                removed += 1
                log.info(
                    "binding=%s: deleted orphan work %s/%s (cluster %s no longer targeted)",
                    self._describe(binding),
                    _meta(work)["namespace"],
                    _meta(work)["name"],
                    cluster_of_execution_space(_meta(work)["namespace"]),
                )
        if failure is not None:
            await self.recorder.record(binding, "Warning", EVENT_CLEANUP_WORK_FAILED, failure.message)
            raise failure
        return removed

    async def _sync(
        self, binding: Obj, spec: ResourceBindingSpec, template: Obj, removed: int, directly: set[str]
    ) -> None:
        targets = target_clusters(spec)
        completions = completions_by_cluster(template, spec, targets)
        cops = self.cops.items()
        template_ns = str(_meta(template).get("namespace", ""))
        ops = self.ops.items(template_ns) if self.ops is not None and template_ns else []
        override_failures: list[str] = []
        errors: list[str] = []
        api_error: KubeError | None = None
        written = 0
        # an interpreter webhook's revisions are asked for here, all at once; rendering stays pure
        reviser = (
            await self.interpreter.reviser(template, [t.replicas or 0 for t in targets])
            if is_workload(spec)
            else self.interpreter.customized
        )
        renders: list[tuple[str, RenderedWork]] = []
        for index, target in enumerate(targets):
            if index % YIELD_EVERY == YIELD_EVERY - 1:
                # rendering is pure and never suspends: a binding to 1,000 clusters would hold
                # the loop for seconds, the leader's Lease renewal waiting behind it
                await asyncio.sleep(0)
            cluster = self.clusters.get(target.name)
            if cluster is None:
                errors.append(f"cluster {target.name} not found")
                continue
            try:
                rendered = render_work(
                    template,
                    binding,
                    spec,
                    self.scope,
                    target,
                    cluster,
                    cops,
                    ops,
                    reviser,
                    completions,
                    stateful_failover_injection=self.stateful_failover_injection,
                )
            except OverrideError as exc:
                message = f"cluster {target.name}: {exc}"
                override_failures.append(message)
                log.warning("binding=%s: override failed, work left as it was: %s", self._describe(binding), message)
                continue
            except RenderError as exc:
                errors.append(str(exc))
                continue
            for warning in rendered.warnings:
                log.warning("binding=%s: %s", self._describe(binding), warning)
            renders.append((target.name, rendered))

        async def write(rendered: RenderedWork) -> str | KubeError | None:
            await asyncio.sleep(0)  # a Work already as rendered is compared without suspending: let others run
            try:
                return await self._write_work(binding, rendered)
            except KubeError as exc:
                return exc

        outcomes = await map_bounded(WORK_WRITES_IN_FLIGHT, write, [rendered for _, rendered in renders])
        for (cluster_name, rendered), outcome in zip(renders, outcomes, strict=True):
            if isinstance(outcome, KubeError):
                errors.append(f"work {rendered.namespace}/{rendered.name}: {outcome.message}")
                api_error = api_error or outcome
                continue
            if outcome:
                written += 1
                if outcome == "created" and directly:
                    # the new copy, created only now that the Directly evicted clusters hold no Work
                    when = format_micro_time(utcnow())
                    message = created_message(rendered.namespace, rendered.name, cluster_name, when, directly)
                    await self._record_both(binding, EVENT_CREATE_WORK_SUCCEED, message)
                for policy in rendered.applied_policies():
                    await self.recorder.record(
                        template,
                        "Normal",
                        EVENT_APPLY_OVERRIDE_POLICY_SUCCEED,
                        f"Apply {_policy_phrase(policy)} for cluster({cluster_name}) succeed.",
                    )
        await self._record_override_condition(binding, override_failures)
        if override_failures:
            message = "; ".join(override_failures)[:MESSAGE_LIMIT]
            for obj in (binding, template):
                await self.recorder.record(obj, "Warning", EVENT_APPLY_OVERRIDE_POLICY_FAILED, message)
        failures = override_failures + errors
        if failures:
            message = f"Failed to sync work of {self._describe(binding)}: {'; '.join(failures)}"[:MESSAGE_LIMIT]
            log.warning("binding=%s: sync failed: %s", self._describe(binding), "; ".join(failures))
            for obj in (binding, template):
                await self.recorder.record(obj, "Warning", EVENT_SYNC_WORK_FAILED, message)
            if api_error is not None:
                raise api_error  # retried with backoff; the other failures wait for a change that fixes them
            return
        if written or removed:
            message = f"Sync work of {self._describe(binding)} successful."
            log.info(
                "binding=%s: synced (%d works written, %d orphans deleted)", self._describe(binding), written, removed
            )
            for obj in (binding, template):
                await self.recorder.record(obj, "Normal", EVENT_SYNC_WORK_SUCCEED, message)

    async def _write_work(self, binding: Obj, rendered: RenderedWork) -> str | None:
        """Create or update the Work when it differs from the stored one: "created" or "updated"
        when written, else None."""
        existing = self.works.get(rendered.name, rendered.namespace)
        for attempt in range(WRITE_ATTEMPTS):
            if existing is not None and _meta(existing).get("deletionTimestamp"):
                # written again once it is gone (its deletion enqueues the binding)
                log.info(
                    "binding=%s: work %s/%s is being deleted; waiting",
                    self._describe(binding),
                    rendered.namespace,
                    rendered.name,
                )
                return None
            desired = desired_work(existing, rendered, str(uuid.uuid4()))
            if not work_changed(existing, desired):
                return None
            try:
                async with self.write_gate:
                    if existing is None:
                        stored = await self.client.create(WORKS, desired, rendered.namespace)
                    else:
                        stored = await self.client.update(WORKS, desired, rendered.namespace)
            except KubeError as exc:
                if (exc.conflict or exc.already_exists) and attempt + 1 < WRITE_ATTEMPTS:
                    existing = await self.client.get_or_none(WORKS, rendered.name, rendered.namespace)
                    continue
                raise
            self.works.store(stored)
            self.index.add(stored)
            done = "created" if existing is None else "updated"
            log.info(
                "binding=%s: %s work %s/%s (cluster %s)",
                self._describe(binding),
                done,
                rendered.namespace,
                rendered.name,
                rendered.cluster,
            )
            return done
        return None

    async def _record_override_condition(self, binding: Obj, failures: list[str]) -> None:
        """``OverridesApplied``: False with the failures; True again once they are fixed;
        absent on bindings whose overrides never failed. Read-modify-write of the status."""
        namespace, name = _binding_key(binding)
        current = binding
        for attempt in range(WRITE_ATTEMPTS):
            status = dict(current.get("status") or {})
            conditions = [dict(c) for c in status.get("conditions") or []]
            found = next((c for c in conditions if c.get("type") == CONDITION_OVERRIDES_APPLIED), None)
            if failures:
                wanted = ("False", REASON_APPLY_OVERRIDE_POLICY_FAILED, "; ".join(failures)[:MESSAGE_LIMIT])
            elif found is None:
                return
            else:
                wanted = ("True", REASON_APPLY_OVERRIDE_POLICY_SUCCEED, MESSAGE_OVERRIDES_APPLIED)
            if found is not None and (found.get("status"), found.get("reason"), found.get("message")) == wanted:
                return
            condition = {
                "type": CONDITION_OVERRIDES_APPLIED,
                "status": wanted[0],
                "reason": wanted[1],
                "message": wanted[2],
                "lastTransitionTime": now_time()
                if found is None or found.get("status") != wanted[0]
                else found.get("lastTransitionTime", now_time()),
            }
            if found is None:
                conditions.append(condition)
            else:
                conditions[conditions.index(found)] = condition
            updated = copy.deepcopy(current)
            updated["status"] = {**status, "conditions": conditions}
            try:
                stored = await self.client.update(self.resource, updated, namespace or None, subresource="status")
            except KubeError as exc:
                if exc.conflict and attempt + 1 < WRITE_ATTEMPTS:
                    fresh = await self.client.get_or_none(self.resource, name, namespace or None)
                    if fresh is None:
                        return
                    current = fresh
                    continue
                raise
            self.bindings.store(stored)
            log.info(
                "binding=%s: condition %s=%s (%s)",
                self._describe(binding),
                CONDITION_OVERRIDES_APPLIED,
                wanted[0],
                wanted[1],
            )
            return


def _policy_phrase(policy: str) -> str:
    """``override policy(ns/name)`` / ``cluster override policy(name)``, Karmada's event wording."""
    kind, _, name = policy.partition(" ")
    return f"cluster override policy({name})" if kind == "ClusterOverridePolicy" else f"override policy({name})"


def setup(context: Context) -> list[Controller[Key]]:
    """The ResourceBinding and ClusterResourceBinding controllers, on shared caches."""
    informers = context.informers
    works = informers.informer(WORKS)
    index = WorkIndex(works)
    clusters = Models(informers.informer(CLUSTERS), Cluster)
    cops = Models(informers.informer(CLUSTER_OVERRIDE_POLICIES), ClusterOverridePolicy)
    ops = Models(informers.informer(OVERRIDE_POLICIES), OverridePolicy)
    templates = Templates(context.client, informers, context.mapper)
    write_gate = asyncio.Semaphore(WORK_WRITES_IN_FLIGHT_TOTAL)
    controllers: list[Controller[Key]] = []
    options = context.options
    for scope, resource, namespaced_ops, name, workers in (
        (RESOURCE_BINDING, RESOURCE_BINDINGS, ops, "binding-controller", options.concurrent_resourcebinding_syncs),
        (
            CLUSTER_RESOURCE_BINDING,
            CLUSTER_RESOURCE_BINDINGS,
            None,
            "cluster-resource-binding-controller",
            options.concurrent_clusterresourcebinding_syncs,
        ),
    ):
        bindings = informers.informer(resource)
        controller = BindingController(
            scope,
            resource,
            context.client,
            context.recorder,
            bindings,
            works,
            index,
            clusters,
            cops,
            namespaced_ops,
            templates,
        )
        controller.interpreter = async_interpreter_for(context)
        controller.write_gate = write_gate
        controller.stateful_failover_injection = options.feature_enabled("StatefulFailoverInjection")
        loop: Controller[Key] = Controller(name, controller.reconcile, workers=max(1, workers))
        loop.watches(bindings, controller.binding_keys)
        loop.watches(cops.informer, controller.policy_keys)
        if namespaced_ops is not None:
            loop.watches(namespaced_ops.informer, controller.policy_keys)
        loop.watches(clusters.informer, controller.cluster_keys)
        loop.watches(works, controller.work_keys)
        controllers.append(loop)
    return controllers
