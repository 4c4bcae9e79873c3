"""The cluster controller: for every Cluster, the execution namespace
``karmada-es-<cluster>``, the finalizer, the canonical spec (what Karmada's
aggregated API server would have done on write), the not-ready/unreachable
taints that follow the Ready condition, and, for pull clusters, the agent's
access objects. On deletion it removes the execution namespace (stripping
Work finalizers first when the cluster is not Ready: no one can run them), takes the
cluster out of every binding that still lists it once that namespace is gone (the
scheduler moves the bindings it schedules as soon as the cluster is deleting; this
covers the rest: a binding whose policy was deleted, one suspended, one of another
scheduler, one no other cluster fits), removes the agent's access, then the finalizer.
Bindings come from the by-cluster index of the shared binding caches, never a list,
and a binding's event that drops a deleting cluster queues that cluster.

Runs ``--concurrent-cluster-syncs`` workers (5) fed by the Cluster informer (a
key is never in two workers at once); every reconcile reads the cache and is
idempotent, so a restart simply reconciles everything again.

The agent's access (:class:`AgentAccess`: its execution namespace, roles and
bindings, and heartbeat Lease) is compared with shared watch caches before
anything is written, on every reconcile of a pull Cluster: a restart with a
thousand registered clusters reads seven thousand cached objects and writes
none, and a role or binding someone deleted or changed is put back (its event,
mapped to its cluster by label, queues the Cluster). The agent approver
ensures the same access, through the same caches, when it registers a cluster.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable, Mapping
from typing import Any
from weakref import WeakKeyDictionary

from controlplane.cluster_health import HealthMonitor
from controlplane.context import Context
from controlplane.failover_bindings import (
    CRB,
    RB,
    RESOURCES,
    bindings_targeting,
    clusters_named,
    record_eviction,
    with_kind,
)
from karmada.api.keys import (
    CLUSTER_CONTROLLER_FINALIZER,
    EXECUTION_CONTROLLER_FINALIZER,
    NAMESPACE_KARMADA_CLUSTER,
    SYSTEM_LABEL,
)
from karmada.api.names import cluster_of_execution_space, execution_space, validate_cluster_name
from karmada.clusters.conditions import condition_status
from karmada.clusters.mutation import mutate, prepare_new_cluster
from karmada.clusters.taints import readiness_taints, taints_message
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError, ResourceMapper
from karmada.kube.controller import Controller
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.objects import apply_object, resource_of
from karmada.kube.resources import (
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    CLUSTERS,
    LEASES,
    NAMESPACES,
    ROLE_BINDINGS,
    ROLES,
    WORKS,
)
from karmada.registration.access import ROLE_REF_CHANGED, access_drift, agent_rbac, heartbeat_lease
from karmada.registration.identity import CLUSTER_LABEL
from karmada.timestamps import now_time

log = logging.getLogger("controlplane.cluster")
Obj = dict[str, Any]
MANAGER = "karmada-controlplane"


class ClusterController:
    """Reconciles one Cluster by name."""

    def __init__(
        self,
        client: KubeClient,
        clusters: Informer,
        namespaces: Informer,
        recorder: EventRecorder,
        access: AgentAccess,
        bindings: dict[str, Informer],
        *,
        cleanup_check_interval: float = 10.0,
    ) -> None:
        self.client = client
        self.bindings = bindings
        self.clusters = clusters
        self.namespaces = namespaces
        self.recorder = recorder
        self.access = access
        self.cleanup_check_interval = cleanup_check_interval

    async def reconcile(self, name: str) -> float | None:
        cluster = self.clusters.get(name)
        if cluster is None:
            return None
        if cluster["metadata"].get("deletionTimestamp"):
            return await self._remove(cluster)
        problems = validate_cluster_name(name)
        if problems:
            # Karmada's API server would have refused it; without admission, say so and leave it alone
            message = f'invalid cluster name "{name}": {problems[0]}; delete it and use a valid name'
            await self.recorder.record(cluster, "Warning", "InvalidClusterName", message)
            return None
        await self._ensure_execution_space(cluster)
        if (cluster.get("spec") or {}).get("syncMode") == "Pull":
            await self.access.ensure(name)  # reads caches; writes only what is missing or differs
        await self._sync_spec(cluster)
        return None

    async def _sync_spec(self, cluster: Obj) -> None:
        """One update for the canonical spec, readiness taints and the finalizer."""
        now = now_time()
        # only metadata and spec are written (a PUT of the Cluster ignores its status), so
        # only they are copied: the status (API enablements, summaries) is the bulk of a Cluster
        updated = {
            **cluster,
            "metadata": copy.deepcopy(cluster["metadata"]),
            "spec": copy.deepcopy(cluster.get("spec") or {}),
        }
        spec = updated["spec"]
        finalizers = updated["metadata"].setdefault("finalizers", [])
        changed = mutate(spec, now)
        if CLUSTER_CONTROLLER_FINALIZER not in finalizers:
            changed = prepare_new_cluster(spec) or changed
            finalizers.append(CLUSTER_CONTROLLER_FINALIZER)
            changed = True
        taints = readiness_taints(spec.get("taints") or [], condition_status(cluster, "Ready"), now)
        if taints is not None:
            if taints:
                spec["taints"] = taints
            else:
                spec.pop("taints", None)  # Go's omitempty: no taints, no field
            changed = True
        if not changed:
            return
        stored = await self.client.update(CLUSTERS, updated)
        if taints is not None:
            message = f"Taint cluster succeed: {taints_message(taints)}."
            await self.recorder.record(stored, "Normal", "TaintClusterSucceed", message)

    async def _ensure_execution_space(self, cluster: Obj) -> None:
        name = cluster["metadata"]["name"]
        space = execution_space(name)
        if self.namespaces.get(space) is not None:
            return
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": space, "labels": {SYSTEM_LABEL: "true"}}}
        try:
            await self.client.create(NAMESPACES, body)
        except KubeError as exc:
            if not exc.already_exists:
                await self.recorder.record(cluster, "Warning", "CreateExecutionSpaceFailed", exc.message)
                raise
            return
        message = f"Created execution space({space}) for cluster({name})."
        await self.recorder.record(cluster, "Normal", "CreateExecutionSpaceSucceed", message)

    async def _remove(self, cluster: Obj) -> float | None:
        name = cluster["metadata"]["name"]
        space = execution_space(name)
        if condition_status(cluster, "Ready") != "True":
            # no agent (Pull) or unreachable member (Push) will run the execution finalizer
            await self._release_works(space)
        try:
            await self.client.delete(NAMESPACES, space)
            await self.recorder.record(
                cluster, "Normal", "RemoveExecutionSpaceSucceed", f"Removed execution space for cluster({name})."
            )
        except KubeError as exc:
            if not exc.not_found:
                await self.recorder.record(cluster, "Warning", "RemoveExecutionSpaceFailed", exc.message)
                raise
        if await self.client.get_or_none(NAMESPACES, space) is not None:
            log.info("cluster %s: waiting for execution space %s to be deleted", name, space)
            return self.cleanup_check_interval
        if await self._evict_bindings(name):
            log.info("cluster %s: bindings still list it; waiting for their updates", name)
            return None  # each binding's event that drops the cluster queues it again
        await remove_agent_access(self.client, name)
        finalizers = [f for f in cluster["metadata"].get("finalizers") or [] if f != CLUSTER_CONTROLLER_FINALIZER]
        if finalizers != (cluster["metadata"].get("finalizers") or []):
            updated = copy.deepcopy(cluster)
            updated["metadata"]["finalizers"] = finalizers
            try:
                await self.client.update(CLUSTERS, updated)
            except KubeError as exc:
                if not exc.not_found:  # already gone: a repeated event for the same removal
                    raise
        return None

    async def _release_works(self, space: str) -> None:
        try:
            works = await self.client.list(WORKS, space)
        except KubeError as exc:
            if exc.not_found:
                return
            raise
        for work in works.get("items") or []:
            finalizers = work["metadata"].get("finalizers") or []
            if EXECUTION_CONTROLLER_FINALIZER in finalizers:
                work["metadata"]["finalizers"] = [f for f in finalizers if f != EXECUTION_CONTROLLER_FINALIZER]
                await self.client.update(WORKS, work, space)

    async def _evict_bindings(self, name: str) -> bool:
        """Take the cluster out of every binding that still lists it (its Works are gone with
        the execution space); True while any does (an update is on its way or failed)."""
        pending = False
        for kind, namespace, binding_name in bindings_targeting(self.bindings, name):
            binding = self.bindings[kind].get(binding_name, namespace)
            if binding is None:
                continue
            pending = True
            spec = binding.get("spec") or {}
            if binding["metadata"].get("deletionTimestamp"):
                continue  # its own deletion takes it out
            updated = {
                **binding,
                "spec": {**spec, "clusters": [t for t in spec.get("clusters") or [] if t.get("name") != name]},
            }
            try:
                stored = await self.client.update(RESOURCES[kind], updated, namespace or None)
            except KubeError as exc:
                if exc.not_found:
                    continue
                await record_eviction(self.recorder, with_kind(binding, RESOURCES[kind]), name, failed=True)
                raise  # a conflict: retried with the newer version the cache then holds
            self.bindings[kind].store(stored)
            log.info("cluster %s: removed from %s %s", name, kind, f"{namespace}/{binding_name}".lstrip("/"))
            await record_eviction(self.recorder, with_kind(stored, RESOURCES[kind]), name, failed=False)
        return pending


def deleting_clusters_dropped(clusters: Informer) -> Callable[[str, Obj, Obj | None], list[str]]:
    """Maps a binding's event to the deleting clusters it named before or names now: the
    cluster controller looks again when a binding stops listing a cluster being removed."""

    def names(kind: str, obj: Obj, old: Obj | None) -> list[str]:
        named = clusters_named(obj, tasks=False) | (clusters_named(old, tasks=False) if old else set())
        return sorted(n for n in named if ((clusters.get(n) or {}).get("metadata") or {}).get("deletionTimestamp"))

    return names


class AgentAccess:
    """Ensures a pull cluster's agent access, comparing with shared caches first.

    ``caches`` holds one synced cache per kind of :func:`agent_rbac`'s objects
    (Namespace, ClusterRole, ClusterRoleBinding, Role, RoleBinding); ``leases`` the
    heartbeat Leases. An object the cache lacks or holds with other labels, rules,
    subjects or roleRef is applied (a binding to another role deleted first) and
    the answer stored in the cache, so the reconcile that follows before the watch
    event compares with it rather than writing again."""

    def __init__(
        self, client: KubeClient, mapper: ResourceMapper, caches: Mapping[str, Informer], leases: Informer
    ) -> None:
        self.client = client
        self.mapper = mapper
        self.caches = caches
        self.leases = leases
        # the approver and the cluster controller ensure a new cluster at the same moment: one
        # at a time per cluster, so the second finds the first's answers in the caches
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    async def ensure(self, cluster: str) -> None:
        lock = self._locks.setdefault(cluster, asyncio.Lock())
        self._users[cluster] = self._users.get(cluster, 0) + 1
        try:
            async with lock:
                await self._ensure(cluster)
        finally:
            self._users[cluster] -= 1
            if not self._users[cluster]:
                del self._users[cluster], self._locks[cluster]

    async def _ensure(self, cluster: str) -> None:
        for obj in agent_rbac(cluster):
            await self._converge(cluster, obj)
        lease = heartbeat_lease(cluster)
        namespace = lease["metadata"]["namespace"]
        if self.leases.get(cluster, namespace) is not None:
            return  # the agent owns its contents once it exists
        try:
            self.leases.store(await self.client.create(LEASES, lease, namespace))
        except KubeError as exc:
            if not exc.already_exists:  # one that exists was not in the cache yet: the agent's
                raise

    async def _converge(self, cluster: str, obj: Obj) -> None:
        cache = self.caches[obj["kind"]]
        meta = obj["metadata"]
        drift = access_drift(obj, cache.get(meta["name"], meta.get("namespace", "")))
        if drift is None:
            return
        log.info("agent access of cluster %s: %s %s %s; applying", cluster, obj["kind"], _where(meta), drift)
        if drift == ROLE_REF_CHANGED:
            resource = await resource_of(self.mapper, obj)
            await _delete_quietly(self.client, resource, meta["name"], meta.get("namespace"))
        cache.store(await apply_object(self.client, self.mapper, obj, MANAGER))


def _where(meta: Obj) -> str:
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else str(meta["name"])


_shared: WeakKeyDictionary[InformerFactory, AgentAccess] = WeakKeyDictionary()


def agent_access(context: Context) -> AgentAccess:
    """The agent access of a control plane, on its shared caches (asked for while set up);
    one per set of caches, shared by the cluster controller and the agent approver."""
    informers = context.informers
    found = _shared.get(informers)
    if found is not None:
        return found
    # selected by the cluster label: only agents' roles and bindings, not every role of the control plane
    rbac = {
        kind: informers.informer(resource, label_selector=CLUSTER_LABEL)
        for kind, resource in (
            ("ClusterRole", CLUSTER_ROLES),
            ("ClusterRoleBinding", CLUSTER_ROLE_BINDINGS),
            ("Role", ROLES),
            ("RoleBinding", ROLE_BINDINGS),
        )
    }
    namespaces = informers.informer(NAMESPACES, label_selector=f"{SYSTEM_LABEL}=true")
    leases = informers.informer(LEASES, namespace=NAMESPACE_KARMADA_CLUSTER)
    found = _shared[informers] = AgentAccess(context.client, context.mapper, {"Namespace": namespaces, **rbac}, leases)
    return found


def access_drifted(kind: str) -> Callable[[str, Obj, Obj | None], list[str]]:
    """Maps an event of the ``kind`` cache to the cluster whose agent the object belongs to
    (by its label, before or after), when the object is gone or no longer what that
    cluster's access wants: the events of the control plane's own writes, and a start's
    initial list, queue nothing."""

    def clusters(event: str, obj: Obj, old: Obj | None) -> list[str]:
        names = {((o.get("metadata") or {}).get("labels") or {}).get(CLUSTER_LABEL) for o in (obj, old) if o}
        return sorted(name for name in names if name and (event == "DELETED" or _drifted(name, kind, obj)))

    return clusters


def _drifted(cluster: str, kind: str, obj: Obj) -> bool:
    meta = obj.get("metadata") or {}
    key = (kind, meta.get("name"), meta.get("namespace", ""))
    for desired in agent_rbac(cluster):
        if (desired["kind"], desired["metadata"]["name"], desired["metadata"].get("namespace", "")) == key:
            return access_drift(desired, obj) is not None
    return False  # labelled for the cluster, but not one of its access objects


async def remove_agent_access(client: KubeClient, cluster: str) -> None:
    """Delete the agent's roles, bindings and Lease (found by their cluster label)."""
    selector = f"{CLUSTER_LABEL}={cluster}"
    for resource in (CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES):
        for item in (await client.list(resource, labelSelector=selector)).get("items") or []:
            await _delete_quietly(client, resource, item["metadata"]["name"], None)
    for resource in (ROLE_BINDINGS, ROLES, LEASES):
        for item in (await client.list(resource, labelSelector=selector)).get("items") or []:
            await _delete_quietly(client, resource, item["metadata"]["name"], item["metadata"]["namespace"])


async def _delete_quietly(client: KubeClient, resource: Any, name: str, namespace: str | None) -> None:
    try:
        await client.delete(resource, name, namespace)
    except KubeError as exc:
        if not exc.not_found:
            raise


def setup(context: Context) -> list[Controller[str]]:
    """The cluster controller and the pull clusters' health monitor."""
    informers, options = context.informers, context.options
    clusters = informers.informer(CLUSTERS)
    namespaces = informers.informer(NAMESPACES, label_selector=f"{SYSTEM_LABEL}=true")
    leases = informers.informer(LEASES, namespace=NAMESPACE_KARMADA_CLUSTER)
    access = agent_access(context)
    bindings = {RB: informers.informer(RESOURCES[RB]), CRB: informers.informer(RESOURCES[CRB])}
    controller = ClusterController(
        context.client,
        clusters,
        namespaces,
        context.recorder,
        access,
        bindings,
        cleanup_check_interval=options.cleanup_check_interval,
    )
    # Karmada's --concurrent-cluster-syncs: each reconcile waits on several API calls, and a
    # thousand clusters accepted one at a time take minutes
    reconciler: Controller[str] = Controller(
        "cluster", controller.reconcile, workers=max(1, options.concurrent_cluster_syncs)
    )
    reconciler.watches(clusters, lambda kind, obj, old: [obj["metadata"]["name"]])

    def owner_of_deleted_namespace(kind: str, obj: Obj, old: Obj | None) -> list[str]:
        owner = cluster_of_execution_space(obj["metadata"]["name"])
        return [owner] if owner is not None and kind == "DELETED" else []

    reconciler.watches(namespaces, owner_of_deleted_namespace)
    for cache in bindings.values():
        reconciler.watches(cache, deleting_clusters_dropped(clusters))
    for kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"):
        reconciler.watches(access.caches[kind], access_drifted(kind))  # a changed or deleted grant is put back
    monitor = HealthMonitor(
        context.client,
        clusters,
        leases,
        monitor_period=options.cluster_monitor_period,
        grace_period=options.cluster_monitor_grace_period,
        startup_grace_period=options.cluster_startup_grace_period,
    )
    context.background.append(("cluster-health-monitor", monitor.run))
    return [reconciler]
