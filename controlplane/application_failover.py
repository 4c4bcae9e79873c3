"""The application failover controller (Karmada's ``applicationFailover``:
``resource-binding-application-failover-controller`` and its cluster-scoped twin).

Keyed by binding (RB and CRB in one queue), fed by bindings with
``failover.application`` (their status changes bring the health). A binding
is judged only when it has aggregated status, its kind has a health
interpretation, and ``propagateDeps`` is true (so dependencies move along),
as in Karmada. The time each cluster was first seen Unhealthy is kept in
memory (a restart starts the clocks afresh, as Karmada's controller does);
once a cluster stayed Unhealthy beyond ``decisionConditions.tolerationSeconds``
it is evicted (:func:`karmada.failover.evict_cluster`) with reason
``ApplicationFailure``, the policy's ``purgeMode`` (Gracefully with its
``gracePeriodSeconds``, which needs the GracefulEviction gate; Directly;
Never: ``suppressDeletion: true``), and, with ``StatefulFailoverInjection``,
the ``statePreservation`` labels and ``clustersBeforeFailover``.

Beyond Karmada: no eviction when no other cluster would take the workload
(the binding says so with ``Failover=False UnhealthyNoClusterFit``; Karmada would leave
it with no target, karmada-io/karmada#7455).
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

from controlplane.context import Context
from controlplane.failover_bindings import (
    CRB,
    RB,
    RESOURCES,
    Key,
    describe,
    record_both,
    record_eviction,
    set_failover_condition,
    watch_bindings,
    with_kind,
)
from controlplane.interpreter import interpreter_for
from karmada.api.binding import EVICTION_REASON_APPLICATION_FAILURE
from karmada.api.policy import ApplicationFailoverBehavior
from karmada.failover import (
    APPLICATION_FAILOVER_HOLDS,
    REASON_EVICTED,
    REASON_UNHEALTHY_NO_CLUSTER_FIT,
    EvictionTask,
    detect_failures,
    evict_cluster,
    preserved_label_state,
    replacement_problem,
    unhealthy_clusters,
)
from karmada.failover.application import forget
from karmada.interpreter import NativeInterpreter
from karmada.interpreter.customized import CustomizedInterpreter
from karmada.interpreter.native import Operation
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError
from karmada.kube.controller import Controller
from karmada.kube.resources import CLUSTERS
from karmada.timestamps import utcnow

log = logging.getLogger("controlplane.applicationfailover")
Obj = dict[str, Any]
NO_FIT_RETRY = 10.0
PRODUCERS = {
    RB: "resource-binding-application-failover-controller",
    CRB: "cluster-resource-binding-application-failover-controller",
}


class ApplicationFailoverController:
    def __init__(
        self,
        client: KubeClient,
        clusters: Informer,
        caches: dict[str, Informer],
        recorder: EventRecorder,
        *,
        graceful_eviction: bool,
        stateful_injection: bool,
    ) -> None:
        self.client = client
        self.clusters = clusters
        self.caches = caches
        self.recorder = recorder
        self.graceful_eviction = graceful_eviction
        self.stateful_injection = stateful_injection
        self.interpreter: NativeInterpreter | CustomizedInterpreter = NativeInterpreter()
        self.unhealthy: dict[Key, dict[str, datetime.datetime]] = {}

    def _judged(self, binding: Obj) -> bool:
        spec = binding.get("spec") or {}
        if not ((spec.get("failover") or {}).get("application")):
            return False
        if not (binding.get("status") or {}).get("aggregatedStatus"):
            return False
        resource = spec.get("resource") or {}
        if not self.interpreter.hook_enabled(
            str(resource.get("apiVersion", "")), str(resource.get("kind", "")), Operation.INTERPRET_HEALTH
        ):
            return False
        return bool(spec.get("propagateDeps"))

    async def reconcile(self, key: Key) -> float | None:
        kind, namespace, name = key
        binding = self.caches[kind].get(name, namespace)
        if binding is None or binding["metadata"].get("deletionTimestamp"):
            self.unhealthy.pop(key, None)
            return None
        binding = with_kind(binding, RESOURCES[kind])
        if not self._judged(binding):
            # no longer judged (failover.application or propagateDeps gone): a hold said earlier no longer applies
            self.unhealthy.pop(key, None)
            await set_failover_condition(
                self.client, self.caches[kind], key, binding, None, clear_reasons=APPLICATION_FAILOVER_HOLDS
            )
            return None
        spec = binding.get("spec") or {}
        behavior = ApplicationFailoverBehavior.from_dict(
            spec["failover"]["application"], path="spec.failover.application"
        )
        statuses = (binding.get("status") or {}).get("aggregatedStatus") or []
        since = self.unhealthy.setdefault(key, {})
        unhealthy, others = unhealthy_clusters(spec, statuses)
        now = utcnow()
        wait, evict = detect_failures(since, unhealthy, behavior.decision_conditions.toleration_seconds, now)
        if not unhealthy:
            # recovered in place: a hold said earlier no longer applies
            await set_failover_condition(
                self.client, self.caches[kind], key, binding, None, clear_reasons=APPLICATION_FAILOVER_HOLDS
            )
        if evict:
            again = await self._evict(key, binding, behavior, evict[0])
            if again is not None:
                return again
            evict_done = {evict[0]}
        else:
            evict_done = set()
        targeted = {str(c.get("name")) for c in spec.get("clusters") or []} - evict_done
        forget(since, targeted, others)
        if len(evict) > 1:
            return 0.01
        return wait if wait > 0 else None

    def _task(self, behavior: ApplicationFailoverBehavior, binding: Obj, cluster: str, kind: str) -> EvictionTask:
        spec = binding.get("spec") or {}
        state = None
        before = None
        if self.stateful_injection and behavior.state_preservation is not None:
            status = next(
                (
                    s.get("status")
                    for s in (binding.get("status") or {}).get("aggregatedStatus") or []
                    if s.get("clusterName") == cluster
                ),
                None,
            )
            state = preserved_label_state(behavior.state_preservation, status)
            if state:
                before = [str(c.get("name")) for c in spec.get("clusters") or []]
        grace = None
        suppress = None
        if behavior.purge_mode == "Gracefully":
            if not self.graceful_eviction:
                raise ValueError("GracefulEviction featureGate must be enabled when purgeMode is Gracefully")
            grace = behavior.grace_period_seconds
        elif behavior.purge_mode == "Never":
            suppress = True
        return EvictionTask(
            purge_mode=behavior.purge_mode,
            reason=EVICTION_REASON_APPLICATION_FAILURE,
            producer=PRODUCERS[kind],
            grace_period_seconds=grace,
            suppress_deletion=suppress,
            preserved_label_state=state,
            clusters_before_failover=before,
        )

    async def _evict(self, key: Key, binding: Obj, behavior: ApplicationFailoverBehavior, cluster: str) -> float | None:
        kind, namespace, _ = key
        task = self._task(behavior, binding, cluster, kind)
        new_spec = evict_cluster(binding.get("spec") or {}, cluster, task)
        if new_spec is None:
            return None
        clusters = [with_kind(c, CLUSTERS) for c in self.clusters.items()]
        problem = replacement_problem(new_spec, binding.get("status"), clusters)
        if problem is not None:
            message = (
                f"The workload is unhealthy in cluster {cluster} beyond its toleration, but no other cluster "
                f"fits ({problem}); it stays in {cluster}."
            )
            stored = await set_failover_condition(
                self.client, self.caches[kind], key, binding, ("False", REASON_UNHEALTHY_NO_CLUSTER_FIT, message)
            )
            if stored is not binding:
                log.warning("%s: %s", describe(key), message)
                await record_both(self.recorder, stored, "Warning", "EvictWorkloadFromClusterFailed", message)
            return NO_FIT_RETRY
        try:
            stored = await self.client.update(RESOURCES[kind], {**binding, "spec": new_spec}, namespace or None)
        except KubeError as exc:
            if not exc.not_found:
                await record_eviction(self.recorder, binding, cluster, failed=True)
            raise
        stored = with_kind(stored, RESOURCES[kind])
        self.caches[kind].store(stored)
        log.info(
            "%s: evicted from cluster %s (ApplicationFailure, purgeMode %s)", describe(key), cluster, task.purge_mode
        )
        await record_eviction(self.recorder, stored, cluster, failed=False)
        seconds = behavior.decision_conditions.toleration_seconds
        message = (
            f"Evicted from cluster {cluster}: the workload stayed unhealthy there for more than {seconds}s "
            f"(ApplicationFailure); purgeMode {task.purge_mode}."
        )
        await set_failover_condition(self.client, self.caches[kind], key, stored, ("True", REASON_EVICTED, message))
        return None


def _application_failover(kind: str, obj: Obj, old: Obj | None) -> bool:
    def wants(o: Obj | None) -> bool:
        return bool(o and ((o.get("spec") or {}).get("failover") or {}).get("application"))

    return wants(obj) or wants(old)


def setup(context: Context) -> list[Controller[Key]]:
    options = context.options
    clusters = context.informers.informer(CLUSTERS)
    caches = {RB: context.informers.informer(RESOURCES[RB]), CRB: context.informers.informer(RESOURCES[CRB])}
    controller = ApplicationFailoverController(
        context.client,
        clusters,
        caches,
        context.recorder,
        graceful_eviction=options.feature_enabled("GracefulEviction"),
        stateful_injection=options.feature_enabled("StatefulFailoverInjection"),
    )
    # a kind whose health a customization interprets is judged by that customization too
    controller.interpreter = interpreter_for(context.informers)
    reconciler: Controller[Key] = Controller("application-failover", controller.reconcile)
    watch_bindings(caches, reconciler.enqueue, _application_failover)
    return [reconciler]
