"""Cluster rules as tables: mutation and default models, conditions, taints
(kubectl syntax, cordon, readiness), and the status summary an agent reports."""

from __future__ import annotations

import re
from typing import Any

import pytest

from karmada.clusters.conditions import condition_status, set_condition
from karmada.clusters.mutation import MAX_INT64, default_resource_models, mutate, prepare_new_cluster
from karmada.clusters.summary import node_summary, resource_summary
from karmada.clusters.taints import (
    TaintError,
    apply_taint_changes,
    cordoned,
    parse_taint,
    readiness_taints,
    taints_message,
)

NOW = "2026-01-02T03:04:05Z"


def test_mutation_moves_zone_and_stamps_no_execute_taints() -> None:
    spec: dict[str, Any] = {
        "zone": "z1",
        "taints": [{"key": "a", "effect": "NoExecute"}, {"key": "b", "effect": "NoSchedule"}],
    }
    assert mutate(spec, NOW)
    assert spec == {
        "zones": ["z1"],
        "taints": [{"key": "a", "effect": "NoExecute", "timeAdded": NOW}, {"key": "b", "effect": "NoSchedule"}],
    }
    assert not mutate(spec, "later"), "idempotent"
    both = {"zone": "z1", "zones": ["z2"]}
    assert not mutate(both, NOW) and both == {"zone": "z1", "zones": ["z2"]}


def test_default_resource_models_are_karmadas() -> None:
    models = default_resource_models()
    assert [m["grade"] for m in models] == list(range(9))
    assert models[0]["ranges"] == [
        {"name": "cpu", "min": "0", "max": "1"},
        {"name": "memory", "min": "0", "max": "4Gi"},
    ]
    assert models[2]["ranges"] == [
        {"name": "cpu", "min": "2", "max": "4"},
        {"name": "memory", "min": "16Gi", "max": "32Gi"},
    ]
    assert models[7]["ranges"][1] == {"name": "memory", "min": "512Gi", "max": "1024Gi"}
    assert models[8]["ranges"] == [
        {"name": "cpu", "min": "128", "max": MAX_INT64},
        {"name": "memory", "min": "1024Gi", "max": MAX_INT64},
    ]
    spec: dict[str, Any] = {}
    assert prepare_new_cluster(spec) and spec["resourceModels"] == models
    custom = {
        "resourceModels": [
            {"grade": 1, "ranges": [{"name": "cpu", "min": "4", "max": "8"}]},
            {"grade": 0, "ranges": [{"name": "cpu", "min": "1", "max": "4"}]},
        ]
    }
    assert prepare_new_cluster(custom)
    assert custom["resourceModels"] == [
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "4"}]},
        {"grade": 1, "ranges": [{"name": "cpu", "min": "4", "max": MAX_INT64}]},
    ]


def test_conditions_move_transition_time_only_on_status_change() -> None:
    conditions: list[dict[str, Any]] = []
    assert set_condition(conditions, "Ready", "True", "ClusterReady", "ok", "t1")
    assert not set_condition(conditions, "Ready", "True", "ClusterReady", "ok", "t2")
    assert set_condition(conditions, "Ready", "True", "Other", "ok", "t3")
    assert conditions[0]["lastTransitionTime"] == "t1"
    assert set_condition(conditions, "Ready", "False", "ClusterNotReady", "bad", "t4")
    assert conditions[0]["lastTransitionTime"] == "t4"
    assert condition_status({"status": {"conditions": conditions}}, "Ready") == "False"
    assert condition_status({}, "Ready") is None


def test_apply_taint_changes_follows_kubectl() -> None:
    taints = [{"key": "a", "value": "1", "effect": "NoSchedule"}]
    added, operation = apply_taint_changes(taints, [parse_taint("b=2:NoExecute")], overwrite=False)
    assert added == [{"key": "b", "value": "2", "effect": "NoExecute"}, *taints] and operation == "tainted"
    with pytest.raises(TaintError, match=re.escape("m1 already has [a] taint(s) with same effect(s)")):
        apply_taint_changes(taints, [parse_taint("a=9:NoSchedule")], overwrite=False, owner="m1")
    replaced, operation = apply_taint_changes(taints, [parse_taint("a=9:NoSchedule")], overwrite=True)
    assert replaced == [{"key": "a", "value": "9", "effect": "NoSchedule"}] and operation == "modified"
    both = [*taints, {"key": "a", "effect": "NoExecute"}]
    assert apply_taint_changes(both, [parse_taint("a-")], overwrite=False) == ([], "untainted")
    assert apply_taint_changes(both, [parse_taint("a:NoExecute-")], overwrite=False)[0] == taints
    swapped = apply_taint_changes(taints, [parse_taint("c:NoSchedule"), parse_taint("a-")], overwrite=False)
    assert swapped == ([{"key": "c", "effect": "NoSchedule"}], "modified")
    with pytest.raises(TaintError, match='taint "z" not found'):
        apply_taint_changes(taints, [parse_taint("z-")], overwrite=False)


def test_cordon_and_readiness_taints() -> None:
    unschedulable = {"key": "cluster.karmada.io/unschedulable", "effect": "NoSchedule"}
    assert cordoned([], True) == [unschedulable]
    assert cordoned([unschedulable], True) is None
    assert cordoned([unschedulable], False) == []
    assert cordoned([], False) is None
    not_ready = {"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule", "timeAdded": NOW}
    unreachable = {"key": "cluster.karmada.io/unreachable", "effect": "NoSchedule", "timeAdded": NOW}
    assert readiness_taints([], None, NOW) == [not_ready]
    assert readiness_taints([unreachable], "False", NOW) == [not_ready]
    assert readiness_taints([not_ready], "Unknown", NOW) == [unreachable]
    assert readiness_taints([not_ready, unreachable, unschedulable], "True", NOW) == [unschedulable]
    assert readiness_taints([unschedulable], "True", NOW) is None
    assert taints_message([]) == "cluster now does not have taints"
    assert taints_message([{"key": "a", "value": "b", "effect": "NoSchedule"}, unschedulable]) == (
        "{Key:a,Value:b,Effect:NoSchedule},{Key:cluster.karmada.io/unschedulable,Effect:NoSchedule}"
    )


def _node(name: str, cpu: str, memory: str, pods: str = "110", ready: bool = True) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def _pod(node: str, cpu: str, memory: str, phase: str = "Running") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": f"p-{node}-{cpu}"}, "spec": spec, "status": {"phase": phase}}


def test_resource_summary_matches_karmadas_arithmetic() -> None:
    nodes = [_node("n1", "8", "32Gi"), _node("n2", "8", "32Gi", ready=False), _node("n3", "2", "4Gi")]
    pods = [
        _pod("n1", "1500m", "1Gi"),
        _pod("n1", "500m", "512Mi"),
        _pod("n1", "4", "4Gi", phase="Succeeded"),
        _pod("", "250m", "128Mi"),
    ]
    assert node_summary(nodes) == {"totalNum": 3, "readyNum": 2}
    summary = resource_summary(nodes, pods, default_resource_models())
    assert summary["allocatable"] == {"cpu": "18", "memory": "68Gi", "pods": "330"}
    assert summary["allocated"] == {"cpu": "2", "memory": "1536Mi", "pods": "2"}
    assert summary["allocating"] == {"cpu": "250m", "memory": "128Mi", "pods": "1"}
    counts = {m["grade"]: m["count"] for m in summary["allocatableModelings"]}
    # n1: 6 cpu free reaches grade 3, 30.5Gi only grade 2 -> 2; n2 (no pods): 8 cpu, 32Gi -> 3;
    # n3: 2 cpu, 4Gi -> 1
    assert counts == {0: 0, 1: 1, 2: 1, 3: 1, 4: 0, 5: 0, 6: 0, 7: 0, 8: 0}
    assert "allocating" not in resource_summary(nodes, [])
