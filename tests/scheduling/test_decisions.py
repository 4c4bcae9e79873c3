"""The decisions annotation: content, order, and its size bound."""

from __future__ import annotations

import json

import pytest

from karmada.scheduling import schedule
from karmada.scheduling.decisions import DECISIONS_ANNOTATION, decode_decisions, encode_decisions, material
from karmada.scheduling.scheduler import ClusterDecision
from tests.factories import binding_spec, cluster


def test_key_is_ours_not_karmadas() -> None:
    assert DECISIONS_ANNOTATION == "scheduler.karmada-py.io/decisions"


def test_a_real_run_recorded_selected_first_then_feasible_then_filtered() -> None:
    clusters = [
        cluster("a", allocatable={"pods": 10}),
        cluster("b", allocatable={"pods": 10}, taints=[{"key": "k", "effect": "NoSchedule"}]),
        cluster("c", allocatable={"pods": 10}),
        cluster("d", allocatable={"pods": 10}),
    ]
    placement = {
        "clusterAffinity": {"clusterNames": ["a", "b", "c"]},
        "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
    }
    result = schedule(binding_spec(replicas=4, placement=placement), None, clusters)
    text = encode_decisions(result.decisions, generation=2, affinity_name=None, outcome="Success")
    document = decode_decisions(text)
    assert document is not None
    assert (document["v"], document["generation"], document["outcome"], document["truncated"]) == (1, 2, "Success", 0)
    assert "affinityName" not in document and ", " not in text and ": " not in text
    entries = document["clusters"]
    assert [e["name"] for e in entries] == ["a", "c", "b", "d"]
    assert entries[0] == {"name": "a", "selected": True, "score": 0, "allocatable": 10, "available": 10, "replicas": 4}
    # selected by the spread step (no constraints: every candidate), but Aggregated gave it nothing
    assert entries[1] == {"name": "c", "selected": True, "score": 0, "allocatable": 10, "available": 10}
    assert entries[2] == {
        "name": "b",
        "filtered": [["TaintToleration", "cluster(s) had untolerated taint {k:NoSchedule}"]],
    }
    assert entries[3]["filtered"] == [
        ["ClusterAffinity", "cluster(s) did not match the placement cluster affinity constraint"]
    ]


def many(n: int) -> dict[str, ClusterDecision]:
    return {
        f"member-{i:04d}": ClusterDecision(f"member-{i:04d}", filtered=[("ClusterAffinity", "x" * 50)])
        for i in range(n)
    }


@pytest.mark.parametrize(
    ("count", "max_clusters", "max_bytes", "kept"),
    [
        (3, 100, 16384, 3),
        (150, 100, 16384, 100),  # capped by count
        (150, 100, 2000, None),  # capped by size
    ],
)
def test_bounded(count: int, max_clusters: int, max_bytes: int, kept: int | None) -> None:
    text = encode_decisions(
        many(count),
        generation=1,
        affinity_name="a",
        outcome="NoClusterFit",
        max_clusters=max_clusters,
        max_bytes=max_bytes,
    )
    assert len(text.encode()) <= max_bytes
    document = json.loads(text)
    if kept is not None:
        assert len(document["clusters"]) == kept
    assert len(document["clusters"]) + document["truncated"] == count
    assert document["clusters"] and document["affinityName"] == "a"


@pytest.mark.parametrize("text", [None, "", "not json", "[]", '{"v": 99}'])
def test_unreadable_values_decode_to_nothing(text: str | None) -> None:
    assert decode_decisions(text) is None


def test_capacity_figures_are_not_material() -> None:
    def run(available: int) -> str:
        decision = ClusterDecision("a", score=0, allocatable_replicas=available, available_replicas=available)
        decision.selected, decision.replicas = True, 2
        return encode_decisions({"a": decision}, generation=1, affinity_name=None, outcome="Success")

    assert material(run(5)) == material(run(9))
    moved = ClusterDecision("a", score=0, allocatable_replicas=5, available_replicas=5, selected=True, replicas=3)
    assert material(encode_decisions({"a": moved}, generation=1, affinity_name=None, outcome="Success")) != material(
        run(5)
    )
