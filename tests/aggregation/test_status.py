"""Binding status from Work status (Karmada's workstatus_test.go cases, as tables)."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.aggregation import (
    FULLY_APPLIED_FAILED_MESSAGE,
    FULLY_APPLIED_FAILED_REASON,
    FULLY_APPLIED_SUCCESS_MESSAGE,
    FULLY_APPLIED_SUCCESS_REASON,
    ManifestNotFound,
    aggregated_items,
    binding_status,
    fully_applied_condition,
    newly_failed,
    target_clusters,
)

RESOURCE = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx"}
NOW = "2024-05-01T00:00:00Z"
LATER = "2024-05-01T00:01:00Z"
DEPLOY_STATUS = {"replicas": 2, "updatedReplicas": 2, "availableReplicas": 2, "generation": 1}


def manifest(name: str = "nginx", kind: str = "Deployment", api_version: str = "apps/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "default"}}


def identifier(ordinal: int = 0, name: str = "nginx", group: str | None = "apps") -> dict[str, Any]:
    ident: dict[str, Any] = {
        "ordinal": ordinal,
        "version": "v1",
        "kind": "Deployment",
        "resource": "deployments",
        "namespace": "default",
        "name": name,
    }
    if group:
        ident["group"] = group
    return ident


def work(
    cluster: str,
    applied: str | None = "True",
    message: str = "",
    statuses: list[dict[str, Any]] | None = None,
    manifests: list[dict[str, Any]] | None = None,
    deleting: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "nginx-687f7fb96f", "namespace": f"karmada-es-{cluster}"}
    if deleting:
        meta["deletionTimestamp"] = NOW
    status: dict[str, Any] = {}
    if applied is not None:
        reason = "AppliedSuccessful" if applied == "True" else "AppliedFailed"
        status["conditions"] = [{"type": "Applied", "status": applied, "reason": reason, "message": message}]
    if statuses is not None:
        status["manifestStatuses"] = statuses
    return {
        "apiVersion": "work.karmada.io/v1alpha1",
        "kind": "Work",
        "metadata": meta,
        "spec": {"workload": {"manifests": manifests if manifests is not None else [manifest()]}},
        "status": status,
    }


UNKNOWN = {"health": "Unknown"}
HEALTHY = [{"identifier": identifier(), "status": DEPLOY_STATUS, "health": "Healthy"}]


@pytest.mark.parametrize(
    ("works", "expected"),
    [
        pytest.param([], [], id="no works"),
        pytest.param(
            [work("m2", statuses=HEALTHY), work("m1", statuses=HEALTHY)],
            [
                {"clusterName": "m1", "applied": True, "status": DEPLOY_STATUS, "health": "Healthy"},
                {"clusterName": "m2", "applied": True, "status": DEPLOY_STATUS, "health": "Healthy"},
            ],
            id="applied, sorted by cluster",
        ),
        pytest.param(
            [work("m1", "False", "Failed to apply all manifests (0/1): denied")],
            [{"clusterName": "m1", "appliedMessage": "Failed to apply all manifests (0/1): denied", **UNKNOWN}],
            id="apply failed: message, health Unknown, applied omitted",
        ),
        pytest.param(
            [work("m1", None)], [{"clusterName": "m1", "health": "Unknown"}], id="not yet reported: not applied"
        ),
        pytest.param(
            [work("m1", "Unknown", "pending")],
            [{"clusterName": "m1", "appliedMessage": "pending", "health": "Unknown"}],
            id="Applied Unknown counts as not applied",
        ),
        pytest.param(
            [work("m1", statuses=[])],
            [{"clusterName": "m1", "applied": True, "health": "Unknown"}],
            id="applied, no manifest status yet",
        ),
        pytest.param(
            [work("m1", statuses=[{"identifier": identifier(), "status": DEPLOY_STATUS}])],
            [{"clusterName": "m1", "applied": True, "status": DEPLOY_STATUS}],
            id="manifest status without health: health omitted (Go copies the empty string)",
        ),
        pytest.param(
            [
                work(
                    "m1",
                    statuses=[
                        {"identifier": identifier(name="other"), "status": {"replicas": 9}, "health": "Unhealthy"},
                        {"identifier": identifier(ordinal=1), "status": {"replicas": 8}, "health": "Unhealthy"},
                        {"identifier": identifier(group=None), "status": {"replicas": 7}, "health": "Unhealthy"},
                    ],
                )
            ],
            [{"clusterName": "m1", "applied": True, "health": "Unknown"}],
            id="statuses of other identifiers are ignored",
        ),
        pytest.param(
            [
                work(
                    "m1",
                    manifests=[manifest("cm", "ConfigMap", "v1"), manifest()],
                    statuses=[{"identifier": identifier(ordinal=1), "status": {"replicas": 1}, "health": "Healthy"}],
                )
            ],
            [{"clusterName": "m1", "applied": True, "status": {"replicas": 1}, "health": "Healthy"}],
            id="template found by its ordinal among several manifests",
        ),
        pytest.param([work("m1", statuses=HEALTHY, deleting=True)], [], id="a Work being deleted is left out"),
    ],
)
def test_aggregated_items(works: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    assert aggregated_items(works, RESOURCE) == expected


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(work("m1", manifests=[manifest("other")]), id="template not among the manifests"),
        pytest.param({**work("m1"), "metadata": {"name": "w", "namespace": "default"}}, id="outside execution space"),
    ],
)
def test_aggregated_items_refuses_foreign_works(bad: dict[str, Any]) -> None:
    with pytest.raises(ManifestNotFound):
        aggregated_items([bad], RESOURCE)


def clusters(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "replicas": 1} for n in names]


def eviction(cluster: str, mode: str) -> dict[str, Any]:
    return {"fromCluster": cluster, "purgeMode": mode, "reason": "TaintUntolerated", "producer": "TaintManager"}


def item(cluster: str, applied: bool = True) -> dict[str, Any]:
    return {"clusterName": cluster, "applied": True} if applied else {"clusterName": cluster, "health": "Unknown"}


@pytest.mark.parametrize(
    ("spec", "items", "fully_applied"),
    [
        pytest.param({}, [], False, id="not scheduled"),
        pytest.param({"clusters": clusters("m1")}, [], False, id="no status yet"),
        pytest.param({"clusters": clusters("m1", "m2")}, [item("m1"), item("m2")], True, id="all applied"),
        pytest.param({"clusters": clusters("m1", "m2")}, [item("m1")], False, id="one missing"),
        pytest.param({"clusters": clusters("m1", "m2")}, [item("m1"), item("m2", False)], False, id="one failed"),
        pytest.param({"clusters": clusters("m1")}, [item("m1"), item("m2")], False, id="an extra cluster"),
        pytest.param({"clusters": clusters("m1", "m2")}, [item("m1"), item("m3")], False, id="the wrong cluster"),
        pytest.param(
            {"clusters": clusters("m1"), "requiredBy": [{"name": "x", "namespace": "d", "clusters": clusters("m2")}]},
            [item("m1"), item("m2")],
            True,
            id="requiredBy clusters are targets",
        ),
        pytest.param(
            {"clusters": clusters("m1"), "requiredBy": [{"name": "x", "namespace": "d", "clusters": clusters("m2")}]},
            [item("m1")],
            False,
            id="requiredBy cluster missing",
        ),
        pytest.param(
            {
                "clusters": clusters("m1"),
                "gracefulEvictionTasks": [eviction("m2", "Gracefully")],
            },
            [item("m1"), item("m2")],
            True,
            id="gracefully evicted cluster still counts",
        ),
        pytest.param(
            {
                "clusters": clusters("m1"),
                "gracefulEvictionTasks": [eviction("m2", "Directly")],
            },
            [item("m1"), item("m2")],
            False,
            id="directly evicted cluster is an orphan",
        ),
    ],
)
def test_fully_applied(spec: dict[str, Any], items: list[dict[str, Any]], fully_applied: bool) -> None:
    expected = (
        ("True", FULLY_APPLIED_SUCCESS_REASON, FULLY_APPLIED_SUCCESS_MESSAGE)
        if fully_applied
        else ("False", FULLY_APPLIED_FAILED_REASON, FULLY_APPLIED_FAILED_MESSAGE)
    )
    assert fully_applied_condition(spec, items) == expected


def test_target_clusters_union() -> None:
    spec = {
        "clusters": clusters("a"),
        "requiredBy": [{"name": "x", "clusters": clusters("b", "a")}],
        "gracefulEvictionTasks": [{"fromCluster": "c"}, {"fromCluster": "d", "purgeMode": "Directly"}],
    }
    assert target_clusters(spec) == {"a", "b", "c"}


def test_binding_status_keeps_the_schedulers_fields_and_moves_transition_time_only_on_change() -> None:
    scheduled = {
        "type": "Scheduled",
        "status": "True",
        "reason": "Success",
        "message": "Binding has been scheduled successfully.",
        "lastTransitionTime": NOW,
    }
    old = {"schedulerObservedGeneration": 2, "lastScheduledTime": NOW, "conditions": [scheduled]}
    spec = {"clusters": clusters("m1")}
    first = binding_status(old, spec, [item("m1", False)], NOW)
    assert first["schedulerObservedGeneration"] == 2 and first["conditions"][0] == scheduled
    assert first["aggregatedStatus"] == [item("m1", False)]
    assert first["conditions"][1] == {
        "type": "FullyApplied",
        "status": "False",
        "reason": FULLY_APPLIED_FAILED_REASON,
        "message": FULLY_APPLIED_FAILED_MESSAGE,
        "lastTransitionTime": NOW,
    }
    assert old == {"schedulerObservedGeneration": 2, "lastScheduledTime": NOW, "conditions": [scheduled]}
    # the same items later: nothing changes (no write)
    assert binding_status(first, spec, [item("m1", False)], LATER) == first
    second = binding_status(first, spec, [item("m1")], LATER)
    assert second["conditions"][1]["status"] == "True" and second["conditions"][1]["lastTransitionTime"] == LATER
    # no Works left: the list goes (omitempty), the condition stays False
    gone = binding_status(second, spec, [], LATER)
    assert "aggregatedStatus" not in gone and gone["conditions"][1]["status"] == "False"


@pytest.mark.parametrize(
    ("old", "new", "reported"),
    [
        pytest.param(None, [item("m1")], [], id="applied"),
        pytest.param(None, [{"clusterName": "m1", "appliedMessage": "x"}], ["m1"], id="first failure"),
        pytest.param(
            [{"clusterName": "m1", "appliedMessage": "x"}],
            [{"clusterName": "m1", "appliedMessage": "x"}],
            [],
            id="same failure again",
        ),
        pytest.param(
            [{"clusterName": "m1", "appliedMessage": "x"}],
            [{"clusterName": "m1", "appliedMessage": "y"}],
            ["m1"],
            id="another failure",
        ),
        pytest.param(
            [item("m1")], [{"clusterName": "m1", "appliedMessage": "x"}, item("m2", False)], ["m1"], id="regression"
        ),
    ],
)
def test_newly_failed(old: list[dict[str, Any]] | None, new: list[dict[str, Any]], reported: list[str]) -> None:
    assert [i["clusterName"] for i in newly_failed(old, new)] == reported
