"""The health monitor of pull clusters (Karmada's cluster controller monitor).

Every ``monitor_period`` it walks the Cluster cache. For each pull cluster it
keeps, in memory, the last Ready condition and heartbeat Lease it saw and when
either last changed (the probe time). When neither moved for the grace period
(the startup grace period while the agent has never posted Ready, counted
from creation) it sets Ready=Unknown: ``ClusterStatusUnknown`` "Cluster status
controller stopped posting cluster status.", or ``ClusterStatusNeverUpdated``
when there was no Ready condition. The cluster controller then swaps the
taints. A control-plane restart starts every probe time afresh, so clusters
get one full grace period before being judged.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import logging
from dataclasses import dataclass
from typing import Any

from karmada.api.keys import NAMESPACE_KARMADA_CLUSTER
from karmada.clusters.conditions import find
from karmada.kube import Informer, KubeClient, KubeError
from karmada.kube.resources import CLUSTERS
from karmada.timestamps import format_time, parse_time, utcnow

log = logging.getLogger("controlplane.health")
Obj = dict[str, Any]


@dataclass
class _Health:
    ready: Obj | None
    renew_time: str | None
    probe: datetime.datetime


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
        self.grace_period = datetime.timedelta(seconds=grace_period)
        self.startup_grace_period = datetime.timedelta(seconds=startup_grace_period)
        self._health: dict[str, _Health] = {}

    async def run(self) -> None:
        while True:
            try:
                await self.check_all()
            except KubeError as exc:
                log.warning("cluster health check failed: %s", exc.message)
            await asyncio.sleep(self.monitor_period)

    async def check_all(self) -> None:
        names = set()
        for cluster in list(self.clusters.items()):
            name = cluster["metadata"]["name"]
            names.add(name)
            try:
                await self.check(cluster)
            except KubeError as exc:
                if not exc.conflict and not exc.not_found:
                    raise
        for gone in set(self._health) - names:
            del self._health[gone]

    async def check(self, cluster: Obj) -> None:
        """Judge one cluster; write Ready=Unknown when its agent went silent."""
        name = cluster["metadata"]["name"]
        now = utcnow()
        ready = find((cluster.get("status") or {}).get("conditions"), "Ready")
        grace = self.grace_period if ready is not None else self.startup_grace_period
        saved = self._health.get(name)
        if saved is None:
            created = cluster["metadata"].get("creationTimestamp")
            probe = parse_time(created) if ready is None and created else now
            saved = self._health[name] = _Health(copy.deepcopy(ready), None, probe)
        elif saved.ready != ready:
            saved.ready, saved.probe = copy.deepcopy(ready), now
        if (cluster.get("spec") or {}).get("syncMode") != "Pull":
            return
        lease = self.leases.get(name, NAMESPACE_KARMADA_CLUSTER)
        renewed = ((lease or {}).get("spec") or {}).get("renewTime")
        if renewed and (saved.renew_time is None or parse_time(renewed) > parse_time(saved.renew_time)):
            saved.renew_time, saved.probe = renewed, now
        if now <= saved.probe + grace:
            return
        updated = copy.deepcopy(cluster)
        conditions = updated.setdefault("status", {}).setdefault("conditions", [])
        current = find(conditions, "Ready")
        stamp = format_time(now)
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
        log.info("cluster %s: no status or heartbeat for %s; Ready=Unknown", name, now - saved.probe)
        stored = await self.client.update(CLUSTERS, updated, subresource="status")
        saved.ready = copy.deepcopy(find((stored.get("status") or {}).get("conditions"), "Ready"))
