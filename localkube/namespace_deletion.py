"""Namespace termination as kube-controller-manager's namespace controller does it
(k8s.io/kubernetes pkg/controller/namespace: ``namespace_controller.go``,
``deletion/namespaced_resources_deleter.go`` and ``deletion/status_condition_utils.go``).

Each Namespace with a deletion timestamp gets one worker task (:meth:`NamespaceDeleter.enqueue`,
called by :mod:`localkube.controllers` for every event of such a Namespace, and so again for each
one found at start). A pass deletes the namespace's content one resource at a time (discovery's
preferred namespaced resources that can be deleted), as the controller's ``deletecollection``
does: each object's DELETE goes through admission, webhooks included
(:meth:`WebhookAdmission.run`), from ``system:serviceaccount:kube-system:namespace-controller``
with ``propagationPolicy: Background`` and, as in a collection delete, no name. The first refusal
ends that resource's pass (kube-apiserver deletes a collection's items one after the other) and
is that resource's error. The pass then sets kube's five conditions in the Namespace's status;
once nothing is left it removes the ``kubernetes`` finalizer and the Namespace is deleted.

A failed pass is retried after kube's per-namespace backoff (5 ms, doubling up to 60 s); a pass
that left objects waiting on finalizers or pods shutting down waits half its estimate plus one
second. Either wait ends early when the Namespace changes (kube's informer queues it again) or an
object in it is deleted (localkube's own shortcut; kube waits out the estimate). The workers end
with the controllers (:meth:`NamespaceDeleter.close`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import datetime
import functools
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from localkube.admission_webhooks import Attributes, WebhookAdmission, options_object
from localkube.api import ResourceAPI, WriteOptions
from localkube.errors import APIError
from localkube.meta import now_time, parse_time

if TYPE_CHECKING:
    from localkube.kinds import Context
    from localkube.resources import Registry, ResourceType

Obj = dict[str, Any]
log = logging.getLogger("localkube.namespaces")

FINALIZER = "kubernetes"  # v1.FinalizerKubernetes, the namespace controller's token
CONTROLLER_USER: Obj = {
    "username": "system:serviceaccount:kube-system:namespace-controller",
    "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
}
DELETE_OPTIONS: Obj = {"propagationPolicy": "Background"}
# nsControllerRateLimiter: ItemExponentialFailureRateLimiter(5ms, 60s)
BACKOFF_BASE = 0.005
BACKOFF_MAX = 60.0
FINALIZER_ESTIMATE = 15  # finalizerEstimateSeconds

# the condition types the controller owns, each with its reason and message when all is well
CONDITIONS: dict[str, tuple[str, str]] = {
    "NamespaceDeletionDiscoveryFailure": ("ResourcesDiscovered", "All resources successfully discovered"),
    "NamespaceDeletionGroupVersionParsingFailure": ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    "NamespaceDeletionContentFailure": (
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    "NamespaceContentRemaining": ("ContentRemoved", "All content successfully removed"),
    "NamespaceFinalizersRemaining": ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}


@dataclass
class Content:
    """What a pass over a namespace's content found (kube's allGVRDeletionMetadata and errors)."""

    errors: list[str] = field(default_factory=list)
    # "resource.group" -> objects left
    remaining: dict[str, int] = field(default_factory=dict)
    # finalizer -> objects left holding it
    finalizers: Counter[str] = field(default_factory=Counter)
    # seconds before what is left should be gone
    estimate: int = 0


def failure_conditions(content: Content) -> dict[str, tuple[str, str]]:
    """The conditions a pass makes True, as (reason, message) by type: ProcessContentTotals and
    makeDeleteContentCondition, each list sorted for stable updates."""
    found: dict[str, tuple[str, str]] = {}
    if content.errors:
        errors = sorted(content.errors)
        found["NamespaceDeletionContentFailure"] = (
            "ContentDeletionFailed",
            f"Failed to delete all resource types, {len(errors)} remaining: {', '.join(errors)}",
        )
    remaining = sorted(f"{r} has {n} resource instances" for r, n in content.remaining.items() if n)
    if remaining:
        found["NamespaceContentRemaining"] = (
            "SomeResourcesRemain",
            f"Some resources are remaining: {', '.join(remaining)}",
        )
    finalizers = sorted(f"{f} in {n} resource instances" for f, n in content.finalizers.items() if n)
    if finalizers:
        found["NamespaceFinalizersRemaining"] = (
            "SomeFinalizersRemain",
            f"Some content in the namespace has finalizers remaining: {', '.join(finalizers)}",
        )
    return found


def updated_conditions(current: list[Obj], failures: dict[str, tuple[str, str]], now: str) -> list[Obj] | None:
    """kube's updateConditions: each owned type set to its failure or its ok variant (added at the
    end when absent), other types kept; lastTransitionTime moves only with the status. None when
    nothing changed."""
    conditions = copy.deepcopy(current)
    changed = False
    for kind, ok in CONDITIONS.items():
        status, (reason, message) = ("True", failures[kind]) if kind in failures else ("False", ok)
        old = next((c for c in conditions if c.get("type") == kind), None)
        if old is None:
            conditions.append(
                {"type": kind, "status": status, "lastTransitionTime": now, "reason": reason, "message": message}
            )
            changed = True
        elif (old.get("status"), old.get("reason"), old.get("message")) != (status, reason, message):
            if old.get("status") != status:
                old["lastTransitionTime"] = now
            old.update(status=status, reason=reason, message=message)
            changed = True
    return conditions if changed else None


def deletable_resources(registry: Registry) -> list[ResourceType]:
    """Discovery's ServerPreferredNamespacedResources that can be deleted: each namespaced
    group/resource once, in the first of its group's versions (preferred first) serving it."""
    seen: set[tuple[str, str]] = set()
    found = []
    for group, versions in registry.groups():
        for version in versions:
            for rt in registry.resources(group, version):
                if rt.namespaced and "delete" in rt.verbs and (group, rt.plural) not in seen:
                    seen.add((group, rt.plural))
                    found.append(rt)
    return found


def pod_estimate(pods: list[Obj], deleted_at: datetime.datetime, now: datetime.datetime) -> int:
    """estimateGracefulTerminationForPods: the longest grace period of the pods not yet finished,
    nothing once that long has passed since the namespace was deleted."""
    estimate = 0
    for pod in pods:
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        if isinstance(grace, int) and grace > estimate:
            estimate = grace
    return 0 if now - deleted_at >= datetime.timedelta(seconds=estimate) else estimate


def _gvr(rt: ResourceType) -> str:
    """schema.GroupVersionResource's String()."""
    return f"{rt.group}/{rt.version}, Resource={rt.plural}"


@dataclass
class _Outcome:
    done: bool
    failed: bool = False
    estimate: int = 0


class NamespaceDeleter:
    """The namespace controller of one localkube: a worker per terminating Namespace."""

    def __init__(self, api: ResourceAPI, system: Context) -> None:
        self.api = api
        self.store = api.store
        self.registry = api.registry
        self.system = system  # who writes the Namespace's status and finalizers
        self._wakes: dict[str, asyncio.Event] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def enqueue(self, name: str) -> None:
        """A Namespace with a deletion timestamp was written (or found at start)."""
        wake = self._wakes.get(name)
        if wake is not None:
            wake.set()
            return
        wake = self._wakes[name] = asyncio.Event()
        task = asyncio.create_task(self._work(name, wake), name=f"localkube-namespace-{name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def wake(self, namespace: str) -> None:
        """An object in ``namespace``, or the Namespace, is gone: its worker looks again."""
        wake = self._wakes.get(namespace)
        if wake is not None:
            wake.set()

    async def close(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _work(self, name: str, wake: asyncio.Event) -> None:
        failures = 0
        try:
            while True:
                wake.clear()
                try:
                    outcome = await self.sync(name)
                except Exception:  # a bug here must not end the namespace's deletion for good
                    log.exception("namespace %s: deletion pass failed", name)
                    outcome = _Outcome(done=False, failed=True)
                if outcome.done:
                    return
                if outcome.failed:
                    failures += 1
                    delay = min(BACKOFF_BASE * 2 ** (failures - 1), BACKOFF_MAX)
                else:
                    delay = outcome.estimate // 2 + 1
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await wake.wait()
        finally:
            if self._wakes.get(name) is wake:
                del self._wakes[name]

    async def sync(self, name: str) -> _Outcome:
        """One pass of namespacedResourcesDeleter.Delete."""
        namespace = self.store.get("/namespaces", "", name)
        if namespace is None or not namespace["metadata"].get("deletionTimestamp"):
            return _Outcome(done=True)
        if not (namespace.get("spec") or {}).get("finalizers"):
            self._delete_if_finalized(name)
            return _Outcome(done=True)
        content = await self._delete_content(namespace)
        self._write_conditions(name, failure_conditions(content))
        if content.errors:
            return _Outcome(done=False, failed=True)
        if content.estimate > 0:
            return _Outcome(done=False, estimate=content.estimate)
        self._finalize(name)
        return _Outcome(done=True)

    async def _delete_content(self, namespace: Obj) -> Content:
        """deleteAllContent: every deletable resource's objects in the namespace."""
        name = namespace["metadata"]["name"]
        deleted_at = parse_time(namespace["metadata"]["deletionTimestamp"])
        content = Content()
        for rt in deletable_resources(self.registry):
            if self.store.items(rt.storage_key, name):
                await self._delete_resource(rt, name, deleted_at, content)
        return content

    async def _delete_resource(
        self, rt: ResourceType, namespace: str, deleted_at: datetime.datetime, content: Content
    ) -> None:
        """deleteAllContentForGroupVersionResource."""
        estimate = 0
        if rt.group == "" and rt.plural == "pods":
            now = datetime.datetime.now(datetime.UTC)
            estimate = pod_estimate(self.store.items(rt.storage_key, namespace), deleted_at, now)
        collection = "deletecollection" in rt.verbs
        for obj in self.store.items(rt.storage_key, namespace):
            try:
                await self._delete(rt, obj, collection)
            except APIError as error:
                if error.code == 404 or (error.code == 405 and not collection):
                    continue  # gone meanwhile; deleteEachItem also passes over MethodNotSupported
                content.errors.append(error.message)
                content.estimate = max(content.estimate, estimate)
                return  # the rest of the collection waits for the next pass
        left = self.store.items(rt.storage_key, namespace)
        if not left:
            return
        content.estimate = max(content.estimate, estimate)
        content.remaining[f"{rt.plural}.{rt.group}"] = len(left)
        held = Counter(f for obj in left for f in obj["metadata"].get("finalizers") or [])
        content.finalizers.update(held)
        if estimate:
            return
        if held:
            content.estimate = max(content.estimate, FINALIZER_ESTIMATE)
            return
        content.errors.append(f"unexpected items still remain in namespace: {namespace} for gvr: {_gvr(rt)}")

    async def _delete(self, rt: ResourceType, obj: Obj, collection: bool) -> None:
        """One object's DELETE, through the admission webhooks as a client's would go."""
        meta = obj["metadata"]
        write = functools.partial(self.api.delete, rt, meta["namespace"], meta["name"], dict(DELETE_OPTIONS), False)
        webhooks = self.api.webhooks
        if not isinstance(webhooks, WebhookAdmission):
            write()
            return
        attributes = Attributes(
            operation="DELETE",
            rt=rt,
            subresource="",
            namespace=meta["namespace"],
            # a collection's items are admitted with the collection's attributes, which name nothing
            name="" if collection else meta["name"],
            user_info=copy.deepcopy(CONTROLLER_USER),
            dry_run=False,
            options=options_object("DeleteOptions", {}, DELETE_OPTIONS),
        )
        await webhooks.run(attributes, write, [])

    def _namespace_type(self) -> ResourceType:
        rt = self.registry.lookup("", "v1", "namespaces")
        assert rt is not None
        return rt

    def _write_conditions(self, name: str, failures: dict[str, tuple[str, str]]) -> None:
        current = self.store.get("/namespaces", "", name)
        if current is None:
            return
        status = current.get("status") or {}
        conditions = updated_conditions(status.get("conditions") or [], failures, now_time())
        if conditions is None:
            return
        updated = copy.deepcopy(current)
        updated["status"] = {**status, "phase": "Terminating", "conditions": conditions}
        self._write(updated, "status")

    def _finalize(self, name: str) -> None:
        """finalizeNamespace: this controller's token off ``spec.finalizers``."""
        current = self.store.get("/namespaces", "", name)
        if current is None:
            return
        finalizers = (current.get("spec") or {}).get("finalizers") or []
        updated = copy.deepcopy(current)
        updated.setdefault("spec", {})["finalizers"] = sorted({f for f in finalizers if f != FINALIZER})
        self._write(updated, "finalize")
        self._delete_if_finalized(name)

    def _delete_if_finalized(self, name: str) -> None:
        """The API server deletes a finalized Namespace once no finalizer of either kind is left."""
        current = self.store.get("/namespaces", "", name)
        if (
            current is not None
            and current["metadata"].get("deletionTimestamp")
            and not current["metadata"].get("finalizers")
            and not (current.get("spec") or {}).get("finalizers")
        ):
            self.store.delete("/namespaces", "", name)

    def _write(self, namespace: Obj, subresource: str) -> None:
        with contextlib.suppress(APIError):  # a conflict: the next pass reads it again
            self.api.update(
                self._namespace_type(),
                "",
                namespace["metadata"]["name"],
                namespace,
                subresource,
                self.system,
                WriteOptions(),
            )
