"""Attached bindings: the ResourceBinding of one dependency, shared by its referrers.

An attached binding is named as a policy would name the dependency's binding
(``<name>-<kind>``), is owned (controller reference) by the dependency itself,
and carries for each referring (independent) binding a ``depended-by-<hash>``
label whose value is the referrer's permanent id, and a ``requiredBy``
snapshot of the referrer's namespace, name and ``spec.clusters`` (plus the
clusters its Gracefully/Never eviction tasks still hold: see
:func:`snapshot_of`). The binding
controller renders its Works for ``spec.clusters`` plus every snapshot's
clusters; the scheduler leaves it alone (it carries no policy label).

A binding without ``spec.placement`` was made by the distributor: its
``conflictResolution`` and ``preserveResourcesOnDeletion`` are resolved from
all referrers (any ``Overwrite`` wins, any ``true`` wins), cleared when none
remain. A binding with a placement belongs to a policy (independent
propagation wins): only its labels, snapshots and resource are touched.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karmada.api.keys import BINDING_CONTROLLER_FINALIZER, RESOURCE_BINDING_PERMANENT_ID_LABEL
from karmada.api.names import binding_name, depended_by_label_key
from karmada.detection.bindings import controller_reference, controller_uid, object_reference

Obj = dict[str, Any]
Referrer = Callable[[str, str], Mapping[str, Any] | None]
"""Looks a referring binding up by (namespace, name); None when it is gone."""

DEPENDENCY_POLICY_CONFLICT = "DependencyPolicyConflict"
OVERWRITE, ABORT = "Overwrite", "Abort"
DIFFERENT_OWNER = (
    "failed to update resourceBinding({key}) due to different owner reference UID, will try again later after "
    "binding is garbage collected, see https://github.com/karmada-io/karmada/issues/6034"
)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def depended_by_labels(independent: Mapping[str, Any]) -> dict[str, str]:
    """The label an attached binding carries for ``independent``: key from its namespace and
    name, value its permanent id."""
    meta = _meta(independent)
    key = depended_by_label_key(str(meta.get("namespace") or ""), str(meta.get("name") or ""))
    return {key: str((meta.get("labels") or {}).get(RESOURCE_BINDING_PERMANENT_ID_LABEL, ""))}


def snapshot_of(independent: Mapping[str, Any]) -> Obj:
    """The ``requiredBy`` entry of a referring binding: namespace, name and its scheduled clusters,
    then the clusters its graceful eviction tasks still hold (purge mode other than ``Directly``).

    Beyond Karmada (whose snapshot has ``spec.clusters`` only, so a dependency's old copy
    went at once while the workload's old copy still ran there): the dependency stays
    wherever the workload's old copy waits for its replacement, and goes with it."""
    meta = _meta(independent)
    snapshot: Obj = {}
    if meta.get("namespace"):
        snapshot["namespace"] = meta["namespace"]
    snapshot["name"] = meta.get("name", "")
    spec = _spec(independent)
    clusters = copy.deepcopy(list(spec.get("clusters") or []))
    named = {c.get("name") for c in clusters if isinstance(c, dict)}
    for task in spec.get("gracefulEvictionTasks") or []:
        origin = task.get("fromCluster") if isinstance(task, dict) else None
        if origin and origin not in named and task.get("purgeMode") != "Directly":
            clusters.append({"name": origin})
            named.add(origin)
    if clusters:
        snapshot["clusters"] = clusters
    return snapshot


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return (a.get("namespace") or "") == (b.get("namespace") or "") and a.get("name") == b.get("name")


def _merged(existing: list[Obj], snapshot: Obj) -> list[Obj]:
    """Karmada's mergeBindingSnapshot: the referrer's clusters replaced in place, else appended."""
    merged = [copy.deepcopy(s) for s in existing]
    found = False
    for entry in merged:
        if _same(entry, snapshot):
            found = True
            if snapshot.get("clusters"):
                entry["clusters"] = copy.deepcopy(snapshot["clusters"])
            else:
                entry.pop("clusters", None)
    if not found:
        merged.append(copy.deepcopy(snapshot))
    return merged


@dataclass(frozen=True)
class PolicyResolution:
    """What the referrers of a distributor-made binding agree on, and where they disagree."""

    conflict_resolution: str
    preserve_resources_on_deletion: bool
    conflict_resolution_conflicted: bool = False
    preserve_conflicted: bool = False

    @property
    def conflict_message(self) -> str | None:
        """Karmada's ``DependencyPolicyConflict`` event message, when there is a conflict."""
        reasons = []
        if self.conflict_resolution_conflicted:
            reasons.append("ConflictResolution conflicted (Overwrite vs Abort)")
        if self.preserve_conflicted:
            reasons.append("PreserveResourcesOnDeletion conflicted (true vs false)")
        return f"Dependency policy conflict detected: {'; '.join(reasons)}." if reasons else None


def resolve_policies(referrers: Sequence[Mapping[str, Any]]) -> PolicyResolution:
    """Any ``Overwrite`` wins over ``Abort`` (unset is ``Abort``); any preserve ``true`` wins."""
    resolutions = {(_spec(r).get("conflictResolution") or ABORT) == OVERWRITE for r in referrers}
    preserves = {bool(_spec(r).get("preserveResourcesOnDeletion")) for r in referrers}
    return PolicyResolution(
        conflict_resolution=OVERWRITE if True in resolutions else ABORT,
        preserve_resources_on_deletion=True in preserves,
        conflict_resolution_conflicted=len(resolutions) > 1,
        preserve_conflicted=len(preserves) > 1,
    )


@dataclass
class AttachedUpdate:
    """The attached binding as it should be, and the conflict to report (if any)."""

    binding: Obj
    conflict_message: str | None = None
    notes: list[str] = field(default_factory=list)


def _resolve_into(spec: Obj, required_by: list[Obj], referrer: Referrer) -> PolicyResolution | None:
    """Set the resolved policy fields of a distributor-made binding (no placement)."""
    if spec.get("placement") is not None:
        return None
    if not required_by:
        # no referrer left: Karmada clears both (an empty conflictResolution is omitted and defaults)
        spec.pop("conflictResolution", None)
        spec.pop("preserveResourcesOnDeletion", None)
        return None
    found = [r for s in required_by if (r := referrer(str(s.get("namespace") or ""), str(s.get("name")))) is not None]
    resolution = resolve_policies(found)
    spec["conflictResolution"] = resolution.conflict_resolution
    spec["preserveResourcesOnDeletion"] = resolution.preserve_resources_on_deletion
    return resolution


class OwnerConflict(Exception):
    """The binding of that name belongs to another object of the same name (a deleted and
    recreated dependency whose old binding the garbage collector has not taken yet)."""


def attach(
    existing: Mapping[str, Any] | None,
    dependency: Mapping[str, Any],
    independent: Mapping[str, Any],
    referrer: Referrer,
) -> AttachedUpdate:
    """The attached binding of ``dependency`` once ``independent`` is among its referrers.

    ``existing`` is the stored binding of that name (None: create it). Raises
    :class:`OwnerConflict` when ``existing`` is another object's binding."""
    dep_meta = _meta(dependency)
    namespace = str(_meta(independent).get("namespace") or "")
    name = binding_name(str(dependency.get("kind", "")), str(dep_meta.get("name", "")))
    if existing is None:
        independent_spec = _spec(independent)
        spec: Obj = {"resource": object_reference(dependency), "requiredBy": []}
        if "conflictResolution" in independent_spec:
            spec["conflictResolution"] = independent_spec["conflictResolution"]
        if "preserveResourcesOnDeletion" in independent_spec:
            spec["preserveResourcesOnDeletion"] = independent_spec["preserveResourcesOnDeletion"]
        desired: Obj = {
            "apiVersion": "work.karmada.io/v1alpha2",
            "kind": "ResourceBinding",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "ownerReferences": [controller_reference(dependency)],
                "labels": {},
                "finalizers": [BINDING_CONTROLLER_FINALIZER],
            },
            "spec": spec,
        }
    else:
        owner = controller_uid(existing)
        if owner is not None and owner != dep_meta.get("uid"):
            raise OwnerConflict(DIFFERENT_OWNER.format(key=f"{namespace}/{name}"))
        desired = copy.deepcopy(dict(existing))
        desired["apiVersion"], desired["kind"] = "work.karmada.io/v1alpha2", "ResourceBinding"
    spec = desired.setdefault("spec", {})
    required_by = _merged(list(spec.get("requiredBy") or []), snapshot_of(independent))
    resolution = _resolve_into(spec, required_by, referrer)
    spec["requiredBy"] = required_by
    spec["resource"] = object_reference(dependency)
    meta = desired["metadata"]
    meta["labels"] = {**(meta.get("labels") or {}), **depended_by_labels(independent)}
    return AttachedUpdate(desired, resolution.conflict_message if resolution is not None else None)


def detach(existing: Mapping[str, Any], namespace: str, name: str, referrer: Referrer) -> Obj:
    """``existing`` without the referring binding ``namespace/name``: its label and snapshot
    removed, the policy fields resolved again from the referrers that remain."""
    desired = copy.deepcopy(dict(existing))
    desired["apiVersion"], desired["kind"] = "work.karmada.io/v1alpha2", "ResourceBinding"
    meta = desired.setdefault("metadata", {})
    labels = dict(meta.get("labels") or {})
    labels.pop(depended_by_label_key(namespace, name), None)
    meta["labels"] = labels
    spec = desired.setdefault("spec", {})
    gone = {"namespace": namespace, "name": name}
    required_by = [s for s in spec.get("requiredBy") or [] if not _same(s, gone)]
    _resolve_into(spec, required_by, referrer)
    if required_by:
        spec["requiredBy"] = required_by
    else:
        spec.pop("requiredBy", None)
    return desired
