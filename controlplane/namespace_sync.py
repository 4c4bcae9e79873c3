"""The namespace-sync controller (Karmada's namespace sync controller): every
user namespace of the control plane reaches every member cluster without any
policy.

For each namespace that is not reserved (``karmada-system``,
``karmada-cluster``, ``karmada-es-*``), not ``default``, not matched by
``--skipped-propagating-namespaces`` (``kube-.*``) and not labelled
``namespace.karmada.io/skip-auto-propagation: "true"``, a Work named as Karmada
names it (``work_name("Namespace", name)``) is kept in every cluster's
execution space, controlled by the Namespace (so the garbage collector removes
the Works, and through the agents the member namespaces, when the namespace
goes), with the matching ClusterOverridePolicies applied and the manifest
decorated as Karmada decorates Work manifests. A new cluster gets the Works of
every existing namespace; a changed ClusterOverridePolicy re-syncs the
namespaces it selects.

One worker keyed by namespace name, fed by the Namespace, Cluster,
ClusterOverridePolicy and Work caches; a reconcile reads caches only and
writes a Work only when it differs, so a restart writes nothing new.
"""

from __future__ import annotations

import copy
import logging
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from controlplane.context import Context
from karmada.api import APIValidationError, Cluster, ClusterOverridePolicy
from karmada.api.keys import (
    APPLIED_CLUSTER_OVERRIDES_ANNOTATION,
    EXECUTION_CONTROLLER_FINALIZER,
    NAMESPACE_DEFAULT,
    SKIP_AUTO_PROPAGATION_LABEL,
    WORK_PERMANENT_ID_LABEL,
)
from karmada.api.names import cluster_of_execution_space, execution_space, is_reserved_namespace, work_name
from karmada.kube import EventRecorder, Informer, KubeClient, KubeError
from karmada.kube.controller import Controller
from karmada.kube.resources import CLUSTERS, NAMESPACES, WORKS, Resource
from karmada.overrides import OverrideError, apply_overrides
from karmada.works.render import decorate, record_managed_keys

log = logging.getLogger("controlplane.namespace_sync")
Obj = dict[str, Any]

CLUSTER_OVERRIDE_POLICIES = Resource(
    "policy.karmada.io", "v1alpha1", "clusteroverridepolicies", "ClusterOverridePolicy", False
)
SPACE_RETRY = 1.0  # seconds between looks for a new cluster's execution space


# -- pure parts -------------------------------------------------------------------


def should_sync(name: str, skipped: Sequence[re.Pattern[str]]) -> bool:
    """Whether namespace ``name`` is propagated at all (its labels aside)."""
    if is_reserved_namespace(name) or name == NAMESPACE_DEFAULT:
        return False
    return not any(pattern.fullmatch(name) for pattern in skipped)


def skips_auto_propagation(namespace: Mapping[str, Any]) -> bool:
    labels = (namespace.get("metadata") or {}).get("labels") or {}
    return str(labels.get(SKIP_AUTO_PROPAGATION_LABEL, "")).lower() == "true"


def decorate_manifest(manifest: Mapping[str, Any], work: str, space: str, work_id: str) -> Obj:
    """A Namespace as its Work carries it: decorated and pruned as every Work manifest, and
    the managed label/annotation keys recorded."""
    result = decorate(manifest, work, space)
    record_managed_keys(result, work_id)
    return result


def namespace_work(
    namespace: Mapping[str, Any],
    cluster: str,
    manifest: Mapping[str, Any],
    override_annotations: Mapping[str, str],
    existing: Mapping[str, Any] | None,
) -> Obj:
    """The Work that puts ``namespace`` (already overridden: ``manifest``) into ``cluster``;
    an ``existing`` Work keeps its own labels, annotations, finalizers and permanent id."""
    meta = namespace["metadata"]
    name, space = work_name("Namespace", meta["name"]), execution_space(cluster)
    old_meta: Mapping[str, Any] = (existing or {}).get("metadata") or {}
    work_id = (old_meta.get("labels") or {}).get(WORK_PERMANENT_ID_LABEL) or str(uuid.uuid4())
    labels = {**(old_meta.get("labels") or {}), WORK_PERMANENT_ID_LABEL: work_id}
    annotations = {
        k: v for k, v in (old_meta.get("annotations") or {}).items() if k != APPLIED_CLUSTER_OVERRIDES_ANNOTATION
    }
    annotations.update(override_annotations)
    finalizers = list(old_meta.get("finalizers") or [])
    if EXECUTION_CONTROLLER_FINALIZER not in finalizers:
        finalizers.append(EXECUTION_CONTROLLER_FINALIZER)
    owner = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    # listed objects carry no apiVersion/kind: set them, so a cached Work compares equal
    work: Obj = {**copy.deepcopy(dict(existing or {})), "apiVersion": WORKS.api_version, "kind": "Work"}
    work_meta = work.setdefault("metadata", {})
    work_meta.update({"name": name, "namespace": space, "labels": labels, "finalizers": finalizers})
    if annotations:
        work_meta["annotations"] = annotations
    else:
        work_meta.pop("annotations", None)
    if not work_meta.get("ownerReferences"):
        work_meta["ownerReferences"] = [owner]
    work["spec"] = {"workload": {"manifests": [decorate_manifest(manifest, name, space, work_id)]}}
    return work


def selected_namespaces(policy: Mapping[str, Any] | None) -> set[str] | None:
    """Namespaces a ClusterOverridePolicy selects by name; None when it selects every namespace."""
    names: set[str] = set()
    for selector in ((policy or {}).get("spec") or {}).get("resourceSelectors") or []:
        if selector.get("apiVersion") != "v1" or selector.get("kind") != "Namespace":
            continue
        if not selector.get("name"):
            return None
        names.add(str(selector["name"]))
    return names


# -- the controller ---------------------------------------------------------------


class _Parsed:
    """Models of cached objects, parsed once per resourceVersion."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self._cache: dict[str, tuple[str, Any]] = {}

    def __call__(self, obj: Obj) -> Any:
        meta = obj["metadata"]
        key, version = str(meta.get("uid") or meta["name"]), str(meta.get("resourceVersion", ""))
        found = self._cache.get(key)
        if found is None or found[0] != version:
            found = (version, self.model.from_dict(obj))
            self._cache[key] = found
        return found[1]

    def forget(self, obj: Obj) -> None:
        meta = obj.get("metadata") or {}
        self._cache.pop(str(meta.get("uid") or meta.get("name")), None)


class NamespaceSyncController:
    """Reconciles the Works of one namespace by name."""

    def __init__(
        self,
        client: KubeClient,
        namespaces: Informer,
        clusters: Informer,
        policies: Informer,
        works: Informer,
        recorder: EventRecorder,
        skipped: Iterable[str],
    ) -> None:
        self.client = client
        self.namespaces = namespaces
        self.clusters = clusters
        self.policies = policies
        self.works = works
        self.recorder = recorder
        self.skipped = [re.compile(p) for p in skipped]
        self.cluster_model = _Parsed(Cluster)
        self.policy_model = _Parsed(ClusterOverridePolicy)
        clusters.add_handler(lambda kind, obj, old: self.cluster_model.forget(obj) if kind == "DELETED" else None)
        policies.add_handler(lambda kind, obj, old: self.policy_model.forget(obj) if kind == "DELETED" else None)

    def should_sync(self, name: str) -> bool:
        return should_sync(name, self.skipped)

    async def reconcile(self, name: str) -> float | None:
        if not self.should_sync(name):
            return None
        namespace = self.namespaces.get(name)
        if namespace is None:
            await self._remove_works(name)
            return None
        if namespace["metadata"].get("deletionTimestamp"):
            return None  # the garbage collector removes the Works once it is gone
        if skips_auto_propagation(namespace):
            log.info("namespace %s: skip auto propagation", name)
            return None
        namespace = {**namespace, "apiVersion": "v1", "kind": "Namespace"}  # listed objects carry neither
        policies = self._policies()
        errors: list[str] = []
        waiting = False
        for cluster in sorted(self.clusters.items(), key=lambda c: str(c["metadata"]["name"])):
            if cluster["metadata"].get("deletionTimestamp"):
                continue  # its execution space is going away with it
            try:
                waiting = not await self._sync(namespace, cluster, policies) or waiting
            except (KubeError, OverrideError, APIValidationError) as exc:
                cluster_name = cluster["metadata"]["name"]
                errors.append(f"sync namespace({name}) to cluster({cluster_name}) failed due to: {exc}")
        if errors:
            message = "; ".join(errors)
            await self.recorder.record(namespace, "Warning", "SyncWorkFailed", message)
            raise RuntimeError(message)
        return SPACE_RETRY if waiting else None

    def _policies(self) -> list[ClusterOverridePolicy]:
        parsed = []
        for obj in self.policies.items():
            try:
                parsed.append(self.policy_model(obj))
            except APIValidationError as exc:  # a bad policy must not stop the good ones
                log.warning("ClusterOverridePolicy %s ignored: %s", obj["metadata"]["name"], exc)
        return parsed

    async def _sync(self, namespace: Obj, cluster: Obj, policies: list[ClusterOverridePolicy]) -> bool:
        """Converge one cluster's Work; False while the cluster has no execution space yet."""
        cluster_name = str(cluster["metadata"]["name"])
        manifest: Obj = namespace
        override_annotations: dict[str, str] = {}
        if policies:
            result = apply_overrides(namespace, self.cluster_model(cluster), policies, [])
            manifest, override_annotations = result.manifest, result.annotations()
        name, space = work_name("Namespace", namespace["metadata"]["name"]), execution_space(cluster_name)
        existing = self.works.get(name, space)
        if existing is not None and existing["metadata"].get("deletionTimestamp"):
            raise KubeError(409, "Conflict", f"work {space}/{name} is being deleted")
        desired = namespace_work(namespace, cluster_name, manifest, override_annotations, existing)
        if existing is not None:
            existing = {**existing, "apiVersion": WORKS.api_version, "kind": "Work"}
        if existing is None:
            try:
                stored = await self.client.create(WORKS, desired, space)
            except KubeError as exc:
                if exc.not_found:
                    # a cluster just joined: the cluster controller is creating its execution space
                    log.info("namespace %s: waiting for execution space %s", namespace["metadata"]["name"], space)
                    return False
                if not exc.already_exists:
                    raise
                # the cache has not seen it yet: update the stored one next time round
                raise KubeError(409, "Conflict", f"work {space}/{name} exists but is not cached yet") from None
            log.info("namespace %s: created Work %s/%s", namespace["metadata"]["name"], space, name)
        elif desired != existing:
            stored = await self.client.update(WORKS, desired, space)
            log.info("namespace %s: updated Work %s/%s", namespace["metadata"]["name"], space, name)
        else:
            return True
        self.works.store(stored)
        return True

    async def _remove_works(self, namespace: str) -> None:
        """Works of a namespace that is gone (the garbage collector does this too; without one,
        say against an API server with no controller manager, the members would keep it)."""
        name = work_name("Namespace", namespace)
        for cluster in list(self.clusters.items()):
            space = execution_space(str(cluster["metadata"]["name"]))
            work = self.works.get(name, space)
            if work is None or work["metadata"].get("deletionTimestamp"):
                continue
            owners = work["metadata"].get("ownerReferences") or []
            if not any(o.get("kind") == "Namespace" and o.get("name") == namespace for o in owners):
                continue
            try:
                await self.client.delete(WORKS, name, space)
            except KubeError as exc:
                if not exc.not_found:
                    raise
            log.info("namespace %s: deleted Work %s/%s", namespace, space, name)


def setup(context: Context) -> list[Controller[str]]:
    informers = context.informers
    namespaces = informers.informer(NAMESPACES)
    clusters = informers.informer(CLUSTERS)
    policies = informers.informer(CLUSTER_OVERRIDE_POLICIES)
    works = informers.informer(WORKS)
    controller = NamespaceSyncController(
        context.client,
        namespaces,
        clusters,
        policies,
        works,
        context.recorder,
        context.options.skipped_propagating_namespaces,
    )
    reconciler: Controller[str] = Controller("namespace-sync", controller.reconcile)

    def all_namespaces() -> list[str]:
        return [n["metadata"]["name"] for n in namespaces.items() if controller.should_sync(n["metadata"]["name"])]

    reconciler.watches(namespaces, lambda kind, obj, old: [obj["metadata"]["name"]])
    # a new cluster needs every namespace (Karmada reacts to Cluster creation only)
    reconciler.watches(clusters, lambda kind, obj, old: all_namespaces() if kind == "ADDED" else [])

    def policy_keys(kind: str, obj: Obj, old: Obj | None) -> list[str]:
        names: set[str] = set()
        for policy in (obj, old):
            if policy is None:
                continue
            selected = selected_namespaces(policy)
            if selected is None:
                return all_namespaces()
            names |= selected
        return sorted(names)

    reconciler.watches(policies, policy_keys)

    def owner_of_deleted_work(kind: str, obj: Obj, old: Obj | None) -> list[str]:
        # a namespace Work deleted by hand comes back (one lookup per deleted Work)
        if kind != "DELETED" or cluster_of_execution_space(obj["metadata"].get("namespace", "")) is None:
            return []
        owners = obj["metadata"].get("ownerReferences") or []
        return [str(o["name"]) for o in owners if o.get("kind") == "Namespace" and o.get("apiVersion") == "v1"]

    reconciler.watches(works, owner_of_deleted_work)
    return [reconciler]
