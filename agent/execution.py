"""Applying this cluster's Works in the member (Karmada's execution and
work-status controllers, as a pull-mode agent runs them).

The Works of ``karmada-es-<cluster>`` are watched on the control plane. For
each manifest the member object is created, or updated when Karmada manages
it (label ``karmada.io/managed=true``) or the manifest asks to overwrite
(``work.karmada.io/conflict-resolution: overwrite``); member-side fields are
kept by the retain rules, and an unchanged object is not written. The Work
gets ``Applied`` (``AppliedSuccessful`` or ``AppliedFailed`` with the reasons)
and, per manifest, the reflected status and health. A Work being deleted
removes what it created (or, with ``preserveResourcesOnDeletion``, strips
Karmada's marks from it) before its ``karmada.io/execution-controller``
finalizer goes.

Member objects are cached per resource type, only those labelled as managed
by Karmada and without managedFields; a change to one re-enqueues its Work,
so drift and deletions in the member are corrected. Five workers; a bad
manifest fails its own Work only.
"""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

from karmada.api.keys import (
    CONFLICT_RESOLUTION_ANNOTATION,
    CONFLICT_RESOLUTION_OVERWRITE,
    EXECUTION_CONTROLLER_FINALIZER,
    MANAGED_ANNOTATIONS_ANNOTATION,
    MANAGED_LABEL,
    MANAGED_LABELS_ANNOTATION,
    WORK_NAME_ANNOTATION,
    WORK_NAMESPACE_ANNOTATION,
)
from karmada.api.names import execution_space
from karmada.clusters.conditions import condition_status, set_condition
from karmada.interpreter import health, retain, status
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError, Resource, ResourceMapper
from karmada.kube.controller import Controller
from karmada.kube.resources import WORKS
from karmada.timestamps import now_time

log = logging.getLogger("agent.execution")
Obj = dict[str, Any]
_SERVER_FIELDS = ("creationTimestamp", "deletionTimestamp", "generation", "managedFields", "resourceVersion", "uid")
_KARMADA_LABELS = (MANAGED_LABEL, "work.karmada.io/permanent-id", "resourcebinding.karmada.io/permanent-id")


class ApplyError(Exception):
    """A manifest that cannot be applied; the message is the condition's."""


def _managed(obj: Obj) -> bool:
    return (obj["metadata"].get("labels") or {}).get(MANAGED_LABEL) == "true"


def _managed_keys(obj: Obj, annotation: str) -> set[str]:
    text = (obj["metadata"].get("annotations") or {}).get(annotation, "")
    return {key for key in text.split(",") if key}


def merge_for_update(desired: Obj, observed: Obj) -> Obj:
    """The object to write over ``observed``: the desired state, the server's
    bookkeeping kept, and observed labels/annotations kept unless Karmada
    managed them and dropped them since."""
    merged = copy.deepcopy(desired)
    meta = merged.setdefault("metadata", {})
    seen = observed["metadata"]
    for key in ("resourceVersion", "finalizers", "ownerReferences"):
        if seen.get(key):
            meta[key] = seen[key]
    for field, managed_annotation in (
        ("labels", MANAGED_LABELS_ANNOTATION),
        ("annotations", MANAGED_ANNOTATIONS_ANNOTATION),
    ):
        dropped = _managed_keys(observed, managed_annotation) - set(meta.get(field) or {})
        kept = {k: v for k, v in (seen.get(field) or {}).items() if k not in dropped}
        meta[field] = {**kept, **(meta.get(field) or {})}
    result: Obj = (
        retain.retain(merged, observed)
        if (merged.get("apiVersion"), merged.get("kind")) in retain.RETAIN_KINDS
        else merged
    )
    return result


def _comparable(obj: Obj) -> Obj:
    view = copy.deepcopy(obj)
    view.pop("status", None)
    for key in _SERVER_FIELDS:
        view.get("metadata", {}).pop(key, None)
    return view


class ExecutionController:
    """Keeps the member in step with this cluster's Works."""

    def __init__(self, control_plane: KubeClient, member: KubeClient, cluster: Informer, cluster_name: str) -> None:
        self.control_plane = control_plane
        self.member = member
        self.cluster = cluster
        self.cluster_name = cluster_name
        self.namespace = execution_space(cluster_name)
        self.works = Informer(control_plane, WORKS, namespace=self.namespace)
        self.mapper = ResourceMapper(member)
        self.caches: dict[Resource, Informer] = {}
        self.controller: Controller[str] = Controller("execution", self.reconcile, workers=5)
        self.recorder = EventRecorder(control_plane, "execution-controller", cluster_name)
        self.works.add_handler(lambda kind, obj, old: self.controller.enqueue(obj["metadata"]["name"]))

    async def start(self) -> None:
        self.works.start()
        await self.works.wait_synced(60)
        self.controller.start()

    async def stop(self) -> None:
        await self.controller.stop()
        await self.works.stop()
        for cache in self.caches.values():
            await cache.stop()

    # -- member caches ------------------------------------------------------------------------
    async def _cache(self, resource: Resource) -> Informer:
        cache = self.caches.get(resource)
        if cache is None:
            cache = Informer(self.member, resource, label_selector=f"{MANAGED_LABEL}=true")
            cache.add_handler(self._member_changed)
            self.caches[resource] = cache
            cache.start()
            await cache.wait_synced(60)
        return cache

    def _member_changed(self, kind: str, obj: Obj, old: Obj | None) -> None:
        annotations = obj["metadata"].get("annotations") or {}
        if annotations.get(WORK_NAMESPACE_ANNOTATION) == self.namespace and annotations.get(WORK_NAME_ANNOTATION):
            self.controller.enqueue(annotations[WORK_NAME_ANNOTATION])

    # -- reconcile ------------------------------------------------------------------------------
    async def reconcile(self, name: str) -> float | None:
        work = self.works.get(name, self.namespace)
        if work is None:
            return None
        manifests = ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []
        if work["metadata"].get("deletionTimestamp"):
            await self._remove(work, manifests)
            return None
        if (work.get("spec") or {}).get("suspendDispatching"):
            await self._set_conditions(
                work,
                [("Dispatching", "False", "SuspendDispatching", "Work dispatching is in a suspended state.")],
                None,
            )
            return None
        cluster = self.cluster.get(self.cluster_name)
        if cluster is None or condition_status(cluster, "Ready") != "True":
            log.info("work %s waits: cluster %s is not Ready", name, self.cluster_name)
            return 10.0
        errors: list[str] = []
        statuses: list[Obj] = []
        for ordinal, manifest in enumerate(manifests):
            try:
                resource, applied = await self._apply(manifest)
            except (ApplyError, KubeError, LookupError) as exc:
                message = exc.message if isinstance(exc, KubeError) else str(exc)
                errors.append(f"failed to apply {manifest.get('kind')} {_ref(manifest)}: {message}")
                continue
            statuses.append(_manifest_status(ordinal, resource, applied))
        conditions = [("Dispatching", "True", "Dispatching", "Work is being dispatched to member clusters.")]
        where = f"work({self.namespace}/{name}) to cluster({self.cluster_name})"
        if errors:
            done = len(manifests) - len(errors)
            message = f"Failed to apply all manifests ({done}/{len(manifests)}): {', '.join(errors)}"
            conditions.append(("Applied", "False", "AppliedFailed", message))
            await self.recorder.record(work, "Warning", "SyncFailed", f"Failed to sync {where}, err: {message}")
        else:
            conditions.append(("Applied", "True", "AppliedSuccessful", "Manifest has been successfully applied"))
            if condition_status(work, "Applied") != "True":
                await self.recorder.record(work, "Normal", "SyncSucceed", f"Sync {where} successful.")
        await self._set_conditions(work, conditions, statuses)
        return 30.0 if errors else None

    async def _apply(self, manifest: Obj) -> tuple[Resource, Obj]:
        resource = await self.mapper.resource_for(manifest["apiVersion"], manifest["kind"])
        meta = manifest.get("metadata") or {}
        namespace = (meta.get("namespace") or "default") if resource.namespaced else None
        cache = await self._cache(resource)
        observed = cache.get(meta["name"], namespace or "")
        if observed is None:  # not a managed object we know: create it, unless someone else's is there
            try:
                created: Obj = await self.member.create(resource, manifest, namespace)
            except KubeError as exc:
                if not exc.already_exists:
                    raise
                observed = await self.member.get(resource, meta["name"], namespace)
            else:
                cache.store(created)
                return resource, created
        overwrite = (meta.get("annotations") or {}).get(CONFLICT_RESOLUTION_ANNOTATION) == CONFLICT_RESOLUTION_OVERWRITE
        if not _managed(observed) and not overwrite:
            raise ApplyError(
                f"resource(kind={manifest['kind']}, {_ref(manifest)}) already exists in the cluster "
                f"{self.cluster_name} and the work.karmada.io/conflict-resolution strategy value is empty, "
                "Karmada will not manage this resource"
            )
        desired = merge_for_update(manifest, observed)
        if _comparable(desired) == _comparable(observed):
            return resource, observed
        updated: Obj = await self.member.update(resource, desired, namespace)
        cache.store(updated)
        return resource, updated

    async def _remove(self, work: Obj, manifests: list[Obj]) -> None:
        preserve = bool((work.get("spec") or {}).get("preserveResourcesOnDeletion"))
        for manifest in manifests:
            try:
                resource = await self.mapper.resource_for(manifest["apiVersion"], manifest["kind"])
            except LookupError:
                continue
            meta = manifest.get("metadata") or {}
            namespace = (meta.get("namespace") or "default") if resource.namespaced else None
            observed = await self.member.get_or_none(resource, meta["name"], namespace)
            if observed is None or not _managed(observed):
                continue
            if preserve:
                kept = copy.deepcopy(observed)
                labels = kept["metadata"].get("labels") or {}
                for key in _KARMADA_LABELS:
                    labels.pop(key, None)
                annotations = kept["metadata"].get("annotations") or {}
                for key in [k for k in annotations if "karmada.io/" in k]:
                    annotations.pop(key)
                await self.member.update(resource, kept, namespace)
            else:
                try:
                    await self.member.delete(resource, meta["name"], namespace)
                except KubeError as exc:
                    if not exc.not_found:
                        raise
        finalizers = work["metadata"].get("finalizers") or []
        if EXECUTION_CONTROLLER_FINALIZER in finalizers:
            updated = copy.deepcopy(work)
            updated["metadata"]["finalizers"] = [f for f in finalizers if f != EXECUTION_CONTROLLER_FINALIZER]
            try:
                await self.control_plane.update(WORKS, updated, self.namespace)
            except KubeError as exc:
                if not exc.not_found:
                    raise

    async def _set_conditions(
        self, work: Obj, conditions: list[tuple[str, str, str, str]], statuses: list[Obj] | None
    ) -> None:
        current = copy.deepcopy(work.get("status") or {})
        new = copy.deepcopy(current)
        now = now_time()
        for kind, state, reason, message in conditions:
            set_condition(new.setdefault("conditions", []), kind, state, reason, message, now)
        if statuses is not None:
            if statuses:
                new["manifestStatuses"] = statuses
            else:
                new.pop("manifestStatuses", None)
        if new == current:
            return
        stored = await self.control_plane.update(WORKS, {**work, "status": new}, self.namespace, subresource="status")
        self.works.store(stored)


def _ref(manifest: Obj) -> str:
    meta = manifest.get("metadata") or {}
    return f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))


def _manifest_status(ordinal: int, resource: Resource, obj: Obj) -> Obj:
    identifier: Obj = {
        "ordinal": ordinal,
        "version": resource.version,
        "kind": resource.kind,
        "resource": resource.plural,
        "name": obj["metadata"]["name"],
    }
    if resource.group:
        identifier["group"] = resource.group
    if obj["metadata"].get("namespace"):
        identifier["namespace"] = obj["metadata"]["namespace"]
    entry: Obj = {"identifier": identifier}
    reflected = status.reflect_status(obj)
    if reflected is not None:
        entry["status"] = json.loads(json.dumps(reflected))
    try:
        entry["health"] = "Healthy" if health.interpret_health(obj) else "Unhealthy"
    except (KeyError, TypeError, ValueError):
        entry["health"] = "Unknown"
    return entry
