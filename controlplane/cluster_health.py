"""The health monitor of pull clusters (Karmada's cluster controller monitor).

For each cluster it keeps, in memory, the last Ready condition and heartbeat
Lease renewTime it saw and when either last changed (the probe time, on
the control plane's monotonic clock: neither the agent's clock nor this host's
may be trusted not to jump). When
neither moved for the grace period (the startup grace period while the agent
has never posted Ready, counted from creation) a pull cluster gets
Ready=Unknown: ``ClusterStatusUnknown`` "Cluster status controller stopped
posting cluster status.", or ``ClusterStatusNeverUpdated`` when there was no
Ready condition. The cluster controller then swaps the taints. A
control-plane restart starts every probe time afresh, so clusters get one
full grace period before being judged.

Cost: Karmada walks every Cluster and reads every Lease each monitor period.
Here the Cluster and Lease informers' handlers feed a :class:`ProbeTracker`
(on the informer tasks; O(1) per event, and nothing for an event that moves
neither the Ready condition nor the renewTime), which keeps each cluster's
deadline in a heap. Every ``monitor_period`` the monitor's own task pops only
the deadlines that passed; a cluster whose probe moved meanwhile is pushed
back with its new deadline. So a fleet whose agents all renew costs about one
heap operation per cluster per grace period, and no scan of all clusters.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import heapq
import logging
from dataclasses import dataclass
from typing import Any

from karmada.clusters.conditions import find
from karmada.kube import Informer, KubeClient, KubeError
from karmada.kube.resources import CLUSTERS
from karmada.steady_clock import SteadyClock
from karmada.timestamps import format_time, parse_time, utcnow

log = logging.getLogger("controlplane.health")
Obj = dict[str, Any]


@dataclass
class _Health:
    ready: Obj | None
    renew_time: datetime.datetime | None
    probe: datetime.datetime
    pull: bool
    queued: datetime.datetime | None = None  # the deadline this cluster has in the heap


class ProbeTracker:
    """Probe times and deadlines of clusters, from what their Cluster and Lease say.

    Pure bookkeeping: every method takes the current time, none does I/O.
    """

    def __init__(self, grace_period: datetime.timedelta, startup_grace_period: datetime.timedelta) -> None:
        self.grace_period = grace_period
        self.startup_grace_period = startup_grace_period
        self._health: dict[str, _Health] = {}
        self._renewed: dict[str, datetime.datetime] = {}  # Leases seen before their Cluster
        self._heap: list[tuple[datetime.datetime, str]] = []

    def __contains__(self, name: object) -> bool:
        return name in self._health

    def __len__(self) -> int:
        return len(self._health)

    def queued(self) -> int:
        """Deadlines in the heap (at most one live one per cluster)."""
        return len(self._heap)

    def probe(self, name: str) -> datetime.datetime | None:
        saved = self._health.get(name)
        return None if saved is None else saved.probe

    def ready(self, name: str) -> Obj | None:
        saved = self._health.get(name)
        return None if saved is None else saved.ready

    def deadline(self, name: str) -> datetime.datetime | None:
        """When the cluster is judged silent, or None when it is not judged (not Pull, unknown)."""
        saved = self._health.get(name)
        if saved is None or not saved.pull:
            return None
        return saved.probe + self._grace(saved)

    def _grace(self, saved: _Health) -> datetime.timedelta:
        return self.grace_period if saved.ready is not None else self.startup_grace_period

    def _schedule(self, name: str, saved: _Health) -> None:
        if not saved.pull:
            return
        deadline = saved.probe + self._grace(saved)
        # one live heap entry per cluster: an earlier deadline replaces it; a later one waits
        # until the queued one comes due and is then pushed again (see due)
        if saved.queued is None or deadline < saved.queued:
            saved.queued = deadline
            heapq.heappush(self._heap, (deadline, name))

    def observe_cluster(self, cluster: Obj, now: datetime.datetime, wall_now: datetime.datetime | None = None) -> None:
        """A Cluster was added or changed; ``wall_now`` is the wall clock's reading when ``now``
        is another clock's (creation times are the API server's wall clock)."""
        meta = cluster.get("metadata") or {}
        name = meta.get("name") or ""
        ready = find((cluster.get("status") or {}).get("conditions"), "Ready")
        pull = (cluster.get("spec") or {}).get("syncMode") == "Pull"
        saved = self._health.get(name)
        if saved is None:
            created = meta.get("creationTimestamp")
            probe = now
            if ready is None and created:
                probe = now - max(datetime.timedelta(0), (wall_now or now) - parse_time(created))
            saved = self._health[name] = _Health(copy.deepcopy(ready), None, probe, pull)
            renewed = self._renewed.pop(name, None)
            if renewed is not None:
                saved.renew_time, saved.probe = renewed, now
        elif saved.ready != ready:
            saved.ready, saved.probe = copy.deepcopy(ready), now
        elif saved.pull == pull:
            return  # neither Ready nor the mode moved: nothing to reschedule
        saved.pull = pull
        self._schedule(name, saved)

    def wrote_ready(self, name: str, ready: Obj | None) -> None:
        """The monitor itself wrote this Ready condition: not a sign of life (the probe stays)."""
        saved = self._health.get(name)
        if saved is not None:
            saved.ready = copy.deepcopy(ready)

    def observe_lease(self, lease: Obj, now: datetime.datetime) -> None:
        """A heartbeat Lease was added or renewed: any change of renewTime counts, an earlier
        one too. The time is the agent's clock; Karmada (like kube's node lifecycle controller)
        counts only a later one, so an agent whose clock is stepped back looks silent until its
        clock passes the old value, and its cluster fails over meanwhile."""
        name = (lease.get("metadata") or {}).get("name") or ""
        text = (lease.get("spec") or {}).get("renewTime")
        if not text:
            return
        renewed = parse_time(text)
        saved = self._health.get(name)
        if saved is None:
            self._renewed[name] = renewed
            return
        if saved.renew_time is not None and renewed == saved.renew_time:
            return
        saved.renew_time, saved.probe = renewed, now
        self._schedule(name, saved)

    def forget(self, name: str) -> None:
        """The Cluster is gone (its heap entry is dropped when it comes due)."""
        self._health.pop(name, None)
        self._renewed.pop(name, None)

    def forget_lease(self, name: str) -> None:
        self._renewed.pop(name, None)

    def due(self, now: datetime.datetime) -> list[str]:
        """The pull clusters silent past their grace period, each once until it changes again
        (:meth:`retry` puts one back); the other entries that came due are pushed again at
        their current deadline."""
        found = []
        while self._heap and self._heap[0][0] < now:
            deadline, name = heapq.heappop(self._heap)
            saved = self._health.get(name)
            if saved is None or saved.queued != deadline:
                continue  # forgotten, or replaced by an earlier deadline
            saved.queued = None
            if not saved.pull:
                continue
            current = saved.probe + self._grace(saved)
            if now <= current:
                self._schedule(name, saved)
            else:
                found.append(name)
        return found

    def retry(self, name: str, now: datetime.datetime) -> None:
        """Judge the cluster again at the next look (a write that failed)."""
        saved = self._health.get(name)
        if saved is not None and saved.queued is None:
            saved.queued = now
            heapq.heappush(self._heap, (now, name))


class HealthMonitor:
    """Marks pull clusters whose agent went silent as Ready=Unknown."""

    def __init__(
        self,
        client: KubeClient,
        clusters: Informer,
        leases: Informer,
        *,
        monitor_period: float = 5.0,
        grace_period: float = 40.0,
        startup_grace_period: float = 60.0,
    ) -> None:
        self.client = client
        self.clusters = clusters
        self.leases = leases
        self.monitor_period = monitor_period
        self.tracker = ProbeTracker(
            datetime.timedelta(seconds=grace_period), datetime.timedelta(seconds=startup_grace_period)
        )
        self.clock = SteadyClock()
        clusters.add_handler(self._on_cluster)
        leases.add_handler(self._on_lease)

    def _on_cluster(self, kind: str, obj: Obj, old: Obj | None) -> None:
        if kind == "DELETED":
            self.tracker.forget((obj.get("metadata") or {}).get("name") or "")
        elif old is not obj:  # a resync replays the same object: nothing moved
            self.tracker.observe_cluster(obj, self.clock.now(), utcnow())

    def _on_lease(self, kind: str, obj: Obj, old: Obj | None) -> None:
        if kind == "DELETED":
            self.tracker.forget_lease((obj.get("metadata") or {}).get("name") or "")
        elif old is not obj:
            self.tracker.observe_lease(obj, self.clock.now())

    async def run(self) -> None:
        while True:
            await self.check_due()
            await asyncio.sleep(self.monitor_period)

    async def check_due(self) -> None:
        """Write Ready=Unknown for every pull cluster whose deadline passed."""
        now = self.clock.now()
        for name in self.tracker.due(now):
            cluster = self.clusters.get(name)
            deadline = self.tracker.deadline(name)
            # a heartbeat may have come while earlier writes of this round were awaited
            if cluster is None or deadline is None or self.clock.now() <= deadline:
                continue
            try:
                await self._mark_unknown(cluster, now)
            except KubeError as exc:
                if not exc.not_found:
                    if not exc.conflict:
                        log.warning("cluster health check of %s failed: %s", name, exc.message)
                    self.tracker.retry(name, now)

    async def _mark_unknown(self, cluster: Obj, now: datetime.datetime) -> None:
        name = cluster["metadata"]["name"]
        updated = copy.deepcopy(cluster)
        conditions = updated.setdefault("status", {}).setdefault("conditions", [])
        current = find(conditions, "Ready")
        stamp = format_time(utcnow())  # written: the wall clock
        if current is None:
            conditions.append(
                {
                    "type": "Ready",
                    "status": "Unknown",
                    "reason": "ClusterStatusNeverUpdated",
                    "message": "Cluster status controller never posted cluster status.",
                    "lastTransitionTime": stamp,
                }
            )
        elif current.get("status") != "Unknown":
            current.update(
                status="Unknown",
                reason="ClusterStatusUnknown",
                message="Cluster status controller stopped posting cluster status.",
                lastTransitionTime=stamp,
            )
        else:
            return
        probe = self.tracker.probe(name)
        log.info("cluster %s: no status or heartbeat for %s; Ready=Unknown", name, now - probe if probe else "?")
        stored = await self.client.update(CLUSTERS, updated, subresource="status")
        self.tracker.wrote_ready(name, find((stored.get("status") or {}).get("conditions"), "Ready"))


__all__ = ["HealthMonitor", "ProbeTracker"]
