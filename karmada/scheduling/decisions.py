"""The scheduler's per-cluster decisions, kept on the binding as one annotation.

"Why did it go there" must be answerable without re-running the scheduler
(clusters change after the fact), so every scheduling run that writes the
binding also records, under :data:`DECISIONS_ANNOTATION`, what it concluded
about each cluster. The value is compact JSON::

    {"v": 1, "generation": 3, "affinityName": "primary", "outcome": "Success",
     "clusters": [
        {"name": "member1", "selected": true, "score": 0, "allocatable": 10,
         "available": 10, "replicas": 1},
        {"name": "member3", "filtered": [["TaintToleration",
         "cluster(s) had untolerated taint {k=v:NoSchedule}"]]},
        {"name": "member4", "filtered": [["ClusterAffinity", "..."]],
         "affinityMisses": [{"term": "primary", "field": "labelSelector",
           "requirement": "env=prod", "key": "env", "value": "dev"}]}],
     "truncated": 0}

``termFailures`` lists the clusterAffinities terms tried before the recorded
one (or all of them, when none scheduled) with the error each got;
``weight`` is the cluster's static weight (static weighted division only);
``affinityMisses`` says, per observed affinity, the requirement a cluster
failed and its own value of that key (``value`` absent: it has none).

``clusters`` lists selected clusters first, then the other feasible ones by
score, then the filtered ones, each group by name; fields that do not apply
are left out. The size is bounded (:data:`MAX_CLUSTERS` entries,
:data:`MAX_BYTES` bytes): what does not fit is dropped from the end and
counted in ``truncated``, so a binding over thousands of clusters stays small.
The annotation key is ours, not Karmada's: Karmada does not record this.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from karmada.scheduling.scheduler import ClusterDecision

DECISIONS_ANNOTATION: Final = "scheduler.karmada-py.io/decisions"
"""Annotation on (Cluster)ResourceBindings holding the last run's decisions."""

FORMAT_VERSION: Final = 1
MAX_CLUSTERS: Final = 100
MAX_BYTES: Final = 16 * 1024


def _order(decision: ClusterDecision) -> tuple[int, int, str]:
    if decision.selected:
        group = 0
    elif not decision.filtered:
        group = 1
    else:
        group = 2
    return (group, -(decision.score or 0), decision.name)


def _entry(decision: ClusterDecision) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": decision.name}
    if decision.filtered:
        entry["filtered"] = [list(item) for item in decision.filtered]
    if decision.selected:
        entry["selected"] = True
    for key, value in (
        ("score", decision.score),
        ("allocatable", decision.allocatable_replicas),
        ("available", decision.available_replicas),
        ("overflowOrder", decision.overflow_order or None),
        ("replicas", decision.replicas),
        ("weight", decision.weight),
    ):
        if value is not None:
            entry[key] = value
    if decision.affinity_misses:
        entry["affinityMisses"] = decision.affinity_misses
    return entry


def _dump(document: dict[str, Any]) -> str:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def encode_decisions(
    decisions: dict[str, ClusterDecision],
    *,
    generation: int,
    affinity_name: str | None,
    outcome: str,
    term_failures: Sequence[tuple[str, str]] = (),
    max_clusters: int = MAX_CLUSTERS,
    max_bytes: int = MAX_BYTES,
) -> str:
    """The annotation value for one run (``outcome`` is the Scheduled condition's reason)."""
    ordered = sorted(decisions.values(), key=_order)
    # only the entries that can be kept are built: a binding over a thousand clusters keeps 100
    entries = [_entry(d) for d in ordered[:max_clusters]]
    total = len(ordered)
    document: dict[str, Any] = {"v": FORMAT_VERSION, "generation": generation}
    if affinity_name:
        document["affinityName"] = affinity_name
    document["outcome"] = outcome
    if term_failures:
        document["termFailures"] = [{"term": term, "error": error} for term, error in term_failures]
    kept = entries
    document["clusters"] = kept
    document["truncated"] = total - len(kept)
    text = _dump(document)
    if len(text.encode()) <= max_bytes:
        return text
    # too large: keep the longest prefix that fits (sizes add up, so measure, don't guess)
    base = len(_dump({**document, "clusters": [], "truncated": total}).encode())
    budget, count = max_bytes - base, 0
    for entry in kept:
        size = len(_dump(entry).encode()) + 1  # the comma
        if size > budget:
            break
        budget -= size
        count += 1
    document["clusters"] = kept[:count]
    document["truncated"] = total - count
    return _dump(document)


def decode_decisions(text: str | None) -> dict[str, Any] | None:
    """The recorded decisions, or None when absent or not ours to read."""
    if not text:
        return None
    try:
        document = json.loads(text)
    except ValueError:
        return None
    if not isinstance(document, dict) or document.get("v") != FORMAT_VERSION:
        return None
    return document


def material(text: str | None) -> Any:
    """What of a recorded run is worth a write: the outcome and where each cluster stands,
    not capacity figures that move with every pod in a member."""
    document = decode_decisions(text)
    if document is None:
        return None
    clusters = [
        {k: v for k, v in entry.items() if k not in ("allocatable", "available", "score")}
        for entry in document.get("clusters") or []
    ]
    return (
        document.get("affinityName"),
        document.get("outcome"),
        document.get("termFailures"),
        clusters,
        document.get("truncated"),
    )
