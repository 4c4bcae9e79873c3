"""``status.aggregatedStatus`` and the ``FullyApplied`` condition of a binding.

Each Work of the binding (one per cluster, in ``karmada-es-<cluster>``) gives
one item: an applied Work gives the reflected status and health of the
manifest that is the binding's template (matched by its ordinal and
group/version/kind/namespace/name, as the agent identifies it); a Work not
(yet) applied gives ``applied`` false (omitted, as Go's ``omitempty`` writes
it), health ``Unknown`` and the message of its ``Applied`` condition. Works
being deleted are left out. Items are sorted by cluster name, so an unchanged
set of Works gives an identical list and no write.

``FullyApplied`` is True only when the binding targets clusters (its
``spec.clusters``, the clusters of its ``requiredBy`` snapshots and those of
eviction tasks not purged ``Directly``), there is exactly one item per target
and every item is applied on a target.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from karmada.api.keys import EXECUTION_SPACE_PREFIX
from karmada.clusters.conditions import set_condition

Obj = dict[str, Any]

FULLY_APPLIED = "FullyApplied"
FULLY_APPLIED_SUCCESS_REASON = "FullyAppliedSuccess"
FULLY_APPLIED_FAILED_REASON = "FullyAppliedFailed"
FULLY_APPLIED_SUCCESS_MESSAGE = "All works have been successfully applied"
FULLY_APPLIED_FAILED_MESSAGE = "Failed to apply all works, see status.aggregatedStatus for details"
APPLIED = "Applied"
UNKNOWN = "Unknown"


class ManifestNotFound(ValueError):
    """A Work of the binding does not carry the binding's template (or is outside an execution space)."""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def target_clusters(spec: Mapping[str, Any]) -> set[str]:
    """Clusters a binding's Works may live in (Karmada's ``ObtainBindingSpecExistingClusters``)."""
    names = {str(c.get("name")) for c in spec.get("clusters") or []}
    for snapshot in spec.get("requiredBy") or []:
        names.update(str(c.get("name")) for c in snapshot.get("clusters") or [])
    for task in spec.get("gracefulEvictionTasks") or []:
        # a Directly-purged cluster's Work is an orphan to delete, not a target
        if task.get("purgeMode") != "Directly":
            names.add(str(task.get("fromCluster")))
    return names


def _split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _manifest_index(work: Mapping[str, Any], resource: Mapping[str, Any]) -> int:
    manifests = ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []
    for index, manifest in enumerate(manifests):
        meta = _meta(manifest)
        if (
            manifest.get("apiVersion") == resource.get("apiVersion")
            and manifest.get("kind") == resource.get("kind")
            and (meta.get("namespace") or "") == (resource.get("namespace") or "")
            and meta.get("name") == resource.get("name")
        ):
            return index
    raise ManifestNotFound(
        f"Work {_meta(work).get('namespace')}/{_meta(work).get('name')} holds no manifest "
        f"{resource.get('kind')} {_ref(resource)}"
    )


def _ref(resource: Mapping[str, Any]) -> str:
    namespace = resource.get("namespace") or ""
    return f"{namespace}/{resource.get('name')}" if namespace else str(resource.get("name"))


def _same_identifier(identifier: Mapping[str, Any], ordinal: int, resource: Mapping[str, Any]) -> bool:
    group, version = _split_api_version(str(resource.get("apiVersion", "")))
    return (
        identifier.get("ordinal") == ordinal
        and (identifier.get("group") or "") == group
        and identifier.get("version") == version
        and identifier.get("kind") == resource.get("kind")
        and (identifier.get("namespace") or "") == (resource.get("namespace") or "")
        and identifier.get("name") == resource.get("name")
    )


def _applied_condition(work: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for condition in (work.get("status") or {}).get("conditions") or []:
        if condition.get("type") == APPLIED:
            return condition  # type: ignore[no-any-return]
    return None


def aggregated_items(works: Iterable[Mapping[str, Any]], resource: Mapping[str, Any]) -> list[Obj]:
    """One ``aggregatedStatus`` item per Work of the binding whose template is ``resource``
    (the binding's ``spec.resource``), sorted by cluster name.

    Raises :class:`ManifestNotFound` for a Work that does not carry the template.
    """
    items: list[Obj] = []
    for work in works:
        meta = _meta(work)
        if meta.get("deletionTimestamp"):
            continue
        ordinal = _manifest_index(work, resource)
        namespace = str(meta.get("namespace") or "")
        if not namespace.startswith(EXECUTION_SPACE_PREFIX):
            raise ManifestNotFound(f"Work {namespace}/{meta.get('name')} is not in an execution space")
        item: Obj = {"clusterName": namespace[len(EXECUTION_SPACE_PREFIX) :]}
        condition = _applied_condition(work)
        if condition is None or condition.get("status") != "True":
            # not applied (or not yet reported): say why, when the agent said
            message = (condition or {}).get("message") or ""
            if message:
                item["appliedMessage"] = message
            item["health"] = UNKNOWN
            items.append(item)
            continue
        item["applied"] = True
        item["health"] = UNKNOWN
        for status in (work.get("status") or {}).get("manifestStatuses") or []:
            if _same_identifier(status.get("identifier") or {}, ordinal, resource):
                if status.get("status") is not None:
                    item["status"] = copy.deepcopy(status["status"])
                if status.get("health"):
                    item["health"] = status["health"]
                else:
                    item.pop("health")  # Go copies the empty health, which omitempty drops
                break
        items.append(item)
    items.sort(key=lambda i: str(i["clusterName"]))
    return items


def fully_applied_condition(spec: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> tuple[str, str, str]:
    """(status, reason, message) of ``FullyApplied`` for a binding spec and its items."""
    targets = target_clusters(spec)
    applied = (
        bool(targets)
        and len(targets) == len(items)
        and all(item.get("applied") and item.get("clusterName") in targets for item in items)
    )
    if applied:
        return "True", FULLY_APPLIED_SUCCESS_REASON, FULLY_APPLIED_SUCCESS_MESSAGE
    return "False", FULLY_APPLIED_FAILED_REASON, FULLY_APPLIED_FAILED_MESSAGE


def binding_status(
    status: Mapping[str, Any] | None, spec: Mapping[str, Any], items: Sequence[Mapping[str, Any]], now: str
) -> Obj:
    """The binding's ``status`` with ``aggregatedStatus`` and ``FullyApplied`` set from
    ``items``; every other field (the scheduler's) is kept as it is."""
    new = copy.deepcopy(dict(status or {}))
    if items:
        new["aggregatedStatus"] = [copy.deepcopy(dict(i)) for i in items]
    else:
        new.pop("aggregatedStatus", None)  # omitempty
    state, reason, message = fully_applied_condition(spec, items)
    set_condition(new.setdefault("conditions", []), FULLY_APPLIED, state, reason, message, now)
    return new


def newly_failed(old: Sequence[Mapping[str, Any]] | None, new: Sequence[Mapping[str, Any]]) -> list[Obj]:
    """Items of ``new`` that report an apply failure ``old`` did not report (so each
    failure message is reflected once, not on every status change)."""
    before = {str(i.get("clusterName")): i for i in old or []}
    failed: list[Obj] = []
    for item in new:
        message = item.get("appliedMessage")
        if item.get("applied") or not message:
            continue
        previous = before.get(str(item.get("clusterName")))
        if previous is not None and not previous.get("applied") and previous.get("appliedMessage") == message:
            continue
        failed.append(dict(item))
    return failed
