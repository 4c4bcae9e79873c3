"""The detector's pure rules as tables: webhook defaults, claims, bindings, the
event filter and preemption (Karmada's pkg/detector, pkg/webhook, pkg/util)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from karmada.detection import (
    admission_metadata,
    changed_by_karmada,
    claim_ids,
    defaulted_policy,
    defaulted_spec,
    deprioritized_preemptors,
    desired_binding,
    may_preempt,
    merged_binding,
    owned_by_other,
    specification_changed,
    with_claim,
    without_claim,
)
from karmada.detection.bindings import merged_suspension, replicas_changed
from karmada.matching import Claim

PP_ID = "propagationpolicy.karmada.io/permanent-id"
CPP_ID = "clusterpropagationpolicy.karmada.io/permanent-id"
PP_NAME = "propagationpolicy.karmada.io/name"
PP_NS = "propagationpolicy.karmada.io/namespace"
CPP_NAME = "clusterpropagationpolicy.karmada.io/name"

NGINX: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "nginx", "namespace": "default", "uid": "u1", "resourceVersion": "7", "labels": {"app": "x"}},
    "spec": {"replicas": 2},
}


# -- admission: spec defaults (applied when reading) -----------------------------------
@pytest.mark.parametrize(
    ("spec", "namespace", "expected"),
    [
        pytest.param(
            {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap"}]},
            "apps",
            {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "apps"}]},
            id="selector-namespace-from-policy",
        ),
        pytest.param(
            {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "x"}]},
            "apps",
            {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "x"}]},
            id="explicit-namespace-kept",
        ),
        pytest.param(
            {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap"}]},
            None,
            {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap"}]},
            id="cluster-policy-selectors-stay-empty",
        ),
        pytest.param(
            {"resourceSelectors": [], "placement": {"spreadConstraints": [{"maxGroups": 2}, {"spreadByLabel": "x"}]}},
            None,
            {
                "resourceSelectors": [],
                "placement": {
                    "spreadConstraints": [
                        {"maxGroups": 2, "spreadByField": "cluster", "minGroups": 1},
                        {"spreadByLabel": "x", "minGroups": 1},
                    ]
                },
            },
            id="spread-by-cluster-and-min-groups-1",
        ),
        pytest.param(
            {"resourceSelectors": [], "placement": {"replicaScheduling": {"replicaSchedulingType": "Divided"}}},
            None,
            {
                "resourceSelectors": [],
                "placement": {
                    "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
                },
            },
            id="divided-defaults-to-weighted",
        ),
        pytest.param(
            {"resourceSelectors": [], "placement": {"replicaScheduling": {}}},
            None,
            {"resourceSelectors": [], "placement": {"replicaScheduling": {"replicaDivisionPreference": "Weighted"}}},
            id="type-absent-is-the-crd-default-divided",
        ),
        pytest.param(
            {"resourceSelectors": [], "placement": {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}},
            None,
            {"resourceSelectors": [], "placement": {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}},
            id="duplicated-untouched",
        ),
        pytest.param(
            {
                "resourceSelectors": [],
                "placement": {
                    "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
                },
            },
            None,
            {
                "resourceSelectors": [],
                "placement": {
                    "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
                },
            },
            id="aggregated-kept",
        ),
        pytest.param(
            {"resourceSelectors": [{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport"}]},
            None,
            {
                "resourceSelectors": [{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport"}],
                "propagateDeps": True,
            },
            id="service-import-forces-propagate-deps",
        ),
        pytest.param(
            {"resourceSelectors": [], "failover": {"application": {"decisionConditions": {}}}},
            None,
            {
                "resourceSelectors": [],
                "failover": {"application": {"decisionConditions": {}, "gracePeriodSeconds": 600}},
            },
            id="graceful-failover-gets-600s",
        ),
        pytest.param(
            {"resourceSelectors": [], "failover": {"application": {"purgeMode": "Directly"}}},
            None,
            {"resourceSelectors": [], "failover": {"application": {"purgeMode": "Directly"}}},
            id="direct-failover-no-grace",
        ),
    ],
)
def test_spec_defaults(spec: dict[str, Any], namespace: str | None, expected: dict[str, Any]) -> None:
    before = copy.deepcopy(spec)
    assert defaulted_spec(spec, namespace) == expected
    assert spec == before  # a copy, never the cached object


def test_defaulted_policy_uses_the_namespace_of_propagation_policies_only() -> None:
    selectors = [{"apiVersion": "v1", "kind": "ConfigMap"}]
    pp = {
        "kind": "PropagationPolicy",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"resourceSelectors": selectors},
    }
    cpp = {"kind": "ClusterPropagationPolicy", "metadata": {"name": "p"}, "spec": {"resourceSelectors": selectors}}
    assert defaulted_policy(pp)["spec"]["resourceSelectors"][0]["namespace"] == "ns"
    assert "namespace" not in defaulted_policy(cpp)["spec"]["resourceSelectors"][0]


# -- admission: metadata (written once) ---------------------------------------------------
@pytest.mark.parametrize(
    ("metadata", "cluster_wide", "labels", "finalizers"),
    [
        ({"name": "p"}, False, {PP_ID: "id-1"}, ["karmada.io/propagation-policy-controller"]),
        ({"name": "p"}, True, {CPP_ID: "id-1"}, ["karmada.io/cluster-propagation-policy-controller"]),
        (
            {"name": "p", "labels": {PP_ID: "kept"}, "finalizers": ["other"]},
            False,
            {PP_ID: "kept"},
            ["other", "karmada.io/propagation-policy-controller"],
        ),
        (
            {"name": "p", "finalizers": ["karmada.io/propagation-policy-controller"]},
            False,
            {PP_ID: "id-1"},
            ["karmada.io/propagation-policy-controller"],
        ),
    ],
)
def test_admission_metadata(
    metadata: dict[str, Any], cluster_wide: bool, labels: dict[str, str], finalizers: list[str]
) -> None:
    updated = admission_metadata({"metadata": metadata}, cluster_wide, new_id=lambda: "id-1")
    assert updated is not None
    assert updated["metadata"]["labels"] == labels and updated["metadata"]["finalizers"] == finalizers


@pytest.mark.parametrize(
    "metadata",
    [
        {"labels": {PP_ID: "a"}, "finalizers": ["karmada.io/propagation-policy-controller"]},
        {"deletionTimestamp": "2024-01-01T00:00:00Z"},
    ],
    ids=["complete", "being-deleted"],
)
def test_admission_metadata_nothing_to_do(metadata: dict[str, Any]) -> None:
    assert admission_metadata({"metadata": metadata}, False) is None


# -- claims -------------------------------------------------------------------------------
def test_claiming_and_releasing_a_template() -> None:
    claimed = with_claim(NGINX, False, "id-1", "pp", "default")
    assert claimed is not None
    assert claimed["metadata"]["labels"] == {"app": "x", PP_ID: "id-1"}
    assert claimed["metadata"]["annotations"] == {PP_NS: "default", PP_NAME: "pp"}
    assert with_claim(claimed, False, "id-1", "pp", "default") is None  # already so: no write
    assert claim_ids(claimed) == {"id-1"}
    assert without_claim(claimed, False, "other-id") is None  # someone else's claim now: untouched
    released = without_claim(claimed, False, "id-1")
    assert released is not None
    assert released["metadata"]["labels"] == {"app": "x"} and "annotations" not in released["metadata"]
    assert NGINX["metadata"].get("annotations") is None  # inputs are never changed


def test_a_propagation_policy_claim_strips_a_cluster_claim() -> None:
    by_cpp = with_claim(NGINX, True, "c-1", "cpp")
    assert by_cpp is not None
    assert by_cpp["metadata"]["annotations"] == {CPP_NAME: "cpp"}
    by_pp = with_claim(by_cpp, False, "p-1", "pp", "default")
    assert by_pp is not None
    assert CPP_ID not in by_pp["metadata"]["labels"] and CPP_NAME not in by_pp["metadata"]["annotations"]
    # no reverse path: a cluster claim added to a PP-claimed object keeps the PP claim
    both = with_claim(by_pp, True, "c-1", "cpp")
    assert both is not None and both["metadata"]["labels"][PP_ID] == "p-1"


# -- bindings -----------------------------------------------------------------------------
SPEC: dict[str, Any] = {
    "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
    "placement": {"clusterAffinity": {"clusterNames": ["m1"]}},
    "schedulerName": "default-scheduler",
    "conflictResolution": "Abort",
    "priority": 0,
    "preemption": "Never",
}


def test_desired_binding_for_a_namespaced_template() -> None:
    binding = desired_binding(
        NGINX,
        SPEC,
        cluster_wide_policy=False,
        policy_id="id-1",
        policy_name="pp",
        policy_namespace="default",
        replicas=2,
        replica_requirements={"resourceRequest": {"cpu": "1"}},
        schedule_priority=100,
    )
    assert binding == {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": "nginx-deployment",
            "namespace": "default",
            "labels": {PP_ID: "id-1"},
            "annotations": {PP_NS: "default", PP_NAME: "pp"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "nginx",
                    "uid": "u1",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "finalizers": ["karmada.io/binding-controller"],
        },
        "spec": {
            "resource": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": "default",
                "name": "nginx",
                "uid": "u1",
                "resourceVersion": "7",
            },
            "replicaRequirements": {"resourceRequest": {"cpu": "1"}},
            "replicas": 2,
            "placement": {"clusterAffinity": {"clusterNames": ["m1"]}},
            "schedulerName": "default-scheduler",
            "conflictResolution": "Abort",
            "schedulePriority": {"priority": 100},
        },
    }


def test_desired_binding_for_a_cluster_scoped_template() -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "a:b", "uid": "u"},
    }
    spec = {**SPEC, "propagateDeps": True, "suspension": {"dispatching": True}, "preserveResourcesOnDeletion": False}
    binding = desired_binding(role, spec, cluster_wide_policy=True, policy_id="c", policy_name="cpp")
    assert binding["kind"] == "ClusterResourceBinding"
    assert binding["metadata"]["name"] == "a.b-clusterrole" and "namespace" not in binding["metadata"]
    assert binding["metadata"]["labels"] == {CPP_ID: "c"} and binding["metadata"]["annotations"] == {CPP_NAME: "cpp"}
    assert "replicas" not in binding["spec"] and "namespace" not in binding["spec"]["resource"]
    assert binding["spec"]["propagateDeps"] is True and binding["spec"]["preserveResourcesOnDeletion"] is False
    assert binding["spec"]["suspension"] == {"dispatching": True}


def _desired(**overrides: Any) -> dict[str, Any]:
    return desired_binding(
        NGINX,
        {**SPEC, **overrides},
        cluster_wide_policy=False,
        policy_id="id-1",
        policy_name="pp",
        policy_namespace="default",
        replicas=2,
    )


def test_merging_keeps_what_others_own_and_skips_no_op_writes() -> None:
    existing = _desired()
    existing["metadata"]["labels"]["resourcebinding.karmada.io/permanent-id"] = "rb-1"
    existing["metadata"]["finalizers"] = ["karmada.io/binding-controller"]
    existing["metadata"]["resourceVersion"] = "9"
    existing["spec"]["clusters"] = [{"name": "m1", "replicas": 2}]
    existing["status"] = {"conditions": [{"type": "Scheduled", "status": "True"}]}
    assert merged_binding(existing, _desired()) is None
    changed = merged_binding(existing, _desired(placement={"clusterAffinity": {"clusterNames": ["m2"]}}))
    assert changed is not None
    assert changed["spec"]["placement"] == {"clusterAffinity": {"clusterNames": ["m2"]}}
    assert changed["spec"]["clusters"] == [{"name": "m1", "replicas": 2}]
    assert (
        changed["status"] == existing["status"]
        and changed["metadata"]["finalizers"] == existing["metadata"]["finalizers"]
    )
    assert changed["metadata"]["labels"]["resourcebinding.karmada.io/permanent-id"] == "rb-1"
    assert changed["metadata"]["resourceVersion"] == "9"  # the update is conditional on what was read


def test_merging_drops_fields_the_policy_no_longer_sets_and_a_cluster_claim() -> None:
    existing = _desired(failover={"cluster": {"purgeMode": "Directly"}}, propagateDeps=True)
    existing["metadata"]["labels"][CPP_ID] = "c-1"
    existing["metadata"]["annotations"][CPP_NAME] = "cpp"
    changed = merged_binding(existing, _desired())
    assert changed is not None
    assert "failover" not in changed["spec"] and "propagateDeps" not in changed["spec"]
    assert CPP_ID not in changed["metadata"]["labels"] and CPP_NAME not in changed["metadata"]["annotations"]


@pytest.mark.parametrize(
    ("existing", "policy", "expected"),
    [
        (None, None, None),
        (None, {"dispatching": True}, {"dispatching": True}),
        ({"dispatching": True, "scheduling": True}, None, {"scheduling": True}),
        ({"dispatching": True}, None, None),
        (
            {"scheduling": False},
            {"dispatchingOnClusters": {"clusterNames": ["a"]}},
            {
                "dispatchingOnClusters": {"clusterNames": ["a"]},
                "scheduling": False,
            },
        ),
    ],
)
def test_suspension_merge(existing: Any, policy: Any, expected: Any) -> None:
    assert merged_suspension(existing, policy) == expected


CPU = {"resourceRequest": {"cpu": "100m"}}


@pytest.mark.parametrize(
    ("spec", "replicas", "requirements", "changed"),
    [
        (None, 2, CPU, True),  # no binding yet
        ({"replicas": 2, "replicaRequirements": CPU}, 2, CPU, False),
        ({"replicas": 2, "replicaRequirements": CPU}, 3, CPU, True),  # scaled
        ({"replicas": 2, "replicaRequirements": CPU}, 2, {"resourceRequest": {"cpu": "200m"}}, True),
        ({"replicas": 2}, 2, None, False),
        ({"replicas": 2}, 2, {}, False),  # empty requirements are absent from a binding (omitempty)
        ({}, 0, None, False),  # zero replicas are absent too
        ({"replicas": 2, "replicaRequirements": CPU}, 2, None, True),  # the requests went
    ],
)
def test_replicas_changed(spec: dict[str, Any] | None, replicas: int, requirements: Any, changed: bool) -> None:
    binding = None if spec is None else {"spec": {"resource": {"name": "nginx"}, **spec}}
    assert replicas_changed(binding, replicas, requirements) is changed


@pytest.mark.parametrize(
    ("owners", "other"),
    [
        ([], False),
        ([{"uid": "u1", "controller": True}], False),
        ([{"uid": "old", "controller": True}], True),
        ([{"uid": "old"}], False),  # not a controller reference
    ],
)
def test_owned_by_other(owners: list[dict[str, Any]], other: bool) -> None:
    assert owned_by_other({"metadata": {"ownerReferences": owners}}, NGINX) is other


# -- the event filter -----------------------------------------------------------------------
def _changed(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    obj = copy.deepcopy(NGINX)
    target = obj
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value
    return obj


@pytest.mark.parametrize(
    ("path", "value", "spec_changed", "by_karmada"),
    [
        (("status", "replicas"), 3, False, True),
        (("metadata", "resourceVersion"), "8", False, True),
        (("metadata", "managedFields"), [{"manager": "x"}], False, True),
        (("spec", "replicas"), 5, True, False),
        (("metadata", "labels"), {"app": "x", PP_ID: "1"}, True, True),
        (("metadata", "annotations"), {PP_NAME: "pp"}, True, True),
        (("metadata", "labels"), {"app": "y"}, True, False),
        (("metadata", "labels"), {"app": "x", "namespace.karmada.io/skip-auto-propagation": "true"}, True, False),
    ],
)
def test_event_filter(path: tuple[str, ...], value: Any, spec_changed: bool, by_karmada: bool) -> None:
    new = _changed(path, value)
    assert specification_changed(NGINX, new) is spec_changed
    assert changed_by_karmada(NGINX, new) is by_karmada


# -- preemption -----------------------------------------------------------------------------
PP_LOW = Claim(False, "low", "default", "id")
CPP_ANY = Claim(True, "cpp", "", "id")


@pytest.mark.parametrize(
    ("cluster_wide", "name", "priority", "claim", "claimed_priority", "expected"),
    [
        pytest.param(False, "high", 5, PP_LOW, 1, True, id="pp-over-lower-pp"),
        pytest.param(False, "high", 1, PP_LOW, 1, False, id="pp-equal-priority-no"),
        pytest.param(False, "high", 0, PP_LOW, 3, False, id="pp-lower-no"),
        pytest.param(False, "high", -5, CPP_ANY, 100, True, id="pp-over-any-cpp"),
        pytest.param(True, "big", 5, CPP_ANY, 1, True, id="cpp-over-lower-cpp"),
        pytest.param(True, "big", 5, PP_LOW, 1, False, id="cpp-never-over-pp"),
        pytest.param(True, "big", 1, CPP_ANY, 1, False, id="cpp-equal-no"),
        pytest.param(False, "low", 9, PP_LOW, 1, False, id="own-claim"),
        pytest.param(False, "high", 9, None, None, False, id="unclaimed"),
        pytest.param(False, "high", 9, PP_LOW, None, False, id="holder-gone"),
    ],
)
def test_may_preempt(
    cluster_wide: bool, name: str, priority: int, claim: Claim | None, claimed_priority: int | None, expected: bool
) -> None:
    assert may_preempt(cluster_wide, name, "default", priority, claim, claimed_priority) is expected


def test_deprioritized_preemptors_between_old_and_new_priority_highest_first() -> None:
    candidates = [("a", 5, "Always"), ("b", 8, "Always"), ("c", 6, "Never"), ("d", 10, "Always"), ("e", 2, "Always")]
    assert deprioritized_preemptors(10, 2, candidates) == ["b", "a"]
    assert deprioritized_preemptors(2, 10, candidates) == []


def test_the_package_exports_what_it_declares() -> None:
    import karmada.detection as package

    assert sorted(package.__all__) == sorted(set(package.__all__))
    assert all(hasattr(package, name) for name in package.__all__)
