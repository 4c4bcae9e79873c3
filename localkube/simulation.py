"""A cluster's moving parts, simulated: Nodes with capacity, a scheduler that
binds Pods to them, and the workload controllers that turn Deployments,
ReplicaSets, StatefulSets, DaemonSets and Jobs into Pods and report their
status, so a localkube looks like a member cluster with running workloads.

Off by default (``localkube serve --simulate-nodes N --simulate-workloads``).
Nothing runs: a Pod is "Running and Ready" as soon as it is bound to a Node
whose allocatable cpu, memory and pod count still fit its requests; a Pod
that fits nowhere stays Pending with ``PodScheduled=False`` (Unschedulable),
exactly what resource summaries count as allocating. Jobs' Pods succeed at
once. Nodes created by hand (with ``status.allocatable`` set) are scheduled
onto like simulated ones.

One task consumes every storage change, marks the workloads concerned dirty
and reconciles them in small batches; all writes go through the API layer
(defaulting, validation, resourceVersions, watch events) as the system user.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import json
import logging
import secrets
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from localkube.api import WriteOptions
from localkube.errors import APIError
from localkube.kinds import Context
from localkube.meta import now_time

if TYPE_CHECKING:
    from localkube.server import LocalKube

log = logging.getLogger("localkube.simulation")
Obj = dict[str, Any]

SYSTEM = Context(user="system:kube-controller-manager", groups=["system:masters"])
PODS, NODES = "/pods", "/nodes"
WORKLOADS = {
    "apps/deployments": "Deployment",
    "apps/replicasets": "ReplicaSet",
    "apps/statefulsets": "StatefulSet",
    "apps/daemonsets": "DaemonSet",
    "batch/jobs": "Job",
}
_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"
_UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL: dict[str, Fraction] = {
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}


def quantity(value: Any) -> Fraction:
    """A Kubernetes quantity as an exact number (enough of the grammar for capacities)."""
    text = str(value).strip()
    for suffix, factor in _UNITS.items():
        if text.endswith(suffix):
            return Fraction(text[: -len(suffix)]) * factor
    if text and text[-1] in _DECIMAL:
        return Fraction(text[:-1]) * _DECIMAL[text[-1]]
    return Fraction(text) if text else Fraction(0)


@dataclass
class SimulationConfig:
    """What to simulate."""

    nodes: int = 0
    node_cpu: str = "8"
    node_memory: str = "32Gi"
    node_pods: int = 110
    node_prefix: str = "node"
    workloads: bool = False

    @property
    def enabled(self) -> bool:
        return self.nodes > 0 or self.workloads


def requests_of(pod: Obj) -> dict[str, Fraction]:
    """cpu/memory a Pod asks for (containers summed, init containers as a maximum)."""
    spec = pod.get("spec") or {}
    total: dict[str, Fraction] = {"cpu": Fraction(0), "memory": Fraction(0)}
    for container in spec.get("containers") or []:
        for name in total:
            amount = ((container.get("resources") or {}).get("requests") or {}).get(name)
            if amount is not None:
                total[name] += quantity(amount)
    for container in spec.get("initContainers") or []:
        requested = (container.get("resources") or {}).get("requests") or {}
        for name, current in list(total.items()):
            if requested.get(name) is not None:
                total[name] = max(current, quantity(requested[name]))
    return total


def node_ready(node: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or []
    )


def template_hash(template: Obj) -> str:
    """A stable, name-safe hash of a pod template (the role of pod-template-hash)."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    return "".join(_SUFFIX[b % len(_SUFFIX)] for b in digest[:10])


class Simulation:
    """Nodes, scheduler and workload controllers of one localkube."""

    def __init__(self, server: LocalKube, config: SimulationConfig) -> None:
        self.server = server
        self.config = config
        self.store = server.store
        self.queue = self.store.subscribe_all()
        self._dirty: set[tuple[str, str, str]] = set()
        self._schedule = True
        self._unplaced: set[tuple[str, str]] = set()  # pods that fit nowhere when last tried

    # -- plumbing -----------------------------------------------------------------------------
    def _rt(self, storage: str) -> Any:
        return self.server.registry.storage_types().get(storage)

    def _create(self, storage: str, namespace: str, obj: Obj) -> Obj | None:
        try:
            return self.server.api.create(self._rt(storage), namespace, obj, SYSTEM, WriteOptions()).obj
        except APIError as exc:
            log.debug("simulation: create %s failed: %s", storage, exc)
            return None

    def _update(self, storage: str, obj: Obj, subresource: str = "") -> None:
        meta = obj["metadata"]
        with contextlib.suppress(APIError):
            self.server.api.update(
                self._rt(storage), meta.get("namespace", ""), meta["name"], obj, subresource, SYSTEM, WriteOptions()
            )

    def _delete(self, storage: str, namespace: str, name: str) -> None:
        with contextlib.suppress(APIError):
            self.server.api.delete(self._rt(storage), namespace, name, {"propagationPolicy": "Background"}, False)

    def _set_status(self, storage: str, obj: Obj, status: Obj) -> None:
        merged = {**(obj.get("status") or {}), **status}
        if merged != (obj.get("status") or {}):
            self._update(storage, {**obj, "status": merged}, "status")

    # -- main loop ----------------------------------------------------------------------------
    async def run(self) -> None:
        self._create_nodes()
        for storage in WORKLOADS:
            for obj in self.store.items(storage):
                self._dirty.add((storage, obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))
        while True:
            if self._dirty or self._schedule:
                self._reconcile()
            storage, event = await self.queue.get()
            self._note(storage, event.type, event.obj)
            await asyncio.sleep(0.02)  # gather a burst of changes into one round
            while not self.queue.empty():
                storage, event = self.queue.get_nowait()
                self._note(storage, event.type, event.obj)

    def _note(self, storage: str, kind: str, obj: Obj) -> None:
        """Mark what a change concerns: the object if it is a workload, the workloads
        owning it (a Pod's ReplicaSet, a ReplicaSet's Deployment), and the scheduler
        when a Pod waits for a node or capacity was freed."""
        meta = obj["metadata"]
        namespace = meta.get("namespace", "")
        if self.config.workloads:
            if storage in WORKLOADS:
                self._dirty.add((storage, namespace, meta["name"]))
            for owner in meta.get("ownerReferences") or []:
                for key, workload in WORKLOADS.items():
                    if owner.get("kind") == workload:
                        self._dirty.add((key, namespace, owner.get("name", "")))
        if storage == PODS:
            waiting = (obj.get("status") or {}).get("phase", "Pending") == "Pending"
            if kind != "DELETED" and waiting:
                self._schedule = True
            elif kind == "DELETED" and self._unplaced:
                self._schedule = True  # room was freed for pods that did not fit
        elif storage == NODES:
            self._schedule = True
            if self.config.workloads:
                for daemonset in self.store.items("apps/daemonsets"):
                    self._dirty.add(
                        ("apps/daemonsets", daemonset["metadata"]["namespace"], daemonset["metadata"]["name"])
                    )

    def _reconcile(self) -> None:
        if self._schedule:
            self._schedule = False
            self._bind_pending()
        dirty, self._dirty = self._dirty, set()
        # parents first: a Deployment's new ReplicaSet is handled in the same round
        order = list(WORKLOADS)
        for storage, namespace, name in sorted(dirty, key=lambda k: order.index(k[0])):
            obj = self.store.get(storage, namespace, name)
            if obj is None or obj["metadata"].get("deletionTimestamp"):
                continue
            try:
                getattr(self, f"_sync_{WORKLOADS[storage].lower()}")(obj)
            except Exception:  # one odd object must not stop the simulation
                log.exception("simulating %s %s/%s failed", storage, namespace, name)

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

    def _free(self) -> dict[str, dict[str, Fraction]]:
        """What each schedulable, ready node still has room for."""
        free: dict[str, dict[str, Fraction]] = {}
        for node in self.store.items(NODES):
            if not node_ready(node) or (node.get("spec") or {}).get("unschedulable"):
                continue
            allocatable = (node.get("status") or {}).get("allocatable") or {}
            free[node["metadata"]["name"]] = {
                "cpu": quantity(allocatable.get("cpu", 0)),
                "memory": quantity(allocatable.get("memory", 0)),
                "pods": quantity(allocatable.get("pods", 0)),
            }
        for pod in self.store.items(PODS):
            host = str((pod.get("spec") or {}).get("nodeName") or "")
            phase = (pod.get("status") or {}).get("phase")
            if host in free and phase not in ("Succeeded", "Failed"):
                asked = requests_of(pod)
                free[host]["cpu"] -= asked["cpu"]
                free[host]["memory"] -= asked["memory"]
                free[host]["pods"] -= 1
        return free

    def _bind_pending(self) -> None:
        # pods placed on a node by their creator (DaemonSets, by hand) start there
        for pod in self.store.items(PODS):
            node = (pod.get("spec") or {}).get("nodeName")
            if (
                node
                and (pod.get("status") or {}).get("phase", "Pending") == "Pending"
                and not pod["metadata"].get("deletionTimestamp")
            ):
                self._run_on(pod, node)
        free = self._free()
        pending = [
            p
            for p in self.store.items(PODS)
            if not (p.get("spec") or {}).get("nodeName") and not p["metadata"].get("deletionTimestamp")
        ]
        pending.sort(key=lambda p: p["metadata"].get("creationTimestamp", ""))
        self._unplaced = set()
        for pod in pending:
            asked = requests_of(pod)
            wanted = (pod.get("spec") or {}).get("nodeSelector") or {}
            target = None
            for name in sorted(free, key=lambda n: (-free[n]["cpu"], n)):
                room = free[name]
                node = self.store.get(NODES, "", name) or {}
                labels = node["metadata"].get("labels") or {} if node else {}
                if any(labels.get(k) != v for k, v in wanted.items()):
                    continue
                if room["pods"] >= 1 and room["cpu"] >= asked["cpu"] and room["memory"] >= asked["memory"]:
                    target = name
                    break
            if target is None:
                self._unplaced.add((pod["metadata"]["namespace"], pod["metadata"]["name"]))
                self._unschedulable(pod, len(free))
                continue
            free[target]["cpu"] -= asked["cpu"]
            free[target]["memory"] -= asked["memory"]
            free[target]["pods"] -= 1
            self._run_on(pod, target)

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
            bound = copy.deepcopy(pod)
            bound["spec"]["nodeName"] = node
            self._update(PODS, bound)
        stored = self.store.get(PODS, pod["metadata"]["namespace"], pod["metadata"]["name"])
        if stored is None or (stored.get("spec") or {}).get("nodeName") != node:
            return
        now = now_time()
        job = any(o.get("kind") == "Job" for o in stored["metadata"].get("ownerReferences") or [])
        phase = "Succeeded" if job else "Running"
        ready = "False" if job else "True"
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
                    "ready": not job,
                    "started": not job,
                    "restartCount": 0,
                    "state": state,
                }
                for c in containers
            ],
        }
        self._set_status(PODS, stored, status)

    # -- pods of a workload ---------------------------------------------------------------------
    def _owned_pods(self, owner: Obj) -> list[Obj]:
        uid = owner["metadata"]["uid"]
        return [
            p
            for p in self.store.items(PODS, owner["metadata"]["namespace"])
            if any(o.get("uid") == uid for o in p["metadata"].get("ownerReferences") or [])
            and not p["metadata"].get("deletionTimestamp")
        ]

    def _new_pod(self, owner: Obj, name: str, extra_labels: dict[str, str] | None = None, node: str = "") -> None:
        template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
        meta = template.get("metadata") or {}
        labels = {**(meta.get("labels") or {}), **(extra_labels or {})}
        spec = template.get("spec") or {}
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
        created = self._create(PODS, owner["metadata"]["namespace"], pod)
        if created is not None:
            self._schedule = True

    def _scale_pods(self, owner: Obj, wanted: int, prefix: str, labels: dict[str, str] | None = None) -> None:
        pods = self._owned_pods(owner)
        for _ in range(wanted - len(pods)):
            suffix = "".join(secrets.choice(_SUFFIX) for _ in range(5))
            self._new_pod(owner, f"{prefix}-{suffix}", labels)
        if len(pods) > wanted:
            # remove unscheduled pods first, then the newest
            doomed = sorted(
                pods,
                key=lambda p: (bool((p.get("spec") or {}).get("nodeName")), p["metadata"].get("creationTimestamp", "")),
                reverse=False,
            )
            for pod in doomed[: len(pods) - wanted]:
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
        wanted = int((rs.get("spec") or {}).get("replicas", 1))
        labels = ((rs.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
        self._scale_pods(rs, wanted, rs["metadata"]["name"], labels)
        self._status_replicaset(rs)

    def _status_replicaset(self, rs: Obj) -> None:
        current = self.store.get("apps/replicasets", rs["metadata"]["namespace"], rs["metadata"]["name"]) or rs
        total, ready = self._counts(self._owned_pods(current))
        status = {
            "replicas": total,
            "fullyLabeledReplicas": total,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "observedGeneration": current["metadata"].get("generation", 1),
        }
        self._set_status("apps/replicasets", current, status)

    # -- Deployment -----------------------------------------------------------------------------------
    def _replicasets_of(self, deployment: Obj) -> list[Obj]:
        uid = deployment["metadata"]["uid"]
        return [
            rs
            for rs in self.store.items("apps/replicasets", deployment["metadata"]["namespace"])
            if any(o.get("uid") == uid for o in rs["metadata"].get("ownerReferences") or [])
        ]

    def _sync_deployment(self, deployment: Obj) -> None:
        spec = deployment.get("spec") or {}
        wanted = int(spec.get("replicas", 1))
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
            created = self._create("apps/replicasets", deployment["metadata"]["namespace"], rs)
            if created is not None:
                self._sync_replicaset(created)
        elif int((current.get("spec") or {}).get("replicas", 0)) != wanted:
            self._update("apps/replicasets", {**current, "spec": {**current["spec"], "replicas": wanted}})
            self._dirty.add(("apps/replicasets", current["metadata"]["namespace"], name))
        for old in owned:
            if old["metadata"]["name"] != name and int((old.get("spec") or {}).get("replicas", 0)) != 0:
                self._update("apps/replicasets", {**old, "spec": {**old["spec"], "replicas": 0}})
                self._dirty.add(("apps/replicasets", old["metadata"]["namespace"], old["metadata"]["name"]))
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
            pods_total, pods_ready = self._counts(self._owned_pods(rs))
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
        self._set_status("apps/deployments", current, status)

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
        wanted = int((sts.get("spec") or {}).get("replicas", 1))
        name = sts["metadata"]["name"]
        existing = {p["metadata"]["name"] for p in self._owned_pods(sts)}
        revision = f"{name}-{template_hash((sts.get('spec') or {}).get('template') or {})}"
        for index in range(wanted):
            pod_name = f"{name}-{index}"
            if pod_name not in existing:
                labels = {
                    "statefulset.kubernetes.io/pod-name": pod_name,
                    "controller-revision-hash": revision,
                    "apps.kubernetes.io/pod-index": str(index),
                }
                self._new_pod(sts, pod_name, labels)
        for pod_name in existing:
            index = pod_name.rsplit("-", 1)[-1]
            if not index.isdigit() or int(index) >= wanted:
                self._delete(PODS, sts["metadata"]["namespace"], pod_name)
        self._status_statefulset(sts)

    def _status_statefulset(self, sts: Obj) -> None:
        current = self.store.get("apps/statefulsets", sts["metadata"]["namespace"], sts["metadata"]["name"]) or sts
        total, ready = self._counts(self._owned_pods(current))
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
        nodes = [n["metadata"]["name"] for n in self.store.items(NODES) if node_ready(n)]
        pods = self._owned_pods(ds)
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
        desired = sum(1 for n in self.store.items(NODES) if node_ready(n))
        total, ready = self._counts(self._owned_pods(current))
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
        pods = self._owned_pods(job)
        succeeded = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Succeeded")
        active = [p for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        missing = min(parallelism, completions - succeeded) - len(active)
        for _ in range(max(0, missing)):
            suffix = "".join(secrets.choice(_SUFFIX) for _ in range(5))
            self._new_pod(job, f"{job['metadata']['name']}-{suffix}", {"job-name": job["metadata"]["name"]})
        self._status_job(job)

    def _status_job(self, job: Obj) -> None:
        current = self.store.get("batch/jobs", job["metadata"]["namespace"], job["metadata"]["name"]) or job
        spec = current.get("spec") or {}
        completions = int(spec.get("completions") or 1)
        pods = self._owned_pods(current)
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
