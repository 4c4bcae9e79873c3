"""Reporting a member cluster on the control plane: Karmada's cluster-status
controller, as a pull-mode agent runs it for its own cluster and the control
plane runs it for each Push cluster (the same code, the same status).

Every ``update_frequency`` it probes the member (/readyz, else /healthz),
turns the result into a Ready condition held back by the success/failure
thresholds against flapping, and when Ready collects the Kubernetes version,
API enablements and the node and resource summaries; the Cluster status is
written only when it changed. Once Ready it starts the heartbeat (the Lease
``<cluster-namespace>/<cluster>``, renewed every duration x fraction). It
waits until the Cluster carries the cluster controller's finalizer, i.e. the
control plane has accepted it. One task; failures are logged and retried on
the next tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from dataclasses import dataclass
from typing import Any, Protocol

from karmada.api.keys import CLUSTER_CONTROLLER_FINALIZER, SYSTEM_LABEL, SYSTEM_LABEL_VALUE
from karmada.clusters.conditions import find, set_condition
from karmada.clusters.summary import node_summary, resource_summary
from karmada.kube import Informer, KubeClient, KubeError
from karmada.kube.resources import CLUSTERS, LEASES
from karmada.members.member import Discovery, kubernetes_version, node_and_pod_informers, probe_health
from karmada.registration.identity import CLUSTER_LABEL
from karmada.steady_clock import SteadyClock
from karmada.timestamps import format_micro_time, now_time, utcnow

log = logging.getLogger("members.status")
Obj = dict[str, Any]

READY = ("True", "ClusterReady", "cluster is healthy and ready to accept workloads")
NOT_READY = ("False", "ClusterNotReady", "cluster is reachable but health endpoint responded without ok")
NOT_REACHABLE = ("False", "ClusterNotReachable", "cluster is not reachable")


class StatusSettings(Protocol):
    """The knobs this controller reads (the agent's and the control plane's flags of the same names)."""

    cluster_name: str
    cluster_namespace: str
    cluster_status_update_frequency: float
    cluster_lease_duration: float
    cluster_lease_renew_interval_fraction: float
    cluster_success_threshold: float
    cluster_failure_threshold: float


@dataclass
class _Observed:
    status: str
    since: datetime.datetime | None


class ReadyThresholds:
    """Karmada's anti-flapping rule: a switch between True and not-True is only
    published after the new observation held for the success/failure threshold."""

    def __init__(self, success: float, failure: float) -> None:
        self.success = datetime.timedelta(seconds=success)
        self.failure = datetime.timedelta(seconds=failure)
        self._saved: _Observed | None = None

    def adjust(
        self, current: Obj | None, observed: tuple[str, str, str], now: datetime.datetime
    ) -> tuple[str, str, str]:
        status = observed[0]
        if self._saved is None:
            self._saved = _Observed(status, None)  # just started: publish what we see
            return observed
        if current is None:
            return observed
        if self._saved.status != status:
            self._saved = _Observed(status, now)
        threshold = self.success if status == "True" else self.failure
        switching = (status == "True") != (current.get("status") == "True")
        if switching and self._saved.since is not None and now < self._saved.since + threshold:
            return (str(current.get("status")), str(current.get("reason", "")), str(current.get("message", "")))
        return observed


def _working_copy(status: Obj) -> Obj:
    """A copy of a Cluster status this controller may change: a round replaces the collected
    fields whole and changes only the conditions in place, so only those are copied (a deep copy
    of every API enablement each round was the largest cost of an idle agent)."""
    copied = dict(status)
    copied["conditions"] = [dict(c) for c in status.get("conditions") or []]
    return copied


class ClusterStatusController:
    """Keeps ``Cluster.status`` and the heartbeat Lease of one cluster current."""

    def __init__(
        self, control_plane: KubeClient, member: KubeClient, cluster: Informer, options: StatusSettings
    ) -> None:
        self.control_plane = control_plane
        self.member = member
        self.cluster = cluster
        self.options = options
        self.thresholds = ReadyThresholds(options.cluster_success_threshold, options.cluster_failure_threshold)
        self.clock = SteadyClock()
        self.nodes, self.pods = node_and_pod_informers(member)
        self.discovery = Discovery(member)
        self._lease_task: asyncio.Task[None] | None = None
        self._lease: Obj | None = None  # the Lease as last written, renewed without a read
        self._caches_started = False
        self._wake = asyncio.Event()
        self.member_healthy: bool | None = None  # the last probe's verdict; None before the first
        cluster.add_handler(self._accepted)

    def _accepted(self, kind: str, obj: Obj, old: Obj | None) -> None:
        """Report at once when the control plane accepts the Cluster (adds its finalizer)."""
        had = CLUSTER_CONTROLLER_FINALIZER in ((old or {}).get("metadata", {}).get("finalizers") or [])
        has = CLUSTER_CONTROLLER_FINALIZER in (obj["metadata"].get("finalizers") or [])
        if has and not had:
            self._wake.set()

    async def run(self) -> None:
        try:
            while True:
                try:
                    await self.sync()
                except KubeError as exc:
                    log.warning("cluster status: %s: %s", exc.reason or "error", exc.message)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.options.cluster_status_update_frequency):
                        await self._wake.wait()
                self._wake.clear()
        finally:
            if self._lease_task is not None:
                self._lease_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._lease_task
            await self.nodes.stop()
            await self.pods.stop()

    async def sync(self) -> None:
        """One round: probe, collect, publish when changed."""
        cluster = self.cluster.get(self.options.cluster_name)
        if cluster is None or CLUSTER_CONTROLLER_FINALIZER not in (cluster["metadata"].get("finalizers") or []):
            log.info("cluster %s is not accepted by the control plane yet", self.options.cluster_name)
            return
        online, healthy = await probe_health(self.member)
        self.member_healthy = online and healthy
        observed = READY if online and healthy else NOT_READY if online else NOT_REACHABLE
        current = find((cluster.get("status") or {}).get("conditions"), "Ready")
        # thresholds on the steady clock: a step of this host's clock must not stretch or skip them
        ready = self.thresholds.adjust(current, observed, self.clock.now())
        status = _working_copy(cluster.get("status") or {})
        if online and healthy and ready[0] == "True":
            self._start_heartbeat()
            await self._collect(cluster, status)
        set_condition(status.setdefault("conditions", []), "Ready", *ready, now_time())
        if status != (cluster.get("status") or {}):
            updated = {**cluster, "status": status}
            stored = await self.control_plane.update(CLUSTERS, updated, subresource="status")
            if (current or {}).get("status") != ready[0]:
                log.info("cluster %s: Ready=%s (%s)", self.options.cluster_name, ready[0], ready[1])
            self.cluster.store(stored)

    async def _collect(self, cluster: Obj, status: Obj) -> None:
        try:
            status["kubernetesVersion"] = await kubernetes_version(self.member)
        except KubeError as exc:
            log.warning("cannot read the member's version: %s", exc.message)
        enablements, complete = await self.discovery.enablements()
        if enablements == status.get("apiEnablements"):
            enablements = status["apiEnablements"]  # unchanged: keep the published list itself
        status["apiEnablements"] = enablements
        now = now_time()
        conditions = status.setdefault("conditions", [])
        if not enablements:
            set_condition(
                conditions,
                "CompleteAPIEnablements",
                "False",
                "Empty",
                "collected empty APIEnablements from the cluster",
                now,
            )
        elif not complete:
            message = f"might collect partial APIEnablements({len(enablements)}) from the cluster"
            set_condition(conditions, "CompleteAPIEnablements", "False", "Partial", message, now)
        else:
            message = "collected complete APIEnablements from the cluster"
            set_condition(conditions, "CompleteAPIEnablements", "True", "Complete", message, now)
        if not self._caches_started:
            self.nodes.start()
            self.pods.start()
            await self.nodes.wait_synced(60)
            await self.pods.wait_synced(60)
            self._caches_started = True
        status["nodeSummary"] = node_summary(self.nodes.items())
        models = (cluster.get("spec") or {}).get("resourceModels")
        status["resourceSummary"] = resource_summary(self.nodes.items(), self.pods.items(), models)

    def _start_heartbeat(self) -> None:
        if self._lease_task is None or self._lease_task.done():
            self._lease_task = asyncio.get_running_loop().create_task(self._heartbeat(), name="cluster-lease")

    async def _heartbeat(self) -> None:
        interval = self.options.cluster_lease_duration * self.options.cluster_lease_renew_interval_fraction
        while True:
            try:
                await self.renew_lease()
            except KubeError as exc:
                log.warning("renewing the cluster lease failed: %s", exc.message)
            await asyncio.sleep(interval)

    async def renew_lease(self) -> None:
        """Set holder, duration and renewTime of the cluster Lease, owned by the Cluster.

        As client-go's lease controller: the Lease last written is renewed without reading it
        again; it is read when there is none yet, and again after a conflict (someone else
        wrote it) or any failure."""
        try:
            self._lease = await self._renew(self._lease)
        except KubeError as exc:
            self._lease = None
            if not exc.conflict:
                raise
            self._lease = await self._renew(None)

    async def _renew(self, lease: Obj | None) -> Obj:
        name, namespace = self.options.cluster_name, self.options.cluster_namespace
        if lease is None:
            lease = await self.control_plane.get_or_none(LEASES, name, namespace)
        created = lease is None
        if lease is None:
            # a Push cluster's Lease is made here (a Pull cluster's, by the control plane at approval)
            labels = {SYSTEM_LABEL: SYSTEM_LABEL_VALUE, CLUSTER_LABEL: name}  # removed with the cluster
            lease = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": name, "labels": labels},
            }
        cluster = self.cluster.get(name)
        spec = lease.setdefault("spec", {})
        spec.update(
            holderIdentity=name,
            leaseDurationSeconds=int(self.options.cluster_lease_duration),
            renewTime=format_micro_time(utcnow()),
        )
        if cluster is not None:
            owner = {
                "apiVersion": "cluster.karmada.io/v1alpha1",
                "kind": "Cluster",
                "name": name,
                "uid": cluster["metadata"]["uid"],
            }
            references = lease["metadata"].setdefault("ownerReferences", [])
            if not any(r.get("uid") == owner["uid"] for r in references):
                references.append(owner)
        if created:
            return await self.control_plane.create(LEASES, lease, namespace)
        return await self.control_plane.update(LEASES, lease, namespace)
