"""Table tests of the pure inspection helpers: type resolution, selectors, durations,
rows from Work status, merged tables, promotion objects, cluster usage."""

from __future__ import annotations

import datetime

import pytest

from karmada.inspection import (
    MemberTable,
    SelectorError,
    TypeError_,
    cluster_usage_rows,
    discovered_types,
    merge_tables,
    objects_from_works,
    parse_selector,
    promotion,
    resolve_type,
    selector_matches,
    work_table,
)
from karmada.inspection.promote import policy_name
from karmada.inspection.tables import human_duration

DISCOVERY = {
    "items": [
        {
            "metadata": {"name": "apps"},
            "versions": [
                {
                    "version": "v1",
                    "resources": [
                        {"resource": "deployments", "responseKind": {"kind": "Deployment"}, "scope": "Namespaced",
                         "singularResource": "deployment", "shortNames": ["deploy"]},
                    ],
                }
            ],
        },
        {
            "metadata": {"name": "cluster.karmada.io"},
            "versions": [{"version": "v1alpha1", "resources": [
                {"resource": "clusters", "responseKind": {"kind": "Cluster"}, "scope": "Cluster"}]}],
        },
    ]
}  # fmt: skip
TYPES = discovered_types(DISCOVERY)


@pytest.mark.parametrize(
    ("argument", "plural"),
    [
        ("deploy", "deployments"),
        ("Deployment", "deployments"),
        ("deployments.apps", "deployments"),
        ("deployment.v1.apps", "deployments"),
        ("clusters.cluster.karmada.io", "clusters"),
        ("cluster", "clusters"),
    ],
)
def test_resolve_type(argument: str, plural: str) -> None:
    assert resolve_type(argument, TYPES).plural == plural


def test_unknown_type() -> None:
    with pytest.raises(TypeError_, match=r'the server doesn\'t have a resource type "deploy\.v2\.apps"'):
        resolve_type("deploy.v2.apps", TYPES)


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ("", {}, True),
        ("app=nginx", {"app": "nginx"}, True),
        ("app==nginx,tier!=db", {"app": "nginx", "tier": "web"}, True),
        ("app in (a, b)", {"app": "b"}, True),
        ("app notin (a,b)", {"app": "b"}, False),
        ("app", {}, False),
        ("!app", {}, True),
    ],
)
def test_selectors(selector: str, labels: dict[str, str], matches: bool) -> None:
    assert selector_matches(parse_selector(selector), labels) is matches


def test_bad_selector() -> None:
    with pytest.raises(SelectorError):
        parse_selector("a in b")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (5, "5s"),
        (119, "119s"),
        (200, "3m20s"),
        (600, "10m"),
        (3 * 3600 + 60, "3h1m"),
        (30 * 3600, "30h"),
        (3 * 86400, "3d"),
    ],
)
def test_human_duration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


NOW = datetime.datetime(2026, 1, 1, 0, 10, tzinfo=datetime.UTC)
WORK = {
    "metadata": {"name": "nginx-687f7fb96f", "namespace": "karmada-es-member1", "creationTimestamp": "2026-01-01T00:00:00Z"},  # noqa: E501
    "spec": {"workload": {"manifests": [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx", "karmada.io/managed": "true"}},  # noqa: E501
         "spec": {"replicas": 2}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "nginx", "namespace": "default"}},
    ]}},
    "status": {"manifestStatuses": [{"identifier": {"ordinal": 0}, "status": {"readyReplicas": 1, "updatedReplicas": 2}}]},  # noqa: E501
}  # fmt: skip


def test_objects_and_rows_from_work_status() -> None:
    objects = objects_from_works([WORK], "apps", "Deployment", namespace="default", name=None, selector=[])
    assert len(objects) == 1 and objects[0]["status"] == {"readyReplicas": 1, "updatedReplicas": 2}
    assert objects[0]["metadata"]["annotations"]["resource.karmada.io/cached-from-cluster"] == "member1"
    assert objects_from_works([WORK], "apps", "Deployment", namespace="other", name=None, selector=[]) == []
    assert (
        objects_from_works([WORK], "apps", "Deployment", namespace=None, name=None, selector=parse_selector("app=x"))
        == []
    )
    table = work_table(objects, "Deployment", NOW)
    assert table["rows"][0]["cells"][:5] == ["nginx", "1/2", 2, 0, "10m"]
    header, rows = merge_tables([MemberTable("member1", "work-status", table)])
    assert header == ["NAME", "CLUSTER", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "SOURCE", "ADOPTION"]
    assert rows[0].cells == ["nginx", "member1", "1/2", "2", "0", "10m", "work-status", "Y"]


def test_merge_maps_work_rows_into_member_columns() -> None:
    member = {
        "columnDefinitions": [{"name": "Name", "priority": 0}, {"name": "Ready", "priority": 0},
                              {"name": "Age", "priority": 0}, {"name": "Images", "priority": 1}],
        "rows": [{"cells": ["nginx", "4/4", "1m", "nginx:1.25"], "object": {"metadata": {"name": "nginx", "namespace": "default"}}}],  # noqa: E501
    }  # fmt: skip
    objects = objects_from_works([WORK], "apps", "Deployment", namespace="default", name=None, selector=[])
    tables = [
        MemberTable("member2", "member", member),
        MemberTable("member1", "work-status", work_table(objects, "Deployment", NOW)),
    ]
    header, rows = merge_tables(tables, with_namespace=True)
    assert header == ["NAMESPACE", "NAME", "CLUSTER", "READY", "AGE", "SOURCE", "ADOPTION"]
    assert [r.cells for r in rows] == [
        ["default", "nginx", "member2", "4/4", "1m", "member", "N"],
        ["default", "nginx", "member1", "1/2", "10m", "work-status", "Y"],
    ]
    header, rows = merge_tables(tables, wide=True)
    assert (
        header[-3:] == ["IMAGES", "SOURCE", "ADOPTION"] and rows[1].cells[-3] == ""
    )  # the work printer fills Images (none here)


def test_promotion() -> None:
    member = {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "ns-foo", "uid": "u", "resourceVersion": "5", "managedFields": []},
        "data": {"a": "b"},
    }  # fmt: skip
    template, policy = promotion(member, "member1")
    assert template["metadata"] == {
        "name": "cfg",
        "namespace": "ns-foo",
        "annotations": {"work.karmada.io/conflict-resolution": "overwrite"},
    }
    assert policy["kind"] == "PropagationPolicy" and policy["metadata"]["namespace"] == "ns-foo"
    cluster_scoped = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "system:x"},
    }
    _, cpp = promotion(cluster_scoped, "member1")
    assert cpp["kind"] == "ClusterPropagationPolicy" and cpp["metadata"]["name"].startswith("system.x-")


def test_policy_name_is_karmadas() -> None:
    # Karmada's names_test.go: GeneratePolicyName("ns-foo", "foo", "rand") == "foo-b4978784"; here with a real GVK
    assert policy_name("default", "web", "apps/v1", "Deployment") == "web-6d7f8d5f5b"


def test_cluster_usage_rows() -> None:
    cluster = {
        "metadata": {"name": "m1"},
        "status": {"resourceSummary": {
            "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "20"},
            "allocated": {"cpu": "1500m", "memory": "1Gi", "pods": "3"},
            "allocating": {"cpu": "500m", "pods": "1"},
        }},
    }  # fmt: skip
    assert cluster_usage_rows([cluster, {"metadata": {"name": "m0"}}]) == [
        ["m0", *["<unknown>"] * 11],
        ["m1", "8", "2", "6", "25%", "16384Mi", "1024Mi", "15360Mi", "6%", "20", "4", "16"],
    ]
