"""The chaos run's judgement as tables: the audit of member copies against the
bindings, the copies bindings ask for, the seeded fault plan, and percentiles."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.sandbox.chaos import (
    FAULT_TARGETS,
    MEMBER_TARGETS,
    Audit,
    Have,
    Key,
    Want,
    audit,
    not_ready,
    percentile,
    plan,
    unbound,
    wanted,
)

D = ("Deployment", "chaos", "web")
C = ("ConfigMap", "chaos", "web-config")


def k(cluster: str, template: tuple[str, str, str]) -> Key:
    return (cluster, *template)


AUDITS: list[tuple[str, dict[Key, Want], dict[Key, Have], set[tuple[str, str, str]], dict[str, list[Key]]]] = [
    ("all in place", {k("m1", D): Want("3", 2)}, {k("m1", D): Have("3", 2)}, {D}, {}),
    ("missing copy is lost", {k("m1", D): Want("3", 2)}, {}, {D}, {"lost": [k("m1", D)]}),
    ("old version is stale", {k("m1", D): Want("3", 2)}, {k("m1", D): Have("2", 2)}, {D}, {"stale": [k("m1", D)]}),
    ("wrong replicas are stale", {k("m1", D): Want("3", 2)}, {k("m1", D): Have("3", 4)}, {D}, {"stale": [k("m1", D)]}),
    ("replicas not judged where none apply", {k("m1", C): Want("1")}, {k("m1", C): Have("1", None)}, {C}, {}),
    (
        "copy on an unlisted cluster is duplicated",
        {k("m1", D): Want("1", 1)},
        {k("m1", D): Have("1", 1), k("m2", D): Have("1", 1)},
        {D},
        {"duplicated": [k("m2", D)]},
    ),
    ("copy of a deleted template is orphaned", {}, {k("m2", D): Have("1", 1)}, set(), {"orphaned": [k("m2", D)]}),
    (
        "each difference counted once",
        {k("m1", D): Want("2", 1), k("m2", D): Want("2", 1), k("m1", C): Want("1")},
        {k("m1", D): Have("1", 1), k("m3", D): Have("2", 1), k("m3", ("ConfigMap", "chaos", "gone")): Have("1")},
        {D, C},
        {
            "lost": [k("m1", C), k("m2", D)],
            "stale": [k("m1", D)],
            "duplicated": [k("m3", D)],
            "orphaned": [k("m3", ("ConfigMap", "chaos", "gone"))],
        },
    ),
]


@pytest.mark.parametrize(("case", "want", "have", "templates", "expected"), AUDITS, ids=[a[0] for a in AUDITS])
def test_audit(
    case: str,
    want: dict[Key, Want],
    have: dict[Key, Have],
    templates: set[tuple[str, str, str]],
    expected: dict[str, list[Key]],
) -> None:
    result = audit(want, have, templates)
    assert result == Audit(**expected)
    assert result.clean == (not expected)
    assert result.counts() == {
        name: len(expected.get(name, [])) for name in ("lost", "duplicated", "stale", "orphaned")
    }


def binding(kind: str, name: str, clusters: list[dict[str, Any]], divided: bool, replicas: int = 0) -> dict[str, Any]:
    scheduling = {"replicaSchedulingType": "Divided" if divided else "Duplicated"}
    return {
        "spec": {
            "resource": {"kind": kind, "namespace": "chaos", "name": name},
            "replicas": replicas,
            "placement": {"replicaScheduling": scheduling},
            "clusters": clusters,
        }
    }


WANTED: list[tuple[str, list[dict[str, Any]], dict[tuple[str, str, str], str], dict[Key, Want]]] = [
    (
        "divided: each cluster its share",
        [binding("Deployment", "web", [{"name": "m1", "replicas": 3}, {"name": "m2", "replicas": 1}], True, 4)],
        {D: "7"},
        {k("m1", D): Want("7", 3), k("m2", D): Want("7", 1)},
    ),
    (
        "duplicated: each cluster all replicas",
        [binding("Deployment", "web", [{"name": "m1", "replicas": 4}, {"name": "m2"}], False, 4)],
        {D: "7"},
        {k("m1", D): Want("7", 4), k("m2", D): Want("7", 4)},
    ),
    (
        "config map: no replicas",
        [binding("ConfigMap", "web-config", [{"name": "m2"}], False)],
        {C: "2"},
        {k("m2", C): Want("2")},
    ),
    (
        "attached binding: the clusters of those requiring it",
        [
            {
                "spec": {
                    "resource": {"kind": "ConfigMap", "namespace": "chaos", "name": "web-config"},
                    "requiredBy": [
                        {"name": "a", "clusters": [{"name": "m1", "replicas": 2}]},
                        {"name": "b", "clusters": [{"name": "m1"}, {"name": "m3"}]},
                    ],
                }
            }
        ],
        {C: "4"},
        {k("m1", C): Want("4"), k("m3", C): Want("4")},
    ),
    ("deleted template asks for nothing", [binding("Deployment", "web", [{"name": "m1"}], False, 1)], {}, {}),
    ("unscheduled binding asks for nothing", [binding("Deployment", "web", [], True, 2)], {D: "1"}, {}),
]


@pytest.mark.parametrize(("case", "bindings", "versions", "expected"), WANTED, ids=[w[0] for w in WANTED])
def test_wanted(
    case: str,
    bindings: list[dict[str, Any]],
    versions: dict[tuple[str, str, str], str],
    expected: dict[Key, Want],
) -> None:
    assert wanted(bindings, versions) == expected


def test_plan_is_seeded_and_within_bounds() -> None:
    members = ["member1", "member2", "member3"]
    first = plan(40, members, seed=7, hold=(5, 60), churn=10)
    assert first == plan(40, members, seed=7, hold=(5, 60), churn=10)
    assert first != plan(40, members, seed=8, hold=(5, 60), churn=10)
    assert {f.target for f in first} == set(FAULT_TARGETS), "40 rounds reach every target"
    for fault in first:
        assert 5 <= fault.hold <= 60 and 0 <= fault.delay <= 10
        assert (fault.member in members) == (fault.target in MEMBER_TARGETS)
        special = {"partition": "cut", "clock": "step"}.get(fault.target)
        assert fault.action == special if special else fault.action in ("kill", "stop")
    assert "partition" not in {f.target for f in plan(40, members, 7, (1, 2), 1, partition=False)}
    assert "clock" not in {f.target for f in plan(40, members, 7, (1, 2), 1, clock=False)}


def _cluster(name: str, *conditions: tuple[str, str]) -> dict[str, object]:
    return {"metadata": {"name": name}, "status": {"conditions": [{"type": t, "status": s} for t, s in conditions]}}


@pytest.mark.parametrize(
    ("clusters", "expected"),
    [
        ([], []),
        ([_cluster("a", ("Ready", "True"))], []),
        ([_cluster("b", ("Ready", "Unknown")), _cluster("a", ("Ready", "False"))], ["a", "b"]),
        ([_cluster("a")], ["a"]),  # never reported
        ([_cluster("a", ("Other", "True"))], ["a"]),
        ([{"metadata": {"name": "a"}}], ["a"]),  # no status at all
    ],
)
def test_not_ready(clusters: list[dict[str, Any]], expected: list[str]) -> None:
    assert not_ready(clusters) == expected


PERCENTILES = [
    ([], 0.5, 0.0),
    ([4.0], 0.99, 4.0),
    ([3.0, 1.0, 2.0], 0.5, 2.0),
    ([1.0, 2.0, 3.0, 4.0], 0.5, 2.0),
    ([float(i) for i in range(1, 101)], 0.99, 99.0),
    ([float(i) for i in range(1, 11)], 0.99, 10.0),
]


@pytest.mark.parametrize(("values", "fraction", "expected"), PERCENTILES)
def test_percentile(values: list[float], fraction: float, expected: float) -> None:
    assert percentile(values, fraction) == expected


UNBOUND: list[tuple[str, list[dict[str, Any]], dict[tuple[str, str, str], int], list[tuple[str, str, str]]]] = [
    ("bound and current", [binding("Deployment", "web", [{"name": "m1"}], False, 2)], {D: 2}, []),
    ("no binding", [], {D: 2}, [D]),
    ("not scheduled", [binding("Deployment", "web", [], False, 2)], {D: 2}, [D]),
    ("replicas lag the template", [binding("Deployment", "web", [{"name": "m1"}], True, 1)], {D: 2}, [D]),
]


@pytest.mark.parametrize(("case", "bindings", "replicas", "expected"), UNBOUND, ids=[u[0] for u in UNBOUND])
def test_unbound(
    case: str,
    bindings: list[dict[str, Any]],
    replicas: dict[tuple[str, str, str], int],
    expected: list[tuple[str, str, str]],
) -> None:
    assert unbound(bindings, {D: "1"}, replicas) == expected
    config = binding("ConfigMap", "web-config", [{"name": "m1"}], False)
    assert unbound([config], {C: "1"}, {}) == [], "no replicas to lag for a ConfigMap"
