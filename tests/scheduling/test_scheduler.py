"""The whole decision: filters with reasons, errors as Karmada classifies them,
clusterAffinities fallback, overflow tiers, and capacity from the estimator."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.api import Cluster
from karmada.api.binding import ReplicaRequirements
from karmada.scheduling import ScheduleFailure, max_available_replicas, schedule
from tests.factories import binding_spec, cluster, status

PODS: dict[str, int | str] = {"pods": 110, "cpu": "8", "memory": "32Gi"}


def names(result: Any) -> dict[str, int | None]:
    return {c.name: c.replicas for c in result.clusters}


def test_seed_example_divides_by_static_weight() -> None:
    """Seed 003's complete example: 6 replicas, member1:member2 weighted 1:2."""
    placement = {
        "clusterAffinity": {"clusterNames": ["member1", "member2"]},
        "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 2, "maxGroups": 2}],
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {
                "staticWeightList": [
                    {"targetCluster": {"clusterNames": ["member1"]}, "weight": 1},
                    {"targetCluster": {"clusterNames": ["member2"]}, "weight": 2},
                ]
            },
        },
    }
    clusters = [cluster(n, allocatable=PODS) for n in ("member1", "member2", "member3")]
    result = schedule(binding_spec(replicas=6, placement=placement, requests={"cpu": "100m"}), None, clusters)
    assert names(result) == {"member1": 2, "member2": 4}
    assert result.decisions["member3"].filtered == [
        ("ClusterAffinity", "cluster(s) did not match the placement cluster affinity constraint")
    ]
    assert result.decisions["member1"].selected and result.decisions["member1"].replicas == 2


def test_non_workload_goes_everywhere_without_replicas() -> None:
    clusters = [cluster("a"), cluster("b")]
    spec = binding_spec(kind="ConfigMap", api_version="v1", placement={})
    result = schedule(spec, None, clusters)
    assert names(result) == {"a": None, "b": None}


def test_filters_report_every_reason_and_fit_error_message() -> None:
    clusters = [
        cluster("tainted", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
        cluster("no-api", apis={"v1": ["ConfigMap"]}),
        cluster("gone", deleting=True),
    ]
    with pytest.raises(ScheduleFailure) as caught:
        schedule(binding_spec(replicas=1), None, clusters)
    failure = caught.value
    assert failure.reason == "NoClusterFit"
    assert str(failure) == (
        "0/3 clusters are available: 1 cluster(s) did not have the API resource, "
        "1 cluster(s) had untolerated taint {dedicated=x:NoSchedule}, 1 cluster(s) is being deleted."
    )
    assert failure.decisions["tainted"].filtered == [
        ("TaintToleration", "cluster(s) had untolerated taint {dedicated=x:NoSchedule}")
    ]


def test_no_clusters_at_all() -> None:
    with pytest.raises(ScheduleFailure, match=r"^0/0 clusters are available: no cluster exists\.$"):
        schedule(binding_spec(replicas=1), None, [])


def test_toleration_admits_tainted_cluster_and_prefer_no_schedule_is_ignored() -> None:
    clusters = [
        cluster("special", taints=[{"key": "dedicated", "value": "special-user", "effect": "NoSchedule"}]),
        cluster("soft", taints=[{"key": "x", "effect": "PreferNoSchedule"}]),
    ]
    placement = {"clusterTolerations": [{"key": "dedicated", "value": "special-user", "effect": "NoSchedule"}]}
    result = schedule(binding_spec(kind="ConfigMap", api_version="v1", placement=placement), None, clusters)
    assert set(names(result)) == {"special", "soft"}


def test_already_scheduled_clusters_skip_taint_and_api_checks() -> None:
    tainted = cluster("m1", taints=[{"key": "cluster.karmada.io/unreachable", "effect": "NoSchedule"}], apis={})
    spec = binding_spec(kind="ConfigMap", api_version="v1", clusters={"m1": 0})
    assert set(names(schedule(spec, None, [tainted]))) == {"m1"}


def test_evicted_cluster_is_excluded() -> None:
    spec = binding_spec(
        kind="ConfigMap",
        api_version="v1",
        gracefulEvictionTasks=[{"fromCluster": "a", "reason": "TaintUntolerated", "producer": "TaintManager"}],
    )
    result = schedule(spec, None, [cluster("a"), cluster("b")])
    assert set(names(result)) == {"b"}
    assert result.decisions["a"].filtered[0][0] == "ClusterEviction"


def test_spread_field_filter() -> None:
    placement = {
        "spreadConstraints": [
            {"spreadByField": "region", "minGroups": 1, "maxGroups": 1},
            {"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1},
        ]
    }
    result = schedule(
        binding_spec(kind="ConfigMap", api_version="v1", placement=placement),
        None,
        [cluster("a", region="r1"), cluster("b")],
    )
    assert set(names(result)) == {"a"}
    assert result.decisions["b"].filtered == [("SpreadConstraint", "cluster(s) did not have region property")]


def test_not_enough_capacity_is_unschedulable() -> None:
    placement = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}
    clusters = [cluster("a", allocatable={"pods": 2}), cluster("b", allocatable={"pods": 3})]
    with pytest.raises(ScheduleFailure) as caught:
        schedule(binding_spec(replicas=10, placement=placement, requests={}), None, clusters)
    assert caught.value.reason == "Unschedulable"


def test_cluster_without_resource_summary_has_no_capacity() -> None:
    placement = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}
    clusters = [cluster("a"), cluster("b", allocatable={"pods": 5})]
    result = schedule(binding_spec(replicas=4, placement=placement, requests={}), None, clusters)
    assert names(result) == {"b": 4}
    assert result.decisions["a"].allocatable_replicas == 0


AFFINITIES = {
    "clusterAffinities": [
        {"affinityName": "primary", "clusterNames": ["idc"]},
        {"affinityName": "backup", "clusterNames": ["cloud"]},
    ],
}


def test_cluster_affinities_fall_back_to_the_next_term() -> None:
    clusters = [cluster("idc", taints=[{"key": "down", "effect": "NoSchedule"}]), cluster("cloud")]
    spec = binding_spec(kind="ConfigMap", api_version="v1", placement=AFFINITIES)
    result = schedule(spec, None, clusters)
    assert result.affinity_name == "backup" and set(names(result)) == {"cloud"}


def test_cluster_affinities_walk_only_forward_until_a_reschedule() -> None:
    clusters = [cluster("idc"), cluster("cloud")]
    observed = status(schedulerObservingAffinityName="backup", lastScheduledTime="2024-01-01T00:00:00Z")
    spec = binding_spec(kind="ConfigMap", api_version="v1", placement=AFFINITIES)
    assert schedule(spec, observed, clusters).affinity_name == "backup"
    again = binding_spec(
        kind="ConfigMap", api_version="v1", placement=AFFINITIES, rescheduleTriggeredAt="2024-01-02T00:00:00Z"
    )
    assert schedule(again, observed, clusters).affinity_name == "primary"


def test_all_terms_failing_keeps_the_observed_term_and_the_first_error() -> None:
    clusters = [cluster("other")]
    observed = status(schedulerObservingAffinityName="primary")
    with pytest.raises(ScheduleFailure) as caught:
        schedule(binding_spec(kind="ConfigMap", api_version="v1", placement=AFFINITIES), observed, clusters)
    assert caught.value.reason == "NoClusterFit" and caught.value.affinity_name == "primary"


def test_overflow_tiers_fill_in_order() -> None:
    placement = {
        "clusterAffinities": [
            {
                "affinityName": "idc-primary",
                "clusterNames": ["idc-cluster1"],
                "overflowAffinities": [
                    {"affinityName": "cloud-overflow", "clusterNames": ["cloud-cluster1", "cloud-cluster2"]}
                ],
            }
        ],
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"},
        },
    }
    clusters = [
        cluster("idc-cluster1", allocatable={"pods": 4}),
        cluster("cloud-cluster1", allocatable={"pods": 10}),
        cluster("cloud-cluster2", allocatable={"pods": 10}),
    ]
    result = schedule(binding_spec(replicas=10, placement=placement, requests={}), None, clusters)
    assert names(result) == {"idc-cluster1": 4, "cloud-cluster1": 3, "cloud-cluster2": 3}
    assert result.decisions["cloud-cluster1"].overflow_order == 1
    small = schedule(binding_spec(replicas=3, placement=placement, requests={}), None, clusters)
    assert names(small) == {"idc-cluster1": 3}


def test_empty_workload_propagation_keeps_selected_clusters_with_zero() -> None:
    clusters = [cluster(n, allocatable={"pods": 10}) for n in ("a", "b", "c")]
    placement = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}}
    spec = binding_spec(replicas=1, placement=placement, requests={})
    assert names(schedule(spec, None, clusters)) == {"a": 1}
    assert names(schedule(spec, None, clusters, enable_empty_workload_propagation=True)) == {
        "a": 1,
        "b": 0,
        "c": 0,
    }


def _with_summary(
    allocatable: dict[str, Any],
    allocated: dict[str, Any] | None = None,
    allocating: dict[str, Any] | None = None,
) -> Cluster:
    return cluster("m", allocatable=allocatable, allocated=allocated, allocating=allocating)


@pytest.mark.parametrize(
    ("summary", "requests", "expected"),
    [
        (({"pods": 110}, None, None), None, 110),
        (({"pods": 110}, {"pods": 100}, {"pods": 20}), None, 0),
        (({"pods": 110, "cpu": "8"}, {"pods": 10, "cpu": "2"}, None), {"cpu": "500m"}, 12),
        (({"pods": 110, "cpu": "8", "memory": "16Gi"}, None, None), {"cpu": "100m", "memory": "1Gi"}, 16),
        (({"pods": 5, "cpu": "8"}, None, None), {"cpu": "100m"}, 5),
        (({"pods": 110}, None, None), {"nvidia.com/gpu": 1}, 0),
        (({"pods": 110, "cpu": 2}, None, {"cpu": "2500m"}), {"cpu": "1"}, 0),
        (({"pods": 110, "memory": "1Gi"}, None, None), {"memory": "300Mi", "cpu": "0"}, 3),
    ],
)
def test_general_estimator(summary: tuple[Any, Any, Any], requests: dict[str, Any] | None, expected: int) -> None:
    reqs = ReplicaRequirements.from_dict({"resourceRequest": requests}) if requests is not None else None
    assert max_available_replicas(_with_summary(*summary), reqs) == expected


def test_decisions_explain_scores_and_capacity() -> None:
    clusters = [cluster("a", allocatable={"pods": 10}), cluster("b", allocatable={"pods": 20})]
    placement = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}
    spec = binding_spec(replicas=5, placement=placement, requests={}, clusters={"a": 5})
    result = schedule(spec, None, clusters)
    assert names(result) == {"a": 5}
    a, b = result.decisions["a"], result.decisions["b"]
    assert (a.score, a.allocatable_replicas, a.available_replicas) == (100, 10, 15)
    assert (b.score, b.allocatable_replicas, b.available_replicas, b.selected) == (0, 20, 20, True)
    assert b.replicas is None
