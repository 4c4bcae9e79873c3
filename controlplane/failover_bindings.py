"""What the failover controllers share about bindings: their keys, the
template an event also goes to, the ``Failover`` condition write and the
eviction events (Karmada's ``EmitClusterEvictionEventFor(Cluster)ResourceBinding``).

Keys are ``(kind, namespace, name)`` with kind ``ResourceBinding`` or
``ClusterResourceBinding`` (namespace "" for the latter), so one queue serves both.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from karmada.failover import CONDITION_FAILOVER, failover_condition_changes
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError, Resource
from karmada.kube.indexer import Index, shared_index
from karmada.kube.resources import CLUSTER_RESOURCE_BINDINGS, RESOURCE_BINDINGS
from karmada.timestamps import now_time

log = logging.getLogger("controlplane.failover")
Obj = dict[str, Any]
Key = tuple[str, str, str]
RB, CRB = "ResourceBinding", "ClusterResourceBinding"
RESOURCES = {RB: RESOURCE_BINDINGS, CRB: CLUSTER_RESOURCE_BINDINGS}
WRITE_ATTEMPTS = 3


def key_of(kind: str, obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    return (kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def with_kind(obj: Obj, resource: Resource) -> Obj:
    return {**obj, "apiVersion": resource.api_version, "kind": resource.kind}


def describe(key: Key) -> str:
    kind, namespace, name = key
    return f"{kind}({namespace}/{name})" if namespace else f"{kind}({name})"


def template_ref(binding: Obj) -> Obj:
    """The template as an object an event can point at."""
    resource = (binding.get("spec") or {}).get("resource") or {}
    meta = {"name": resource.get("name", ""), "uid": resource.get("uid", "")}
    if resource.get("namespace"):
        meta["namespace"] = resource["namespace"]
    return {"apiVersion": resource.get("apiVersion", ""), "kind": resource.get("kind", ""), "metadata": meta}


async def record_both(recorder: EventRecorder, binding: Obj, event_type: str, reason: str, message: str) -> None:
    """The event on the binding and on its template (where ``kubectl describe`` shows it)."""
    await recorder.record(binding, event_type, reason, message)
    await recorder.record(template_ref(binding), event_type, reason, message)


async def record_eviction(recorder: EventRecorder, binding: Obj, cluster: str, failed: bool) -> None:
    if failed:
        await record_both(
            recorder, binding, "Warning", "EvictWorkloadFromClusterFailed", f"Evict from cluster {cluster} failed."
        )
    else:
        await record_both(
            recorder, binding, "Normal", "EvictWorkloadFromClusterSucceed", f"Evict from cluster {cluster} succeed."
        )


BY_CLUSTER = "cluster"


def clusters_named(obj: Obj, *, tasks: bool = True) -> set[str]:
    """The clusters a binding names in ``spec.clusters`` and, with ``tasks``, its eviction tasks."""
    spec = obj.get("spec") or {}
    names = {str(c["name"]) for c in spec.get("clusters") or [] if c.get("name")}
    if tasks:
        names.update(str(t["fromCluster"]) for t in spec.get("gracefulEvictionTasks") or [] if t.get("fromCluster"))
    return names


def by_cluster(cache: Informer) -> Index:
    """The shared index of a binding cache by the clusters each binding names (Karmada's
    ``spec.clusters`` field index, with the eviction tasks' clusters too)."""
    return shared_index(cache, BY_CLUSTER, clusters_named)


def bindings_targeting(caches: dict[str, Informer], cluster: str, *, tasks: bool = False) -> list[Key]:
    """Keys of the bindings whose ``spec.clusters`` (or, with ``tasks``, eviction tasks) name
    ``cluster``, from the by-cluster index: what the cluster concerns, not a walk of all bindings."""
    return [
        key_of(kind, obj)
        for kind, cache in caches.items()
        for obj in by_cluster(cache).get(cluster)
        if cluster in clusters_named(obj, tasks=tasks)
    ]


async def set_failover_condition(
    client: KubeClient,
    cache: Informer,
    key: Key,
    binding: Obj,
    wanted: tuple[str, str, str] | None,
    *,
    clear_reasons: Sequence[str] = (),
    kind: str = CONDITION_FAILOVER,
) -> Obj:
    """Write the binding's Failover (or ``kind``) condition when it changes: read-modify-write with
    the binding's resourceVersion, again from a fresh read after a conflict (other
    controllers write the binding's status too)."""
    binding_kind, namespace, name = key
    resource = RESOURCES[binding_kind]
    for attempt in range(WRITE_ATTEMPTS):
        new = failover_condition_changes(
            binding.get("status") or {}, wanted, now_time(), clear_reasons=clear_reasons, kind=kind
        )
        if new is None:
            return binding
        body = {**with_kind(binding, resource), "status": new}
        try:
            stored = await client.update(resource, body, namespace or None, subresource="status")
        except KubeError as exc:
            if exc.not_found:
                return binding
            if not exc.conflict or attempt == WRITE_ATTEMPTS - 1:
                raise
            latest = await client.get_or_none(resource, name, namespace or None)
            if latest is None:
                return binding
            binding = with_kind(latest, resource)
            continue
        cache.store(stored)
        return with_kind(stored, resource)
    return binding


def watch_bindings(
    caches: dict[str, Informer], add: Callable[[Key], None], wanted: Callable[[str, Obj, Obj | None], bool]
) -> None:
    """Enqueue bindings of both kinds whose events pass ``wanted``."""
    for kind, cache in caches.items():

        def handler(event: str, obj: Obj, old: Obj | None, kind: str = kind) -> None:
            if wanted(event, obj, old):
                add(key_of(kind, obj))

        cache.add_handler(handler)
