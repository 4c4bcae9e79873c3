"""Why a resource template went where it went, from what the control plane recorded.

:func:`explain` reads, never recomputes: the claim on the template (and the
matching rules, only to say why that policy wins), the binding's
``spec.clusters`` and the scheduler's decisions annotation
(:mod:`karmada.scheduling.decisions`), each Work's applied-overrides
annotations and manifest, and the binding's dependencies annotation. The
scheduler is not re-run: clusters may have changed since, and the point is to
show the decision that was made. When the binding changed after that decision
the explanation says it is stale.

The result is plain JSON data (``-o json|yaml`` prints it as is);
:mod:`karmada.explanation.text` renders it for people.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from karmada.api.errors import APIValidationError
from karmada.api.keys import BINDING_DEPENDENCIES_ANNOTATION
from karmada.api.names import cluster_of_execution_space
from karmada.api.policy import ClusterPropagationPolicy, PropagationPolicy
from karmada.explanation.overrides import applied_overrides
from karmada.matching import claim_of, match_policy
from karmada.scheduling.decisions import DECISIONS_ANNOTATION, decode_decisions

Obj = dict[str, Any]

SELECTED = "Selected"
FEASIBLE = "NotSelected"
FILTERED = "Filtered"


@dataclass
class Inputs:
    """Everything explain reads; the command gathers it with plain GETs and LISTs."""

    template: Obj
    binding: Obj | None = None
    works: Sequence[Obj] = ()
    propagation_policies: Sequence[Obj] = ()
    cluster_propagation_policies: Sequence[Obj] = ()
    override_policies: Sequence[Obj] = ()
    cluster_override_policies: Sequence[Obj] = ()
    binding_kind: str = "ResourceBinding"


def _meta(obj: Mapping[str, Any] | None) -> Obj:
    return dict((obj or {}).get("metadata") or {})


def _parsed(items: Sequence[Obj], model: type[PropagationPolicy] | type[ClusterPropagationPolicy]) -> list[Any]:
    out = []
    for obj in items:
        try:
            out.append(model.from_dict(obj))
        except APIValidationError:
            continue  # a policy we cannot read cannot be the reason either
    return out


def _policy_section(inputs: Inputs) -> Obj:
    template = inputs.template
    pps = _parsed(inputs.propagation_policies, PropagationPolicy)
    cpps = _parsed(inputs.cluster_propagation_policies, ClusterPropagationPolicy)
    claim = claim_of(template)
    match = match_policy(template, pps, cpps)
    if claim is None:
        if match is None:
            return {"claimed": False, "reason": "no PropagationPolicy or ClusterPropagationPolicy matches the template"}
        return {"claimed": False, "reason": f"not claimed yet; {match.reason}"}
    kind = "ClusterPropagationPolicy" if claim.cluster_wide else "PropagationPolicy"
    section: Obj = {"claimed": True, "kind": kind, "name": claim.name, "permanentID": claim.permanent_id}
    if not claim.cluster_wide:
        section["namespace"] = claim.namespace
    key = f"{kind} {claim.name}" if claim.cluster_wide else f"{kind} {claim.namespace}/{claim.name}"
    pool = cpps if claim.cluster_wide else [p for p in pps if p.metadata.namespace == claim.namespace]
    policy = next((p for p in pool if p.metadata.name == claim.name), None)
    if policy is None:
        section["reason"] = f"claimed by {key}, which no longer exists"
        return section
    section["priority"] = policy.spec.priority
    section["resourceSelectors"] = [s.to_dict() for s in policy.spec.resource_selectors]
    if match is not None and match.winner.key == key:
        section["reason"] = match.reason
    elif match is not None:
        # a claim stays with its policy (preemption aside), even when another would win now
        section["reason"] = f"claimed by {key}, and a claim stays put; matched anew, {match.reason}"
    else:
        section["reason"] = f"claimed by {key}; its selectors no longer match the template"
    return section


def _stale(binding: Obj, decisions: Obj | None) -> str | None:
    # the decision's own generation is the one the scheduler read; its write of spec.clusters
    # moves the binding one on, and that generation is the observed one: compare with that
    generation = _meta(binding).get("generation")
    observed = (binding.get("status") or {}).get("schedulerObservedGeneration")
    if decisions is None:
        return "the binding carries no recorded decision (not scheduled yet, or by a scheduler that does not record)"
    if observed is None:
        return "the binding has no schedulerObservedGeneration: the scheduler has not settled on it yet"
    if generation is not None and generation > observed:
        return f"the binding's generation {generation} is newer than the scheduled generation {observed}"
    return None


def _cluster_rows(binding: Obj, decisions: Obj | None) -> list[Obj]:
    assigned = {c.get("name"): c.get("replicas") for c in (binding.get("spec") or {}).get("clusters") or []}
    rows: list[Obj] = []
    seen: set[str] = set()
    for entry in (decisions or {}).get("clusters") or []:
        name = str(entry.get("name"))
        seen.add(name)
        if entry.get("filtered"):
            result = FILTERED
        elif entry.get("selected") or name in assigned:
            result = SELECTED
        else:
            result = FEASIBLE
        row: Obj = {"name": name, "result": result}
        if entry.get("filtered"):
            row["filters"] = [{"plugin": p, "reason": r} for p, r in entry["filtered"]]
        if entry.get("affinityMisses"):
            row["affinityMisses"] = entry["affinityMisses"]
        for key, out in (
            ("score", "score"),
            ("allocatable", "allocatableReplicas"),
            ("available", "availableReplicas"),
            ("weight", "weight"),
            ("overflowOrder", "overflowTier"),
        ):
            if key in entry:
                row[out] = entry[key]
        if result != FILTERED and "overflowTier" not in row and "score" in row:
            row["overflowTier"] = 0
        if name in assigned:
            row["replicas"] = assigned[name]
        rows.append(row)
    for name, replicas in assigned.items():
        if name not in seen:  # in the result but not in the (truncated or stale) record
            rows.append({"name": name, "result": SELECTED, "replicas": replicas})
    return rows


def _dependencies(binding: Obj) -> list[Obj]:
    text = _meta(binding).get("annotations", {}).get(BINDING_DEPENDENCIES_ANNOTATION)
    if not text:
        return []
    try:
        found = json.loads(text)
    except ValueError:
        return [{"error": f"annotation {BINDING_DEPENDENCIES_ANNOTATION} is not JSON"}]
    return [d for d in found if isinstance(d, dict)] if isinstance(found, list) else []


def _manifest_of(work: Obj, template: Obj) -> Obj:
    manifests = ((work.get("spec") or {}).get("workload") or {}).get("manifests") or []
    kind, name = template.get("kind"), _meta(template).get("name")
    for manifest in manifests:
        if isinstance(manifest, dict) and manifest.get("kind") == kind and _meta(manifest).get("name") == name:
            return manifest
    return manifests[0] if manifests and isinstance(manifests[0], dict) else {}


def _work_state(work: Obj) -> str:
    for condition in (work.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Applied":
            state = "Applied" if condition.get("status") == "True" else "NotApplied"
            message = condition.get("message")
            return f"{state}: {message}" if message and state != "Applied" else state
    return "Pending"


def explain(inputs: Inputs) -> Obj:
    """The explanation of one template, as JSON data."""
    template = inputs.template
    meta = _meta(template)
    resource: Obj = {"apiVersion": template.get("apiVersion"), "kind": template.get("kind"), "name": meta.get("name")}
    if meta.get("namespace"):
        resource["namespace"] = meta["namespace"]
    if meta.get("generation") is not None:
        resource["generation"] = meta["generation"]
    out: Obj = {"resource": resource, "policy": _policy_section(inputs)}
    binding = inputs.binding
    if binding is None:
        out["binding"] = None
        return out
    bmeta = _meta(binding)
    status = binding.get("status") or {}
    section: Obj = {"kind": inputs.binding_kind, "name": bmeta.get("name")}
    if bmeta.get("namespace"):
        section["namespace"] = bmeta["namespace"]
    for key, value in (
        ("generation", bmeta.get("generation")),
        ("schedulerObservedGeneration", status.get("schedulerObservedGeneration")),
    ):
        if value is not None:
            section[key] = value
    placement = (binding.get("spec") or {}).get("placement") or {}
    if placement.get("replicaScheduling"):
        section["replicaScheduling"] = placement["replicaScheduling"]
    if (binding.get("spec") or {}).get("replicas") is not None:
        section["replicas"] = binding["spec"]["replicas"]
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Scheduled":
            section["scheduled"] = {k: condition.get(k) for k in ("status", "reason", "message") if condition.get(k)}
    out["binding"] = section

    decisions = decode_decisions(bmeta.get("annotations", {}).get(DECISIONS_ANNOTATION))
    decision: Obj = {}
    if decisions is not None:
        for key in ("generation", "outcome", "affinityName", "termFailures", "truncated"):
            if decisions.get(key) not in (None, ""):
                decision[key] = decisions[key]
    stale = _stale(binding, decisions)
    decision["stale"] = stale is not None
    if stale:
        decision["staleReason"] = stale
    out["decision"] = decision
    out["clusters"] = _cluster_rows(binding, decisions)

    namespace = str(meta.get("namespace") or "")
    overrides: Obj = {}
    works: Obj = {}
    for work in sorted(inputs.works, key=lambda w: str(_meta(w).get("namespace"))):
        cluster = cluster_of_execution_space(str(_meta(work).get("namespace") or ""))
        if cluster is None:
            continue
        works[cluster] = {"name": _meta(work).get("name"), "state": _work_state(work)}
        applied = applied_overrides(
            work,
            _manifest_of(work, template),
            namespace,
            inputs.override_policies,
            inputs.cluster_override_policies,
        )
        if applied:
            overrides[cluster] = applied
    out["works"] = works
    out["overrides"] = overrides
    out["dependencies"] = _dependencies(binding)
    return out
