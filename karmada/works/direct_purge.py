"""``purgeMode: Directly``: the order the binding controller keeps and the events
that show it (Karmada has none for this; it only logs that it skips syncing).

While a cluster of a ``Directly`` eviction task still has a Work of the
binding, no Work is written; the agent removes that Work only once its member
objects are confirmed gone (:mod:`karmada.members.execution`). The binding and
its template get, in this order, each with the time to the microsecond (Events'
own timestamps are whole seconds):

- ``PurgeWorkloadFromClusterPending`` when the controller first finds it must
  wait for a cluster;
- ``PurgeWorkloadFromClusterSucceed`` when that cluster's Work is gone (the old
  copy confirmed deleted);
- ``CreateWorkSucceed`` for each Work created while the binding still carries
  a ``Directly`` task: the new copy, created after the purge.

Pure bookkeeping: the controller passes what it saw, in memory, per binding.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass

EVENT_PURGE_PENDING = "PurgeWorkloadFromClusterPending"
EVENT_PURGE_SUCCEED = "PurgeWorkloadFromClusterSucceed"
EVENT_CREATE_WORK_SUCCEED = "CreateWorkSucceed"


@dataclass(frozen=True)
class PurgeProgress:
    waiting: frozenset[str]  # Directly clusters whose Work remains: sync nothing
    started: frozenset[str]  # of those, the ones not seen waiting before (a Pending event each)
    confirmed: frozenset[str]  # seen waiting before, their Work now gone (a Succeed event each)


def purge_progress(directly: Set[str], with_works: Iterable[str], seen_waiting: Set[str]) -> PurgeProgress:
    """Where each ``Directly`` cluster stands, from the clusters that still have a Work of the
    binding and those seen waiting in earlier reconciles. A cluster that no longer has a
    ``Directly`` task is neither waiting nor confirmed (the task went: nothing to report)."""
    waiting = frozenset(directly & set(with_works))
    return PurgeProgress(
        waiting=waiting,
        started=frozenset(waiting - seen_waiting),
        confirmed=frozenset((seen_waiting & directly) - waiting),
    )


def pending_message(binding: str, clusters: Iterable[str], when: str) -> str:
    return (
        f"There are works in clusters with PurgeMode 'Directly' not deleted for {binding} "
        f"({', '.join(sorted(clusters))}), skip syncing works until they are gone (since {when})."
    )


def purged_message(cluster: str, when: str) -> str:
    return f"Purge workload from cluster {cluster} succeed: its work and member objects are confirmed gone at {when}."


def created_message(namespace: str, name: str, cluster: str, when: str, purged: Iterable[str]) -> str:
    return (
        f"Create work {namespace}/{name} for cluster {cluster} succeed at {when}, after the workload was purged "
        f"from {', '.join(sorted(purged))} (purgeMode Directly)."
    )
