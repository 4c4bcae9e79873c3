"""The cluster taint policy controller (Karmada's ``clustertaintpolicy``,
``cluster-taint-policy-controller``): taints Clusters from their conditions
as the ClusterTaintPolicies say (rules in :mod:`karmada.failover.taint_policies`).

Keyed by cluster name, one worker. A Cluster is reconciled when it is added
and when its conditions change; every targeted Cluster is reconciled when a
policy is added or its spec changes (deleting a policy removes nothing, as in
Karmada). One reconcile reads the Cluster and the policies from the shared
caches and writes the Cluster only when its taints change (optimistic lock:
a conflict retries from the fresh cache), with the event
``TaintClusterSucceed`` "Update Cluster(<name>) with taints(...) succeed",
or ``TaintClusterFailed``. A policy that does not validate is skipped with a
warning in the log; the others still apply. Runs only with the ``Failover``
feature gate, as in Karmada.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from controlplane.context import Context
from karmada.api.cluster import Cluster
from karmada.api.errors import APIValidationError
from karmada.api.taint_policy import ClusterTaintPolicy
from karmada.failover import policy_taints, taints_message
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError, Resource
from karmada.kube.controller import Controller
from karmada.kube.resources import CLUSTERS
from karmada.selectors.clusters import cluster_matches
from karmada.timestamps import now_time

log = logging.getLogger("controlplane.clustertaintpolicy")
Obj = dict[str, Any]
CLUSTER_TAINT_POLICIES = Resource("policy.karmada.io", "v1alpha1", "clustertaintpolicies", "ClusterTaintPolicy", False)


def _with_kind(obj: Obj, resource: Resource) -> Obj:
    return {**obj, "apiVersion": resource.api_version, "kind": resource.kind}


class ClusterTaintPolicyController:
    """Reconciles the taints of one Cluster against every ClusterTaintPolicy."""

    def __init__(self, client: KubeClient, clusters: Informer, policies: Informer, recorder: EventRecorder) -> None:
        self.client = client
        self.clusters = clusters
        self.policies = policies
        self.recorder = recorder

    def valid_policies(self) -> list[ClusterTaintPolicy]:
        valid = []
        for obj in self.policies.items():
            try:
                valid.append(ClusterTaintPolicy.from_dict(_with_kind(obj, CLUSTER_TAINT_POLICIES)))
            except APIValidationError as exc:
                log.warning("ClusterTaintPolicy %s skipped: %s", obj["metadata"].get("name"), exc)
        return valid

    async def reconcile(self, name: str) -> float | None:
        cluster = self.clusters.get(name)
        if cluster is None or cluster["metadata"].get("deletionTimestamp"):
            return None
        cluster = _with_kind(cluster, CLUSTERS)
        taints = policy_taints(cluster, self.valid_policies(), now_time())
        if taints is None:
            return None
        updated = copy.deepcopy(cluster)
        if taints:
            updated.setdefault("spec", {})["taints"] = taints
        else:
            updated.setdefault("spec", {}).pop("taints", None)
        try:
            stored = await self.client.update(CLUSTERS, updated)
        except KubeError as exc:
            if exc.not_found:
                return None
            await self.recorder.record(cluster, "Warning", "TaintClusterFailed", exc.message)
            raise
        self.clusters.store(stored)
        message = f"Update Cluster({name}) with taints({taints_message(taints)}) succeed"
        log.info("%s", message)
        await self.recorder.record(_with_kind(stored, CLUSTERS), "Normal", "TaintClusterSucceed", message)
        return None

    def clusters_of_policy(self, obj: Obj) -> list[str]:
        try:
            policy = ClusterTaintPolicy.from_dict(_with_kind(obj, CLUSTER_TAINT_POLICIES))
        except APIValidationError:
            return []
        names = []
        for cluster in self.clusters.items():
            target = policy.spec.target_clusters
            if target is None or cluster_matches(Cluster.from_dict(_with_kind(cluster, CLUSTERS)), target):
                names.append(cluster["metadata"]["name"])
        return names


def setup(context: Context) -> list[Controller[str]]:
    """Only with the Failover feature gate (Karmada's startClusterTaintPolicyController)."""
    if not context.options.feature_enabled("Failover"):
        log.info("clustertaintpolicy controller not started: the Failover feature gate is off")
        return []
    clusters = context.informers.informer(CLUSTERS)
    policies = context.informers.informer(CLUSTER_TAINT_POLICIES)
    controller = ClusterTaintPolicyController(context.client, clusters, policies, context.recorder)
    reconciler: Controller[str] = Controller("clustertaintpolicy", controller.reconcile)

    def cluster_keys(kind: str, obj: Obj, old: Obj | None) -> list[str]:
        if kind == "DELETED":
            return []
        conditions = (obj.get("status") or {}).get("conditions")
        if old is not None and kind == "MODIFIED" and conditions == (old.get("status") or {}).get("conditions"):
            return []
        return [obj["metadata"]["name"]]

    def policy_keys(kind: str, obj: Obj, old: Obj | None) -> list[str]:
        if kind == "DELETED" or (old is not None and obj.get("spec") == old.get("spec")):
            return []
        return controller.clusters_of_policy(obj)

    reconciler.watches(clusters, cluster_keys)
    reconciler.watches(policies, policy_keys)
    return [reconciler]
