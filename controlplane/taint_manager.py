"""The taint manager (Karmada's ``taint-manager``, part of the cluster
controller): bindings leave clusters with NoExecute taints they do not
tolerate, once their ``tolerationSeconds`` from the taint's ``timeAdded`` ran out.

Runs only with the ``Failover`` feature gate and ``--enable-taint-manager``
(true), and evicts only with ``--enable-no-execute-taint-eviction`` (false by
default in Karmada: an administrator turns it on). Keyed by binding (RB and
CRB in one queue, one worker: evictions are serialised and paced). A binding
is reconciled when its spec or annotations change, and every binding
targeting a Cluster when that Cluster's taints or Ready condition change (found by
the shared by-cluster index of the binding caches, not a walk of all bindings).

One reconcile walks the binding's ``spec.clusters``; tolerations come from the
``policy.karmada.io/applied-placement`` annotation (missing: an error,
retried; never an eviction without it). A due eviction is
``GracefulEvictCluster`` (:func:`karmada.failover.evict_cluster`): the cluster
leaves ``spec.clusters`` and a task ``{fromCluster, replicas, purgeMode,
reason: TaintUntolerated, producer: TaintManager}`` is appended, purge mode
from ``failover.cluster.purgeMode`` else ``--no-execute-taint-eviction-purge-mode``;
with ``StatefulFailoverInjection`` the cluster's ``statePreservation`` labels
are extracted into the task. Evictions are paced as Karmada's eviction workers
pace them (:mod:`karmada.failover.pacing`): per binding kind, three workers
each waiting ``1/--resource-eviction-rate`` seconds (0: 1800 s) after an
eviction, so at most ``3 * rate`` evictions a second per kind.

Beyond Karmada: before evicting, the scheduler's pure core is run on the
binding as it would be; if no other cluster would take the workload it stays,
with the condition ``Failover=False NoClusterFit`` saying why (looked at again
every 10 s and on any Cluster change). A target cluster that is not Ready but
carries no NoExecute taint is never evicted from; the binding says so
(``Failover=False ClusterNotTainted``). Either hold is removed by the first
reconcile that finds its reason gone (taint removed or tolerated, cluster
Ready or no longer targeted); an eviction in its place writes ``Evicted``.

Knowingly different from Karmada: keys are bindings, not (cluster, binding)
pairs, so one binding's evictions from several clusters are serialised; a
binding tolerating a taint for some seconds is looked at again when they run
out, not also every 10 s; only an eviction about to be written waits for a
worker's slot (Karmada paces every item it processes, held ones included).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from controlplane.context import Context
from controlplane.failover_bindings import (
    CRB,
    RB,
    RESOURCES,
    Key,
    bindings_targeting,
    by_cluster,
    describe,
    record_both,
    record_eviction,
    set_failover_condition,
    watch_bindings,
    with_kind,
)
from karmada.api.binding import EVICTION_PRODUCER_TAINT_MANAGER, EVICTION_REASON_TAINT_UNTOLERATED
from karmada.api.core import Toleration
from karmada.api.errors import APIValidationError
from karmada.api.keys import APPLIED_PLACEMENT_ANNOTATION
from karmada.api.policy import FailoverBehavior
from karmada.clusters.conditions import condition_status, find
from karmada.failover import (
    REASON_CLUSTER_NOT_TAINTED,
    REASON_EVICTED,
    REASON_NO_CLUSTER_FIT,
    TAINT_MANAGER_HOLDS,
    EvictionTask,
    StateError,
    evict_cluster,
    eviction_delay,
    no_execute_taints,
    preserved_label_state,
    purge_mode_for_cluster_failover,
    replacement_problem,
)
from karmada.failover.pacing import EvictionPacer
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError
from karmada.kube.controller import Controller
from karmada.kube.resources import CLUSTERS
from karmada.timestamps import utcnow

log = logging.getLogger("controlplane.taintmanager")
Obj = dict[str, Any]
RETRY_FREQUENCY = 10.0  # Karmada's ClusterTaintEvictionRetryFrequency


class MissingPlacement(ValueError):
    """The binding has no applied placement to read tolerations from."""


def tolerations_of(binding: Obj) -> list[Toleration]:
    raw = ((binding.get("metadata") or {}).get("annotations") or {}).get(APPLIED_PLACEMENT_ANNOTATION)
    if not raw:
        raise MissingPlacement("the applied placement for ResourceBinding can not be empty")
    try:
        placement = json.loads(raw)
    except ValueError as exc:
        raise MissingPlacement(f"annotation {APPLIED_PLACEMENT_ANNOTATION} is not JSON: {exc}") from None
    return [
        Toleration.from_dict(t, path="clusterTolerations") for t in (placement or {}).get("clusterTolerations") or []
    ]


class TaintManager:
    def __init__(
        self,
        client: KubeClient,
        clusters: Informer,
        caches: dict[str, Informer],
        recorder: EventRecorder,
        *,
        evict: bool,
        purge_mode: str,
        rate: float,
        stateful_injection: bool,
    ) -> None:
        self.client = client
        self.clusters = clusters
        self.caches = caches
        self.recorder = recorder
        self.evict = evict
        self.purge_mode = purge_mode
        # one pacer per binding kind: Karmada has one eviction queue (3 workers) for each
        self.pacers = {kind: EvictionPacer(rate) for kind in caches}
        self.stateful_injection = stateful_injection

    async def reconcile(self, key: Key) -> float | None:
        kind, namespace, name = key
        binding = self.caches[kind].get(name, namespace)
        if binding is None or binding["metadata"].get("deletionTimestamp"):
            return None
        binding = with_kind(binding, RESOURCES[kind])
        spec = binding.get("spec") or {}
        now = utcnow()
        due: list[str] = []
        silent: list[str] = []
        next_check: float | None = None
        for target in spec.get("clusters") or []:
            cluster = self.clusters.get(str(target.get("name")))
            if cluster is None:
                continue
            taints = no_execute_taints(cluster)
            if not taints:
                if condition_status(cluster, "Ready") != "True":
                    silent.append(cluster["metadata"]["name"])
                continue
            if not self.evict:
                continue
            try:
                delay = eviction_delay(taints, tolerations_of(binding), now)
            except (MissingPlacement, APIValidationError) as exc:
                log.warning("%s: not judged for eviction: %s", describe(key), exc)
                raise
            if delay == 0:
                due.append(cluster["metadata"]["name"])
            elif delay is not None:
                next_check = delay if next_check is None else min(next_check, delay)
        if due:
            again = await self._evict(key, binding, due[0])
            if again is None and len(due) > 1:
                return 0.01  # the next cluster, right away (its own slot)
            return again
        await self._say_not_tainted(key, binding, silent)
        return next_check

    async def _say_not_tainted(self, key: Key, binding: Obj, silent: list[str]) -> None:
        if not silent:
            await set_failover_condition(
                self.client, self.caches[key[0]], key, binding, None, clear_reasons=TAINT_MANAGER_HOLDS
            )
            return
        parts = []
        for name in silent:
            ready = find(((self.clusters.get(name) or {}).get("status") or {}).get("conditions"), "Ready") or {}
            parts.append(f"{name} is Ready={ready.get('status', 'Unknown')}")
        if self.evict:
            how = (
                f"A ClusterTaintPolicy or 'kubectl karmada taint clusters {silent[0]} <key>=<value>:NoExecute' "
                "moves the workload."
            )
        else:
            how = "NoExecute taints evict nothing either: --enable-no-execute-taint-eviction is false."
        message = f"Cluster {', '.join(parts)} without a NoExecute taint; nothing is evicted. {how}"
        await set_failover_condition(
            self.client, self.caches[key[0]], key, binding, ("False", REASON_CLUSTER_NOT_TAINTED, message)
        )

    async def _evict(self, key: Key, binding: Obj, cluster: str) -> float | None:
        kind, namespace, _ = key
        spec = binding.get("spec") or {}
        failover = FailoverBehavior.from_dict(spec["failover"], path="spec.failover") if spec.get("failover") else None
        purge = purge_mode_for_cluster_failover(failover, self.purge_mode)
        state = None
        if self.stateful_injection and failover is not None and failover.cluster is not None:
            status = next(
                (
                    s.get("status")
                    for s in (binding.get("status") or {}).get("aggregatedStatus") or []
                    if s.get("clusterName") == cluster
                ),
                None,
            )
            try:
                state = preserved_label_state(failover.cluster.state_preservation, status)
            except StateError as exc:
                log.warning("%s: state of cluster %s not preserved: %s", describe(key), cluster, exc)
                raise
        task = EvictionTask(
            purge_mode=purge,
            reason=EVICTION_REASON_TAINT_UNTOLERATED,
            producer=EVICTION_PRODUCER_TAINT_MANAGER,
            preserved_label_state=state,
        )
        new_spec = evict_cluster(spec, cluster, task)
        if new_spec is None:
            return None
        problem = replacement_problem(
            new_spec, binding.get("status"), [with_kind(c, CLUSTERS) for c in self.clusters.items()]
        )
        if problem is not None:
            message = (
                f"Cluster {cluster} has a NoExecute taint the workload does not tolerate, but no other cluster "
                f"fits ({problem}); the workload stays in {cluster}."
            )
            before = binding
            stored = await set_failover_condition(
                self.client, self.caches[kind], key, binding, ("False", REASON_NO_CLUSTER_FIT, message)
            )
            if stored is not before:
                log.warning("%s: %s", describe(key), message)
                await record_both(self.recorder, stored, "Warning", "EvictWorkloadFromClusterFailed", message)
            return RETRY_FREQUENCY
        # only an eviction about to be written takes a worker's slot (a hold writes nothing)
        wait = self.pacers[kind].claim(time.monotonic())
        if wait > 0:
            return wait
        updated = {**binding, "spec": new_spec}
        try:
            stored = await self.client.update(RESOURCES[kind], updated, namespace or None)
        except KubeError as exc:
            if not exc.not_found:
                await record_eviction(self.recorder, binding, cluster, failed=True)
            raise
        stored = with_kind(stored, RESOURCES[kind])
        self.caches[kind].store(stored)
        log.info("%s: evicted from cluster %s (TaintUntolerated, purgeMode %s)", describe(key), cluster, purge)
        await record_eviction(self.recorder, stored, cluster, failed=False)
        how = {
            "Directly": "its Works there are deleted before the workload starts elsewhere",
            "Gracefully": "the old copy stays until the new placement is healthy or the grace period ends",
        }.get(purge, "the old copy stays until its eviction task is removed")
        reason = "NoExecute taint not tolerated (TaintUntolerated)"
        message = f"Evicted from cluster {cluster}: {reason}; purgeMode {purge}: {how}."
        await set_failover_condition(self.client, self.caches[kind], key, stored, ("True", REASON_EVICTED, message))
        return None


def _cluster_moved(kind: str, obj: Obj, old: Obj | None) -> bool:
    if kind == "DELETED":
        return False
    if old is None or old is obj:
        return True
    return (obj.get("spec") or {}).get("taints") != (old.get("spec") or {}).get("taints") or condition_status(
        obj, "Ready"
    ) != condition_status(old, "Ready")


def _binding_moved(kind: str, obj: Obj, old: Obj | None) -> bool:
    if kind == "DELETED":
        return False
    if old is None or old is obj:
        return True
    meta, old_meta = obj.get("metadata") or {}, old.get("metadata") or {}
    return meta.get("generation") != old_meta.get("generation") or meta.get("annotations") != old_meta.get(
        "annotations"
    )


def setup(context: Context) -> list[Controller[Key]]:
    """Only with ``--enable-taint-manager`` and the Failover gate (Karmada's setupClusterController)."""
    options = context.options
    if not (options.enable_taint_manager and options.feature_enabled("Failover")):
        log.info("taint manager not started: it needs --enable-taint-manager and the Failover feature gate")
        return []
    clusters = context.informers.informer(CLUSTERS)
    caches = {RB: context.informers.informer(RESOURCES[RB]), CRB: context.informers.informer(RESOURCES[CRB])}
    for cache in caches.values():
        by_cluster(cache)  # attached before the caches list, so they index as they fill
    manager = TaintManager(
        context.client,
        clusters,
        caches,
        context.recorder,
        evict=options.enable_no_execute_taint_eviction,
        purge_mode=options.no_execute_taint_eviction_purge_mode,
        rate=options.resource_eviction_rate,
        stateful_injection=options.feature_enabled("StatefulFailoverInjection"),
    )
    reconciler: Controller[Key] = Controller("taint-manager", manager.reconcile)

    def cluster_keys(kind: str, obj: Obj, old: Obj | None) -> list[Key]:
        return bindings_targeting(caches, obj["metadata"]["name"]) if _cluster_moved(kind, obj, old) else []

    reconciler.watches(clusters, cluster_keys)
    watch_bindings(caches, reconciler.enqueue, _binding_moved)
    return [reconciler]
