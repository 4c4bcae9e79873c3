"""What the decisions record beyond Karmada's messages: the affinity requirement a
cluster fails (with its own value of the key) and the static weight of each cluster."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.scheduling import ScheduleFailure, schedule
from karmada.scheduling.decisions import decode_decisions, encode_decisions, material
from tests.factories import binding_spec, cluster

CLUSTERS = [
    cluster("a", labels={"env": "prod", "location": "cn"}, region="cn-east", zones=["z1"], allocatable={"pods": 10}),
    cluster("b", labels={"env": "dev"}, provider="aws", allocatable={"pods": 10}),
    cluster("c", allocatable={"pods": 10}),
]


def _misses(placement: dict[str, Any], name: str, **kwargs: Any) -> list[dict[str, Any]]:
    try:
        decisions = schedule(binding_spec(placement=placement, **kwargs), None, CLUSTERS).decisions
    except ScheduleFailure as failure:  # no cluster fits: the decisions still say why
        decisions = failure.decisions
    return decisions[name].affinity_misses


@pytest.mark.parametrize(
    ("affinity", "name", "expected"),
    [
        (
            {"labelSelector": {"matchLabels": {"env": "prod"}}},
            "b",
            {"field": "labelSelector", "requirement": "env=prod", "key": "env", "value": "dev"},
        ),
        (
            {"labelSelector": {"matchLabels": {"env": "prod"}}},
            "c",
            {"field": "labelSelector", "requirement": "env=prod", "key": "env"},
        ),
        (
            {"labelSelector": {"matchExpressions": [{"key": "location", "operator": "In", "values": ["cn", "sg"]}]}},
            "b",
            {"field": "labelSelector", "requirement": "location In [cn,sg]", "key": "location"},
        ),
        (
            {"fieldSelector": {"matchExpressions": [{"key": "provider", "operator": "In", "values": ["gcp"]}]}},
            "b",
            {"field": "fieldSelector", "requirement": "provider In [gcp]", "key": "provider", "value": "aws"},
        ),
        (
            {"fieldSelector": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z2"]}]}},
            "a",
            {"field": "fieldSelector", "requirement": "zone In [z2]", "key": "zone", "value": "z1"},
        ),
        ({"clusterNames": ["a"]}, "b", {"field": "clusterNames", "requirement": "clusterNames [a]"}),
        ({"exclude": ["b"]}, "b", {"field": "exclude", "requirement": "exclude b"}),
    ],
)
def test_cluster_affinity_miss_names_the_requirement_and_the_value(
    affinity: dict[str, Any], name: str, expected: dict[str, Any]
) -> None:
    assert _misses({"clusterAffinity": affinity}, name) == [{"term": "clusterAffinity", **expected}]


def test_clusters_that_match_or_fail_other_filters_have_no_misses() -> None:
    placement = {"clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}}}
    assert _misses(placement, "a") == []
    tainted = [cluster("t", labels={"env": "prod"}, taints=[{"key": "k", "effect": "NoSchedule"}]), *CLUSTERS]
    result = schedule(binding_spec(placement=placement), None, tainted)
    assert result.decisions["t"].filtered and result.decisions["t"].affinity_misses == []


def test_affinities_term_and_its_overflow_tier_each_report_their_miss() -> None:
    placement = {
        "clusterAffinities": [
            {
                "affinityName": "primary",
                "clusterNames": ["a"],
                "overflowAffinities": [{"affinityName": "burst", "labelSelector": {"matchLabels": {"env": "dev"}}}],
            }
        ]
    }
    misses = _misses(placement, "c", replicas=2)
    assert misses == [
        {"term": "primary", "field": "clusterNames", "requirement": "clusterNames [a]"},
        {"term": "burst", "field": "labelSelector", "requirement": "env=dev", "key": "env"},
    ]


def test_static_weights_are_recorded_per_cluster_and_encoded() -> None:
    placement = {
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {
                "staticWeightList": [
                    {"targetCluster": {"clusterNames": ["a"]}, "weight": 1},
                    {"targetCluster": {"clusterNames": ["b"]}, "weight": 2},
                ]
            },
        }
    }
    result = schedule(binding_spec(replicas=3, placement=placement), None, CLUSTERS)
    assert {n: d.weight for n, d in result.decisions.items()} == {"a": 1, "b": 2, "c": 0}
    document = decode_decisions(encode_decisions(result.decisions, generation=1, affinity_name=None, outcome="Success"))
    assert document is not None
    by_name = {e["name"]: e for e in document["clusters"]}
    assert (by_name["a"]["weight"], by_name["a"]["replicas"], by_name["b"]["weight"], by_name["b"]["replicas"]) == (
        1,
        1,
        2,
        2,
    )


@pytest.mark.parametrize(
    "replica_scheduling",
    [
        None,
        {"replicaSchedulingType": "Duplicated"},
        {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
        {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"},
        },
    ],
)
def test_no_weight_unless_static_weighted(replica_scheduling: dict[str, Any] | None) -> None:
    placement = {"replicaScheduling": replica_scheduling} if replica_scheduling else {}
    result = schedule(binding_spec(replicas=3, placement=placement), None, CLUSTERS)
    assert all(d.weight is None for d in result.decisions.values())


def test_term_failures_are_recorded_and_material() -> None:
    none = encode_decisions({}, generation=1, affinity_name="b", outcome="Success")
    tried = encode_decisions({}, generation=1, affinity_name="b", outcome="Success", term_failures=[("a", "boom")])
    document = decode_decisions(tried)
    assert document is not None and document["termFailures"] == [{"term": "a", "error": "boom"}]
    assert "termFailures" not in (decode_decisions(none) or {})
    assert material(none) != material(tried)
