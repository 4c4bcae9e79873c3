"""Applying this cluster's Works in the member (Karmada's execution and
work-status controllers, as a pull-mode agent runs them).

The Works of ``karmada-es-<cluster>`` are watched on the control plane; a
Work is reconciled when it is added, when its generation changes or its
deletion starts (Karmada's GenerationChangedPredicate: our own status writes
do not come back as work), when one of its member objects changes, and on
the informers' resync. One reconcile, on one of ``--concurrent-work-syncs``
workers (the queue never hands one Work to two workers):

- a suspended Work (``spec.suspendDispatching``) gets ``Dispatching`` False
  and nothing is applied; otherwise ``Dispatching`` True (event
  ``WorkDispatching`` on each change);
- each manifest is created in the member, or updated when Karmada manages the
  member object (label ``karmada.io/managed=true``) or the manifest asks to
  overwrite (``work.karmada.io/conflict-resolution: overwrite``); member-side
  fields are kept by the retain rules, and an unchanged object is not written;
- the Work's status gets ``Applied`` (``AppliedSuccessful``, or
  ``AppliedFailed`` "Failed to apply all manifests (n/m): <errors>" with the
  member's own messages) and, per manifest, the reflected status and health,
  all in one status write that is skipped when nothing changed. So a member
  object's status change reaches ``manifestStatuses`` at once, from its watch.

Karmada runs the two halves as two controllers; here one reconcile does both
(one status write instead of two), and ``--controllers`` can still turn off
either: without ``execution`` only the status of member objects already
there is reflected, without ``workStatus`` no ``manifestStatuses`` are written.
What the member made of our last write of each object (its defaults, its
webhooks) is remembered as a digest, so it is not taken for drift and
rewritten; a change by anyone else to the object is.

A Work that fails is retried with the controller rate limiter's backoff
(5 ms doubling, as client-go's), and fails alone: the other Works keep
flowing. A kind the member does not serve (a CRD installed only on the
control plane) is resolved through the control plane's discovery and sent to
the member anyway, so the Work carries the member's answer; discovery is
refreshed on every miss, so the Work applies once the CRD appears there.
Each apply of a Work's manifests is timed in Karmada's
``work_sync_workload_duration_seconds{result}``.

A Work being deleted removes its member objects (propagation Background,
only those labelled as managed and, when the manifest carries one, with the
manifest's ``work.karmada.io/permanent-id``: :mod:`karmada.members.ownership`;
an object of the same name that is not the Work's own stays, and a Warning
``DeleteWorkloadSkipped`` on the Work says why) or, with ``preserveResourcesOnDeletion``,
strips Karmada's labels and annotations from them, before its
``karmada.io/execution-controller`` finalizer goes. Beyond Karmada (which
lets the Work go once the member accepted the delete), the finalizer goes
only once each deleted object is confirmed gone: an object the member keeps
terminating (finalizers, a grace period) holds the Work, and its deletion
event brings the Work back. So a Work gone means its objects are gone, which
``purgeMode: Directly`` relies on (the binding controller creates the new
copy's Work only then). A cluster being removed does not wait.

Retention, status reflection and health come from the control plane's
ResourceInterpreterCustomizations and ResourceInterpreterWebhookConfigurations
(both watched there); a webhook call is awaited inside the reconcile, so the
other workers go on meanwhile, and a failing webhook fails its manifest alone.

Member objects are cached per resource type, only those labelled as managed
by Karmada and without managedFields. Events are Karmada's:
``SyncSucceed``/``SyncFailed``, ``WorkDispatching``,
``ReflectStatusSucceed``/``Failed``, ``InterpretHealthSucceed``/``Failed``
(see :mod:`karmada.members.work_events`), all on the Work: an agent may write
events only in its own execution namespace (Karmada's agent may write them
anywhere); the template's events about its member objects come from the
control plane's binding-status controller, which reads the same Work status.
Deliberately not recorded, so a resync writes nothing: Karmada's
``ReflectStatusSucceed``/``InterpretHealthSucceed`` when the reflected status
or the health did not change, and ``SyncSucceed`` when a reconcile found
nothing to sync (a member status change).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import time
from typing import Any

from karmada import metrics
from karmada.api.keys import (
    CLUSTER_PROPAGATION_POLICY_ANNOTATION,
    CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    CONFLICT_RESOLUTION_ANNOTATION,
    CONFLICT_RESOLUTION_OVERWRITE,
    EXECUTION_CONTROLLER_FINALIZER,
    MANAGED_ANNOTATIONS_ANNOTATION,
    MANAGED_LABEL,
    MANAGED_LABELS_ANNOTATION,
    PROPAGATION_POLICY_NAME_ANNOTATION,
    PROPAGATION_POLICY_NAMESPACE_ANNOTATION,
    PROPAGATION_POLICY_PERMANENT_ID_LABEL,
    RESOURCE_BINDING_NAME_ANNOTATION,
    RESOURCE_BINDING_NAMESPACE_ANNOTATION,
    RESOURCE_BINDING_PERMANENT_ID_LABEL,
    RESOURCE_TEMPLATE_GENERATION_ANNOTATION,
    RESOURCE_TEMPLATE_UID_ANNOTATION,
    WORK_NAME_ANNOTATION,
    WORK_NAMESPACE_ANNOTATION,
    WORK_PERMANENT_ID_LABEL,
)
from karmada.api.names import execution_space
from karmada.clusters.conditions import condition_status, find, set_condition
from karmada.interpreter import Operation
from karmada.interpreter.customized import CustomizedInterpreter
from karmada.interpreter_webhooks import AsyncInterpreter
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError, Resource, ResourceMapper
from karmada.kube.controller import Controller
from karmada.kube.ratelimit import ControllerRateLimiter
from karmada.kube.resources import (
    RESOURCE_INTERPRETER_CUSTOMIZATIONS,
    RESOURCE_INTERPRETER_WEBHOOK_CONFIGURATIONS,
    WORKS,
    UnknownKind,
)
from karmada.members.ownership import deletion_refusal
from karmada.members.work_events import WorkEvent, interpret_health_failed, reflect_status_failed, status_events
from karmada.timestamps import now_time

log = logging.getLogger("members.execution")
Obj = dict[str, Any]
Condition = tuple[str, str, str, str]

DISPATCHING = "Dispatching"
APPLIED = "Applied"
SUSPENDED_MESSAGE = "Work dispatching is in a suspended state."
# ours (Karmada only logs it): a Work's deletion left a member object that is not its own
DELETE_WORKLOAD_SKIPPED = "DeleteWorkloadSkipped"
DISPATCHING_MESSAGE = "Work is being dispatched to member clusters."
APPLIED_MESSAGE = "Manifest has been successfully applied"
CONFLICT_RETRIES = 5  # client-go's retry.DefaultRetry steps

_SERVER_FIELDS = ("creationTimestamp", "deletionTimestamp", "generation", "managedFields", "resourceVersion", "uid")
# what a preserved member object loses when its Work goes (Karmada's ManagedResourceLabels/-Annotations)
MANAGED_RESOURCE_LABELS = (RESOURCE_BINDING_PERMANENT_ID_LABEL, WORK_PERMANENT_ID_LABEL, MANAGED_LABEL)
MANAGED_RESOURCE_ANNOTATIONS = (
    MANAGED_ANNOTATIONS_ANNOTATION,
    MANAGED_LABELS_ANNOTATION,
    RESOURCE_BINDING_NAMESPACE_ANNOTATION,
    RESOURCE_BINDING_NAME_ANNOTATION,
    RESOURCE_TEMPLATE_UID_ANNOTATION,
    RESOURCE_TEMPLATE_GENERATION_ANNOTATION,
    WORK_NAME_ANNOTATION,
    WORK_NAMESPACE_ANNOTATION,
)
# the policy's claim, by the object's scope (Karmada's CleanupPPClaimMetadata / CleanupCPPClaimMetadata)
_CLAIM_NAMESPACED = (
    (PROPAGATION_POLICY_PERMANENT_ID_LABEL,),
    (
        PROPAGATION_POLICY_NAMESPACE_ANNOTATION,
        PROPAGATION_POLICY_NAME_ANNOTATION,
    ),
)
_CLAIM_CLUSTER = ((CLUSTER_PROPAGATION_POLICY_PERMANENT_ID_LABEL,), (CLUSTER_PROPAGATION_POLICY_ANNOTATION,))


_INTERPRETER = CustomizedInterpreter()
SERVICES = Resource("", "v1", "services", "Service", True)


class ApplyError(Exception):
    """A manifest that cannot be applied; the message is the member's (or Karmada's) error."""


def _managed(obj: Obj) -> bool:
    return (obj["metadata"].get("labels") or {}).get(MANAGED_LABEL) == "true"


def _managed_keys(obj: Obj, annotation: str) -> set[str]:
    text = (obj["metadata"].get("annotations") or {}).get(annotation, "")
    return {key for key in text.split(",") if key}


def merge_for_update(desired: Obj, observed: Obj, interpreter: CustomizedInterpreter | None = None) -> Obj:
    """The object to write over ``observed``: the desired state, the server's
    bookkeeping kept, and observed labels/annotations kept unless Karmada
    managed them and dropped them since."""
    # Retain: the customization's, the third-party script's, or the native rule (kinds without one: as merged)
    return (interpreter or _INTERPRETER).retain(merged_metadata(desired, observed), observed)


async def a_merge_for_update(desired: Obj, observed: Obj, interpreter: AsyncInterpreter) -> Obj:
    """:func:`merge_for_update` with an interpreter webhook's Retain, awaited."""
    return await interpreter.a_retain(merged_metadata(desired, observed), observed)


def merged_metadata(desired: Obj, observed: Obj) -> Obj:
    """The desired state with the server's bookkeeping and the kept labels/annotations (before Retain)."""
    merged = copy.deepcopy(desired)
    meta = merged.setdefault("metadata", {})
    seen = observed["metadata"]
    for key in ("resourceVersion", "finalizers", "ownerReferences"):
        if seen.get(key):
            meta[key] = seen[key]
        else:
            meta.pop(key, None)
    for field, managed_annotation in (
        ("labels", MANAGED_LABELS_ANNOTATION),
        ("annotations", MANAGED_ANNOTATIONS_ANNOTATION),
    ):
        dropped = _managed_keys(observed, managed_annotation) - set(meta.get(field) or {})
        kept = {k: v for k, v in (seen.get(field) or {}).items() if k not in dropped}
        meta[field] = {**kept, **(meta.get(field) or {})}
        if not meta[field]:
            meta.pop(field)
    return merged


def strip_karmada_marks(manifest: Obj) -> Obj:
    """A manifest without Karmada's labels and annotations and the policy's claim
    (what a member object keeps when its Work is deleted with preserveResourcesOnDeletion)."""
    stripped = copy.deepcopy(manifest)
    meta = stripped.setdefault("metadata", {})
    claim_labels, claim_annotations = _CLAIM_NAMESPACED if meta.get("namespace") else _CLAIM_CLUSTER
    for field, keys in (
        ("labels", (*claim_labels, *MANAGED_RESOURCE_LABELS)),
        ("annotations", (*claim_annotations, *MANAGED_RESOURCE_ANNOTATIONS)),
    ):
        values = meta.get(field) or {}
        for key in keys:
            values.pop(key, None)
        if field in meta and not values:
            meta.pop(field)
    return stripped


def _comparable(obj: Obj) -> Obj:
    view = copy.deepcopy(obj)
    view.pop("status", None)
    meta = view.get("metadata", {})
    for key in _SERVER_FIELDS:
        meta.pop(key, None)
    for key in ("labels", "annotations", "finalizers", "ownerReferences"):
        if not meta.get(key):
            meta.pop(key, None)
    return view


def aggregate(errors: list[str]) -> str:
    """Several errors as one message, as Go's ``errors.NewAggregate`` prints them."""
    return errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"


def applied_failed_message(succeeded: int, total: int, errors: list[str]) -> str:
    return f"Failed to apply all manifests ({succeeded}/{total}): {aggregate(errors)}"


def conflict_message(manifest: Obj, cluster: str) -> str:
    meta = manifest.get("metadata") or {}
    return (
        f"resource(kind={manifest.get('kind')}, {meta.get('namespace', '')}/{meta.get('name')}) already exists in "
        f"the cluster {cluster} and the {CONFLICT_RESOLUTION_ANNOTATION} strategy value is empty, Karmada will not "
        "manage this resource"
    )


def dispatching_condition(work: Obj) -> Condition:
    if (work.get("spec") or {}).get("suspendDispatching"):
        return (DISPATCHING, "False", "SuspendDispatching", SUSPENDED_MESSAGE)
    return (DISPATCHING, "True", "Dispatching", DISPATCHING_MESSAGE)


def work_spec_changed(kind: str, obj: Obj, old: Obj | None) -> bool:
    """Whether a Work event is worth a reconcile (GenerationChangedPredicate, plus the start of
    deletion; a resync replays the cached object itself and passes)."""
    if kind != "MODIFIED" or old is None or old is obj:
        return True
    meta, before = obj["metadata"], old["metadata"]
    return bool(
        meta.get("generation") != before.get("generation")
        or meta.get("deletionTimestamp") != before.get("deletionTimestamp")
    )


class ExecutionController:
    """Keeps the member in step with this cluster's Works, and the Works' status in step with the member."""

    def __init__(
        self,
        control_plane: KubeClient,
        member: KubeClient,
        cluster: Informer,
        cluster_name: str,
        *,
        workers: int = 5,
        resync_period: float = 0.0,
        apply: bool = True,
        reflect: bool = True,
    ) -> None:
        self.control_plane = control_plane
        self.member = member
        self.cluster = cluster
        self.cluster_name = cluster_name
        self.resync_period = resync_period
        self.applies = apply  # Karmada's execution controller
        self.reflects = reflect  # Karmada's work-status controller
        self.namespace = execution_space(cluster_name)
        self.works = Informer(control_plane, WORKS, namespace=self.namespace, resync_period=resync_period)
        # the control plane's customizations and interpreter webhooks decide retention, status and health here
        self.interpreter = AsyncInterpreter(CustomizedInterpreter(), services=self._service)
        self.customizations = Informer(control_plane, RESOURCE_INTERPRETER_CUSTOMIZATIONS)
        self.customizations.add_handler(self.interpreter.customized.on_event)
        self.webhook_configurations = Informer(control_plane, RESOURCE_INTERPRETER_WEBHOOK_CONFIGURATIONS)
        self.webhook_configurations.add_handler(self.interpreter.on_event)
        self.mapper = ResourceMapper(member)
        self.control_plane_mapper = ResourceMapper(control_plane)
        self.caches: dict[Resource, Informer] = {}
        self.controller: Controller[str] = Controller("execution", self.reconcile, workers=workers)
        self.limiter: ControllerRateLimiter[str] = ControllerRateLimiter()
        self.recorder = EventRecorder(control_plane, "execution-controller", cluster_name)
        self.synced_generation: dict[str, int] = {}  # Work -> generation last synced, for SyncSucceed
        # member object -> (manifest, object) digests of our last write: what the member made of a
        # manifest (its defaults, its webhooks) is not taken for drift while neither side changed
        self.written: dict[tuple[Resource, str, str], tuple[str, str]] = {}
        self.works.add_handler(self._work_changed)
        cluster.add_handler(self._cluster_changed)

    async def start(self) -> None:
        self.customizations.start()
        self.webhook_configurations.start()
        for informer in (self.customizations, self.webhook_configurations):
            try:
                await informer.wait_synced(60)
            except TimeoutError:
                # the cache keeps trying; until it lists, the third-party and native rules answer
                log.warning("%s not listed yet; interpreting without them", informer.resource.plural)
        self.works.start()
        await self.works.wait_synced(60)
        self.controller.start()

    async def stop(self, *, drain: bool = True) -> None:
        """Stop; with ``drain`` (a clean shutdown) the queued Works are applied first."""
        await self.controller.stop(drain=drain)
        await self.recorder.close(grace=2.0 if drain else 0.0)
        await self.works.stop()
        await self.customizations.stop()
        await self.webhook_configurations.stop()
        await self.interpreter.close()
        for cache in self.caches.values():
            await cache.stop()

    async def _service(self, namespace: str, name: str) -> Obj | None:
        # a webhook's clientConfig.service, from the control plane (read when called, never watched
        # here); an agent not allowed to read it goes by the cluster DNS name, as for a missing one
        try:
            found: Obj | None = await self.control_plane.get_or_none(SERVICES, name, namespace)
        except KubeError as exc:
            log.info("service %s/%s of an interpreter webhook not read (%s); using its DNS name", namespace, name, exc)
            return None
        return found

    # -- event handlers -----------------------------------------------------------------------
    def _work_changed(self, kind: str, obj: Obj, old: Obj | None) -> None:
        if work_spec_changed(kind, obj, old):
            self.controller.enqueue(obj["metadata"]["name"])

    def _cluster_changed(self, kind: str, obj: Obj, old: Obj | None) -> None:
        # Works that waited for the cluster go again when it turns Ready
        if condition_status(obj, "Ready") == "True" and (old is None or condition_status(old, "Ready") != "True"):
            for work in self.works.items():
                self.controller.enqueue(work["metadata"]["name"])

    def _member_changed(self, kind: str, obj: Obj, old: Obj | None) -> None:
        annotations = obj["metadata"].get("annotations") or {}
        if annotations.get(WORK_NAMESPACE_ANNOTATION) == self.namespace and annotations.get(WORK_NAME_ANNOTATION):
            self.controller.enqueue(annotations[WORK_NAME_ANNOTATION])

    # -- member caches ------------------------------------------------------------------------
    async def _cache(self, resource: Resource) -> Informer:
        cache = self.caches.get(resource)
        if cache is None:
            cache = Informer(
                self.member, resource, label_selector=f"{MANAGED_LABEL}=true", resync_period=self.resync_period
            )
            cache.add_handler(self._member_changed)
            self.caches[resource] = cache
            cache.start()
        await cache.wait_synced(60)
        return cache

    async def _resolve(self, manifest: Obj) -> tuple[Resource, bool]:
        """The manifest's resource and whether the member serves it. A kind only the control
        plane serves is still sent to the member, whose refusal is the Work's message."""
        api_version, kind = str(manifest.get("apiVersion", "")), str(manifest.get("kind", ""))
        try:
            return await self.mapper.resource_for(api_version, kind), True
        except UnknownKind:
            pass
        try:
            return await self.control_plane_mapper.resource_for(api_version, kind), False
        except UnknownKind:
            raise ApplyError(f'no matches for kind "{kind}" in version "{api_version}"') from None

    # -- reconcile ------------------------------------------------------------------------------
    async def reconcile(self, name: str) -> float | None:
        work = self.works.get(name, self.namespace)
        if work is None:
            self.synced_generation.pop(name, None)
            self.limiter.items.forget(name)
            return None
        if not self.applies:
            if self.reflects and not work["metadata"].get("deletionTimestamp"):
                await self._reflect_only(work)
            return None
        if work["metadata"].get("deletionTimestamp"):
            return None if await self._remove(work) else self.limiter.when(name)
        dispatching = dispatching_condition(work)
        if dispatching[1] == "False":
            log.info("work %s/%s: dispatching suspended, not applied", self.namespace, name)
            await self._write_status(work, [dispatching], None)
            return None
        cluster = self.cluster.get(self.cluster_name)
        if cluster is None or condition_status(cluster, "Ready") != "True":
            log.info("work %s/%s waits: cluster %s is not Ready", self.namespace, name, self.cluster_name)
            await self._write_status(work, [dispatching], None)
            return None  # the cluster turning Ready enqueues every Work
        manifests = ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []
        previous = {
            s.get("identifier", {}).get("ordinal"): s for s in (work.get("status") or {}).get("manifestStatuses") or []
        }
        errors: list[str] = []
        statuses: list[Obj] = []
        wrote = False
        started = time.perf_counter()
        for ordinal, manifest in enumerate(manifests):
            try:
                resource, applied, changed = await self._apply(manifest)
            except (ApplyError, KubeError, TimeoutError) as exc:
                message = exc.message if isinstance(exc, KubeError) else str(exc) or "timed out waiting for the member"
                errors.append(message)
                log.warning(
                    "work %s/%s: applying %s %s failed: %s",
                    self.namespace,
                    name,
                    manifest.get("kind"),
                    _ref(manifest),
                    message,
                )
                kept = await self._observed_status(work, ordinal, manifest, previous.get(ordinal))
                if kept is not None:
                    statuses.append(kept)
                continue
            wrote = wrote or changed
            statuses.append(await self._manifest_status(work, ordinal, resource, applied, previous.get(ordinal)))
        # Karmada's execution controller times its sync of the workload to the member
        metrics.SYNC_WORKLOAD_DURATION.labels("error" if errors else "success").observe(time.perf_counter() - started)
        if errors:
            applied_condition: Condition = (
                APPLIED,
                "False",
                "AppliedFailed",
                applied_failed_message(len(manifests) - len(errors), len(manifests), errors),
            )
        else:
            applied_condition = (APPLIED, "True", "AppliedSuccessful", APPLIED_MESSAGE)
        was_applied = condition_status(work, APPLIED) == "True"
        await self._write_status(work, [dispatching, applied_condition], statuses if self.reflects else None)
        generation = int(work["metadata"].get("generation") or 0)
        worth_an_event = errors or wrote or not was_applied or self.synced_generation.get(name) != generation
        if worth_an_event:
            await self._sync_events(work, errors)
        if errors:
            self.synced_generation.pop(name, None)
            return self.limiter.when(name)
        self.synced_generation[name] = generation
        self.limiter.items.forget(name)
        return None

    async def _sync_events(self, work: Obj, errors: list[str]) -> None:
        where = f"work({self.namespace}/{work['metadata']['name']}) to cluster({self.cluster_name})"
        if errors:
            await self.recorder.record(
                work, "Warning", "SyncFailed", f"Failed to sync {where}, err: {aggregate(errors)}"
            )
        else:
            log.info("synced %s", where)
            await self.recorder.record(work, "Normal", "SyncSucceed", f"Sync {where} successful.")

    async def _apply(self, manifest: Obj) -> tuple[Resource, Obj, bool]:
        """Create or update one manifest in the member: ``(resource, member object, written)``."""
        resource, served = await self._resolve(manifest)
        meta = manifest.get("metadata") or {}
        namespace = (meta.get("namespace") or "default") if resource.namespaced else None
        if not served:  # no cache for what the member lacks: ask it directly, for its own answer
            created: Obj = await self.member.create(resource, manifest, namespace)
            return resource, created, True
        cache = await self._cache(resource)
        observed = cache.get(meta["name"], namespace or "")
        key, wanted = (resource, namespace or "", str(meta["name"])), _manifest_digest(manifest)
        for _ in range(CONFLICT_RETRIES):
            if observed is None:  # not a managed object we know: create it, unless someone else's is there
                try:
                    created = await self.member.create(resource, manifest, namespace)
                except KubeError as exc:
                    if not exc.already_exists:
                        raise
                    observed = await self.member.get(resource, meta["name"], namespace)
                else:
                    cache.store(created)
                    self.written[key] = (wanted, _digest(created))
                    log.info("created %s %s in cluster %s", manifest.get("kind"), _ref(manifest), self.cluster_name)
                    return resource, created, True
            overwrite = (meta.get("annotations") or {}).get(
                CONFLICT_RESOLUTION_ANNOTATION
            ) == CONFLICT_RESOLUTION_OVERWRITE
            if not _managed(observed) and not overwrite:
                raise ApplyError(conflict_message(manifest, self.cluster_name))
            if self.written.get(key) == (wanted, _digest(observed)):
                return resource, observed, False
            try:
                desired = await a_merge_for_update(manifest, observed, self.interpreter)
            except ValueError as exc:  # a Retain script or webhook failed: this manifest fails, the others apply
                raise ApplyError(str(exc)) from exc
            if _comparable(desired) == _comparable(observed):
                self.written[key] = (wanted, _digest(observed))
                return resource, observed, False
            try:
                updated: Obj = await self.member.update(resource, desired, namespace)
            except KubeError as exc:
                if not exc.conflict:
                    raise
                observed = await self.member.get_or_none(resource, meta["name"], namespace)
                continue
            cache.store(updated)
            self.written[key] = (wanted, _digest(updated))
            log.info("updated %s %s in cluster %s", manifest.get("kind"), _ref(manifest), self.cluster_name)
            return resource, updated, True
        raise ApplyError(
            f"{manifest.get('kind')} {_ref(manifest)} kept changing: {CONFLICT_RETRIES} conflicts in a row"
        )

    # -- status -----------------------------------------------------------------------------------
    async def _reflect_only(self, work: Obj) -> None:
        """The work-status controller alone (``--controllers=-execution``): the status of the
        member objects there are, nothing applied."""
        manifests = ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []
        previous = {
            s.get("identifier", {}).get("ordinal"): s for s in (work.get("status") or {}).get("manifestStatuses") or []
        }
        statuses = []
        for ordinal, manifest in enumerate(manifests):
            with contextlib.suppress(ApplyError, KubeError, TimeoutError):
                resource, served = await self._resolve(manifest)
                if served:
                    await self._cache(resource)
            found = await self._observed_status(work, ordinal, manifest, previous.get(ordinal))
            if found is not None:
                statuses.append(found)
        await self._write_status(work, [], statuses)

    async def _observed_status(self, work: Obj, ordinal: int, manifest: Obj, previous: Obj | None) -> Obj | None:
        """The status of a manifest that failed to apply, from the member object still there
        (Karmada's status reflection does not wait for Applied), else the last one reported."""
        resource = None
        with contextlib.suppress(ApplyError, KubeError):
            resource, served = await self._resolve(manifest)
            if not served:
                resource = None
        cache = self.caches.get(resource) if resource is not None else None
        if resource is not None and cache is not None:
            meta = manifest.get("metadata") or {}
            namespace = (meta.get("namespace") or "default") if resource.namespaced else ""
            observed = cache.get(meta.get("name", ""), namespace)
            annotations = ((observed or {}).get("metadata") or {}).get("annotations") or {}
            if observed is not None and annotations.get(WORK_NAME_ANNOTATION) == work["metadata"]["name"]:
                return await self._manifest_status(work, ordinal, resource, observed, previous)
        return previous

    async def _manifest_status(
        self, work: Obj, ordinal: int, resource: Resource, obj: Obj, previous: Obj | None
    ) -> Obj:
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
        what = f"{resource.kind}/{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"
        events: list[WorkEvent] = []
        try:
            reflected = await self.interpreter.a_reflect_status(obj)
        except (KeyError, TypeError, ValueError) as exc:
            # Karmada leaves the status as it was when reflection fails
            events.append(reflect_status_failed(what, exc))
            if previous is not None and "status" in previous:
                entry["status"] = previous["status"]
            succeeded = False
        else:
            if reflected is not None:
                entry["status"] = json.loads(json.dumps(reflected))
            succeeded = True
        try:
            entry["health"] = "Healthy" if await self.interpreter.a_interpret_health(obj) else "Unhealthy"
        except (KeyError, TypeError, ValueError) as exc:
            entry["health"] = "Unknown"
            events.append(interpret_health_failed(what, exc))
        api_version = f"{resource.group}/{resource.version}" if resource.group else resource.version
        health_rule = self.interpreter.hook_enabled(api_version, resource.kind, Operation.INTERPRET_HEALTH)
        events += status_events(what, previous, entry, reflected=succeeded, health_rule=health_rule)
        if self.reflects:  # they are the work-status controller's
            for event in events:
                await self.recorder.record(work, *event)
        return entry

    async def _write_status(self, work: Obj, conditions: list[Condition], statuses: list[Obj] | None) -> None:
        """One status write with every change, none when nothing changed; events for a
        changed ``Dispatching``. A 409 (someone wrote the Work meanwhile) retries the reconcile."""
        current = copy.deepcopy(work.get("status") or {})
        new = copy.deepcopy(current)
        now = now_time()
        before = find(current.get("conditions"), DISPATCHING)
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
        after = find(new.get("conditions"), DISPATCHING)
        if after is not None and (before is None or before.get("status") != after.get("status")):
            await self.recorder.record(work, "Normal", "WorkDispatching", str(after["message"]))

    # -- deletion -----------------------------------------------------------------------------
    async def _remove(self, work: Obj) -> bool:
        """Whether the Work's member objects are handled and its finalizer gone."""
        name = work["metadata"]["name"]
        manifests = ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []
        preserve = bool((work.get("spec") or {}).get("preserveResourcesOnDeletion"))
        cluster = self.cluster.get(self.cluster_name)
        ready = cluster is not None and condition_status(cluster, "Ready") == "True"
        if preserve or ready:
            # a cluster being removed lets its Works go once the deletes are accepted
            leaving = cluster is not None and bool(cluster["metadata"].get("deletionTimestamp"))
            terminating = [m for m in manifests if not await self._remove_one(work, m, preserve) and not leaving]
            if terminating:
                log.info(
                    "work %s/%s: deletion waits until %s is gone from cluster %s",
                    self.namespace,
                    name,
                    ", ".join(f"{m.get('kind')} {_ref(m)}" for m in terminating),
                    self.cluster_name,
                )
                return False
        elif cluster is not None and not cluster["metadata"].get("deletionTimestamp"):
            # keep the member objects until the cluster answers again (Karmada: "cluster not ready");
            # a cluster being deleted (unjoined) lets its Works go without them
            log.info("work %s/%s: deletion waits, cluster %s is not Ready", self.namespace, name, self.cluster_name)
            return False
        finalizers = work["metadata"].get("finalizers") or []
        if EXECUTION_CONTROLLER_FINALIZER in finalizers:
            updated = copy.deepcopy(work)
            updated["metadata"]["finalizers"] = [f for f in finalizers if f != EXECUTION_CONTROLLER_FINALIZER]
            try:
                await self.control_plane.update(WORKS, updated, self.namespace)
            except KubeError as exc:
                if not exc.not_found:
                    raise
        self.synced_generation.pop(name, None)
        return True

    async def _remove_one(self, work: Obj, manifest: Obj, preserve: bool) -> bool:
        """Whether the member object is handled: kept without Karmada's marks, or confirmed gone."""
        try:
            resource = await self.mapper.resource_for(manifest["apiVersion"], manifest["kind"])
        except UnknownKind:
            return True  # the member does not serve the kind: nothing of it is there
        meta = manifest.get("metadata") or {}
        work_name = work["metadata"]["name"]
        namespace = (meta.get("namespace") or "default") if resource.namespaced else None
        self.written.pop((resource, namespace or "", str(meta["name"])), None)
        observed = await self.member.get_or_none(resource, meta["name"], namespace)
        if observed is None:
            return True
        refusal = deletion_refusal(manifest, observed, self.cluster_name)
        if refusal is not None:
            # not this Work's object: neither deleted nor stripped of marks that are not its own
            log.info("work %s/%s: %s", self.namespace, work_name, refusal)
            if not preserve:
                await self.recorder.record(work, "Warning", DELETE_WORKLOAD_SKIPPED, refusal)
            return True
        if preserve:
            kept = await a_merge_for_update(strip_karmada_marks(manifest), observed, self.interpreter)
            if _comparable(kept) != _comparable(observed):
                await self.member.update(resource, kept, namespace)
            log.info(
                "kept %s %s in cluster %s without Karmada's marks", manifest["kind"], _ref(manifest), self.cluster_name
            )
            return True
        if observed["metadata"].get("deletionTimestamp"):
            answer: Obj = observed  # deleted before, still terminating: wait for it, no second delete
        else:
            try:
                answer = await self.member.delete(resource, meta["name"], namespace, propagation="Background")
            except KubeError as exc:
                if not exc.not_found:
                    raise
                answer = {}
            log.info("deleted %s %s in cluster %s", manifest["kind"], _ref(manifest), self.cluster_name)
        if deletion_confirmed(answer):
            return True
        await self._cache(resource)  # its deletion event brings the Work back
        return False


def deletion_confirmed(answer: Obj) -> bool:
    """Whether a DELETE's answer (or the object read back) says the object is gone: a Status
    (kube-apiserver answers so once it removed the object), nothing, or an object removed at
    once; not an object that still carries ``deletionTimestamp`` (finalizers or a grace
    period keep it)."""
    if not answer or answer.get("kind") == "Status":
        return True
    return not (answer.get("metadata") or {}).get("deletionTimestamp")


def _manifest_digest(manifest: Obj) -> str:
    return hashlib.sha1(json.dumps(manifest, sort_keys=True).encode(), usedforsecurity=False).hexdigest()


def _digest(obj: Obj) -> str:
    """What of a member object Karmada owns (no status, no server bookkeeping), hashed."""
    return _manifest_digest(_comparable(obj))


def _ref(manifest: Obj) -> str:
    """``namespace/name``, or ``name`` for a cluster-scoped object (klog.KObj)."""
    meta = manifest.get("metadata") or {}
    return f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
