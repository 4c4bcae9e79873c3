"""The scheduler: decides ``spec.clusters`` of every (Cluster)ResourceBinding it owns.

Karmada's ``karmada-scheduler`` as one controller of the control plane. The
decision itself is the pure :func:`karmada.scheduling.schedule`; this module
reads the shared caches, decides *when* to run it (the rules of
:mod:`karmada.scheduling.triggers`) and writes the result:

1. one merge patch of ``spec.clusters``, the ``policy.karmada.io/applied-placement``
   annotation and our :data:`~karmada.scheduling.decisions.DECISIONS_ANNOTATION`
   (what was concluded about each cluster), skipped when nothing changed;
2. a read-modify-write of ``status`` carrying the resourceVersion: the
   ``Scheduled`` condition, ``schedulerObservedGeneration``,
   ``schedulerObservingAffinityName``, ``lastScheduledTime``. The bindingStatus
   controller writes other fields of the same status, so a 409 re-reads the
   binding and applies our fields again (a few times, then the key backs off);
3. ``ScheduleBindingSucceed``/``ScheduleBindingFailed`` events on the binding and
   on its template, and one log line.

Errors are handled as Karmada handles them: no cluster fits (``FitError``) ->
``spec.clusters`` emptied, ``NoClusterFit``, no retry until a new event; not
enough capacity -> ``Unschedulable``, previous result kept, retried with backoff;
anything else -> ``SchedulerError``, retried with backoff.

Knowingly different from Karmada, to keep API writes proportional to change:
a run that finds the same result as before (Duplicated and non-workload
bindings run on every cluster event) writes nothing, so neither
``lastScheduledTime`` nor the success event moves; ``schedulerObservedGeneration``
is set to the generation our own ``spec.clusters`` patch produced, so that patch
does not need a second status write when its watch event comes back.

Fail safe on a Cluster that does not parse (a field value this model refuses): it is
scheduled against as its last valid version; one never parsed is left out of new
decisions, and a binding already placed on it keeps its result until it parses or
is deleted. An ``InvalidCluster`` Warning event on the Cluster says so, once per version.

Each scheduling run counts in Karmada's ``karmada_scheduler_schedule_attempts_total``
and ``karmada_scheduler_e2e_scheduling_duration_seconds`` (result
``scheduled``/``error``; ``ScaleSchedule`` when only the replicas changed).

Concurrency: one worker task (Karmada's scheduler runs one too) fed by the
binding and Cluster informers; their handlers, which run on the informer
tasks of the same event loop, keep the cluster->binding index and enqueue
keys. Cluster snapshots are rebuilt only when a Cluster's resourceVersion
changes, and the sorted list of them every binding is scheduled against only
when the Cluster cache changed (``Informer.changes``), so a burst of bindings
over a thousand clusters does not walk the cache once per binding. Keys are
``(namespace, name)``, namespace ``""`` for a ClusterResourceBinding. Everything is level-triggered: after a restart the
initial list enqueues every binding and the dequeue checks decide again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

from controlplane.context import Context
from karmada import metrics
from karmada.api.binding import (
    CONDITION_SCHEDULED,
    MESSAGE_BINDING_SCHEDULED,
    REASON_BINDING_SCHEDULED,
    ResourceBindingSpec,
    ResourceBindingStatus,
    TargetCluster,
)
from karmada.api.cluster import Cluster
from karmada.api.errors import APIValidationError
from karmada.api.keys import APPLIED_PLACEMENT_ANNOTATION, DEFAULT_SCHEDULER_NAME
from karmada.api.policy import Placement
from karmada.clusters.conditions import set_condition
from karmada.json_copy import copy_json
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError
from karmada.kube.controller import Controller
from karmada.kube.ratelimit import BASE_DELAY, MAX_DELAY
from karmada.kube.resources import CLUSTER_RESOURCE_BINDINGS, CLUSTERS, RESOURCE_BINDINGS, Resource
from karmada.scheduling import FitError, ScheduleError, ScheduleFailure, schedule
from karmada.scheduling.decisions import DECISIONS_ANNOTATION, encode_decisions, material
from karmada.scheduling.index import BindingIndex
from karmada.scheduling.scheduler import ClusterDecision
from karmada.scheduling.snapshot import ClusterSnapshot
from karmada.scheduling.triggers import (
    ALWAYS_SCHEDULED,
    ANY_CLUSTER,
    REPLICAS_CHANGED,
    affinity_for_cluster_events,
    binding_event_needs_schedule,
    cluster_event_needs_requeue,
    generation,
    index_inputs,
    ours,
    parse_binding,
    placement_json,
    schedule_reason,
)
from karmada.timestamps import now_time

log = logging.getLogger("controlplane.scheduler")

Obj = dict[str, Any]
Key = tuple[str, str]
CONFLICT_RETRIES = 5
REASON_SUCCEED = "ScheduleBindingSucceed"
REASON_FAILED = "ScheduleBindingFailed"
REASON_INVALID_CLUSTER = "InvalidCluster"


def binding_key(obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or ""


def _describe(key: Key) -> str:
    namespace, name = key
    return f"ResourceBinding({namespace}/{name})" if namespace else f"ClusterResourceBinding({name})"


def targets_message(clusters: list[TargetCluster]) -> str:
    """``member1:1, member2:2`` (Karmada's format; no replicas prints 0)."""
    return ", ".join(f"{c.name}:{c.replicas or 0}" for c in clusters)


def template_ref(spec: ResourceBindingSpec) -> Obj:
    """The template as an event's involved object."""
    resource = spec.resource
    meta: Obj = {"name": resource.name, "uid": resource.uid or ""}
    if resource.namespace:
        meta["namespace"] = resource.namespace
    return {"apiVersion": resource.api_version, "kind": resource.kind, "metadata": meta}


class SchedulerController:
    """Schedules one binding by key."""

    def __init__(
        self,
        client: KubeClient,
        bindings: Informer,
        cluster_bindings: Informer,
        clusters: Informer,
        recorder: EventRecorder,
        *,
        scheduler_name: str = DEFAULT_SCHEDULER_NAME,
        enable_empty_workload_propagation: bool = False,
    ) -> None:
        self.client = client
        self.bindings = bindings
        self.cluster_bindings = cluster_bindings
        self.clusters = clusters
        self.recorder = recorder
        self.scheduler_name = scheduler_name
        self.enable_empty_workload_propagation = enable_empty_workload_propagation
        self.index: BindingIndex[Key] = BindingIndex()
        self._snapshots: dict[str, tuple[str, ClusterSnapshot]] = {}  # name -> (resourceVersion, snapshot)
        # every cluster's snapshot by name, and the clusters being deleted, as of the cache's
        # ``changes`` count: rebuilt when a Cluster changed, not for every binding
        self._ordered: tuple[int, list[ClusterSnapshot], frozenset[str]] | None = None
        self._failures: dict[Key, int] = {}  # retryable failures in a row, for the backoff
        # Clusters the cache holds that do not parse (a newer Karmada wrote a field this model
        # refuses, say): name -> (resourceVersion, error). The last good snapshot stands in for
        # such a cluster; one never parsed is ``unreadable``, and bindings placed on it keep
        # their result (``_blocked``) until it parses or goes, instead of being moved off it
        self._invalid: dict[str, tuple[str, str]] = {}
        self._reported: dict[str, str] = {}  # name -> the invalid resourceVersion already reported
        self._blocked: dict[str, set[Key]] = {}

    # -- caches ----------------------------------------------------------------
    def _informer(self, key: Key) -> Informer:
        return self.bindings if key[0] else self.cluster_bindings

    @staticmethod
    def _resource(key: Key) -> Resource:
        return RESOURCE_BINDINGS if key[0] else CLUSTER_RESOURCE_BINDINGS

    def snapshot(self, obj: Obj) -> ClusterSnapshot:
        """The snapshot of a cached Cluster, rebuilt only when its resourceVersion moved."""
        meta = obj.get("metadata") or {}
        name, version = meta.get("name") or "", meta.get("resourceVersion") or ""
        held = self._snapshots.get(name)
        if held is not None and held[0] == version and version:
            return held[1]
        snap = ClusterSnapshot.of(Cluster.from_dict(obj)).without_api_enablements()
        self._snapshots[name] = (version, snap)
        return snap

    def cluster_snapshots(self) -> list[ClusterSnapshot]:
        """Every cached Cluster's snapshot, by name. A Cluster that does not parse counts as its
        last good version (fail safe: it does not vanish, so Duplicated bindings keep it); one
        that never parsed is left out and named by :meth:`unreadable_clusters`. The list is
        shared: callers must not change it."""
        return self._current()[1]

    def deleting_clusters(self) -> frozenset[str]:
        return self._current()[2]

    def unreadable_clusters(self) -> frozenset[str]:
        """Cached Clusters that do not parse and have no last good version."""
        self._current()
        return frozenset(name for name in self._invalid if name not in self._snapshots)

    def _current(self) -> tuple[int, list[ClusterSnapshot], frozenset[str]]:
        changes = self.clusters.changes
        if self._ordered is not None and self._ordered[0] == changes:
            return self._ordered
        snapshots = []
        invalid: dict[str, tuple[str, str]] = {}
        deleting: set[str] = set()  # read from the raw object: a cluster that does not parse goes too
        for obj in self.clusters.items():
            meta = obj.get("metadata") or {}
            name = str(meta.get("name") or "")
            if meta.get("deletionTimestamp"):
                deleting.add(name)
            try:
                snapshots.append(self.snapshot(obj))
            except APIValidationError as exc:
                version = str(meta.get("resourceVersion") or "")
                invalid[name] = (version, str(exc))
                held = self._snapshots.get(name)
                if self._invalid.get(name, ("",))[0] != version:  # once per version
                    log.warning(
                        "cluster %s is not valid (%s); %s",
                        name,
                        exc,
                        "its last valid version is used" if held else "bindings placed on it keep their result",
                    )
                if held is not None:  # still being deleted, when the raw object says so
                    snapshots.append(dataclasses.replace(held[1], deleting=True) if name in deleting else held[1])
        self._invalid = invalid
        snapshots.sort(key=lambda s: s.name)
        present = {s.name for s in snapshots}
        for gone in [name for name in self._snapshots if name not in present]:
            del self._snapshots[gone]  # deleted clusters
        for fixed in [name for name in self._reported if name not in invalid]:
            del self._reported[fixed]
        self._ordered = (changes, snapshots, frozenset(deleting | {s.name for s in snapshots if s.deleting}))
        return self._ordered

    async def _report_invalid(self) -> None:
        """A Warning event on each Cluster that does not parse, once per version."""
        for name, (version, error) in sorted(self._invalid.items()):
            if self._reported.get(name) == version:
                continue
            self._reported[name] = version
            obj = self.clusters.get(name)
            if obj is None:
                continue
            kept = "its last valid version is used" if name in self._snapshots else "bindings on it keep their result"
            message = f"cluster {name} cannot be read by the scheduler ({error}); {kept}"
            await self.recorder.record(
                {**obj, "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster"},
                "Warning",
                REASON_INVALID_CLUSTER,
                message,
            )

    # -- event handlers (informer tasks) ------------------------------------------
    def on_binding(self, kind: str, obj: Obj, old: Obj | None) -> list[Key]:
        key = binding_key(obj)
        if kind == "DELETED" or not ours(obj, self.scheduler_name):
            self.index.remove(key)
            self._failures.pop(key, None)
            return []
        if old is None or key not in self.index or index_inputs(obj) != index_inputs(old):
            try:
                placement = Placement.from_dict((obj.get("spec") or {}).get("placement") or {}, path="spec.placement")
                status = ResourceBindingStatus.from_dict(obj.get("status") or {}, path="status")
                self.index.put(key, affinity_for_cluster_events(placement, status, generation(obj)))
            except APIValidationError:
                self.index.put(key, ANY_CLUSTER)  # reconcile reports it
        return [key] if binding_event_needs_schedule(kind, obj, old) else []

    def on_cluster(self, kind: str, obj: Obj, old: Obj | None) -> list[Key]:
        name = (obj.get("metadata") or {}).get("name") or ""
        if kind == "DELETED":
            self._snapshots.pop(name, None)
            return sorted(self._blocked.pop(name, set()))
        held = self._snapshots.get(name)
        try:
            new = self.snapshot(obj).cluster
        except APIValidationError as exc:
            log.warning("cluster %s is not valid: %s", name, exc)
            # the bindings on its last valid version look again: they keep it, and say why
            return sorted(self.index.affected(held[1].cluster)) if held is not None else []
        waiting = self._blocked.pop(name, set())  # bindings that waited for it to parse again
        if (not cluster_event_needs_requeue(kind, obj, old) or old is None) and not waiting:
            return []
        keys = waiting | self.index.affected(new)
        newly_deleting = obj["metadata"].get("deletionTimestamp") and not (old or obj)["metadata"].get(
            "deletionTimestamp"
        )
        if old is not None and not newly_deleting:
            # a cluster that stopped matching concerns the bindings it matched before
            with contextlib.suppress(APIValidationError):  # unparsed before: it placed no binding
                keys |= self.index.affected(Cluster.from_dict(old))
        if keys:
            log.info("cluster %s changed: requeueing %d binding(s)", name, len(keys))
        return sorted(keys)

    # -- reconcile ---------------------------------------------------------------
    async def reconcile(self, key: Key) -> float | None:
        obj = self._informer(key).get(key[1], key[0])
        if obj is None or not ours(obj, self.scheduler_name):
            self._failures.pop(key, None)
            return None
        what = _describe(key)
        try:
            spec, status = parse_binding(obj)
        except APIValidationError as exc:
            # a bad object must not stop the others; it is looked at again when it changes
            log.warning("%s cannot be scheduled: %s", what, exc)
            await self.recorder.record(obj, "Warning", REASON_FAILED, f"invalid binding: {exc}")
            return None
        if obj["metadata"].get("deletionTimestamp"):
            namespace, name = key
            target = f"resourceBinding: {namespace}/{name}" if namespace else f"clusterResourceBinding: {name}"
            await self._record(obj, spec, None, f"skip schedule deleting {target}")
            log.info("%s is being deleted: not scheduled", what)
            return None
        if spec.placement is None:
            log.warning("%s has no placement: not scheduled", what)
            await self._record(obj, spec, None, f"failed to get placement from {what}")
            return None
        snapshots = self.cluster_snapshots()
        deleting = self.deleting_clusters()
        await self._report_invalid()
        unreadable = sorted({c.name for c in spec.clusters or []} & self.unreadable_clusters())
        if unreadable:
            # fail safe: a cluster we cannot read is not a cluster that is gone
            for name in unreadable:
                self._blocked.setdefault(name, set()).add(key)
            message = f"cluster(s) {', '.join(unreadable)} cannot be read; the previous scheduling result is kept"
            log.warning("%s: %s", what, message)
            await self._record(obj, spec, None, message)
            return None
        annotations = obj["metadata"].get("annotations") or {}
        placement = (obj.get("spec") or {}).get("placement")
        reason = schedule_reason(placement, annotations.get(APPLIED_PLACEMENT_ANNOTATION), spec, status, deleting)
        if reason is None:
            log.debug("%s needs no scheduling", what)
            self._failures.pop(key, None)
            if (status.scheduler_observed_generation or 0) != generation(obj):
                wanted = generation(obj)
                await self._write_status(key, obj, lambda s: _set(s, "schedulerObservedGeneration", wanted))
            return None
        # Duplicated and non-workload bindings run on every event: only a run that changes
        # something is worth an info line (Karmada logs these at V(3) too)
        log.log(logging.DEBUG if reason == ALWAYS_SCHEDULED else logging.INFO, "scheduling %s: %s", what, reason)
        started = time.perf_counter()
        outcome: list[bool] = []  # _schedule appends whether the attempt failed
        try:
            return await self._schedule(key, obj, spec, status, snapshots, reason, outcome)
        finally:
            kind = metrics.SCALE_SCHEDULE if reason == REPLICAS_CHANGED else metrics.RECONCILE_SCHEDULE
            metrics.observe_schedule(kind, time.perf_counter() - started, failed=not outcome or outcome[0])

    async def _schedule(
        self,
        key: Key,
        obj: Obj,
        spec: ResourceBindingSpec,
        status: ResourceBindingStatus,
        snapshots: list[ClusterSnapshot],
        reason: str,
        outcome: list[bool],
    ) -> float | None:
        what = _describe(key)
        error: ScheduleError | None = None
        decisions: dict[str, ClusterDecision] = {}
        term_failures: list[tuple[int, ScheduleError]] = []
        clusters: list[TargetCluster] | None  # None: keep the previous result
        try:
            result = schedule(
                spec,
                status,
                snapshots,
                enable_empty_workload_propagation=self.enable_empty_workload_propagation,
            )
        except ScheduleFailure as failure:
            error, decisions, affinity = failure.error, failure.decisions, failure.affinity_name
            term_failures = failure.term_failures
            clusters = [] if isinstance(error, FitError) else None
        except ScheduleError as exc:  # raised before any cluster was looked at
            error, affinity, clusters = exc, status.scheduler_observed_affinity_name, None
        else:
            decisions, affinity, clusters = result.decisions, result.affinity_name, result.clusters
            term_failures = result.term_failures

        outcome.append(error is not None)
        condition_reason = REASON_BINDING_SCHEDULED if error is None else error.reason
        before = generation(obj)
        terms = [t.affinity_name for t in (spec.placement.cluster_affinities or [])] if spec.placement else []
        tried = [(terms[i] if i < len(terms) else str(i), str(err)) for i, err in term_failures]
        patched = await self._patch_result(key, obj, spec, clusters, decisions, affinity, condition_reason, tried)
        spec_written = patched is not obj and generation(patched) != before
        # our own write of spec.clusters moved the generation: that generation is observed too,
        # unless someone else changed the spec in between (then it is not ours to claim)
        observed = generation(patched) if generation(patched) in (before, before + 1) else before

        message = MESSAGE_BINDING_SCHEDULED if error is None else str(error)
        success = error is None
        settled = success or isinstance(error, FitError)  # Karmada does not retry these
        now = now_time()

        def mutate(current: Obj) -> bool:
            conditions = current.setdefault("conditions", [])
            changed = set_condition(
                conditions, CONDITION_SCHEDULED, "True" if success else "False", condition_reason, message, now
            )
            if settled:  # also when nothing fits (karmada-io/karmada#4250)
                changed = _set(current, "schedulerObservedGeneration", observed) or changed
            if success:
                if affinity:
                    changed = _set(current, "schedulerObservingAffinityName", affinity) or changed
                # a Duplicated binding is scheduled on every event; a run that found the same
                # result as before is not a new scheduling, so it does not cost a write
                if changed or spec_written or reason != ALWAYS_SCHEDULED or not current.get("lastScheduledTime"):
                    changed = _set(current, "lastScheduledTime", now) or changed
            return changed

        status_written = await self._write_status(key, patched, mutate)
        wrote = patched is not obj or status_written
        targets = clusters if clusters is not None else list(spec.clusters or [])
        if wrote or not settled:
            for index, term_error in term_failures:  # Karmada reports every clusterAffinities term that failed
                text = f"failed to schedule {what} with clusterAffiliates index({index}): {term_error}"  # sic
                log.warning("%s", text)
                await self._record(obj, spec, None, text)
        if success:
            self._failures.pop(key, None)
            if wrote:
                log.info("%s scheduled to clusters [%s]", what, targets_message(targets))
                await self._record(obj, spec, targets, None)
            else:
                log.debug("%s still scheduled to clusters [%s]", what, targets_message(targets))
            return None
        log.warning("%s: %s: %s", what, condition_reason, message)
        if wrote or not settled:
            await self._record(obj, spec, None, message)
        if settled:
            self._failures.pop(key, None)
            return None
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        return float(min(BASE_DELAY * 2 ** min(failures - 1, 30), MAX_DELAY))

    async def _patch_result(
        self,
        key: Key,
        obj: Obj,
        spec: ResourceBindingSpec,
        clusters: list[TargetCluster] | None,
        decisions: dict[str, ClusterDecision],
        affinity: str | None,
        outcome: str,
        tried: list[tuple[str, str]],
    ) -> Obj:
        """One merge patch of what changed among spec.clusters and our annotations; the
        stored object, or ``obj`` itself when nothing needed writing."""
        annotations = obj["metadata"].get("annotations") or {}
        patch: Obj = {}
        wanted_annotations: dict[str, str] = {}
        if clusters is not None:
            applied = placement_json((obj.get("spec") or {}).get("placement"))
            if annotations.get(APPLIED_PLACEMENT_ANNOTATION) != applied:
                wanted_annotations[APPLIED_PLACEMENT_ANNOTATION] = applied
            current = (obj.get("spec") or {}).get("clusters") or []
            new = [c.to_dict() for c in clusters]
            if current != new:
                patch["spec"] = {"clusters": new or None}  # Go's nil: the field goes away
        if decisions or clusters is not None:
            text = encode_decisions(
                decisions, generation=generation(obj), affinity_name=affinity, outcome=outcome, term_failures=tried
            )
            # capacity figures move all the time; record them only along with a real change
            if patch or wanted_annotations or material(annotations.get(DECISIONS_ANNOTATION)) != material(text):
                wanted_annotations[DECISIONS_ANNOTATION] = text
        if wanted_annotations:
            patch["metadata"] = {"annotations": wanted_annotations}
        if not patch:
            return obj
        stored = await self.client.patch(self._resource(key), key[1], patch, key[0] or None)
        self._informer(key).store(stored)
        return stored

    async def _write_status(self, key: Key, obj: Obj, mutate: Callable[[Obj], bool]) -> bool:
        """Apply ``mutate`` to the latest status and PUT it with its resourceVersion; on a
        conflict read the binding again and retry. Returns whether anything was written."""
        current = obj
        for attempt in range(CONFLICT_RETRIES):
            body = copy_json(current)
            if not mutate(body.setdefault("status", {})):
                return False
            try:
                stored = await self.client.update(self._resource(key), body, key[0] or None, subresource="status")
            except KubeError as exc:
                if not exc.conflict or attempt == CONFLICT_RETRIES - 1:
                    raise
                log.info("%s changed while its status was written; retrying on the latest", _describe(key))
                current = await self.client.get(self._resource(key), key[1], key[0] or None)
                continue
            self._informer(key).store(stored)
            return True
        raise AssertionError("unreachable")

    async def _record(
        self, obj: Obj, spec: ResourceBindingSpec, targets: list[TargetCluster] | None, error: str | None
    ) -> None:
        """The event on the binding and on its template (Karmada records both)."""
        if error is None:
            separator = " Result: " if obj.get("kind") == "ResourceBinding" else " Result "  # sic, Karmada's
            message = f"{MESSAGE_BINDING_SCHEDULED}{separator}{{{targets_message(targets or [])}}}"
            event_type, reason = "Normal", REASON_SUCCEED
        else:
            message, event_type, reason = error, "Warning", REASON_FAILED
        await self.recorder.record(obj, event_type, reason, message)
        await self.recorder.record(template_ref(spec), event_type, reason, message)


def _set(status: Obj, field: str, value: Any) -> bool:
    if status.get(field) == value:
        return False
    status[field] = value
    return True


SCHEDULER_WORKERS = 4


def setup(context: Context) -> list[Controller[Key]]:
    """The scheduler over the binding and Cluster caches."""
    informers, options = context.informers, context.options
    bindings = informers.informer(RESOURCE_BINDINGS)
    cluster_bindings = informers.informer(CLUSTER_RESOURCE_BINDINGS)
    clusters = informers.informer(CLUSTERS)
    scheduler = SchedulerController(
        context.client,
        bindings,
        cluster_bindings,
        clusters,
        # Karmada's scheduler reports as its scheduler name
        EventRecorder(context.client, options.scheduler_name),
        scheduler_name=options.scheduler_name,
        enable_empty_workload_propagation=options.enable_empty_workload_propagation,
    )
    # Karmada's scheduler runs one worker; its API calls return in a millisecond or two. Ours wait
    # on a Python API server shared with every other program, so several bindings are in flight
    # at once (one key is never in two workers; snapshots are read-only while scheduling)
    controller: Controller[Key] = Controller("scheduler", scheduler.reconcile, workers=SCHEDULER_WORKERS)
    controller.watches(bindings, scheduler.on_binding)
    controller.watches(cluster_bindings, scheduler.on_binding)
    controller.watches(clusters, scheduler.on_cluster)
    return [controller]


__all__ = ["DECISIONS_ANNOTATION", "SchedulerController", "setup"]
