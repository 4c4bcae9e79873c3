"""The binding-status controller (Karmada's resource-binding-status and
cluster-resource-binding-status controllers): Work status flows back to the
binding and to the resource template.

For each scheduled (Cluster)ResourceBinding it collects the binding's Works
(from one shared Work cache over every execution space, indexed here by the
binding permanent-id label) into ``status.aggregatedStatus`` and the
``FullyApplied`` condition (:mod:`karmada.aggregation`), then, for kinds the
interpreter can aggregate, writes the summed status into the template's
``status`` subresource, so ``kubectl rollout status`` against the control
plane finishes once every member has rolled out.

Both writes are read-modify-write of the latest object with its
``resourceVersion`` and change only this controller's fields (the scheduler
writes the rest of the binding status); a 409 re-reads the object and tries
again (five times, as client-go's ``RetryOnConflict``), and nothing is written
when nothing changed. A Work the member refused is reflected on the template
as a ``SyncFailed`` Warning carrying the member's message, once per new
message.

A binding's status holds an entry per target cluster and is rewritten whole,
so a binding to N clusters whose Works report one by one would write N times
N entries. Writes of one binding are therefore paced by its size: after a write
of n entries the next waits ``n`` x 2 ms (1,000 clusters: 2 s; 3 clusters:
6 ms; at most 5 s), and whatever arrived meanwhile goes into that one write.
Karmada writes on every Work event; the outcome is the same, later by at most
the pace. Bytes written per binding and second stay flat as N grows.

Keys are ``(kind, namespace, name)`` of bindings; Work events map to their
binding through the binding annotations on the Work. Five workers share one
queue, which never runs one key twice at once. Everything is read from caches,
so a restart re-reads the caches and converges without extra writes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from controlplane.context import Context
from controlplane.interpreter_webhooks import async_interpreter_for
from karmada.aggregation import ManifestNotFound, aggregated_items, binding_status, newly_failed
from karmada.api.binding import AggregatedStatusItem
from karmada.api.keys import (
    CLUSTER_RESOURCE_BINDING_ANNOTATION,
    CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL,
    RESOURCE_BINDING_NAME_ANNOTATION,
    RESOURCE_BINDING_NAMESPACE_ANNOTATION,
    RESOURCE_BINDING_PERMANENT_ID_LABEL,
)
from karmada.interpreter import Operation
from karmada.interpreter_webhooks import AsyncInterpreter
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError, ResourceMapper
from karmada.kube.controller import Controller
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import CLUSTER_RESOURCE_BINDINGS, RESOURCE_BINDINGS, WORKS, Resource
from karmada.timestamps import now_time

log = logging.getLogger("controlplane.binding_status")
Obj = dict[str, Any]
Key = tuple[str, str, str]
"""(binding kind, namespace or "", name)."""

RB = "ResourceBinding"
CRB = "ClusterResourceBinding"
CONFLICT_RETRIES = 5
WORKERS = 5
PACE_PER_ENTRY = 0.002  # seconds between two status writes of a binding, per aggregated entry
MAX_PACE = 5.0


class WritePacer:
    """When a key may be written again: ``per_entry`` seconds per entry of its last write later."""

    def __init__(
        self,
        per_entry: float = PACE_PER_ENTRY,
        limit: float = MAX_PACE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_entry = per_entry
        self.limit = limit
        self.clock = clock
        self._next: dict[Key, float] = {}

    def wait(self, key: Key) -> float:
        """Seconds until ``key`` may be written; 0 now (and its record is dropped)."""
        due = self._next.get(key)
        if due is None:
            return 0.0
        left = due - self.clock()
        if left <= 0:
            del self._next[key]
            return 0.0
        return left

    def written(self, key: Key, entries: int) -> None:
        pace = min(self.limit, self.per_entry * entries)
        if pace > 0:
            self._next[key] = self.clock() + pace

    def forget(self, key: Key) -> None:
        self._next.pop(key, None)


class WorkIndex:
    """Works by binding permanent id, kept current by the Work cache's events."""

    LABELS = (RESOURCE_BINDING_PERMANENT_ID_LABEL, CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL)

    def __init__(self, works: Informer) -> None:
        self.works = works
        self._by_id: dict[tuple[str, str], set[tuple[str, str]]] = {}
        self._ids: dict[tuple[str, str], list[tuple[str, str]]] = {}
        # a cache already running replays what it holds to the new handler
        works.add_handler(lambda kind, obj, old: self._update(kind, obj))

    def _update(self, kind: str, work: Obj) -> None:
        meta = work.get("metadata") or {}
        key = (str(meta.get("namespace", "")), str(meta.get("name", "")))
        for old in self._ids.pop(key, []):
            members = self._by_id.get(old)
            if members is not None:
                members.discard(key)
                if not members:
                    del self._by_id[old]
        if kind == "DELETED":
            return
        labels = meta.get("labels") or {}
        ids = [(label, str(labels[label])) for label in self.LABELS if labels.get(label)]
        if ids:
            self._ids[key] = ids
            for entry in ids:
                self._by_id.setdefault(entry, set()).add(key)

    def works_of(self, label: str, binding_id: str) -> list[Obj]:
        """The cached Works labelled ``label=binding_id``."""
        found = []
        for namespace, name in sorted(self._by_id.get((label, binding_id), ())):
            work = self.works.get(name, namespace)
            if work is not None:
                found.append(work)
        return found


def _scheduled(binding: Obj) -> bool:
    # the scheduler sets lastScheduledTime only once it has placed the binding
    return bool((binding.get("status") or {}).get("lastScheduledTime"))


def binding_keys(kind: str) -> Callable[[str, Obj, Obj | None], list[Key]]:
    """Binding events worth a look (Karmada's predicate): a scheduled binding appearing (so
    a restart looks at every binding once), or its template changing
    (``spec.resource.resourceVersion``: the template's generation may have moved). Its own
    status writes, and the scheduler's, wake nobody; Work status changes do the rest."""

    def keys(event: str, obj: Obj, old: Obj | None) -> list[Key]:
        if event == "DELETED" or not _scheduled(obj):
            return []
        meta = obj["metadata"]
        key = (kind, str(meta.get("namespace", "")), str(meta["name"]))
        if old is None or old is obj:  # new, or a resync
            return [key]
        old_labels = (old.get("metadata") or {}).get("labels")
        if _template_version(obj) != _template_version(old) or meta.get("labels") != old_labels:
            return [key]
        return []

    return keys


def _template_version(binding: Obj) -> Any:
    return ((binding.get("spec") or {}).get("resource") or {}).get("resourceVersion")


def work_keys(event: str, work: Obj, old: Obj | None) -> list[Key]:
    """The binding a Work belongs to, when its status changes or it goes. A Work appearing
    without status (just written by the binding controller) has nothing to tell yet; one
    appearing with status is a relist after a missed stretch, or a restart."""
    if event == "ADDED" and not (work.get("status") or {}).get("conditions"):
        return []
    if event == "MODIFIED" and old is not None and old.get("status") == work.get("status"):
        return []
    annotations = (work.get("metadata") or {}).get("annotations") or {}
    namespace = annotations.get(RESOURCE_BINDING_NAMESPACE_ANNOTATION)
    name = annotations.get(RESOURCE_BINDING_NAME_ANNOTATION)
    if namespace and name:
        return [(RB, namespace, name)]
    cluster_binding = annotations.get(CLUSTER_RESOURCE_BINDING_ANNOTATION)
    if cluster_binding:
        return [(CRB, "", cluster_binding)]
    return []


def _template_stub(resource: Obj) -> Obj:
    """What an Event needs of the template, from the binding's reference to it."""
    meta = {"name": resource.get("name", ""), "uid": resource.get("uid", "")}
    if resource.get("namespace"):
        meta["namespace"] = resource["namespace"]
    return {"apiVersion": resource.get("apiVersion", ""), "kind": resource.get("kind", ""), "metadata": meta}


def _ref(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


class BindingStatusController:
    """Reconciles the status of one binding and of its template."""

    def __init__(
        self,
        client: KubeClient,
        mapper: ResourceMapper,
        informers: InformerFactory,
        bindings: Informer,
        cluster_bindings: Informer,
        works: Informer,
        recorder: EventRecorder,
    ) -> None:
        self.client = client
        self.mapper = mapper
        self.informers = informers
        self.caches = {RB: bindings, CRB: cluster_bindings}
        self.index = WorkIndex(works)
        self.recorder = recorder
        self.interpreter = AsyncInterpreter()  # the shared one from async_interpreter_for in setup
        self.pacer = WritePacer()

    async def reconcile(self, key: Key) -> float | None:
        kind, namespace, name = key
        binding = self.caches[kind].get(name, namespace)
        if binding is None or binding["metadata"].get("deletionTimestamp") or not _scheduled(binding):
            self.pacer.forget(key)
            return None
        wait = self.pacer.wait(key)
        if wait > 0:
            return wait  # what arrives meanwhile goes into the next write
        # listed objects carry no apiVersion/kind; writes and Events need them
        binding = {**binding, "apiVersion": RESOURCE_BINDINGS.api_version, "kind": kind}
        label = RESOURCE_BINDING_PERMANENT_ID_LABEL if kind == RB else CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL
        binding_id = (binding["metadata"].get("labels") or {}).get(label)
        if not binding_id:
            # the detector stamps it on create (Karmada's webhook would); its Works carry it
            log.info("%s %s: no %s label yet; waiting for it", kind, _ref(namespace, name), label)
            return None
        resource = (binding.get("spec") or {}).get("resource") or {}
        try:
            items = aggregated_items(self.index.works_of(label, binding_id), resource)
        except ManifestNotFound as exc:
            await self.recorder.record(binding, "Warning", "AggregateStatusFailed", str(exc))
            raise
        stored = await self._write_binding(kind, binding, items)
        if stored is None:
            return None
        await self._write_template(stored, items)
        return None

    async def _write_binding(self, kind: str, binding: Obj, items: list[Obj]) -> Obj | None:
        """The binding with ``items`` and FullyApplied in its status (written only if that changes it)."""
        resource: Resource = RESOURCE_BINDINGS if kind == RB else CLUSTER_RESOURCE_BINDINGS
        meta = binding["metadata"]
        namespace, name = meta.get("namespace") or None, meta["name"]
        ref = _ref(namespace or "", name)
        for attempt in range(CONFLICT_RETRIES):
            spec = binding.get("spec") or {}
            old = binding.get("status") or {}
            new = binding_status(old, spec, items, now_time())
            if new == old:
                return binding
            failed = newly_failed(old.get("aggregatedStatus"), items)
            try:
                stored = await self.client.update(resource, {**binding, "status": new}, namespace, subresource="status")
            except KubeError as exc:
                if exc.not_found:
                    return None
                if exc.conflict and attempt < CONFLICT_RETRIES - 1:
                    latest = await self.client.get_or_none(resource, name, namespace)
                    if latest is None:
                        return None
                    binding = latest
                    continue
                await self.recorder.record(binding, "Warning", "AggregateStatusFailed", exc.message)
                raise
            self.caches[kind].store(stored)
            self.pacer.written((kind, namespace or "", name), len(items))
            condition = next(c for c in new["conditions"] if c["type"] == "FullyApplied")
            log.info(
                "%s %s: aggregated status of %d cluster(s), FullyApplied=%s",
                kind,
                ref,
                len(items),
                condition["status"],
            )
            await self.recorder.record(
                stored, "Normal", "AggregateStatusSucceed", f"Update {kind}({ref}) with AggregatedStatus successfully."
            )
            await self._reflect_failures(spec.get("resource") or {}, failed)
            return stored
        return None  # unreachable: the last attempt returns or raises

    async def _reflect_failures(self, resource: Obj, failed: Iterable[Obj]) -> None:
        """The member's refusal, on the template a user looks at (Karmada's execution
        controller records it there with the same reason)."""
        ref = _ref(resource.get("namespace") or "", resource.get("name") or "")
        for item in failed:
            cluster = item["clusterName"]
            message = (
                f"Failed to create or update resource({ref}) in member cluster({cluster}): {item['appliedMessage']}"
            )
            log.info("%s %s: apply failed in %s", resource.get("kind"), ref, cluster)
            await self.recorder.record(_template_stub(resource), "Warning", "SyncFailed", message)

    async def _write_template(self, binding: Obj, items: list[Obj]) -> None:
        """The interpreter's aggregate of ``items`` into the template's status subresource."""
        resource = (binding.get("spec") or {}).get("resource") or {}
        api_version, kind = str(resource.get("apiVersion", "")), str(resource.get("kind", ""))
        if not self.interpreter.hook_enabled(api_version, kind, Operation.AGGREGATE_STATUS):
            return
        served = await self.mapper.resource_for(api_version, kind)
        # the detector's cache when it watches the kind; not a reader of it (its release ends the watch)
        templates = self.informers.existing(served)
        namespace, name = resource.get("namespace") or None, str(resource.get("name", ""))
        ref = _ref(namespace or "", name)
        statuses = [AggregatedStatusItem.from_dict(i) for i in items]
        if templates is not None:
            template = templates.get(name, namespace or "")
        else:
            template = await self.client.get_or_none(served, name, namespace)
        for attempt in range(CONFLICT_RETRIES):
            if template is None:
                return  # deleted; the garbage collector removes the binding next
            # listed objects carry no apiVersion/kind; the interpreter and Events need them
            template = {**template, "apiVersion": api_version, "kind": kind}
            try:
                new = await self.interpreter.a_aggregate_status(template, statuses, now_time())
            except (KeyError, TypeError, ValueError) as exc:
                await self.recorder.record(template, "Warning", "AggregateStatusFailed", str(exc))
                raise
            if new.get("status") == template.get("status"):
                return
            try:
                stored = await self.client.update(served, new, namespace, subresource="status")
            except KubeError as exc:
                if exc.not_found:
                    return
                if exc.conflict and attempt < CONFLICT_RETRIES - 1:
                    # the cache lags behind the template: read the latest and aggregate again
                    template = await self.client.get_or_none(served, name, namespace)
                    continue
                await self.recorder.record(template, "Warning", "AggregateStatusFailed", exc.message)
                raise
            if templates is not None:
                templates.store(stored)
            log.info("%s %s: status aggregated from %d cluster(s)", kind, ref, len(items))
            await self.recorder.record(
                stored, "Normal", "AggregateStatusSucceed", "Update Resource with AggregatedStatus successfully."
            )
            return


def setup(context: Context) -> list[Controller[Key]]:
    """One queue for ResourceBindings and ClusterResourceBindings, fed by them and their Works."""
    informers = context.informers
    bindings = informers.informer(RESOURCE_BINDINGS)
    cluster_bindings = informers.informer(CLUSTER_RESOURCE_BINDINGS)
    works = informers.informer(WORKS)
    controller = BindingStatusController(
        context.client, context.mapper, informers, bindings, cluster_bindings, works, context.recorder
    )
    controller.interpreter = async_interpreter_for(context)
    reconciler: Controller[Key] = Controller("binding-status", controller.reconcile, workers=WORKERS)
    reconciler.watches(bindings, binding_keys(RB))
    reconciler.watches(cluster_bindings, binding_keys(CRB))
    reconciler.watches(works, work_keys)
    return [reconciler]
