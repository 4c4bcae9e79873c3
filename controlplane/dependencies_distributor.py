"""The dependencies distributor (reference section 10; Karmada's ``dependencies-distributor``,
run while the ``PropagateDeps`` feature gate is on, its default).

A ResourceBinding with ``spec.propagateDeps`` (from its policy) is an
*independent* binding. A reconcile of one, from the shared caches:

1. Gone, being deleted, or ``propagateDeps`` switched off: detach it from
   every attached binding that carries its ``depended-by`` label (label and
   ``requiredBy`` snapshot removed; a distributor-made binding's
   ``conflictResolution``/``preserveResourcesOnDeletion`` resolved again from
   the referrers left, or cleared), then drop the finalizer
   ``karmada.io/binding-dependencies-distributor``.
2. Otherwise read the raw template (the shared informer of its kind) and ask
   the interpreter for its dependencies (none asked when the kind has no
   InterpretDependency hook). Write the finalizer and the
   ``resourcebinding.karmada.io/dependencies`` annotation in one update, only
   when either is missing or different (``GetDependenciesSucceed`` on the
   template then; ``GetDependenciesFailed`` when interpretation fails).
3. Detach it from the attached bindings whose resource is no longer among its
   dependencies, then create or update the attached binding of each
   dependency that exists (by name, or every object its label selector
   matches in the namespace): see :mod:`karmada.dependencies`. Each is
   written only when its labels or spec differ. ``DependencyPolicyConflict``
   is recorded on an attached binding written while its referrers disagree.

What enqueues an independent binding: Karmada's predicates (created with
``propagateDeps`` and already scheduled; updated with a new generation where
old or new has ``propagateDeps``; deleted with it), plus the start of its
deletion, a new permanent id, and any event of a binding that still carries
our finalizer (so a switch-off missed while the control plane was down is
caught on restart); and any change of a template one of its dependencies names or
selects (by the annotation, before and after a label change), through the
informer of each dependency kind, asked for on first use and shared with the
binding controller. So a ConfigMap created after its Deployment is attached
as soon as it appears, and a template edit refreshes the attached binding's
``spec.resource`` (which wakes the binding controller).

The attached binding carries no policy label, so the scheduler ignores it;
the binding controller renders its Works for ``spec.clusters`` plus every
``requiredBy`` snapshot's clusters, with the (Cluster)OverridePolicies that
select the dependency. An attached binding left without referrers is not
deleted (as in Karmada): it has no target, so its Works and the member copies
go (unless the Work said preserve); the binding itself is garbage-collected
with the dependency.

Knowingly different from Karmada: ``GetDependenciesSucceed`` and
``SyncScheduleResultToDependenciesSucceed`` are recorded when something was
written, not on every reconcile (events are API writes); a referrer missing
from the cache is left out of the policy resolution (Karmada fails and
retries); the finalizer and the annotation go in one update, not two.

Workers: ``--concurrent-dependent-resource-syncs`` (2), on the manager's event
loop; a key is never reconciled by two workers at once. On restart every
independent binding is reconciled once from the fresh caches; nothing is
written when all is up to date.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from controlplane.binding_controller import Templates
from controlplane.context import Context
from controlplane.interpreter import interpreter_for
from controlplane.interpreter_webhooks import async_interpreter_for
from karmada.api.binding import ObjectReference
from karmada.api.errors import APIValidationError
from karmada.api.interpreter import DependentObjectReference
from karmada.api.keys import (
    BINDING_DEPENDENCIES_ANNOTATION,
    BINDING_DEPENDENCIES_DISTRIBUTOR_FINALIZER,
    DEPENDED_BY_LABEL_KEY_PREFIX,
    RESOURCE_BINDING_PERMANENT_ID_LABEL,
)
from karmada.api.names import binding_name, depended_by_label_key
from karmada.dependencies import (
    DEPENDENCY_POLICY_CONFLICT,
    OwnerConflict,
    annotation_value,
    attach,
    describe_dependencies,
    detach,
    parse_annotation,
    reference_matches,
)
from karmada.detection.changes import specification_changed
from karmada.interpreter.native import Operation
from karmada.interpreter_webhooks import AsyncInterpreter
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError, ResourceMapper, UnknownKind
from karmada.kube.controller import Controller
from karmada.kube.informer import object_key
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import RESOURCE_BINDINGS

log = logging.getLogger("controlplane.dependencies")
Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name) of an independent ResourceBinding
GVK = tuple[str, str]

CONTROLLER_NAME = "dependencies-distributor"
EVENT_GET_DEPENDENCIES_SUCCEED = "GetDependenciesSucceed"
EVENT_GET_DEPENDENCIES_FAILED = "GetDependenciesFailed"
EVENT_SYNC_TO_DEPENDENCIES_SUCCEED = "SyncScheduleResultToDependenciesSucceed"
EVENT_SYNC_TO_DEPENDENCIES_FAILED = "SyncScheduleResultToDependenciesFailed"
MESSAGE_SYNC_TO_DEPENDENCIES_SUCCEED = "Sync schedule results to dependencies succeed."
TEMPLATE_SYNC_TIMEOUT = 30.0
UNKNOWN_KIND_REQUEUE = 60.0
FAILING_CACHE_WAIT = 1.0
WRITE_ATTEMPTS = 3
MESSAGE_LIMIT = 4096


def _meta(obj: Obj | None) -> Obj:
    meta = (obj or {}).get("metadata")
    return meta if isinstance(meta, dict) else {}


def _spec(obj: Obj | None) -> Obj:
    spec = (obj or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def _key(obj: Obj) -> Key:
    return str(_meta(obj).get("namespace", "")), str(_meta(obj).get("name", ""))


def _comparable(binding: Obj) -> tuple[Any, Any]:
    """Labels and spec, with the CRD default of ``conflictResolution`` filled in (a cleared
    value comes back from the server as ``Abort``)."""
    spec = dict(_spec(binding))
    spec.setdefault("conflictResolution", "Abort")
    return _meta(binding).get("labels") or {}, spec


class DependencyError(Exception):
    """One dependency could not be attached; the others still are."""


class DependenciesDistributor:
    """Keeps the attached bindings of every independent binding's dependencies."""

    def __init__(
        self,
        client: KubeClient,
        recorder: EventRecorder,
        bindings: Informer,
        informers: InformerFactory,
        mapper: ResourceMapper,
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.bindings = bindings
        self.informers = informers
        self.mapper = mapper
        self.templates = Templates(client, informers, mapper)
        # customization- and webhook-aware: a kind with an InterpretDependency customization or
        # interpreter webhook has dependencies too (async_interpreter_for in setup)
        self.interpreter = AsyncInterpreter(interpreter_for(informers))
        self.enqueue: Callable[[Key], None] = lambda key: None
        # independent bindings by what their annotation lists: (apiVersion, kind, namespace) -> keys
        self._referrers: dict[tuple[str, str, str], set[Key]] = defaultdict(set)
        self._dependencies: dict[Key, list[DependentObjectReference]] = {}
        # attached bindings by depended-by label key
        self._attached: dict[str, set[Key]] = defaultdict(set)
        self._attached_labels: dict[Key, set[str]] = {}
        # dependency kinds whose template informer this controller watches, and its handler on it;
        # a kind no binding's annotation names any more is released (its watch ends with its
        # last reader), as the detector releases a kind no policy selects
        self._watched: dict[GVK, Informer] = {}
        self._handlers: dict[GVK, Callable[[str, Obj, Obj | None], None]] = {}
        self._kind_referrers: Counter[GVK] = Counter()  # bindings naming each kind
        self._releasing: set[asyncio.Task[None]] = set()
        bindings.add_handler(self._index)

    # -- indexes --------------------------------------------------------------------------------
    def _index(self, kind: str, obj: Obj, old: Obj | None) -> None:
        key = _key(obj)
        before = {(ref.api_version, ref.kind) for ref in self._dependencies.get(key, [])}
        self._index_binding(kind, obj, key)
        after = {(ref.api_version, ref.kind) for ref in self._dependencies.get(key, [])}
        self._kind_referrers.update(after - before)
        self._kind_referrers.subtract(before - after)
        for gvk in before - after:
            if self._kind_referrers[gvk] <= 0:
                del self._kind_referrers[gvk]
                self._unwatch(gvk)
        if kind == "DELETED":
            # a kind watched for a binding gone before its annotation named it (a first reconcile
            # watches before it writes the annotation) is named by nobody: a few kinds at most
            for gvk in [g for g in self._watched if self._kind_referrers[g] <= 0]:
                self._kind_referrers.pop(gvk, None)
                self._unwatch(gvk)

    def _unwatch(self, gvk: GVK) -> None:
        """No binding names ``gvk`` any more: stop reading its cache (the release is async)."""
        informer = self._watched.pop(gvk, None)
        if informer is None:
            return
        informer.remove_handler(self._handlers.pop(gvk))
        task = asyncio.get_running_loop().create_task(self.informers.release(informer))
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    async def released(self) -> None:
        """Wait for the releases under way (tests)."""
        await asyncio.gather(*self._releasing)

    def _index_binding(self, kind: str, obj: Obj, key: Key) -> None:
        for ref in self._dependencies.pop(key, []):
            index = (ref.api_version, ref.kind, ref.namespace or "")
            self._referrers[index].discard(key)
            if not self._referrers[index]:
                del self._referrers[index]
        for label in self._attached_labels.pop(key, set()):
            self._attached[label].discard(key)
            if not self._attached[label]:
                del self._attached[label]
        if kind == "DELETED":
            return
        meta = _meta(obj)
        labels = {k for k in meta.get("labels") or {} if k.startswith(DEPENDED_BY_LABEL_KEY_PREFIX)}
        if labels:
            self._attached_labels[key] = labels
            for label in labels:
                self._attached[label].add(key)
        value = (meta.get("annotations") or {}).get(BINDING_DEPENDENCIES_ANNOTATION)
        if value:
            try:
                refs = parse_annotation(value)
            except ValueError as exc:
                log.warning("binding=%s/%s: ignoring its %s: %s", key[0], key[1], BINDING_DEPENDENCIES_ANNOTATION, exc)
                refs = []
            self._dependencies[key] = refs
            for ref in refs:
                self._referrers[(ref.api_version, ref.kind, ref.namespace or "")].add(key)

    def attached_of(self, namespace: str, name: str) -> list[Obj]:
        """The cached attached bindings that carry the ``depended-by`` label of ``namespace/name``."""
        found = []
        for key in sorted(self._attached.get(depended_by_label_key(namespace, name), ())):
            binding = self.bindings.get(key[1], key[0])
            if binding is not None:
                found.append(binding)
        return found

    # -- event mapping --------------------------------------------------------------------------
    def binding_keys(self, kind: str, obj: Obj, old: Obj | None) -> list[Key]:
        """Karmada's predicates for independent bindings, plus the start of a deletion."""
        propagate = bool(_spec(obj).get("propagateDeps"))
        # our finalizer: propagateDeps was on when we last looked (a change missed while down)
        ours = BINDING_DEPENDENCIES_DISTRIBUTOR_FINALIZER in (_meta(obj).get("finalizers") or [])
        if kind == "ADDED" or old is None:
            return [_key(obj)] if (propagate and _spec(obj).get("clusters")) or ours else []
        if kind == "DELETED":
            return [_key(obj)] if propagate or ours else []
        if not (propagate or ours or _spec(old).get("propagateDeps")):
            return []
        new_meta, old_meta = _meta(obj), _meta(old)
        watched = ("generation", "deletionTimestamp")
        if any(new_meta.get(f) != old_meta.get(f) for f in watched) or (new_meta.get("labels") or {}).get(
            RESOURCE_BINDING_PERMANENT_ID_LABEL
        ) != (old_meta.get("labels") or {}).get(RESOURCE_BINDING_PERMANENT_ID_LABEL):
            # the permanent id arrives in a label update (no new generation): attach then
            return [_key(obj)]
        return []

    def _template_keys(self, api_version: str, kind: str) -> Callable[[str, Obj, Obj | None], list[Key]]:
        def keys(event: str, obj: Obj, old: Obj | None) -> list[Key]:
            obj = {**obj, "apiVersion": api_version, "kind": kind}
            versions = [obj]
            if event == "MODIFIED" and old is not None:
                old = {**old, "apiVersion": api_version, "kind": kind}
                if not specification_changed(old, obj):
                    return []
                if (_meta(old).get("labels") or {}) != (_meta(obj).get("labels") or {}):
                    versions.append(old)  # a selector that matched before must let go
            namespace = str(_meta(obj).get("namespace", ""))
            found: set[Key] = set()
            for key in self._referrers.get((api_version, kind, namespace), ()):
                refs = self._dependencies.get(key, [])
                if any(reference_matches(ref, version) for ref in refs for version in versions):
                    found.add(key)
            return sorted(found)

        return keys

    async def _watch(self, api_version: str, kind: str) -> Informer:
        """The template informer of a dependency kind, watched from now on."""
        gvk = (api_version, kind)
        informer = self._watched.get(gvk)
        if informer is None:
            resource = await self.mapper.resource_for(api_version, kind)
            informer = self._watched.get(gvk)  # another worker may have started it meanwhile
            if informer is None:
                informer = self.informers.informer(resource)
                handler = self._handlers[gvk] = self._handler(self._template_keys(api_version, kind))
                informer.add_handler(handler)
                self._watched[gvk] = informer
        # a cache that keeps failing (no list/watch right on Secrets, say) is not waited for again
        try:
            await informer.wait_synced(TEMPLATE_SYNC_TIMEOUT if informer.failures == 0 else FAILING_CACHE_WAIT)
        except TimeoutError:
            plural = informer.resource.plural
            raise DependencyError(
                f"the cache of {plural} is not synced ({informer.failures} failed lists or watches in a row; "
                f"can the control plane list and watch {plural}?)"
            ) from None
        return informer

    def _handler(self, keys: Callable[[str, Obj, Obj | None], list[Key]]) -> Callable[[str, Obj, Obj | None], None]:
        def handler(kind: str, obj: Obj, old: Obj | None) -> None:
            for key in keys(kind, obj, old):
                self.enqueue(key)

        return handler

    # -- reconcile ------------------------------------------------------------------------------
    def _referrer(self, namespace: str, name: str) -> Obj | None:
        found = self.bindings.get(name, namespace)
        return None if found is None or _meta(found).get("deletionTimestamp") else found

    async def reconcile(self, key: Key) -> float | None:
        namespace, name = key
        binding = self.bindings.get(name, namespace)
        if binding is None:
            await self._detach_all(namespace, name)
            return None
        binding = {**binding, "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding"}
        if not _spec(binding).get("propagateDeps") or _meta(binding).get("deletionTimestamp"):
            await self._detach_all(namespace, name)
            await self._remove_finalizer(binding)
            return None
        try:
            reference = ObjectReference.from_dict(_spec(binding).get("resource") or {}, path="spec.resource")
            template = await self.templates.get(reference)
        except APIValidationError as exc:
            log.warning("binding=%s/%s: invalid: %s", namespace, name, exc)
            return None
        except UnknownKind as exc:
            log.warning("binding=%s/%s: %s", namespace, name, exc)
            return UNKNOWN_KIND_REQUEUE
        if template is None:
            return None  # the template is gone; the garbage collector takes the binding
        api_version, kind = str(template.get("apiVersion")), str(template.get("kind"))
        if not self.interpreter.hook_enabled(api_version, kind, Operation.INTERPRET_DEPENDENCY):
            return None
        try:
            dependencies = await self.interpreter.a_get_dependencies(template)
        except Exception as exc:  # a bad template (or, later, a failing customization) must not stop the others
            log.warning("binding=%s/%s: failed to get dependencies of %s: %s", namespace, name, kind, exc)
            await self.recorder.record(template, "Warning", EVENT_GET_DEPENDENCIES_FAILED, str(exc)[:MESSAGE_LIMIT])
            return None
        binding, recorded = await self._record_dependencies(binding, dependencies)
        if recorded:
            await self.recorder.record(
                template,
                "Normal",
                EVENT_GET_DEPENDENCIES_SUCCEED,
                f"Get dependencies({describe_dependencies(dependencies)}) succeed."[:MESSAGE_LIMIT],
            )
        try:
            written = await self._sync(binding, dependencies)
        except (KubeError, DependencyError) as exc:
            message = exc.message if isinstance(exc, KubeError) else str(exc)
            log.warning("binding=%s/%s: sync to dependencies failed: %s", namespace, name, message)
            await self.recorder.record(binding, "Warning", EVENT_SYNC_TO_DEPENDENCIES_FAILED, message[:MESSAGE_LIMIT])
            raise
        if written:
            await self.recorder.record(
                binding, "Normal", EVENT_SYNC_TO_DEPENDENCIES_SUCCEED, MESSAGE_SYNC_TO_DEPENDENCIES_SUCCEED
            )
        return None

    async def _record_dependencies(
        self, binding: Obj, dependencies: list[DependentObjectReference]
    ) -> tuple[Obj, bool]:
        """The finalizer and the annotation, in one update when either is missing or stale."""
        value = annotation_value(dependencies)
        for attempt in range(WRITE_ATTEMPTS):
            meta = _meta(binding)
            finalizers = list(meta.get("finalizers") or [])
            annotations = dict(meta.get("annotations") or {})
            if (
                BINDING_DEPENDENCIES_DISTRIBUTOR_FINALIZER in finalizers
                and annotations.get(BINDING_DEPENDENCIES_ANNOTATION) == value
            ):
                return binding, False
            updated = copy.deepcopy(binding)
            if BINDING_DEPENDENCIES_DISTRIBUTOR_FINALIZER not in finalizers:
                updated["metadata"]["finalizers"] = [*finalizers, BINDING_DEPENDENCIES_DISTRIBUTOR_FINALIZER]
            updated["metadata"]["annotations"] = {**annotations, BINDING_DEPENDENCIES_ANNOTATION: value}
            namespace, name = _key(binding)
            try:
                stored = await self.client.update(RESOURCE_BINDINGS, updated, namespace)
            except KubeError as exc:
                if exc.conflict and attempt + 1 < WRITE_ATTEMPTS:
                    fresh = await self.client.get_or_none(RESOURCE_BINDINGS, name, namespace)
                    if fresh is None:
                        raise
                    binding = {**fresh, "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding"}
                    continue
                raise
            self.bindings.store(stored)
            log.info("binding=%s/%s: dependencies recorded: %s", namespace, name, value)
            return {**stored, "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding"}, True
        return binding, False

    async def _remove_finalizer(self, binding: Obj) -> None:
        finalizers = list(_meta(binding).get("finalizers") or [])
        if BINDING_DEPENDENCIES_DISTRIBUTOR_FINALIZER not in finalizers:
            return
        updated = copy.deepcopy(binding)
        updated["metadata"]["finalizers"] = [f for f in finalizers if f != BINDING_DEPENDENCIES_DISTRIBUTOR_FINALIZER]
        namespace, name = _key(binding)
        try:
            stored = await self.client.update(RESOURCE_BINDINGS, updated, namespace)
        except KubeError as exc:
            if exc.not_found:
                return
            raise
        self.bindings.store(stored)
        log.info("binding=%s/%s: detached from its dependencies, removed finalizer", namespace, name)

    async def _detach_all(self, namespace: str, name: str) -> int:
        written = 0
        for attached in self.attached_of(namespace, name):
            written += await self._detach(attached, namespace, name)
        return written

    async def _detach(self, attached: Obj, namespace: str, name: str) -> int:
        desired = detach(attached, namespace, name, self._referrer)
        if _comparable(desired) == _comparable(attached):
            return 0
        await self._write(desired, exists=True)
        log.info(
            "attached binding %s/%s: released by binding %s/%s",
            _meta(attached).get("namespace"),
            _meta(attached).get("name"),
            namespace,
            name,
        )
        return 1

    def _still_needed(self, attached: Obj, dependencies: list[DependentObjectReference]) -> bool:
        resource = _spec(attached).get("resource") or {}
        api_version, kind = str(resource.get("apiVersion", "")), str(resource.get("kind", ""))
        template_ns, template_name = str(resource.get("namespace", "")), str(resource.get("name", ""))
        informer = self._watched.get((api_version, kind))
        cached = informer.get(template_name, template_ns) if informer is not None else None
        template = {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {
                "namespace": template_ns,
                "name": template_name,
                "labels": _meta(cached).get("labels") or {},
            },
        }
        return any(reference_matches(ref, template) and (ref.name or cached is not None) for ref in dependencies)

    async def _sync(self, binding: Obj, dependencies: list[DependentObjectReference]) -> int:
        """Detach from the dependencies no longer named, attach to the present ones; the writes made."""
        namespace, name = _key(binding)
        written = 0
        for attached in self.attached_of(namespace, name):
            if not self._still_needed(attached, dependencies):
                written += await self._detach(attached, namespace, name)
        if not (_meta(binding).get("labels") or {}).get(RESOURCE_BINDING_PERMANENT_ID_LABEL):
            # the binding controller adds the id the depended-by label's value needs; its update wakes us
            log.info("binding=%s/%s: no permanent id yet; attaching once it has one", namespace, name)
            return written
        errors: list[str] = []
        for ref in dependencies:
            try:
                written += await self._attach_reference(binding, ref)
            except (KubeError, OwnerConflict, UnknownKind, DependencyError) as exc:
                errors.append(exc.message if isinstance(exc, KubeError) else str(exc))
        if errors:
            raise DependencyError("; ".join(errors))
        return written

    async def _attach_reference(self, binding: Obj, ref: DependentObjectReference) -> int:
        namespace, name = _key(binding)
        informer = await self._watch(ref.api_version, ref.kind)
        if ref.name:
            found = informer.get(ref.name, ref.namespace or "")
            objects = [] if found is None else [found]  # a missing one is attached when it appears
        elif ref.label_selector is not None:
            objects = [
                o
                for o in informer.items()
                if reference_matches(ref, {**o, "apiVersion": ref.api_version, "kind": ref.kind})
            ]
        else:
            raise DependencyError(
                f"dependency {ref.kind} of {ref.api_version}: the Name and LabelSelector in the "
                "DependentObjectReference cannot be empty at the same time"
            )
        written = 0
        for obj in sorted(objects, key=object_key):
            written += await self._attach({**obj, "apiVersion": ref.api_version, "kind": ref.kind}, binding)
        log.debug("binding=%s/%s: %s %s: %d attached bindings written", namespace, name, ref.kind, ref.name, written)
        return written

    async def _attach(self, dependency: Obj, binding: Obj) -> int:
        name = _meta(binding).get("name")
        for attempt in range(WRITE_ATTEMPTS):
            attached_name = binding_name(str(dependency["kind"]), str(_meta(dependency).get("name", "")))
            existing = self.bindings.get(attached_name, str(_meta(binding).get("namespace", "")))
            if existing is not None and _meta(existing).get("deletionTimestamp"):
                raise OwnerConflict(
                    f"resourceBinding({_meta(existing).get('namespace')}/{attached_name}) is being deleted; "
                    "attaching once it is gone"
                )
            update = attach(existing, dependency, binding, self._referrer)
            if existing is None:
                # the permanent id Karmada's webhook gives a binding on create (saves the binding
                # controller an update)
                update.binding["metadata"]["labels"][RESOURCE_BINDING_PERMANENT_ID_LABEL] = str(uuid.uuid4())
            if existing is not None and _comparable(update.binding) == _comparable(existing):
                return 0
            try:
                stored = await self._write(update.binding, exists=existing is not None)
            except KubeError as exc:
                if (exc.conflict or exc.already_exists) and attempt + 1 < WRITE_ATTEMPTS:
                    fresh = await self.client.get_or_none(RESOURCE_BINDINGS, attached_name, _meta(binding)["namespace"])
                    if fresh is not None:
                        self.bindings.store(fresh)
                    continue
                raise
            log.info(
                "attached binding %s/%s: %s for binding %s",
                _meta(binding).get("namespace"),
                attached_name,
                "created" if existing is None else "updated",
                name,
            )
            if update.conflict_message:
                stored = {**stored, "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding"}
                await self.recorder.record(stored, "Warning", DEPENDENCY_POLICY_CONFLICT, update.conflict_message)
            return 1
        return 0

    async def _write(self, desired: Obj, *, exists: bool) -> Obj:
        namespace = str(_meta(desired).get("namespace", ""))
        if exists:
            stored = await self.client.update(RESOURCE_BINDINGS, desired, namespace)
        else:
            stored = await self.client.create(RESOURCE_BINDINGS, desired, namespace)
        self.bindings.store(stored)
        return stored


def setup(context: Context) -> list[Controller[Key]]:
    """The distributor on the shared ResourceBinding cache (template caches join on first use)."""
    bindings = context.informers.informer(RESOURCE_BINDINGS)
    distributor = DependenciesDistributor(context.client, context.recorder, bindings, context.informers, context.mapper)
    distributor.interpreter = async_interpreter_for(context)
    loop: Controller[Key] = Controller(
        CONTROLLER_NAME, distributor.reconcile, workers=max(1, context.options.concurrent_dependent_resource_syncs)
    )
    distributor.enqueue = loop.enqueue
    loop.watches(bindings, distributor.binding_keys)
    return [loop]
