"""Push clusters, worked from the control plane: Karmada's ``clusterStatus``,
``execution`` and ``workStatus`` controllers, for clusters with
``syncMode: Push`` only (a Pull cluster's agent runs the same code,
:mod:`karmada.members`, in the member).

One reconcile per Cluster, on the shared Cluster cache: a Push cluster gets
its own member set (a client built from ``apiEndpoint`` and the token and
``caBundle`` of its ``secretRef``, a Cluster cache of that one cluster, the
cluster-status loop and the execution controller with its Work and
member-object caches); it is started when the cluster appears, rebuilt when
its endpoint or Secret reference changes, and stopped when the Cluster is
gone or turns Pull. It keeps running while the Cluster is being deleted, so
the Works' finalizers remove what they created in the member. Each member
set runs its own tasks and workers, so a slow or unreachable member delays
only itself: its probes fail (Ready=False after the failure threshold, and
the cluster controller taints it), and its caches reconnect with backoff.

The three controller names are registered with one :func:`setup`, which the
manager calls once when any of them is enabled; each name switches its own
part (:class:`Parts`) in every member set: ``clusterStatus`` the status loop
and Lease, ``execution`` the applying of Works, ``workStatus`` the reflection
of member objects' status into them (without ``execution``, only of objects
already in the member).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from controlplane.context import Context
from karmada.api.keys import NAMESPACE_KARMADA_CLUSTER
from karmada.kube import ClusterConfig, Informer, KubeClient, KubeError
from karmada.kube.config import Credentials
from karmada.kube.controller import Controller
from karmada.kube.resources import CLUSTERS, SECRETS
from karmada.kube.supervise import Supervisor
from karmada.members.cluster_status import ClusterStatusController
from karmada.members.execution import ExecutionController

log = logging.getLogger("controlplane.push")
Obj = dict[str, Any]
NAMES = ("clusterStatus", "execution", "workStatus")


@dataclass(frozen=True)
class Parts:
    """What runs for each Push cluster, one switch per Karmada controller name."""

    status: bool  # clusterStatus
    apply: bool  # execution
    reflect: bool  # workStatus

    @classmethod
    def of(cls, controllers: Iterable[str]) -> Parts:
        """The parts ``--controllers`` (its expanded names) enables."""
        names = set(controllers)
        return cls(status="clusterStatus" in names, apply="execution" in names, reflect="workStatus" in names)

    @property
    def works(self) -> bool:
        """Whether the Works of the cluster are watched at all."""
        return self.apply or self.reflect


@dataclass
class MemberSettings:
    """What the cluster-status loop reads, for one member (see ``StatusSettings``)."""

    cluster_name: str
    cluster_namespace: str
    cluster_status_update_frequency: float
    cluster_lease_duration: float
    cluster_lease_renew_interval_fraction: float
    cluster_success_threshold: float
    cluster_failure_threshold: float


def access_key(cluster: Obj) -> tuple[str, str, str, bool, str]:
    """What, when changed, means a new member client."""
    spec = cluster.get("spec") or {}
    secret = spec.get("secretRef") or {}
    return (
        str(spec.get("apiEndpoint") or ""),
        str(secret.get("namespace") or ""),
        str(secret.get("name") or ""),
        bool(spec.get("insecureSkipTLSVerification")),
        str(spec.get("proxyURL") or ""),
    )


def secret_ownership_problem(cluster: Obj, secret: Obj) -> str | None:
    """Why ``secret`` is not this cluster's to use, or None.

    A Secret is a cluster's when its controller ownerReference is that Cluster (name and UID), as
    ``karmada join`` (Karmada's and ours) leaves it: a ``secretRef`` pointed at another member's
    Secret would otherwise send that member's token to whatever ``apiEndpoint`` says."""
    meta, secret_meta = cluster.get("metadata") or {}, secret.get("metadata") or {}
    for owner in secret_meta.get("ownerReferences") or []:
        if (
            owner.get("controller")
            and owner.get("kind") == "Cluster"
            and str(owner.get("apiVersion") or "").startswith("cluster.karmada.io/")
            and owner.get("name") == meta.get("name")
            and owner.get("uid") == meta.get("uid")
        ):
            return None
    return (
        f"Secret {secret_meta.get('namespace')}/{secret_meta.get('name')} is not this cluster's: it has no "
        f"controller ownerReference to Cluster {meta.get('name')} (uid {meta.get('uid')}); "
        "`kubectl karmada join` sets it, or add it to the Secret"
    )


def member_config(cluster: Obj, secret: Obj) -> ClusterConfig:
    """The member's connection from the Cluster and its Secret (``token``, ``caBundle``);
    ValueError, before anything is sent, when the Secret is not this cluster's."""
    spec = cluster.get("spec") or {}
    data = secret.get("data") or {}
    problem = secret_ownership_problem(cluster, secret)
    if problem:
        raise ValueError(problem)
    if not spec.get("apiEndpoint"):
        raise ValueError("spec.apiEndpoint is empty")
    if not data.get("token"):
        raise ValueError(f"Secret {secret['metadata'].get('namespace')}/{secret['metadata']['name']} has no token")
    ca = base64.b64decode(data["caBundle"]) if data.get("caBundle") else None
    return ClusterConfig(
        server=str(spec["apiEndpoint"]).rstrip("/"),
        ca_pem=ca,
        insecure=bool(spec.get("insecureSkipTLSVerification")),
        credentials=Credentials(token=base64.b64decode(data["token"]).decode()),
        proxy_url=spec.get("proxyURL") or None,
    )


class MemberSet:
    """The caches and loops working one Push cluster."""

    def __init__(
        self, control_plane: KubeClient, member: KubeClient, name: str, context: Context, parts: Parts
    ) -> None:
        options = context.options
        self.name = name
        self.member = member
        self.cluster = Informer(control_plane, CLUSTERS, field_selector=f"metadata.name={name}")
        self.supervisor = Supervisor()
        self.status: ClusterStatusController | None = None
        if parts.status:
            settings = MemberSettings(
                cluster_name=name,
                cluster_namespace=options.cluster_namespace,
                cluster_status_update_frequency=options.cluster_status_update_frequency,
                cluster_lease_duration=options.cluster_lease_duration,
                cluster_lease_renew_interval_fraction=options.cluster_lease_renew_interval_fraction,
                cluster_success_threshold=options.cluster_success_threshold,
                cluster_failure_threshold=options.cluster_failure_threshold,
            )
            self.status = ClusterStatusController(control_plane, member, self.cluster, settings)
        self.execution: ExecutionController | None = None
        if parts.works:
            self.execution = ExecutionController(
                control_plane,
                member,
                self.cluster,
                name,
                workers=options.concurrent_work_syncs,
                resync_period=options.resync_period,  # Karmada's --resync-period reaches member informers too
                apply=parts.apply,
                reflect=parts.reflect,
            )
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"push-{self.name}")

    async def _run(self) -> None:
        self.cluster.start()
        await self.cluster.wait_synced(60)
        if self.status is not None:
            self.supervisor.start(f"cluster-status-{self.name}", self.status.run)
        if self.execution is not None:
            await self.execution.start()
        log.info("push cluster %s: member controllers running", self.name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        await self.supervisor.stop()
        if self.execution is not None:
            await self.execution.stop()
        await self.cluster.stop()
        await self.member.close()


class PushMembers:
    """Starts, rebuilds and stops the member set of every Push cluster."""

    def __init__(self, context: Context, clusters: Informer, parts: Parts) -> None:
        self.context = context
        self.parts = parts
        self.client = context.client
        self.clusters = clusters
        self.members: dict[str, tuple[tuple[str, str, str, bool, str], MemberSet]] = {}
        self.controller: Controller[str] = Controller("push-members", self.reconcile, workers=2)

    async def reconcile(self, name: str) -> float | None:
        cluster = self.clusters.get(name)
        push = cluster is not None and (cluster.get("spec") or {}).get("syncMode") == "Push"
        running = self.members.get(name)
        if not push or cluster is None:
            if running is not None:
                del self.members[name]
                await running[1].stop()
                log.info("push cluster %s: member controllers stopped", name)
            return None
        key = access_key(cluster)
        if running is not None:
            if running[0] == key:
                return None
            del self.members[name]
            await running[1].stop()
        _, namespace, secret_name, _, _ = key
        try:
            secret = await self.client.get(SECRETS, secret_name, namespace or NAMESPACE_KARMADA_CLUSTER)
            config = member_config(cluster, secret)
        except KubeError as exc:
            log.warning("push cluster %s: cannot read its credentials: %s", name, exc.message)
            return 10.0
        except (ValueError, UnicodeDecodeError) as exc:
            log.warning("push cluster %s: unusable credentials: %s", name, exc)
            await self.context.recorder.record(cluster, "Warning", "UnusableCredentials", str(exc))
            return 10.0  # the Secret is not watched: a fixed one is read again
        members = MemberSet(self.client, KubeClient(config), name, self.context, self.parts)
        self.members[name] = (key, members)
        members.start()
        return None

    async def run(self) -> None:
        """Stops every member set when the manager stops (or loses the lead)."""
        try:
            await asyncio.Event().wait()
        finally:
            for _, members in list(self.members.values()):
                await members.stop()
            self.members.clear()


def setup(context: Context) -> list[Controller[str]]:
    """The member sets of Push clusters, with the parts the enabled names of :data:`NAMES` switch on."""
    clusters = context.informers.informer(CLUSTERS)
    push = PushMembers(context, clusters, Parts.of(context.options.controllers))
    push.controller.watches(clusters, lambda kind, obj, old: [obj["metadata"]["name"]])
    context.background.append(("push-members", push.run))
    return [push.controller]
