"""From a binding and its template to the Work of each target cluster (Karmada's
``ensureWork`` and ``CreateOrUpdateWork``), as pure functions.

Per target cluster, in Karmada's order: a copy of the template; replicas
revised to the cluster's share when the binding is a workload; a Job's
``completions`` share; ClusterOverridePolicies then OverridePolicies; the
binding's id label and reference annotations; the conflict resolution
(template annotation, else the binding's ``conflictResolution``); then the
decoration every manifest gets (managed label, template uid, Work name and
namespace), pruning, and the managed-labels/managed-annotations records.

:func:`desired_work` merges the rendered Work into the one already stored the
way Karmada does (labels, annotations and finalizers merged; spec replaced),
keeping the Work's permanent id, so :func:`work_changed` can tell a write
that would change nothing and the controller can skip it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from karmada.api.binding import ResourceBindingSpec, TargetCluster
from karmada.api.cluster import Cluster
from karmada.api.keys import (
    APPLIED_CLUSTER_OVERRIDES_ANNOTATION,
    APPLIED_OVERRIDES_ANNOTATION,
    BINDING_CONTROLLER_FINALIZER,
    CLUSTER_RESOURCE_BINDING_ANNOTATION,
    CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER,
    CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL,
    CONFLICT_RESOLUTION_ABORT,
    CONFLICT_RESOLUTION_ANNOTATION,
    CONFLICT_RESOLUTION_OVERWRITE,
    EXECUTION_CONTROLLER_FINALIZER,
    MANAGED_ANNOTATIONS_ANNOTATION,
    MANAGED_LABEL,
    MANAGED_LABEL_VALUE,
    MANAGED_LABELS_ANNOTATION,
    RESOURCE_BINDING_NAME_ANNOTATION,
    RESOURCE_BINDING_NAMESPACE_ANNOTATION,
    RESOURCE_BINDING_PERMANENT_ID_LABEL,
    RESOURCE_TEMPLATE_GENERATION_ANNOTATION,
    RESOURCE_TEMPLATE_UID_ANNOTATION,
    WORK_NAME_ANNOTATION,
    WORK_NAMESPACE_ANNOTATION,
    WORK_PERMANENT_ID_LABEL,
)
from karmada.api.names import execution_space, work_name
from karmada.api.override import ClusterOverridePolicy, OverridePolicy
from karmada.api.work import WORK_GROUP_VERSION
from karmada.interpreter.native import Operation
from karmada.json_copy import copy_json
from karmada.overrides import OverrideResult, apply_overrides
from karmada.scheduling.assignment import job_completions
from karmada.works.applied import applied_overrides_annotations
from karmada.works.prune import prune

Obj = dict[str, Any]
PURGE_DIRECTLY = "Directly"


class RenderError(ValueError):
    """The template cannot be rendered for a cluster (other than a failed override)."""


class ReplicaReviser(Protocol):
    """The interpreter operations rendering needs (the native one, or one with customizations)."""

    def hook_enabled(self, api_version: str, kind: str, operation: Any) -> bool: ...

    def revise_replica(self, obj: Mapping[str, Any], count: int) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Scope:
    """What differs between a ResourceBinding and a ClusterResourceBinding."""

    kind: str
    id_label: str
    finalizer: str
    namespaced: bool

    def reference_annotations(self, namespace: str, name: str) -> dict[str, str]:
        """The annotations naming the binding, on its Works and their manifests."""
        if self.namespaced:
            return {RESOURCE_BINDING_NAMESPACE_ANNOTATION: namespace, RESOURCE_BINDING_NAME_ANNOTATION: name}
        return {CLUSTER_RESOURCE_BINDING_ANNOTATION: name}

    def description(self, namespace: str, name: str) -> str:
        """``ResourceBinding(ns/name)`` or ``ClusterResourceBinding(name)``, as Karmada's messages say."""
        return f"{self.kind}({namespace}/{name})" if self.namespaced else f"{self.kind}({name})"


RESOURCE_BINDING = Scope("ResourceBinding", RESOURCE_BINDING_PERMANENT_ID_LABEL, BINDING_CONTROLLER_FINALIZER, True)
CLUSTER_RESOURCE_BINDING = Scope(
    "ClusterResourceBinding",
    CLUSTER_RESOURCE_BINDING_PERMANENT_ID_LABEL,
    CLUSTER_RESOURCE_BINDING_CONTROLLER_FINALIZER,
    False,
)


def target_clusters(spec: ResourceBindingSpec) -> list[TargetCluster]:
    """``spec.clusters`` then the clusters of every ``requiredBy`` snapshot; first occurrence wins."""
    targets = list(spec.clusters or [])
    seen = {t.name for t in targets}
    for snapshot in spec.required_by or []:
        for target in snapshot.clusters or []:
            if target.name not in seen:
                seen.add(target.name)
                targets.append(target)
    return targets


def expected_clusters(spec: ResourceBindingSpec) -> set[str]:
    """Clusters whose Works stay: targets, and clusters still being evicted gracefully
    (a ``Directly`` eviction removes its Work at once)."""
    names = {t.name for t in target_clusters(spec)}
    names.update(t.from_cluster for t in spec.graceful_eviction_tasks or [] if t.purge_mode != PURGE_DIRECTLY)
    return names


def directly_purged_clusters(spec: ResourceBindingSpec) -> set[str]:
    """Clusters of ``Directly`` eviction tasks: while a Work remains there nothing else is synced."""
    return {t.from_cluster for t in spec.graceful_eviction_tasks or [] if t.purge_mode == PURGE_DIRECTLY}


def is_workload(spec: ResourceBindingSpec) -> bool:
    """Whether the template has replicas to split (Karmada's ``IsWorkload``)."""
    return (spec.replicas or 0) > 0 or spec.replica_requirements is not None or bool(spec.components)


def conflict_resolution(manifest: Mapping[str, Any], binding_value: str | None) -> tuple[str, str | None]:
    """The Work's conflict resolution, and a warning when the template's annotation was ignored.

    The template's ``work.karmada.io/conflict-resolution`` wins when it is
    ``overwrite`` or ``abort``; otherwise the binding's ``Overwrite`` gives
    ``overwrite`` and anything else ``abort``.
    """
    annotations = (manifest.get("metadata") or {}).get("annotations") or {}
    chosen = annotations.get(CONFLICT_RESOLUTION_ANNOTATION, "")
    if chosen in (CONFLICT_RESOLUTION_OVERWRITE, CONFLICT_RESOLUTION_ABORT):
        return chosen, None
    warning = None
    if chosen:
        warning = (
            f"ignored the template's {CONFLICT_RESOLUTION_ANNOTATION} annotation {chosen!r}:"
            f" use {CONFLICT_RESOLUTION_OVERWRITE} or {CONFLICT_RESOLUTION_ABORT}"
        )
    value = CONFLICT_RESOLUTION_OVERWRITE if binding_value == "Overwrite" else CONFLICT_RESOLUTION_ABORT
    return value, warning


def suspend_dispatching(spec: ResourceBindingSpec, cluster: str) -> bool:
    """``suspension.dispatching``, or the cluster named in ``dispatchingOnClusters``."""
    suspension = spec.suspension
    if suspension is None:
        return False
    if suspension.dispatching:
        return True
    on = suspension.dispatching_on_clusters
    return on is not None and cluster in (on.cluster_names or [])


def completions_by_cluster(
    template: Mapping[str, Any], spec: ResourceBindingSpec, targets: Sequence[TargetCluster]
) -> dict[str, int] | None:
    """A Job's ``spec.completions`` split over the targets (Divided placements only); None otherwise."""
    if template.get("kind") != "Job":
        return None
    completions = (template.get("spec") or {}).get("completions")
    if not isinstance(completions, int) or isinstance(completions, bool):
        return None
    return job_completions(completions, spec, targets)


def _labels(obj: Obj) -> dict[str, str]:
    meta = obj.setdefault("metadata", {})
    labels = meta.get("labels")
    if not isinstance(labels, dict):
        labels = meta["labels"] = {}
    return cast(dict[str, str], labels)


def _annotations(obj: Obj) -> dict[str, str]:
    meta = obj.setdefault("metadata", {})
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    return cast(dict[str, str], annotations)


@dataclass
class RenderedWork:
    """The Work the binding wants in one cluster, before it meets the stored one."""

    cluster: str
    name: str
    namespace: str
    labels: dict[str, str]
    annotations: dict[str, str]
    manifest: Obj
    suspend_dispatching: bool
    preserve_resources_on_deletion: bool
    overrides: OverrideResult
    warnings: list[str] = field(default_factory=list)

    def applied_policies(self) -> list[str]:
        """``OverridePolicy ns/name`` / ``ClusterOverridePolicy name`` of each rule applied, in order."""
        names = [f"ClusterOverridePolicy {r.policy_name}" for r in self.overrides.cluster_rules]
        names += [
            f"OverridePolicy {r.policy.metadata.namespace}/{r.policy_name}" for r in self.overrides.namespaced_rules
        ]
        return list(dict.fromkeys(names))


def render_work(
    template: Mapping[str, Any],
    binding: Mapping[str, Any],
    spec: ResourceBindingSpec,
    scope: Scope,
    target: TargetCluster,
    cluster: Cluster,
    cluster_override_policies: Sequence[ClusterOverridePolicy],
    override_policies: Sequence[OverridePolicy],
    interpreter: ReplicaReviser,
    completions: Mapping[str, int] | None = None,
    *,
    stateful_failover_injection: bool = False,
) -> RenderedWork:
    """The Work of ``target`` (raises :class:`~karmada.overrides.OverrideError` when an
    override fails, :class:`RenderError` when the template cannot be revised).
    ``stateful_failover_injection``: Karmada's StatefulFailoverInjection gate."""
    manifest = copy_json(dict(template))
    api_version, kind = str(manifest.get("apiVersion", "")), str(manifest.get("kind", ""))
    # the scheduler's share, never the template's count (Duplicated clusters carry the full count)
    if is_workload(spec) and interpreter.hook_enabled(api_version, kind, Operation.REVISE_REPLICA):
        try:
            manifest = interpreter.revise_replica(manifest, target.replicas or 0)
        except (KeyError, ValueError, TypeError) as exc:
            raise RenderError(f"revising replicas for cluster {target.name}: {exc}") from None
    if completions is not None:
        if target.name not in completions:
            raise RenderError(f"no completions found for cluster {target.name}")
        manifest.setdefault("spec", {})["completions"] = completions[target.name]
    # overrides last but for Karmada's own keys: they have the highest priority
    result = apply_overrides(manifest, cluster, cluster_override_policies, override_policies)
    manifest = result.manifest
    if stateful_failover_injection:
        inject_preserved_label_state(spec, target, manifest, len(target_clusters(spec)))

    meta = binding.get("metadata") or {}
    binding_ns, binding_name = str(meta.get("namespace", "")), str(meta.get("name", ""))
    binding_id = str((meta.get("labels") or {}).get(scope.id_label, ""))
    _labels(manifest)[scope.id_label] = binding_id
    generation = (manifest.get("metadata") or {}).get("generation")
    if isinstance(generation, int) and generation > 0:
        _annotations(manifest)[RESOURCE_TEMPLATE_GENERATION_ANNOTATION] = str(generation)
    references = scope.reference_annotations(binding_ns, binding_name)
    _annotations(manifest).update(references)

    resolution, warning = conflict_resolution(manifest, spec.conflict_resolution)
    annotations = {**references, CONFLICT_RESOLUTION_ANNOTATION: resolution, **applied_overrides_annotations(result)}

    namespace = execution_space(target.name)
    manifest_meta = manifest.get("metadata") or {}
    name = work_name(kind, str(manifest_meta.get("name", "")), str(manifest_meta.get("namespace", "")))
    manifest = decorate(manifest, name, namespace, resolution)
    return RenderedWork(
        cluster=target.name,
        name=name,
        namespace=namespace,
        labels={scope.id_label: binding_id},
        annotations=annotations,
        manifest=manifest,
        suspend_dispatching=suspend_dispatching(spec, target.name),
        preserve_resources_on_deletion=bool(spec.preserve_resources_on_deletion),
        overrides=result,
        warnings=[warning] if warning else [],
    )


def inject_preserved_label_state(
    spec: ResourceBindingSpec, target: TargetCluster, manifest: Obj, clusters: int
) -> None:
    """Karmada's ``injectReservedLabelState``, in place: a workload that runs in one
    cluster and moved there by failover gets the last eviction task's
    ``preservedLabelState`` as labels, when that task was purged ``Directly`` and
    the cluster was not one of its ``clustersBeforeFailover``."""
    tasks = spec.graceful_eviction_tasks or []
    if clusters > 1 or not tasks:
        return
    last = tasks[-1]
    if last.purge_mode != PURGE_DIRECTLY or target.name in (last.clusters_before_failover or []):
        return
    _labels(manifest).update(last.preserved_label_state or {})


def decorate(manifest: Mapping[str, Any], work: str, space: str, resolution: str | None = None) -> Obj:
    """A template as Work ``space/work`` carries it (CreateOrUpdateWork's decoration, then
    the pruning Karmada's webhook would repeat): marked as managed by Karmada and by that
    Work, with the template's uid and, for bindings, the conflict resolution."""
    result: Obj = copy_json(dict(manifest))
    _labels(result)[MANAGED_LABEL] = MANAGED_LABEL_VALUE
    decorations = {
        RESOURCE_TEMPLATE_UID_ANNOTATION: str((result.get("metadata") or {}).get("uid", "")),
        WORK_NAME_ANNOTATION: work,
        WORK_NAMESPACE_ANNOTATION: space,
    }
    if resolution is not None:
        decorations[CONFLICT_RESOLUTION_ANNOTATION] = resolution
    _annotations(result).update(decorations)
    return prune(result)


def record_managed_keys(manifest: Obj, work_id: str) -> None:
    """The managed-annotations record (itself and managed-labels included), the Work's id
    label, then the managed-labels record; keys sorted, comma-separated."""
    annotations = _annotations(manifest)
    keys = {MANAGED_ANNOTATIONS_ANNOTATION, MANAGED_LABELS_ANNOTATION, *annotations}
    annotations[MANAGED_ANNOTATIONS_ANNOTATION] = ",".join(sorted(keys))
    labels = _labels(manifest)
    if work_id:
        labels[WORK_PERMANENT_ID_LABEL] = work_id
    annotations[MANAGED_LABELS_ANNOTATION] = ",".join(sorted(labels))


def desired_work(existing: Mapping[str, Any] | None, rendered: RenderedWork, new_id: str) -> Obj:
    """The Work to store: ``existing`` (if any) with the rendered labels, annotations and
    finalizer merged in and the spec replaced; a new Work gets ``new_id`` as its permanent id."""
    if existing is not None:
        work = copy.deepcopy(dict(existing))
        work.pop("status", None)
    else:
        work = {
            "apiVersion": WORK_GROUP_VERSION,
            "kind": "Work",
            "metadata": {"name": rendered.name, "namespace": rendered.namespace},
        }
    meta = work.setdefault("metadata", {})
    labels = {**(meta.get("labels") or {}), **rendered.labels}
    if not labels.get(WORK_PERMANENT_ID_LABEL):
        labels[WORK_PERMANENT_ID_LABEL] = new_id  # what Karmada's webhook adds on create
    meta["labels"] = labels
    annotations = dict(meta.get("annotations") or {})
    # unlike Karmada, which merges and so keeps naming policies that no longer apply
    for key in (APPLIED_OVERRIDES_ANNOTATION, APPLIED_CLUSTER_OVERRIDES_ANNOTATION):
        annotations.pop(key, None)
    meta["annotations"] = {**annotations, **rendered.annotations}
    meta["finalizers"] = sorted({*(meta.get("finalizers") or []), EXECUTION_CONTROLLER_FINALIZER})
    manifest = copy_json(rendered.manifest)
    record_managed_keys(manifest, labels[WORK_PERMANENT_ID_LABEL])
    work["spec"] = {
        "workload": {"manifests": [manifest]},
        "suspendDispatching": rendered.suspend_dispatching,
        "preserveResourcesOnDeletion": rendered.preserve_resources_on_deletion,
    }
    return work


def work_changed(existing: Mapping[str, Any] | None, desired: Mapping[str, Any]) -> bool:
    """Whether storing ``desired`` would change ``existing`` (spec, labels, annotations, finalizers)."""
    if existing is None:
        return True
    old, new = existing.get("metadata") or {}, desired.get("metadata") or {}
    return (
        existing.get("spec") != desired.get("spec")
        or (old.get("labels") or {}) != (new.get("labels") or {})
        or (old.get("annotations") or {}) != (new.get("annotations") or {})
        or sorted(old.get("finalizers") or []) != sorted(new.get("finalizers") or [])
    )
