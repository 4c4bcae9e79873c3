"""When the scheduler acts: Karmada's queue filters and dequeue checks, as tables."""

from __future__ import annotations

import json
from typing import Any

import pytest

from karmada.api.policy import ClusterAffinity
from karmada.scheduling.triggers import (
    ALWAYS_SCHEDULED,
    ANY_CLUSTER,
    PLACEMENT_CHANGED,
    REPLICAS_CHANGED,
    RESCHEDULE_TRIGGERED,
    TARGET_CLUSTER_DELETING,
    affinity_for_cluster_events,
    binding_event_needs_schedule,
    cluster_event_needs_requeue,
    index_inputs,
    ours,
    placement_changed,
    placement_json,
    replicas_changed,
    reschedule_requested,
    schedule_reason,
)
from tests.factories import binding_spec, status

PP_ID = "propagationpolicy.karmada.io/permanent-id"
CPP_ID = "clusterpropagationpolicy.karmada.io/permanent-id"
MANAGED_BY = "binding.karmada.io/managed-by"


def obj(labels: dict[str, str] | None = None, generation: int = 1, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "b", "labels": labels or {}, "generation": generation}, "spec": spec}


@pytest.mark.parametrize(
    ("binding", "scheduler", "expected"),
    [
        (obj({PP_ID: "x"}), "default-scheduler", True),
        (obj({CPP_ID: "x"}), "default-scheduler", True),
        (obj({MANAGED_BY: "multiclusterservice"}), "default-scheduler", True),
        (obj({}), "default-scheduler", False),  # nobody claimed it
        (obj({PP_ID: ""}), "default-scheduler", False),
        (obj({PP_ID: "x"}, schedulerName="default-scheduler"), "default-scheduler", True),
        (obj({PP_ID: "x"}, schedulerName="my-scheduler"), "default-scheduler", False),
        (obj({PP_ID: "x"}, schedulerName="my-scheduler"), "my-scheduler", True),
        (obj({PP_ID: "x"}), "my-scheduler", False),  # empty means the default one
        (obj({PP_ID: "x"}, suspension={"scheduling": True}), "default-scheduler", False),
        (obj({PP_ID: "x"}, suspension={"scheduling": False, "dispatching": True}), "default-scheduler", True),
    ],
)
def test_which_bindings_are_ours(binding: dict[str, Any], scheduler: str, expected: bool) -> None:
    assert ours(binding, scheduler) is expected


@pytest.mark.parametrize(
    ("kind", "new", "old", "expected"),
    [
        ("ADDED", obj(generation=1), None, True),
        ("MODIFIED", obj(generation=2), obj(generation=1), True),
        ("MODIFIED", obj(generation=2), obj(generation=2), False),  # status or metadata only
        ("MODIFIED", obj(generation=2), None, False),
        ("DELETED", obj(generation=2), obj(generation=2), False),
    ],
)
def test_binding_events(kind: str, new: dict[str, Any], old: dict[str, Any] | None, expected: bool) -> None:
    assert binding_event_needs_schedule(kind, new, old) is expected


def cluster_obj(generation: int = 1, labels: dict[str, str] | None = None, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "m1", "generation": generation, "labels": labels or {}}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"metadata": meta}


@pytest.mark.parametrize(
    ("kind", "new", "old", "expected"),
    [
        ("ADDED", cluster_obj(), None, False),  # a new cluster alone moves nothing
        ("MODIFIED", cluster_obj(), cluster_obj(), False),  # status only
        ("MODIFIED", cluster_obj(generation=2), cluster_obj(), True),  # taints, region...
        ("MODIFIED", cluster_obj(labels={"env": "prod"}), cluster_obj(), True),
        ("MODIFIED", cluster_obj(labels={}), cluster_obj(labels=None), False),
        ("MODIFIED", cluster_obj(deleting=True), cluster_obj(), True),
        ("MODIFIED", cluster_obj(deleting=True), cluster_obj(deleting=True), False),
        ("DELETED", cluster_obj(), cluster_obj(), False),
    ],
)
def test_cluster_events(kind: str, new: dict[str, Any], old: dict[str, Any] | None, expected: bool) -> None:
    assert cluster_event_needs_requeue(kind, new, old) is expected


TERMS = [
    {"affinityName": "primary", "clusterNames": ["m1"]},
    {"affinityName": "backup", "clusterNames": ["m2"]},
]


@pytest.mark.parametrize(
    ("placement", "observed", "expected"),
    [
        ({}, None, None),
        ({"clusterAffinity": {"clusterNames": ["m1"]}}, None, ["m1"]),
        ({"clusterAffinities": TERMS}, "backup", ["m2"]),
        ({"clusterAffinities": TERMS}, "gone", ["m1"]),  # unknown name: the first term
    ],
)
def test_affinity_a_cluster_event_must_match(
    placement: dict[str, Any], observed: str | None, expected: list[str] | None
) -> None:
    spec = binding_spec(placement=placement).placement
    found = affinity_for_cluster_events(
        spec, status(schedulerObservedGeneration=3, schedulerObservingAffinityName=observed), 3
    )
    if expected is None:
        assert found is ANY_CLUSTER
    else:
        assert isinstance(found, ClusterAffinity) and found.cluster_names == expected


def test_an_unobserved_cluster_affinities_binding_is_concerned_by_every_cluster() -> None:
    spec = binding_spec(placement={"clusterAffinities": TERMS}).placement
    assert affinity_for_cluster_events(spec, status(schedulerObservedGeneration=2), 3) is ANY_CLUSTER


AFFINITY = {"clusterAffinity": {"clusterNames": ["m1"]}}
TOLERATIONS = {"clusterTolerations": [{"key": "k", "operator": "Exists"}]}


@pytest.mark.parametrize(
    ("placement", "applied", "observed", "expected"),
    [
        (AFFINITY, None, None, True),  # never scheduled
        (AFFINITY, json.dumps(AFFINITY), None, False),
        (AFFINITY, placement_json(AFFINITY), None, False),
        ({**AFFINITY, "spreadConstraints": []}, json.dumps(AFFINITY), None, False),  # omitempty
        ({**AFFINITY, **TOLERATIONS}, json.dumps(AFFINITY), None, True),
        (AFFINITY, "{not json", None, False),  # Karmada logs it and does not reschedule
        # clusterAffinities: only the observed term counts
        ({"clusterAffinities": TERMS}, json.dumps({"clusterAffinities": TERMS}), "primary", False),
        ({"clusterAffinities": [TERMS[0], {**TERMS[1], "clusterNames": ["m3"]}]},
         json.dumps({"clusterAffinities": TERMS}), "primary", False),
        ({"clusterAffinities": [{**TERMS[0], "clusterNames": ["m3"]}, TERMS[1]]},
         json.dumps({"clusterAffinities": TERMS}), "primary", True),
        ({"clusterAffinities": [TERMS[1]]}, json.dumps({"clusterAffinities": TERMS}), "primary", True),
        ({"clusterAffinities": [TERMS[0]]}, json.dumps({"clusterAffinities": TERMS}), None, True),
        ({"clusterAffinities": TERMS, **TOLERATIONS}, json.dumps({"clusterAffinities": TERMS}), "primary", True),
    ],
)  # fmt: skip
def test_placement_changed(
    placement: dict[str, Any], applied: str | None, observed: str | None, expected: bool
) -> None:
    assert placement_changed(placement, applied, observed) is expected


def test_placement_json_is_compact_and_drops_empty_fields() -> None:
    text = placement_json({"clusterAffinity": {"clusterNames": ["m1"]}, "spreadConstraints": [], "x": None})
    assert text == '{"clusterAffinity":{"clusterNames":["m1"]}}'


DIVIDED = {"replicaScheduling": {"replicaSchedulingType": "Divided"}}
DUPLICATED = {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}


@pytest.mark.parametrize(
    ("placement", "replicas", "clusters", "expected"),
    [
        ({}, 3, {"m1": 1}, False),  # no strategy: never "changed"
        (DIVIDED, 3, {"m1": 1, "m2": 2}, False),
        (DIVIDED, 4, {"m1": 1, "m2": 2}, True),
        (DIVIDED, 3, {}, True),
        (DUPLICATED, 3, {"m1": 3, "m2": 3}, False),
        (DUPLICATED, 3, {"m1": 3, "m2": 2}, True),
        (DUPLICATED, 3, {}, False),
    ],
)
def test_replicas_changed(placement: dict[str, Any], replicas: int, clusters: dict[str, int], expected: bool) -> None:
    assert replicas_changed(binding_spec(replicas=replicas, placement=placement, clusters=clusters)) is expected


@pytest.mark.parametrize(
    ("triggered", "last", "expected"),
    [
        (None, "2024-01-01T00:00:00Z", False),
        ("2024-01-02T00:00:00Z", None, False),  # the first schedule is still to come
        ("2024-01-02T00:00:00Z", "2024-01-01T00:00:00Z", True),
        ("2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z", False),
        ("2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", False),
    ],
)
def test_reschedule_requested(triggered: str | None, last: str | None, expected: bool) -> None:
    extra: dict[str, Any] = {"rescheduleTriggeredAt": triggered} if triggered else {}
    spec = binding_spec(**extra)
    assert reschedule_requested(spec, status(**({"lastScheduledTime": last} if last else {}))) is expected


SETTLED = {**AFFINITY, **DIVIDED}


def fields(**spec: Any) -> dict[str, Any]:
    return spec


@pytest.mark.parametrize(
    ("spec", "observed", "deleting", "expected"),
    [
        (fields(replicas=3, placement=SETTLED, clusters={"m1": 3}), {}, set(), None),
        (fields(replicas=3, placement=SETTLED, clusters={"m1": 3}), {}, {"m2"}, None),
        (fields(replicas=3, placement=SETTLED, clusters={"m1": 3}), {}, {"m1"}, TARGET_CLUSTER_DELETING),
        (fields(replicas=4, placement=SETTLED, clusters={"m1": 3}), {}, set(), REPLICAS_CHANGED),
        # (the applied placement is always SETTLED)
        (fields(replicas=3, placement={**SETTLED, **TOLERATIONS}, clusters={"m1": 3}), {}, set(), PLACEMENT_CHANGED),
        (fields(replicas=3, placement={**AFFINITY, **DUPLICATED}, clusters={"m1": 3}), {}, set(), PLACEMENT_CHANGED),
        (
            fields(placement=SETTLED, kind="ConfigMap", api_version="v1", clusters={"m1": 0}),
            {},
            set(),
            ALWAYS_SCHEDULED,
        ),
        (
            fields(replicas=3, placement=SETTLED, clusters={"m1": 3}, rescheduleTriggeredAt="2024-01-02T00:00:00Z"),
            {"lastScheduledTime": "2024-01-01T00:00:00Z"},
            set(),
            RESCHEDULE_TRIGGERED,
        ),
    ],
)
def test_schedule_reason_in_karmadas_order(
    spec: dict[str, Any], observed: dict[str, Any], deleting: set[str], expected: str | None
) -> None:
    typed = binding_spec(**spec)
    placement = typed.to_dict()["placement"]
    applied = json.dumps(SETTLED)
    assert schedule_reason(placement, applied, typed, status(**observed), deleting) == expected


def test_duplicated_and_non_workloads_are_always_scheduled() -> None:
    duplicated = {**AFFINITY, **DUPLICATED}
    typed = binding_spec(replicas=3, placement=duplicated, clusters={"m1": 3})
    assert schedule_reason(duplicated, json.dumps(duplicated), typed, status(), set()) == ALWAYS_SCHEDULED
    divided_config = binding_spec(placement=SETTLED, kind="ConfigMap", api_version="v1", clusters={"m1": 0})
    assert schedule_reason(SETTLED, json.dumps(SETTLED), divided_config, status(), set()) == ALWAYS_SCHEDULED


def test_a_missing_annotation_schedules_first() -> None:
    typed = binding_spec(replicas=3, placement=SETTLED, clusters={"m1": 3})
    assert schedule_reason(SETTLED, None, typed, status(), {"m1"}) == PLACEMENT_CHANGED


@pytest.mark.parametrize(
    ("change", "reindex"),
    [
        ({"status": {"aggregatedStatus": [{"clusterName": "m1", "applied": True}]}}, False),
        ({"metadata": {"name": "b", "generation": 1, "annotations": {"a": "b"}}}, False),
        ({"metadata": {"name": "b", "generation": 2}}, True),
        ({"spec": {"placement": {"clusterAffinity": {"clusterNames": ["m2"]}}}}, True),
        ({"status": {"schedulerObservedGeneration": 1}}, True),
        ({"status": {"schedulerObservingAffinityName": "backup"}}, True),
    ],
)
def test_what_makes_the_index_look_again(change: dict[str, Any], reindex: bool) -> None:
    before = {"metadata": {"name": "b", "generation": 1}, "spec": {"placement": AFFINITY}, "status": {}}
    after = {**before, **change}
    assert (index_inputs(after) != index_inputs(before)) is reindex
