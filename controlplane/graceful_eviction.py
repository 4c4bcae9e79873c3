"""The graceful eviction controller (Karmada's ``gracefulEviction``:
``resource-binding-graceful-eviction-controller`` and its cluster-scoped twin).

Keyed by binding (RB and CRB in one queue), fed by bindings that carry
``gracefulEvictionTasks`` (added or changed). One reconcile applies the rules
of :mod:`karmada.failover.tasks`: new tasks get ``creationTimestamp``; a task
goes when the new placement is scheduled and Healthy everywhere, when its
``gracePeriodSeconds`` (else ``--graceful-eviction-timeout``, 10m) passed, or
when ``suppressDeletion`` is set to false; a task with ``suppressDeletion:
true`` stays. Dropping a task makes its Work an orphan, which the binding
controller deletes. The binding is written only when the tasks change
(optimistic lock), with ``EvictWorkloadFromClusterSucceed`` "Evict from
cluster <c> succeed." on binding and template for each task done, and looked
at again when the earliest remaining task times out.

Beyond Karmada: a task that timed out while the binding has no target cluster
stays (its Work is the only copy), and so does a timed-out ``Directly`` task
while its cluster still holds the binding's Work (found by name in the shared
Work cache), so the new copy never starts beside the old one; the binding's
``GracefulEviction`` condition says which tasks are pending and until when,
and which are held.
"""

from __future__ import annotations

import logging
from typing import Any

from controlplane.context import Context
from controlplane.failover_bindings import (
    CRB,
    RB,
    RESOURCES,
    Key,
    describe,
    record_eviction,
    set_failover_condition,
    watch_bindings,
    with_kind,
)
from karmada.api.names import execution_space, work_name
from karmada.clusters.conditions import find
from karmada.failover import REASON_EVICTION_PENDING, assess_tasks, next_retry
from karmada.failover.conditions import CONDITION_GRACEFUL_EVICTION, REASON_EVICTION_COMPLETED
from karmada.failover.tasks import deadline
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError
from karmada.kube.controller import Controller
from karmada.kube.resources import WORKS
from karmada.timestamps import format_time, utcnow

log = logging.getLogger("controlplane.gracefuleviction")
MIN_RETRY = 0.05  # a task due now is looked at again at once, not forgotten
Obj = dict[str, Any]


def pending_message(binding: Obj, timeout: float, held: list[str], purging: list[str] | None = None) -> str:
    spec = binding.get("spec") or {}
    targets = [c.get("name") for c in spec.get("clusters") or []]
    parts = []
    for task in spec.get("gracefulEvictionTasks") or []:
        cluster = task.get("fromCluster")
        if cluster in held:
            parts.append(f"{cluster} (grace period over, kept: no other cluster serves the workload)")
        elif cluster in (purging or ()):
            parts.append(f"{cluster} (grace period over, kept: purgeMode Directly, its work is not deleted yet)")
        elif task.get("suppressDeletion"):
            parts.append(f"{cluster} (suppressDeletion: kept until a user sets it to false)")
        else:
            until = deadline(task, timeout)
            when = f" until {format_time(until)} at the latest" if until else ""
            parts.append(f"{cluster} ({task.get('reason')}, purgeMode {task.get('purgeMode')}{when})")
    waiting = f"waiting for {', '.join(map(str, targets))} to be healthy" if targets else "no new placement yet"
    return f"Eviction pending from {'; '.join(parts)}; {waiting}."


class GracefulEvictionController:
    def __init__(
        self,
        client: KubeClient,
        caches: dict[str, Informer],
        recorder: EventRecorder,
        *,
        timeout: float,
        works: Informer | None = None,
    ) -> None:
        self.client = client
        self.caches = caches
        self.works = works
        self.recorder = recorder
        self.timeout = timeout

    async def reconcile(self, key: Key) -> float | None:
        kind, namespace, _ = key
        binding = self.caches[kind].get(key[2], namespace)
        if binding is None or binding["metadata"].get("deletionTimestamp"):
            return None
        binding = with_kind(binding, RESOURCES[kind])
        tasks = (binding.get("spec") or {}).get("gracefulEvictionTasks") or []
        if not tasks:
            # the last task went in an earlier reconcile whose condition write failed
            if (find((binding.get("status") or {}).get("conditions"), CONDITION_GRACEFUL_EVICTION) or {}).get(
                "reason"
            ) == REASON_EVICTION_PENDING:
                await set_failover_condition(
                    self.client,
                    self.caches[kind],
                    key,
                    binding,
                    _completed(binding, []),
                    kind=CONDITION_GRACEFUL_EVICTION,
                )
            return None
        now = utcnow()
        result = assess_tasks(binding, now, self.timeout, self._holding_works(binding))
        stored = binding
        if result.kept != tasks:
            spec = dict(binding.get("spec") or {})
            if result.kept:
                spec["gracefulEvictionTasks"] = result.kept
            else:
                spec.pop("gracefulEvictionTasks", None)
            try:
                stored = await self.client.update(RESOURCES[kind], {**binding, "spec": spec}, namespace or None)
            except KubeError as exc:
                if exc.not_found:
                    return None
                raise
            stored = with_kind(stored, RESOURCES[kind])
            self.caches[kind].store(stored)
            for cluster in result.evicted:
                log.info("%s: eviction task for cluster %s done", describe(key), cluster)
                await record_eviction(self.recorder, stored, cluster, failed=False)
        if result.kept:
            wanted = (
                "True",
                REASON_EVICTION_PENDING,
                pending_message(stored, self.timeout, result.held, result.purging),
            )
        else:
            wanted = _completed(stored, result.evicted)
        await set_failover_condition(
            self.client, self.caches[kind], key, stored, wanted, kind=CONDITION_GRACEFUL_EVICTION
        )
        # held tasks wait for a new placement (a binding change), not for a time; purging ones for the
        # new copy's status, which only comes once their Work is gone
        waiting = set(result.held) | set(result.purging)
        timed = [t for t in result.kept if t["fromCluster"] not in waiting and deadline(t, self.timeout)]
        if not timed:
            return None
        return max(next_retry(timed, self.timeout, utcnow()), MIN_RETRY)

    def _holding_works(self, binding: Obj) -> set[str]:
        """Clusters of ``Directly`` tasks that still hold the binding's Work."""
        if self.works is None:
            return set()
        resource = (binding.get("spec") or {}).get("resource") or {}
        name = work_name(
            str(resource.get("kind", "")), str(resource.get("name", "")), str(resource.get("namespace", ""))
        )
        return {
            str(t["fromCluster"])
            for t in (binding.get("spec") or {}).get("gracefulEvictionTasks") or []
            if t.get("purgeMode") == "Directly" and self.works.get(name, execution_space(str(t["fromCluster"])))
        }


def _completed(binding: Obj, evicted: list[str]) -> tuple[str, str, str]:
    targets = ", ".join(str(c.get("name")) for c in (binding.get("spec") or {}).get("clusters") or [])
    done = f"Evicted from {', '.join(evicted)}" if evicted else "Eviction completed"
    return ("True", REASON_EVICTION_COMPLETED, f"{done}; the workload runs in {targets}.")


def _has_tasks(kind: str, obj: Obj, old: Obj | None) -> bool:
    if kind == "DELETED":
        return False
    if (obj.get("spec") or {}).get("gracefulEvictionTasks"):
        return True
    # a pending condition left behind by a failed write is finished off
    condition = find((obj.get("status") or {}).get("conditions"), CONDITION_GRACEFUL_EVICTION) or {}
    return condition.get("reason") == REASON_EVICTION_PENDING


def setup(context: Context) -> list[Controller[Key]]:
    caches = {RB: context.informers.informer(RESOURCES[RB]), CRB: context.informers.informer(RESOURCES[CRB])}
    controller = GracefulEvictionController(
        context.client,
        caches,
        context.recorder,
        timeout=context.options.graceful_eviction_timeout,
        works=context.informers.informer(WORKS),
    )
    reconciler: Controller[Key] = Controller("graceful-eviction", controller.reconcile)
    watch_bindings(caches, reconciler.enqueue, _has_tasks)
    return [reconciler]
