"""A cluster's moving parts, simulated: Nodes with capacity, a scheduler that
binds Pods to them, the kubelet that starts and stops them, and the workload
controllers that turn Deployments, ReplicaSets, StatefulSets, DaemonSets and
Jobs into Pods and report their status, so a localkube looks like a member
cluster with running workloads.

Off by default (``localkube serve --simulate-nodes N --simulate-workloads``).
Nothing runs: a Pod is "Running and Ready" as soon as it is bound to a Node
whose allocatable cpu, memory and pod count still fit its requests; a Pod
that fits nowhere stays Pending with ``PodScheduled=False`` (Unschedulable),
exactly what resource summaries count as allocating. Jobs' Pods succeed at
once. A Pod annotated ``simulation.localkube.io/unready: "true"`` (put it on
a workload's Pod template) runs but never turns Ready, to play an unhealthy
application. Nodes created by hand (with ``status.allocatable`` set) are scheduled
onto like simulated ones. While it runs, the simulation is the kubelet of
every node: a Pod deleted with a grace period (see ``localkube.graceful``)
turns ``Ready=False`` and is deleted with grace 0 once the period is over (or
after ``shutdown_seconds``, if shorter: the time its containers take to exit).

Bounded work: a workload keeps at most ``PENDING_PER_WORKLOAD`` Pods waiting
for a node and creates more only as those are bound, as a real cluster's
quota and scheduler would hold them back, so ``--replicas=2147483647`` costs
what the nodes can hold; its status still tells the truth (the replicas it
wants, has and lacks). A sync writes at most ``BURST`` Pods and is picked up
again for the rest.

Concurrency: one task on the server's event loop consumes every storage
change, keeps indexes of Pods and ReplicaSets by owner, of Pods by node and of
each node's usage (``localkube.simulation_index``), marks the workloads
concerned dirty and reconciles them; it yields to the event loop every few
milliseconds, between two writes, so API requests and ``/readyz`` are served
while it works. Each write goes through the API layer (defaulting,
validation, resourceVersions, watch events) as the system user and is
atomic; a reconcile reads the store again after yielding.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import heapq
import json
import logging
import secrets
import time
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from localkube.api import ResourceAPI, WriteOptions
from localkube.errors import APIError
from localkube.graceful import grace_left
from localkube.kinds import Context
from localkube.meta import now_time
from localkube.pod_subresources import bind
from localkube.quantities import value_of
from localkube.simulation_index import OwnerIndex, PodIndex, requests_of

log = logging.getLogger("localkube.simulation")
UNREADY_ANNOTATION = "simulation.localkube.io/unready"  # a Pod that runs but never turns Ready
Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)

SYSTEM = Context(user="system:kube-controller-manager", groups=["system:masters"])
PODS, NODES, REPLICASETS = "/pods", "/nodes", "apps/replicasets"
PVCS = "/persistentvolumeclaims"
WORKLOADS = {
    "apps/deployments": "Deployment",
    "apps/replicasets": "ReplicaSet",
    "apps/statefulsets": "StatefulSet",
    "apps/daemonsets": "DaemonSet",
    "batch/jobs": "Job",
}
PENDING_PER_WORKLOAD = 100  # Pods of one workload waiting for a node at a time
BURST = 100  # Pods one sync of a workload creates or deletes (kube's ReplicaSet controller: 500)
SLICE_SECONDS = 0.005  # work between two yields to the event loop
GATHER_SECONDS = 0.02  # a burst of changes is gathered into one round
_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"


@dataclass
class SimulationConfig:
    """What to simulate."""

    nodes: int = 0
    node_cpu: str = "8"
    node_memory: str = "32Gi"
    node_pods: int = 110
    node_prefix: str = "node"
    workloads: bool = False
    # seconds a deleted Pod's containers take to exit; None: all of its grace period
    shutdown_seconds: float | None = None
    # seconds between two lines a running container writes to its log (localkube.pod_logs)
    log_interval: float = 5.0

    @property
    def enabled(self) -> bool:
        return self.nodes > 0 or self.workloads


def node_ready(node: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or []
    )


def template_hash(template: Obj) -> str:
    """A stable, name-safe hash of a pod template (the role of pod-template-hash)."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    return "".join(_SUFFIX[b % len(_SUFFIX)] for b in digest[:10])


def _key(obj: Obj) -> Key:
    return obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def _replicas(obj: Obj, default: int = 1) -> int:
    value = (obj.get("spec") or {}).get("replicas", default)
    return max(0, int(value)) if value is not None else default


@dataclass(frozen=True)
class _Node:
    """What the scheduler needs of a Node."""

    name: str
    labels: dict[str, str]
    cpu: Fraction
    memory: Fraction
    pods: int
    ready: bool
    schedulable: bool


class Simulation:
    """Nodes, scheduler, kubelet and workload controllers of one localkube."""

    def __init__(self, api: ResourceAPI, config: SimulationConfig) -> None:
        self.api = api
        self.config = config
        self.store = api.store
        self.queue = self.store.subscribe_all()
        self.pods = PodIndex(self.store)
        self.replicasets = OwnerIndex(self.store, REPLICASETS)
        self.nodes: dict[str, _Node] = {}
        self._dirty: set[tuple[str, str, str]] = set()
        self._fresh: dict[Key, None] = {}  # pods waiting for a node, not tried yet
        self._retry = False  # room was freed or nodes changed: try every waiting pod again
        self._unplaced: set[Key] = set()  # pods that fit nowhere when last tried
        # terminating pods: when their containers have exited, and the uid of the Pod stopped
        self._stopping: dict[Key, tuple[float, str]] = {}
        self._deadlines: list[tuple[float, Key]] = []  # heap of the same deadlines
        self._not_ready: dict[Key, None] = {}  # terminating pods whose Ready condition is still True
        self._slice = time.perf_counter()

    # -- plumbing -----------------------------------------------------------------------------
    def _rt(self, storage: str) -> Any:
        return self.api.registry.storage_types().get(storage)

    def _create(self, storage: str, namespace: str, obj: Obj) -> Obj | None:
        try:
            created = self.api.create(self._rt(storage), namespace, obj, SYSTEM, WriteOptions()).obj
        except APIError as exc:
            log.debug("simulation: create %s failed: %s", storage, exc)
            return None
        self._observe(storage, _key(created))
        return created

    def _update(self, storage: str, obj: Obj, subresource: str = "") -> None:
        meta = obj["metadata"]
        with contextlib.suppress(APIError):
            self.api.update(
                self._rt(storage), meta.get("namespace", ""), meta["name"], obj, subresource, SYSTEM, WriteOptions()
            )
        self._observe(storage, _key(obj))

    def _delete(self, storage: str, namespace: str, name: str, options: Obj | None = None) -> None:
        with contextlib.suppress(APIError):
            self.api.delete(self._rt(storage), namespace, name, options or {"propagationPolicy": "Background"}, False)
        self._observe(storage, (namespace, name))

    def _set_status(self, storage: str, obj: Obj, status: Obj, replace: bool = False) -> None:
        """Write ``status`` over the stored one; ``replace`` for a status the controller owns
        whole (a counter it leaves out is zero, not whatever an earlier write said)."""
        merged = dict(status) if replace else {**(obj.get("status") or {}), **status}
        if merged != (obj.get("status") or {}):
            self._update(storage, {**obj, "status": merged}, "status")

    async def _breathe(self) -> None:
        """Let the event loop serve requests once this slice of work is used up."""
        if time.perf_counter() - self._slice >= SLICE_SECONDS:
            await asyncio.sleep(0)
            self._slice = time.perf_counter()

    # -- what is stored -------------------------------------------------------------------------
    def _observe(self, storage: str, key: Key) -> None:
        """Bring the indexes up to date with the stored state of one object."""
        if storage == PODS:
            self._pod_changed(key, self.pods.observe(key))
        elif storage == REPLICASETS:
            self.replicasets.observe(key)
        elif storage == NODES:
            self._node_changed(key[1])

    def _pod_changed(self, key: Key, pod: Obj | None) -> None:
        if self.pods.released:
            self.pods.released = False
            self._retry = True
        if pod is None:
            self._stopping.pop(key, None)
            self._not_ready.pop(key, None)
            self._unplaced.discard(key)
            return
        if key in self.pods.unbound and key not in self._unplaced:
            self._fresh[key] = None
        if key in self.pods.terminating and (pod.get("spec") or {}).get("nodeName") and grace_left(pod):
            self._kubelet_stop(key, pod)

    def _node_changed(self, name: str) -> None:
        node = self.store.get(NODES, "", name)
        self._retry = True
        if node is None:
            self.nodes.pop(name, None)
            return
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        self.nodes[name] = _Node(
            name=name,
            labels=dict(node["metadata"].get("labels") or {}),
            cpu=value_of(allocatable.get("cpu", 0)).value,
            memory=value_of(allocatable.get("memory", 0)).value,
            pods=int(value_of(allocatable.get("pods", 0)).value),
            ready=node_ready(node),
            schedulable=not (node.get("spec") or {}).get("unschedulable"),
        )

    def _active_pods(self, owner: Obj) -> list[Obj]:
        """An owner's Pods that are not being deleted."""
        return [p for p in self.pods.owned(owner["metadata"]["uid"]) if not p["metadata"].get("deletionTimestamp")]

    def _replicasets_of(self, deployment: Obj) -> list[Obj]:
        return list(self.replicasets.owned(deployment["metadata"]["uid"]))

    def _budget(self, owner: Obj, missing: int) -> int:
        """How many of ``missing`` Pods an owner may create now."""
        waiting = self.pods.waiting_of(owner["metadata"]["uid"])
        return max(0, min(missing, BURST, PENDING_PER_WORKLOAD - waiting))

    # -- main loop ----------------------------------------------------------------------------
    async def run(self) -> None:
        self._create_nodes()
        for node in self.store.items(NODES):
            self._node_changed(node["metadata"]["name"])
        for pod in self.store.items(PODS):
            self._observe(PODS, _key(pod))
        for rs in self.store.items(REPLICASETS):
            self._observe(REPLICASETS, _key(rs))
        for storage in WORKLOADS:
            for obj in self.store.items(storage):
                self._dirty.add((storage, *_key(obj)))
        while True:
            await self._reconcile()
            await self._gather()

    def _busy(self) -> bool:
        return bool(self._dirty or self._fresh or self._retry or self._not_ready or self._due())

    def _due(self) -> bool:
        return bool(self._deadlines) and self._deadlines[0][0] <= time.monotonic()

    async def _gather(self) -> None:
        """Wait for a change (or the next Pod whose grace period ends), then take the burst."""
        if not self._busy() and self.queue.empty():
            timeout = max(0.0, self._deadlines[0][0] - time.monotonic()) if self._deadlines else None
            try:
                storage, event = await asyncio.wait_for(self.queue.get(), timeout)
            except TimeoutError:
                return
            self._note(storage, event.type, event.obj)
        await asyncio.sleep(GATHER_SECONDS)
        while not self.queue.empty():
            storage, event = self.queue.get_nowait()
            self._note(storage, event.type, event.obj)
            await self._breathe()

    def _note(self, storage: str, kind: str, obj: Obj) -> None:
        """Index a change and mark what it concerns: the object if it is a workload, the
        workloads owning it (a Pod's ReplicaSet, a ReplicaSet's Deployment)."""
        meta = obj["metadata"]
        namespace = meta.get("namespace", "")
        self._observe(storage, (namespace, meta["name"]))
        if not self.config.workloads:
            return
        if storage in WORKLOADS:
            self._dirty.add((storage, namespace, meta["name"]))
        for owner in meta.get("ownerReferences") or []:
            for key, workload in WORKLOADS.items():
                if owner.get("kind") == workload:
                    self._dirty.add((key, namespace, owner.get("name", "")))
        if storage == NODES:
            for daemonset in self.store.items("apps/daemonsets"):
                self._dirty.add(("apps/daemonsets", *_key(daemonset)))

    async def _reconcile(self) -> None:
        self._slice = time.perf_counter()
        await self._kubelet()
        await self._schedule()
        dirty, self._dirty = self._dirty, set()
        # parents first: a Deployment's new ReplicaSet is handled in the same round
        order = list(WORKLOADS)
        for storage, namespace, name in sorted(dirty, key=lambda k: (order.index(k[0]), k[1], k[2])):
            obj = self.store.get(storage, namespace, name)
            if obj is None or obj["metadata"].get("deletionTimestamp"):
                continue
            try:
                getattr(self, f"_sync_{WORKLOADS[storage].lower()}")(obj)
            except Exception:  # one odd object must not stop the simulation
                log.exception("simulating %s %s/%s failed", storage, namespace, name)
            await self._breathe()

    # -- kubelet --------------------------------------------------------------------------------
    def _kubelet_stop(self, key: Key, pod: Obj) -> None:
        """A bound Pod is being deleted: its containers get until the grace period ends."""
        grace = pod["metadata"].get("deletionGracePeriodSeconds") or 0
        seconds = float(grace) if self.config.shutdown_seconds is None else min(grace, self.config.shutdown_seconds)
        deadline = time.monotonic() + seconds
        uid = str(pod["metadata"].get("uid", ""))
        running = self._stopping.get(key)
        if running is not None and running[1] == uid and running[0] <= deadline:
            return  # a longer grace period never extends a running shutdown
        if running is None or running[1] != uid:
            self._not_ready[key] = None
        self._stopping[key] = (deadline, uid)
        heapq.heappush(self._deadlines, (deadline, key))

    async def _kubelet(self) -> None:
        for key in list(self._not_ready):
            self._not_ready.pop(key, None)
            pod = self.store.get(PODS, *key)
            if pod is not None and key in self._stopping:
                self._mark_stopping(pod)
            await self._breathe()
        # pods placed on a node by their creator (DaemonSets, by hand) start there
        starting = list(self.pods.starting)
        queued = Counter(self.pods.node_of(key) for key in starting)
        for key in starting:
            pod = self.store.get(PODS, *key)
            if pod is not None and key in self.pods.starting:
                node = str(pod["spec"]["nodeName"])
                if self._admitted(pod, node, queued[node]):
                    self._run_on(pod, node)
                queued[node] -= 1
            await self._breathe()
        now = time.monotonic()
        while self._deadlines and self._deadlines[0][0] <= now:
            deadline, key = heapq.heappop(self._deadlines)
            running = self._stopping.get(key)
            if running is None or running[0] != deadline:
                continue  # superseded by a shorter grace period, or already gone
            del self._stopping[key]
            # as the kubelet does: grace 0, and only the Pod it stopped (a namesake may have replaced it)
            self._delete(PODS, key[0], key[1], {"gracePeriodSeconds": 0, "preconditions": {"uid": running[1]}})
            await self._breathe()

    def _admitted(self, pod: Obj, name: str, queued: int) -> bool:
        """The kubelet's admission: a Pod placed on a node whose admitted Pods already fill its
        ``pods`` capacity fails with ``OutOfpods``. ``queued`` Pods of the node's tally (this one
        among them) wait to be admitted, in order."""
        node = self.nodes.get(name)
        admitted = self.pods.used(name).pods - queued
        if node is None or not node.pods or admitted < node.pods:
            return True
        message = (
            f"Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: {admitted}, "
            f"capacity: {node.pods}"
        )
        self._set_status(PODS, pod, {"phase": "Failed", "reason": "OutOfpods", "message": message})
        return False

    def _mark_stopping(self, pod: Obj) -> None:
        status = copy.deepcopy(pod.get("status") or {})
        now = now_time()
        changed = False
        for condition in status.get("conditions") or []:
            if condition.get("type") in ("Ready", "ContainersReady") and condition.get("status") != "False":
                condition.update({"status": "False", "lastTransitionTime": now})
                changed = True
        for container in status.get("containerStatuses") or []:
            if container.get("ready"):
                container["ready"] = False
                changed = True
        if changed:
            self._set_status(PODS, pod, status)

    # -- nodes and scheduling -----------------------------------------------------------------
    def _create_nodes(self) -> None:
        now = now_time()
        for index in range(1, self.config.nodes + 1):
            name = f"{self.config.node_prefix}-{index}"
            if self.store.get(NODES, "", name) is not None:
                continue
            capacity = {
                "cpu": self.config.node_cpu,
                "memory": self.config.node_memory,
                "pods": str(self.config.node_pods),
            }
            node = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {
                        "kubernetes.io/hostname": name,
                        "kubernetes.io/os": "linux",
                        "kubernetes.io/arch": "amd64",
                        "node.localkube.io/simulated": "true",
                    },
                },
            }
            created = self._create(NODES, "", node)
            if created is None:
                continue
            status = {
                "capacity": capacity,
                "allocatable": dict(capacity),
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "KubeletReady",
                        "message": "kubelet is posting ready status (simulated)",
                        "lastHeartbeatTime": now,
                        "lastTransitionTime": now,
                    }
                ],
                "addresses": [
                    {"type": "InternalIP", "address": f"10.0.0.{index}"},
                    {"type": "Hostname", "address": name},
                ],
                "nodeInfo": {
                    "kubeletVersion": "v1.32.0",
                    "operatingSystem": "linux",
                    "architecture": "amd64",
                    "containerRuntimeVersion": "simulated://1.0",
                },
            }
            self._update(NODES, {**created, "status": status}, "status")

    async def _schedule(self) -> None:
        if self._retry:
            self._retry = False
            self._unplaced.clear()
            candidates = list(self.pods.unbound)
        else:
            candidates = list(self._fresh)
        self._fresh.clear()
        nodes = sorted((n for n in self.nodes.values() if n.ready and n.schedulable), key=lambda n: n.name)
        for key in candidates:
            pod = self.store.get(PODS, *key)
            if pod is None or key not in self.pods.unbound:
                continue
            target = self._fit(pod, nodes)
            if target is None:
                self._unplaced.add(key)
                self._unschedulable(pod, len(nodes))
            else:
                self._unplaced.discard(key)
                self._run_on(pod, target)
            await self._breathe()

    def _fit(self, pod: Obj, nodes: list[_Node]) -> str | None:
        """The node with the most free cpu that the Pod fits on (its selector, pods, cpu, memory)."""
        cpu, memory = requests_of(pod)
        wanted = (pod.get("spec") or {}).get("nodeSelector") or {}
        best: tuple[Fraction, str] | None = None
        for node in nodes:
            if any(node.labels.get(k) != v for k, v in wanted.items()):
                continue
            used = self.pods.used(node.name)
            free_cpu = node.cpu - used.cpu
            fits = node.pods - used.pods >= 1 and free_cpu >= cpu and node.memory - used.memory >= memory
            if fits and (best is None or (-free_cpu, node.name) < best):
                best = (-free_cpu, node.name)
        return best[1] if best is not None else None

    def _unschedulable(self, pod: Obj, nodes: int) -> None:
        message = (
            f"0/{nodes} nodes are available: {nodes} Insufficient resources."
            if nodes
            else "no nodes available to schedule pods"
        )
        conditions = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}]
        status = pod.get("status") or {}
        if (
            status.get("phase") == "Pending"
            and [{k: c.get(k) for k in ("type", "status", "reason", "message")} for c in status.get("conditions") or []]
            == conditions
        ):
            return
        self._set_status(
            PODS, pod, {"phase": "Pending", "conditions": [{**c, "lastTransitionTime": now_time()} for c in conditions]}
        )

    def _run_on(self, pod: Obj, node: str) -> None:
        if (pod.get("spec") or {}).get("nodeName") != node:
            # as kube-scheduler does: spec.nodeName is immutable on update, set once through a Binding
            target = {"target": {"kind": "Node", "name": node}}
            with contextlib.suppress(APIError):
                bind(self.api, self._rt(PODS), pod["metadata"]["namespace"], pod["metadata"]["name"], target)
            self._observe(PODS, _key(pod))
        stored = self.store.get(PODS, pod["metadata"]["namespace"], pod["metadata"]["name"])
        if stored is None or (stored.get("spec") or {}).get("nodeName") != node:
            return
        now = now_time()
        job = any(o.get("kind") == "Job" for o in stored["metadata"].get("ownerReferences") or [])
        phase = "Succeeded" if job else "Running"
        held = (stored["metadata"].get("annotations") or {}).get(UNREADY_ANNOTATION) == "true"
        ready = "False" if job or held else "True"
        containers = (stored.get("spec") or {}).get("containers") or []
        state = (
            {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}}
            if job
            else {"running": {"startedAt": now}}
        )
        status = {
            "phase": phase,
            "hostIP": f"10.0.0.{abs(hash(node)) % 250 + 1}",
            "podIP": f"10.244.{secrets.randbelow(250)}.{secrets.randbelow(250) + 1}",
            "startTime": now,
            "conditions": [
                {
                    "type": t,
                    "status": "True" if t in ("PodScheduled", "Initialized") else ready,
                    "lastTransitionTime": now,
                }
                for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
            ],
            "containerStatuses": [
                {
                    "name": c.get("name", ""),
                    "image": c.get("image", ""),
                    "imageID": "",
                    "ready": not job and not held,
                    "started": not job,
                    "restartCount": 0,
                    "state": state,
                }
                for c in containers
            ],
        }
        self._set_status(PODS, stored, status)

    # -- pods of a workload ---------------------------------------------------------------------
    def _new_pod(
        self,
        owner: Obj,
        name: str,
        extra_labels: dict[str, str] | None = None,
        node: str = "",
        volumes: list[Obj] | None = None,
    ) -> None:
        template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
        meta = template.get("metadata") or {}
        labels = {**(meta.get("labels") or {}), **(extra_labels or {})}
        spec = template.get("spec") or {}
        if volumes:
            spec["volumes"] = [*(spec.get("volumes") or []), *volumes]
        if node:
            spec["nodeName"] = node
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": owner["metadata"]["namespace"],
                "labels": labels,
                "annotations": meta.get("annotations") or {},
                "ownerReferences": [
                    {
                        "apiVersion": owner["apiVersion"],
                        "kind": owner["kind"],
                        "name": owner["metadata"]["name"],
                        "uid": owner["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": spec,
        }
        self._create(PODS, owner["metadata"]["namespace"], pod)

    def _scale_pods(self, owner: Obj, wanted: int, prefix: str, labels: dict[str, str] | None = None) -> None:
        pods = self._active_pods(owner)
        for _ in range(self._budget(owner, wanted - len(pods))):
            suffix = "".join(secrets.choice(_SUFFIX) for _ in range(5))
            self._new_pod(owner, f"{prefix}-{suffix}", labels)
        if len(pods) > wanted:
            # remove unscheduled pods first, then the oldest
            doomed = sorted(
                pods,
                key=lambda p: (bool((p.get("spec") or {}).get("nodeName")), p["metadata"].get("creationTimestamp", "")),
            )
            for pod in doomed[: min(BURST, len(pods) - wanted)]:
                self._delete(PODS, pod["metadata"]["namespace"], pod["metadata"]["name"])

    @staticmethod
    def _counts(pods: list[Obj]) -> tuple[int, int]:
        running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        ready = [
            p
            for p in running
            if any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in (p.get("status") or {}).get("conditions") or []
            )
        ]
        return len(pods), len(ready)

    # -- ReplicaSet -----------------------------------------------------------------------------------
    def _sync_replicaset(self, rs: Obj) -> None:
        wanted = _replicas(rs)
        labels = ((rs.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
        self._scale_pods(rs, wanted, rs["metadata"]["name"], labels)
        self._status_replicaset(rs)

    def _status_replicaset(self, rs: Obj) -> None:
        current = self.store.get("apps/replicasets", rs["metadata"]["namespace"], rs["metadata"]["name"]) or rs
        total, ready = self._counts(self._active_pods(current))
        status = {
            "replicas": total,
            "fullyLabeledReplicas": total,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "observedGeneration": current["metadata"].get("generation", 1),
        }
        self._set_status("apps/replicasets", current, status)

    # -- Deployment -----------------------------------------------------------------------------------
    def _sync_deployment(self, deployment: Obj) -> None:
        spec = deployment.get("spec") or {}
        wanted = _replicas(deployment)
        template = copy.deepcopy(spec.get("template") or {})
        digest = template_hash(template)
        name = f"{deployment['metadata']['name']}-{digest}"
        owned = self._replicasets_of(deployment)
        current = next((rs for rs in owned if rs["metadata"]["name"] == name), None)
        if current is None:
            template.setdefault("metadata", {}).setdefault("labels", {})["pod-template-hash"] = digest
            selector = copy.deepcopy(spec.get("selector") or {})
            selector.setdefault("matchLabels", {})["pod-template-hash"] = digest
            rs = {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": name,
                    "namespace": deployment["metadata"]["namespace"],
                    "labels": dict(template["metadata"]["labels"]),
                    "annotations": {"deployment.kubernetes.io/desired-replicas": str(wanted)},
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "name": deployment["metadata"]["name"],
                            "uid": deployment["metadata"]["uid"],
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": {"replicas": wanted, "selector": selector, "template": template},
            }
            created = self._create(REPLICASETS, deployment["metadata"]["namespace"], rs)
            if created is not None:
                self._sync_replicaset(created)
        elif _replicas(current, 0) != wanted:
            self._update(REPLICASETS, {**current, "spec": {**current["spec"], "replicas": wanted}})
            self._dirty.add((REPLICASETS, current["metadata"]["namespace"], name))
        for old in owned:
            if old["metadata"]["name"] != name and _replicas(old, 0) != 0:
                self._update(REPLICASETS, {**old, "spec": {**old["spec"], "replicas": 0}})
                self._dirty.add((REPLICASETS, old["metadata"]["namespace"], old["metadata"]["name"]))
        self._status_deployment(deployment)

    def _status_deployment(self, deployment: Obj) -> None:
        current = (
            self.store.get("apps/deployments", deployment["metadata"]["namespace"], deployment["metadata"]["name"])
            or deployment
        )
        spec = current.get("spec") or {}
        wanted = int(spec.get("replicas", 1))
        digest = template_hash(spec.get("template") or {})
        total = ready = updated = 0
        for rs in self._replicasets_of(current):
            pods_total, pods_ready = self._counts(self._active_pods(rs))
            total += pods_total
            ready += pods_ready
            if rs["metadata"]["name"].endswith(f"-{digest}"):
                updated = pods_total
        now = now_time()
        available = ready >= wanted
        status = {
            "observedGeneration": current["metadata"].get("generation", 1),
            "replicas": total,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "unavailableReplicas": max(0, wanted - ready),
            "conditions": self._conditions(
                current,
                [
                    (
                        "Available",
                        available,
                        "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                        "Deployment has minimum availability."
                        if available
                        else "Deployment does not have minimum availability.",
                    ),
                    (
                        "Progressing",
                        True,
                        "NewReplicaSetAvailable" if available else "ReplicaSetUpdated",
                        f'ReplicaSet "{current["metadata"]["name"]}-{digest}" '
                        + ("has successfully progressed." if available else "is progressing."),
                    ),
                ],
                now,
            ),
        }
        if not status["unavailableReplicas"]:
            status.pop("unavailableReplicas")
        if not ready:
            status.pop("readyReplicas")
            status.pop("availableReplicas")
        self._set_status("apps/deployments", current, status, replace=True)

    @staticmethod
    def _conditions(
        obj: Obj, wanted: list[tuple[str, bool, str, str]], now: str, time_key: str = "lastUpdateTime"
    ) -> list[Obj]:
        existing = {c.get("type"): c for c in (obj.get("status") or {}).get("conditions") or []}
        result = []
        for kind, ok, reason, message in wanted:
            status = "True" if ok else "False"
            old = existing.get(kind)
            if (
                old is not None
                and old.get("status") == status
                and old.get("reason") == reason
                and old.get("message") == message
            ):
                result.append(old)
                continue
            changed = old is None or old.get("status") != status
            result.append(
                {
                    "type": kind,
                    "status": status,
                    time_key: now,
                    "lastTransitionTime": now if changed or old is None else old.get("lastTransitionTime", now),
                    "reason": reason,
                    "message": message,
                }
            )
        return result

    # -- StatefulSet ----------------------------------------------------------------------------------------
    def _sync_statefulset(self, sts: Obj) -> None:
        wanted = _replicas(sts)
        name = sts["metadata"]["name"]
        pods = self._active_pods(sts)
        existing = {p["metadata"]["name"] for p in pods}
        revision = f"{name}-{template_hash((sts.get('spec') or {}).get('template') or {})}"
        budget = self._budget(sts, wanted - len(pods))
        index = 0
        # the lowest missing ordinals first; the loop ends after the existing pods plus the budget
        while budget > 0 and index < wanted:
            pod_name = f"{name}-{index}"
            if pod_name not in existing and self.store.get(PODS, sts["metadata"]["namespace"], pod_name) is None:
                labels = {
                    "statefulset.kubernetes.io/pod-name": pod_name,
                    "controller-revision-hash": revision,
                    "apps.kubernetes.io/pod-index": str(index),
                }
                self._new_pod(sts, pod_name, labels, volumes=self._claims(sts, pod_name))
                budget -= 1
            index += 1
        doomed = [
            p for p in sorted(existing) if not p.rsplit("-", 1)[-1].isdigit() or int(p.rsplit("-", 1)[-1]) >= wanted
        ]
        for pod_name in doomed[:BURST]:
            self._delete(PODS, sts["metadata"]["namespace"], pod_name)
        self._status_statefulset(sts)

    def _claims(self, sts: Obj, pod_name: str) -> list[Obj]:
        """As the StatefulSet controller: a claim ``TEMPLATE-POD`` per volumeClaimTemplate,
        created when missing and bound at once (a dynamic provisioner's part), and the pod's
        volumes naming them. Claims outlive the pods, as the retention policy Retain says."""
        namespace = sts["metadata"]["namespace"]
        volumes = []
        for template in (sts.get("spec") or {}).get("volumeClaimTemplates") or []:
            name = f"{template['metadata']['name']}-{pod_name}"
            if self.store.get(PVCS, namespace, name) is None:
                claim = {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {
                        "name": name,
                        "namespace": namespace,
                        "labels": dict(template["metadata"].get("labels") or {}),
                    },
                    "spec": copy.deepcopy(template.get("spec") or {}),
                }
                created = self._create(PVCS, namespace, claim)
                if created is not None:
                    spec = created.get("spec") or {}
                    capacity = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
                    bound = {"phase": "Bound", "accessModes": spec.get("accessModes") or []}
                    if capacity:
                        bound["capacity"] = {"storage": capacity}
                    self._set_status(PVCS, created, bound)
            volumes.append({"name": template["metadata"]["name"], "persistentVolumeClaim": {"claimName": name}})
        return volumes

    def _status_statefulset(self, sts: Obj) -> None:
        current = self.store.get("apps/statefulsets", sts["metadata"]["namespace"], sts["metadata"]["name"]) or sts
        total, ready = self._counts(self._active_pods(current))
        revision = f"{current['metadata']['name']}-{template_hash((current.get('spec') or {}).get('template') or {})}"
        status = {
            "observedGeneration": current["metadata"].get("generation", 1),
            "replicas": total,
            "readyReplicas": ready,
            "currentReplicas": total,
            "updatedReplicas": total,
            "availableReplicas": ready,
            "currentRevision": revision,
            "updateRevision": revision,
            "collisionCount": 0,
        }
        self._set_status("apps/statefulsets", current, status)

    # -- DaemonSet -----------------------------------------------------------------------------------------------
    def _sync_daemonset(self, ds: Obj) -> None:
        nodes = sorted(n.name for n in self.nodes.values() if n.ready)
        pods = self._active_pods(ds)
        placed = {(p.get("spec") or {}).get("nodeName") for p in pods}
        for node in nodes:
            if node not in placed:
                suffix = "".join(secrets.choice(_SUFFIX) for _ in range(5))
                self._new_pod(ds, f"{ds['metadata']['name']}-{suffix}", node=node)
        for pod in pods:
            if (pod.get("spec") or {}).get("nodeName") not in nodes:
                self._delete(PODS, pod["metadata"]["namespace"], pod["metadata"]["name"])
        self._status_daemonset(ds)

    def _status_daemonset(self, ds: Obj) -> None:
        current = self.store.get("apps/daemonsets", ds["metadata"]["namespace"], ds["metadata"]["name"]) or ds
        desired = sum(1 for n in self.nodes.values() if n.ready)
        total, ready = self._counts(self._active_pods(current))
        status = {
            "observedGeneration": current["metadata"].get("generation", 1),
            "desiredNumberScheduled": desired,
            "currentNumberScheduled": total,
            "numberMisscheduled": 0,
            "numberReady": ready,
            "numberAvailable": ready,
            "updatedNumberScheduled": total,
        }
        self._set_status("apps/daemonsets", current, status)

    # -- Job ------------------------------------------------------------------------------------------------------
    def _sync_job(self, job: Obj) -> None:
        spec = job.get("spec") or {}
        if spec.get("suspend"):
            self._status_job(job)
            return
        completions = int(spec.get("completions") or 1)
        parallelism = int(spec.get("parallelism") or 1)
        pods = self._active_pods(job)
        succeeded = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Succeeded")
        active = [p for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        missing = min(parallelism, completions - succeeded) - len(active)
        for _ in range(self._budget(job, missing)):
            suffix = "".join(secrets.choice(_SUFFIX) for _ in range(5))
            self._new_pod(job, f"{job['metadata']['name']}-{suffix}", {"job-name": job["metadata"]["name"]})
        self._status_job(job)

    def _status_job(self, job: Obj) -> None:
        current = self.store.get("batch/jobs", job["metadata"]["namespace"], job["metadata"]["name"]) or job
        spec = current.get("spec") or {}
        completions = int(spec.get("completions") or 1)
        pods = self._active_pods(current)
        succeeded = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Succeeded")
        active = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running")
        old = current.get("status") or {}
        now = now_time()
        status: Obj = {"startTime": old.get("startTime", now), "succeeded": succeeded, "ready": 0}
        if active:
            status["active"] = active
        if succeeded >= completions:
            status["completionTime"] = old.get("completionTime", now)
            conditions = [
                ("SuccessCriteriaMet", True, "CompletionsReached", "Reached expected number of succeeded pods"),
                ("Complete", True, "CompletionsReached", "Reached expected number of succeeded pods"),
            ]
            status["conditions"] = self._conditions(current, conditions, now, time_key="lastProbeTime")
        self._set_status("batch/jobs", current, status)
