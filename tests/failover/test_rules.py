"""Table tests of the pure failover rules (karmada.failover)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from karmada.api.core import Taint, Toleration
from karmada.api.policy import FailoverBehavior, StatePreservation
from karmada.api.taint_policy import ClusterTaintPolicy
from karmada.failover import (
    APPLICATION_FAILOVER_HOLDS,
    TAINT_MANAGER_HOLDS,
    EvictionTask,
    StateError,
    assess_tasks,
    condition_matches,
    detect_failures,
    evict_cluster,
    eviction_delay,
    failover_condition_changes,
    jsonpath_value,
    next_retry,
    policy_taints,
    preserved_label_state,
    purge_mode_for_cluster_failover,
    replacement_problem,
    taints_message,
    unhealthy_clusters,
)
from karmada.failover.application import forget
from karmada.timestamps import format_time

NOW = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.UTC)
Obj = dict[str, Any]


def ago(seconds: float) -> str:
    return format_time(NOW - datetime.timedelta(seconds=seconds))


def ready(status: str) -> list[Obj]:
    return [{"type": "Ready", "status": status, "reason": "R", "message": "m", "lastTransitionTime": ago(100)}]


# -- ClusterTaintPolicy -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conditions", "match", "adding", "expected"),
    [
        (ready("False"), [{"conditionType": "Ready", "operator": "In", "statusValues": ["False"]}], True, True),
        (ready("True"), [{"conditionType": "Ready", "operator": "In", "statusValues": ["False"]}], True, False),
        (ready("False"), [{"conditionType": "Ready", "operator": "NotIn", "statusValues": ["True"]}], True, True),
        # silent agent: NotIn True does not add a taint from Unknown (only an explicit In Unknown does)
        (ready("Unknown"), [{"conditionType": "Ready", "operator": "NotIn", "statusValues": ["True"]}], True, False),
        (ready("Unknown"), [{"conditionType": "Ready", "operator": "NotIn", "statusValues": ["True"]}], False, True),
        (
            ready("Unknown"),
            [{"conditionType": "Ready", "operator": "In", "statusValues": ["False", "Unknown"]}],
            True,
            True,
        ),
        (ready("False"), [], True, False),  # an empty list never matches
        ([], [{"conditionType": "Ready", "operator": "In", "statusValues": ["False"]}], True, False),
        (
            [*ready("False"), {"type": "Healthy", "status": "True"}],
            [
                {"conditionType": "Ready", "operator": "In", "statusValues": ["False"]},
                {"conditionType": "Healthy", "operator": "In", "statusValues": ["False"]},
            ],
            True,
            False,  # ANDed
        ),
        (ready("False"), [{"conditionType": "Ready", "operator": "Gt", "statusValues": ["False"]}], True, False),
    ],
)
def test_condition_matches(conditions: list[Obj], match: list[Obj], adding: bool, expected: bool) -> None:
    policy = ClusterTaintPolicy.from_dict(
        {
            "metadata": {"name": "p"},
            "spec": {"addOnConditions": match or None, "taints": [{"key": "k", "effect": "NoExecute"}]},
        }
    )
    assert condition_matches(conditions, policy.spec.add_on_conditions, adding=adding) is expected


def taint_policy(name: str, created: str, **spec: Any) -> ClusterTaintPolicy:
    return ClusterTaintPolicy.from_dict({"metadata": {"name": name, "creationTimestamp": created}, "spec": spec})


NOT_READY = {"conditionType": "Ready", "operator": "In", "statusValues": ["False", "Unknown"]}
IS_READY = {"conditionType": "Ready", "operator": "In", "statusValues": ["True"]}
TAINT = {"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}


def cluster(name: str, status: str, taints: list[Obj] | None = None, labels: Obj | None = None) -> Obj:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"syncMode": "Pull", **({"taints": taints} if taints else {})},
        "status": {"conditions": ready(status)},
    }


@pytest.mark.parametrize(
    ("member", "policies", "expected"),
    [
        (cluster("m1", "True"), [taint_policy("p", ago(9), addOnConditions=[NOT_READY], taints=[TAINT])], None),
        (
            cluster("m1", "Unknown"),
            [taint_policy("p", ago(9), addOnConditions=[NOT_READY], taints=[TAINT])],
            [{**TAINT, "timeAdded": "NOW"}],
        ),
        # already there (same key and effect): unchanged
        (
            cluster("m1", "False", [{**TAINT, "timeAdded": ago(60)}]),
            [taint_policy("p", ago(9), addOnConditions=[NOT_READY], taints=[TAINT])],
            None,
        ),
        (
            cluster("m1", "True", [{**TAINT, "timeAdded": ago(60)}, {"key": "x", "effect": "NoSchedule"}]),
            [taint_policy("p", ago(9), removeOnConditions=[IS_READY], taints=[TAINT])],
            [{"key": "x", "effect": "NoSchedule"}],
        ),
        # targetClusters leaves others alone
        (
            cluster("m2", "False"),
            [
                taint_policy(
                    "p", ago(9), targetClusters={"clusterNames": ["m1"]}, addOnConditions=[NOT_READY], taints=[TAINT]
                )
            ],
            None,
        ),
        # creation order: the later policy removes what the earlier one added
        (
            cluster("m1", "False"),
            [
                taint_policy("late", ago(1), removeOnConditions=[NOT_READY], taints=[TAINT]),
                taint_policy("early", ago(9), addOnConditions=[NOT_READY], taints=[TAINT]),
            ],
            None,
        ),
    ],
)
def test_policy_taints(member: Obj, policies: list[ClusterTaintPolicy], expected: list[Obj] | None) -> None:
    result = policy_taints(member, policies, "NOW")
    assert result == expected


def test_taints_message() -> None:
    assert taints_message([]) == "cluster now does not have taints"
    assert (
        taints_message([{"key": "a", "value": "b", "effect": "NoExecute"}, {"key": "c", "effect": "NoSchedule"}])
        == "cluster now has taints([{Key:a,Value:b,Effect:NoExecute},{Key:c,Effect:NoSchedule}])"
    )


# -- eviction timing -----------------------------------------------------------------------


def tol(**kw: Any) -> Toleration:
    return Toleration.from_dict(kw)


def nx(key: str, added: str | None = None, value: str | None = None) -> Taint:
    return Taint.from_dict({"key": key, "effect": "NoExecute", "value": value, "timeAdded": added})


@pytest.mark.parametrize(
    ("taints", "tolerations", "expected"),
    [
        ([], [], None),
        ([nx("unavailable", ago(5), "true")], [], 0.0),
        ([nx("a", ago(5))], [tol(key="b", operator="Exists")], 0.0),
        ([nx("a", ago(5))], [tol(key="a", operator="Exists")], None),  # no seconds: forever
        ([nx("a", ago(5))], [tol(key="a", operator="Exists", tolerationSeconds=30)], 25.0),
        ([nx("a", ago(50))], [tol(key="a", operator="Exists", tolerationSeconds=30)], 0.0),
        # two taints: the earliest trigger wins
        (
            [nx("a", ago(5)), nx("b", ago(0))],
            [
                tol(key="a", operator="Exists", tolerationSeconds=30),
                tol(key="b", operator="Exists", tolerationSeconds=10),
            ],
            10.0,
        ),
        # one of two untolerated: now
        ([nx("a", ago(5)), nx("b", ago(5))], [tol(key="a", operator="Exists")], 0.0),
        # no timeAdded: the seconds never start
        ([nx("a")], [tol(key="a", operator="Exists", tolerationSeconds=30)], None),
        # the first matching toleration is the one used
        (
            [nx("a", ago(5))],
            [tol(key="a", operator="Exists"), tol(key="a", operator="Exists", tolerationSeconds=1)],
            None,
        ),
    ],
)
def test_eviction_delay(taints: list[Taint], tolerations: list[Toleration], expected: float | None) -> None:
    assert eviction_delay(taints, tolerations, NOW) == expected


@pytest.mark.parametrize(
    ("failover", "default", "expected"),
    [
        (None, "Gracefully", "Gracefully"),
        (None, "Directly", "Directly"),
        (None, "bogus", "Gracefully"),
        ({"cluster": {"purgeMode": "Directly"}}, "Gracefully", "Directly"),
        ({"cluster": {}}, "Directly", "Gracefully"),
        ({"application": {"decisionConditions": {}}}, "Directly", "Directly"),
    ],
)
def test_purge_mode(failover: Obj | None, default: str, expected: str) -> None:
    behavior = FailoverBehavior.from_dict(failover) if failover is not None else None
    assert purge_mode_for_cluster_failover(behavior, default) == expected


TASK = EvictionTask(purge_mode="Gracefully", reason="TaintUntolerated", producer="TaintManager")


def test_evict_cluster() -> None:
    spec = {"clusters": [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 1}]}
    assert evict_cluster(spec, "m1", TASK) == {
        "clusters": [{"name": "m2", "replicas": 1}],
        "gracefulEvictionTasks": [
            {
                "fromCluster": "m1",
                "purgeMode": "Gracefully",
                "replicas": 2,
                "reason": "TaintUntolerated",
                "producer": "TaintManager",
            }
        ],
    }
    assert spec["clusters"][0]["name"] == "m1"  # the input is not changed
    assert evict_cluster(spec, "m3", TASK) is None
    # an existing task for the cluster: dropped from clusters, no second task
    again = evict_cluster({"clusters": [{"name": "m1"}], "gracefulEvictionTasks": [{"fromCluster": "m1"}]}, "m1", TASK)
    assert again == {"clusters": [], "gracefulEvictionTasks": [{"fromCluster": "m1"}]}
    # zero replicas: no replicas field; application failover extras
    full = EvictionTask(
        purge_mode="Never",
        reason="ApplicationFailure",
        producer="p",
        suppress_deletion=True,
        grace_period_seconds=30,
        preserved_label_state={"id": "7"},
        clusters_before_failover=["m1"],
    )
    task = evict_cluster({"clusters": [{"name": "m1"}]}, "m1", full)["gracefulEvictionTasks"][0]  # type: ignore[index]
    assert task == {
        "fromCluster": "m1",
        "purgeMode": "Never",
        "reason": "ApplicationFailure",
        "producer": "p",
        "gracePeriodSeconds": 30,
        "suppressDeletion": True,
        "preservedLabelState": {"id": "7"},
        "clustersBeforeFailover": ["m1"],
    }


def member(name: str, taints: list[Obj] | None = None) -> Obj:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"syncMode": "Pull", **({"taints": taints} if taints else {})},
        "status": {
            "conditions": ready("True"),
            "apiEnablements": [{"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"}]}],
        },
    }


SPEC: Obj = {
    "resource": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "c"},
    "placement": {
        "clusterAffinity": {"clusterNames": ["m1", "m2"]},
        "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}],
    },
}


def test_replacement_problem() -> None:
    evicted = {
        **SPEC,
        "clusters": [],
        "gracefulEvictionTasks": [{"fromCluster": "m1", "reason": "TaintUntolerated", "producer": "TaintManager"}],
    }
    assert replacement_problem(evicted, None, [member("m1"), member("m2")]) is None
    problem = replacement_problem(evicted, None, [member("m1"), member("m2", [{"key": "x", "effect": "NoSchedule"}])])
    assert problem is not None and "0/2 clusters are available" in problem
    # something still targeted: no check needed
    assert replacement_problem({**evicted, "clusters": [{"name": "m2"}]}, None, []) is None


# -- graceful eviction tasks ---------------------------------------------------------------


def binding(tasks: list[Obj], clusters: list[str], health: dict[str, str], scheduled: bool = True) -> Obj:
    return {
        "metadata": {"generation": 3},
        "spec": {"clusters": [{"name": c} for c in clusters], "gracefulEvictionTasks": tasks},
        "status": {
            "schedulerObservedGeneration": 3 if scheduled else 2,
            "aggregatedStatus": [{"clusterName": c, "health": h} for c, h in health.items()],
        },
    }


def task(cluster: str, created: str | None = None, **kw: Any) -> Obj:
    return {
        "fromCluster": cluster,
        "reason": "TaintUntolerated",
        "producer": "TaintManager",
        **({"creationTimestamp": created} if created else {}),
        **kw,
    }


@pytest.mark.parametrize(
    ("obj", "kept", "evicted", "held"),
    [
        # a new task is stamped and kept, even if all is healthy
        (binding([task("m1")], ["m2"], {"m2": "Healthy"}), ["m1"], [], []),
        (binding([task("m1", ago(10))], ["m2"], {"m2": "Healthy"}), [], ["m1"], []),
        (binding([task("m1", ago(10))], ["m2"], {"m2": "Unhealthy"}), ["m1"], [], []),
        (binding([task("m1", ago(10))], ["m2"], {}), ["m1"], [], []),
        # not scheduled for this generation yet: wait even if healthy
        (binding([task("m1", ago(10))], ["m2"], {"m2": "Healthy"}, scheduled=False), ["m1"], [], []),
        # timeout (default 600s, or the task's gracePeriodSeconds)
        (binding([task("m1", ago(601))], ["m2"], {"m2": "Unhealthy"}), [], ["m1"], []),
        (binding([task("m1", ago(31), gracePeriodSeconds=30)], ["m2"], {}), [], ["m1"], []),
        (binding([task("m1", ago(29), gracePeriodSeconds=30)], ["m2"], {}), ["m1"], [], []),
        # suppressDeletion: true keeps for ever, false drops at once
        (binding([task("m1", ago(9999), suppressDeletion=True)], ["m2"], {"m2": "Healthy"}), ["m1"], [], []),
        (binding([task("m1", ago(1), suppressDeletion=False)], ["m2"], {}), [], ["m1"], []),
        # safety: timed out but no target at all: kept and reported as held
        (binding([task("m1", ago(601))], [], {}), ["m1"], [], ["m1"]),
    ],
)
def test_assess_tasks(obj: Obj, kept: list[str], evicted: list[str], held: list[str]) -> None:
    result = assess_tasks(obj, NOW, 600)
    assert [t["fromCluster"] for t in result.kept] == kept
    assert result.evicted == evicted
    assert result.held == held
    assert all(t.get("creationTimestamp") for t in result.kept)


@pytest.mark.parametrize(
    ("tasks", "purging", "kept", "evicted", "kept_purging"),
    [
        # a Directly task past its grace period stays while its cluster holds the binding's Work
        ([task("m1", ago(601), purgeMode="Directly")], {"m1"}, ["m1"], [], ["m1"]),
        ([task("m1", ago(601), purgeMode="Directly")], set(), [], ["m1"], []),  # its Work gone: dropped
        ([task("m1", ago(601), purgeMode="Gracefully")], {"m1"}, [], ["m1"], []),  # Gracefully: dropped as before
        ([task("m1", ago(10), purgeMode="Directly")], {"m1"}, ["m1"], [], []),  # not timed out: simply kept
        # another cluster's Work does not hold it
        ([task("m1", ago(601), purgeMode="Directly")], {"m3"}, [], ["m1"], []),
    ],
)
def test_assess_tasks_keeps_a_directly_task_until_its_work_is_gone(
    tasks: list[Obj], purging: set[str], kept: list[str], evicted: list[str], kept_purging: list[str]
) -> None:
    result = assess_tasks(binding(tasks, ["m2"], {}), NOW, 600, purging)
    assert [t["fromCluster"] for t in result.kept] == kept
    assert result.evicted == evicted
    assert result.purging == kept_purging


def test_next_retry() -> None:
    tasks = [task("a", ago(10)), task("b", ago(10), gracePeriodSeconds=30), task("c", ago(1), suppressDeletion=True)]
    assert next_retry(tasks, 600, NOW) == 20.0
    assert next_retry([], 600, NOW) == 0.0
    assert next_retry([task("a", ago(700))], 600, NOW) == 0.0


# -- application failover ------------------------------------------------------------------


def test_unhealthy_and_detection() -> None:
    spec = {"gracefulEvictionTasks": [{"fromCluster": "m3"}]}
    statuses = [
        {"clusterName": "m1", "health": "Unhealthy"},
        {"clusterName": "m2", "health": "Healthy"},
        {"clusterName": "m3", "health": "Unhealthy"},
        {"clusterName": "m4", "health": "Unknown"},
    ]
    assert unhealthy_clusters(spec, statuses) == (["m1"], ["m2", "m4"])
    since: dict[str, datetime.datetime] = {}
    assert detect_failures(since, ["m1"], 60, NOW) == (60.0, [])
    assert detect_failures(since, ["m1"], 60, NOW + datetime.timedelta(seconds=20)) == (40.0, [])
    assert detect_failures(since, ["m1"], 60, NOW + datetime.timedelta(seconds=59.99)) == (0.05, [])
    assert detect_failures(since, ["m1"], 60, NOW + datetime.timedelta(seconds=60)) == (0.0, ["m1"])
    forget(since, {"m1"}, ["m1"])
    assert since == {}


# -- state preservation --------------------------------------------------------------------

STATUS = {"jobStatus": {"id": "abc", "state": "RUNNING"}, "replicas": 3, "ok": True, "list": [{"a": 1}], "x.y": "dot"}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("{ .jobStatus.id }", "abc"),
        ("{.replicas}", "3"),
        ("{.ok}", "true"),
        ("{.list[0].a}", "1"),
        ("{.list[-1]}", '{"a":1}'),
        ("{['x.y']}", "dot"),
        ("{$.jobStatus.state}", "RUNNING"),
    ],
)
def test_jsonpath(path: str, expected: str) -> None:
    assert jsonpath_value(STATUS, path) == expected


@pytest.mark.parametrize(
    ("path", "error"),
    [
        (".jobStatus.id", "braces"),
        ("{.missing}", "missing is not found"),
        ("{.list[3]}", "out of bounds"),
        ("{.jobStatus..id}", "unsupported"),
        ("{}", "no field"),
    ],
)
def test_jsonpath_errors(path: str, error: str) -> None:
    with pytest.raises(StateError, match=error):
        jsonpath_value(STATUS, path)


def test_preserved_label_state() -> None:
    rules = StatePreservation.from_dict({"rules": [{"aliasLabelName": "app.io/job-id", "jsonPath": "{.jobStatus.id}"}]})
    assert preserved_label_state(rules, STATUS) == {"app.io/job-id": "abc"}
    assert preserved_label_state(None, STATUS) is None
    with pytest.raises(StateError, match="not yet been collected"):
        preserved_label_state(rules, None)


def test_failover_condition() -> None:
    status: Obj = {"conditions": [{"type": "Scheduled", "status": "True"}]}
    new = failover_condition_changes(status, ("False", "NoClusterFit", "m"), "T")
    assert new is not None and new["conditions"][1] == {
        "type": "Failover",
        "status": "False",
        "reason": "NoClusterFit",
        "message": "m",
        "lastTransitionTime": "T",
    }
    assert failover_condition_changes(new, ("False", "NoClusterFit", "m"), "T2") is None
    assert failover_condition_changes(new, None, "T", clear_reasons=["Evicted"]) is None
    cleared = failover_condition_changes(new, None, "T", clear_reasons=["NoClusterFit"])
    assert cleared == status


def _with_failover(reason: str | None, status: str = "False") -> Obj:
    conditions: list[Obj] = [{"type": "Scheduled", "status": "True"}]
    if reason is not None:
        conditions.append(
            {"type": "Failover", "status": status, "reason": reason, "message": "m", "lastTransitionTime": "T0"}
        )
    return {"conditions": conditions}


# (condition now, what the writer wants, the holds that writer clears) -> the Failover reason after, or
# "same" when nothing is written
HOLD_RULES = [
    # the taint manager: a hold while no cluster fits, cleared once the taint is gone, tolerated or the move done
    (None, ("False", "NoClusterFit", "m"), TAINT_MANAGER_HOLDS, "NoClusterFit"),
    ("NoClusterFit", ("False", "NoClusterFit", "m"), TAINT_MANAGER_HOLDS, "same"),
    ("NoClusterFit", None, TAINT_MANAGER_HOLDS, None),
    ("ClusterNotTainted", None, TAINT_MANAGER_HOLDS, None),
    ("ClusterNotTainted", ("False", "NoClusterFit", "m"), TAINT_MANAGER_HOLDS, "NoClusterFit"),
    ("NoClusterFit", ("True", "Evicted", "m"), TAINT_MANAGER_HOLDS, "Evicted"),
    # what the other writer holds, and the record of an eviction, stay
    ("UnhealthyNoClusterFit", None, TAINT_MANAGER_HOLDS, "same"),
    ("Evicted", None, TAINT_MANAGER_HOLDS, "same"),
    (None, None, TAINT_MANAGER_HOLDS, "same"),
    # the application failover controller
    ("UnhealthyNoClusterFit", None, APPLICATION_FAILOVER_HOLDS, None),
    ("NoClusterFit", None, APPLICATION_FAILOVER_HOLDS, "same"),
    ("ClusterNotTainted", None, APPLICATION_FAILOVER_HOLDS, "same"),
    ("UnhealthyNoClusterFit", ("True", "Evicted", "m"), APPLICATION_FAILOVER_HOLDS, "Evicted"),
]


@pytest.mark.parametrize(("now", "wanted", "holds", "after"), HOLD_RULES)
def test_holds_are_cleared_by_their_writer_when_resolved(
    now: str | None, wanted: tuple[str, str, str] | None, holds: tuple[str, ...], after: str | None
) -> None:
    status = _with_failover(now)
    new = failover_condition_changes(status, wanted, "T1", clear_reasons=holds)
    if after == "same":
        assert new is None
        return
    assert new is not None
    assert new["conditions"][0] == {"type": "Scheduled", "status": "True"}  # other conditions kept
    failover = [c for c in new["conditions"] if c["type"] == "Failover"]
    assert [c["reason"] for c in failover] == ([after] if after else [])
