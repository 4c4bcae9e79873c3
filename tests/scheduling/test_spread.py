"""Cluster selection under spread constraints (spreadconstraint/select_clusters_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.api.policy import Placement
from karmada.scheduling import ScheduleError
from karmada.scheduling.spread import ClusterDetail, select_best_clusters
from tests.factories import binding_spec, cluster

# reference 5.7 example 9: (name, score, available replicas)
CLUSTERS = [("member4", 60, 50), ("member2", 40, 60), ("member3", 30, 80), ("member1", 20, 40)]


def details(rows: list[tuple[str, int, int]], regions: dict[str, str] | None = None) -> list[ClusterDetail]:
    return [
        ClusterDetail(
            name=n,
            score=s,
            cluster=cluster(n, region=(regions or {}).get(n)),
            allocatable_replicas=a,
            available_replicas=a,
        )
        for n, s, a in rows
    ]


def placement(spread: list[dict[str, Any]], scheduling: dict[str, Any] | None) -> Placement:
    data: dict[str, Any] = {"spreadConstraints": spread}
    if scheduling:
        data["replicaScheduling"] = scheduling
    return Placement.from_dict(data)


DIVIDED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
BY_CLUSTER_2 = [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}]


@pytest.mark.parametrize(
    ("spread", "scheduling", "replicas", "expected"),
    [
        (BY_CLUSTER_2, None, 120, ["member4", "member2"]),  # Duplicated ignores capacity
        (BY_CLUSTER_2, DIVIDED, 120, ["member4", "member3"]),  # member2 swapped for more capacity
        ([], DIVIDED, 120, ["member4", "member2", "member3", "member1"]),  # no constraint: all, by score
        # Divided+Weighted with a static list ignores spread constraints
        (
            BY_CLUSTER_2,
            {
                "replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Weighted",
                "weightPreference": {"staticWeightList": [{"targetCluster": {}, "weight": 1}]},
            },
            120,
            ["member4", "member2", "member3", "member1"],
        ),
    ],
)
def test_select_by_cluster(
    spread: list[dict[str, Any]], scheduling: dict[str, Any] | None, replicas: int, expected: list[str]
) -> None:
    spec = binding_spec(replicas=replicas)
    chosen = select_best_clusters(placement(spread, scheduling), spec, details(CLUSTERS))
    assert [c.name for c in chosen] == expected


@pytest.mark.parametrize(
    ("spread", "replicas", "message"),
    [
        (BY_CLUSTER_2, 200, "no enough resource when selecting 2 clusters"),
        (
            [{"spreadByField": "cluster", "minGroups": 7, "maxGroups": 8}],
            10,
            "the number of feasible clusters is less than spreadConstraint.MinGroups",
        ),
        ([{"spreadByField": "cluster", "minGroups": 0, "maxGroups": 0}], 10, "no enough resource"),
        ([{"spreadByLabel": "rack", "minGroups": 1, "maxGroups": 2}], 10, "just support cluster and region"),
    ],
)
def test_select_by_cluster_errors(spread: list[dict[str, Any]], replicas: int, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        select_best_clusters(placement(spread, DIVIDED), binding_spec(replicas=replicas), details(CLUSTERS))


def test_select_by_region_takes_best_cluster_of_each_region_then_fills() -> None:
    regions = {"member4": "r1", "member2": "r1", "member3": "r2", "member1": "r3"}
    spread = [
        {"spreadByField": "region", "minGroups": 2, "maxGroups": 2},
        {"spreadByField": "cluster", "minGroups": 2, "maxGroups": 3},
    ]
    chosen = select_best_clusters(placement(spread, None), binding_spec(replicas=10), details(CLUSTERS, regions))
    names = [c.name for c in chosen]
    assert len(names) == 3
    # two regions, one best cluster from each, then the best remaining cluster of those regions
    assert names[:2] == ["member4", "member3"] and names[2] == "member2"


def test_seed_duplicated_two_regions_two_clusters() -> None:
    """Seed 003: Duplicated with region and cluster groups both 2."""
    regions = {"member4": "r1", "member2": "r1", "member3": "r2", "member1": "r2"}
    spread = [
        {"spreadByField": "region", "minGroups": 2, "maxGroups": 2},
        {"spreadByField": "cluster", "minGroups": 2, "maxGroups": 2},
    ]
    rs = {"replicaSchedulingType": "Duplicated"}
    chosen = select_best_clusters(placement(spread, rs), binding_spec(replicas=3), details(CLUSTERS, regions))
    assert sorted(c.cluster.spec.region or "" for c in chosen) == ["r1", "r2"]


def test_too_few_regions() -> None:
    regions = {n: "r1" for n, _, _ in CLUSTERS}
    spread = [
        {"spreadByField": "region", "minGroups": 2, "maxGroups": 2},
        {"spreadByField": "cluster", "maxGroups": 2},
    ]
    with pytest.raises(ScheduleError, match="feasible region is less than"):
        select_best_clusters(placement(spread, None), binding_spec(replicas=1), details(CLUSTERS, regions))
