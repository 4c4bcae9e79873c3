"""Karmada's webhook handler tests (pkg/webhook/*/validating_test.go, mutating_test.go)
and its Cluster validation tests (pkg/apis/cluster/validation), as tables over
:func:`karmada.validation.review` and :func:`karmada.validation.mutate`."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from karmada.validation import Context, Request, json_patch, mutate, review
from karmada.validation.admission import customization_problem, taint_policy_errors
from karmada.validation.errors import aggregate

Obj = dict[str, Any]
PP_ID = "propagationpolicy.karmada.io/permanent-id"
CPP_ID = "clusterpropagationpolicy.karmada.io/permanent-id"
MAX_INT64 = str(2**63 - 1)


def _pp(labels: Obj | None = None, scheduler: str = "default-scheduler", **spec: Any) -> Obj:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "p", "namespace": "ns-1", "labels": labels or {}},
        "spec": {"schedulerName": scheduler, **spec},
    }


# -- propagationpolicy/validating_test.go ---------------------------------------------------------------

PP_CASES: list[tuple[str, Request, str | None]] = [
    (
        "Handle_SchedulerNameUpdated_DeniesAdmission",
        Request("PropagationPolicy", "UPDATE", _pp({PP_ID: "a"}, "new"), _pp({PP_ID: "a"}), "ns-1"),
        "the schedulerName should not be updated",
    ),
    (
        "Handle_PermanentIDLabelUpdated_DeniesAdmission",
        Request("PropagationPolicy", "UPDATE", _pp({PP_ID: "b"}), _pp({PP_ID: "a"}), "ns-1"),
        f"label {PP_ID} is immutable, it can only be set by the system during creation",
    ),
    (
        "Handle_PermanentIDLabelMissing_DeniesAdmission",
        Request("PropagationPolicy", "CREATE", _pp(), None, "ns-1"),
        f"label {PP_ID} is required, it should be set by the mutating admission webhook during creation",
    ),
    (
        "Handle_ValidationSucceeds_AllowsAdmission",
        Request("PropagationPolicy", "CREATE", _pp({PP_ID: "a"}), None, "ns-1"),
        None,
    ),
    (
        "Handle_ResourceSelectorNamespaceMismatch_DeniesAdmission",
        Request(
            "PropagationPolicy",
            "CREATE",
            _pp({PP_ID: "a"}, resourceSelectors=[{"apiVersion": "v1", "kind": "Pod", "namespace": "ns-2"}]),
            None,
            "ns-1",
        ),
        'spec.resourceSelectors[0].namespace: Invalid value: "ns-2": '
        "namespace of resource selector must be the same as the namespace of the policy",
    ),
    (
        "ClusterPropagationPolicy_PermanentIDLabelMissing_DeniesAdmission",
        Request("ClusterPropagationPolicy", "CREATE", {"metadata": {"name": "c"}, "spec": {}}),
        f"label {CPP_ID} is required, it should be set by the mutating admission webhook during creation",
    ),
    (
        "ClusterPropagationPolicy_SelectorsInAnyNamespace_AllowsAdmission",
        Request(
            "ClusterPropagationPolicy",
            "CREATE",
            {
                "metadata": {"name": "c", "labels": {CPP_ID: "x"}},
                "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "Pod", "namespace": "ns-2"}]},
            },
        ),
        None,
    ),
    (
        "OverridePolicy_BothRulesAndTargetCluster_DeniesAdmission",
        Request(
            "OverridePolicy",
            "CREATE",
            {"spec": {"overrideRules": [], "targetCluster": {"clusterNames": ["m1"]}}},
            namespace="ns-1",
        ),
        'spec.targetCluster: Invalid value: {"clusterNames":["m1"]}: overrideRules and targetCluster can\'t co-exist',
    ),
    (
        "ClusterOverridePolicy_UnknownFieldSelectorKey_DeniesAdmission",
        Request(
            "ClusterOverridePolicy",
            "CREATE",
            {"spec": {"targetCluster": {"fieldSelector": {"matchExpressions": [{"key": "foo", "operator": "In"}]}}}},
        ),
        'spec.targetCluster.fieldSelector: Invalid value: {"matchExpressions":[{"key":"foo","operator":"In"}]}: '
        'unsupported key "foo", must be provider, region, or zone',
    ),
]


@pytest.mark.parametrize(("name", "request_", "expected"), PP_CASES, ids=[c[0] for c in PP_CASES])
def test_policy_admission(name: str, request_: Request, expected: str | None) -> None:
    assert review(request_) == expected


def test_offline_review_skips_the_label_only_the_mutating_webhook_adds() -> None:
    assert review(Request("PropagationPolicy", "CREATE", _pp(), None, "ns-1"), Context(offline=True)) is None


# -- clustertaintpolicy/validating_test.go --------------------------------------------------------------

NO_EXECUTE = (
    "Configuring taint with NoExecute effect is not allowed, this capability must be explicitly enabled by "
    "administrators through command-line flags"
)


def _dup(index: int, key: str, effect: str) -> str:
    return (
        f'spec.taints[{index}]: Duplicate value: "Duplicate taint with the same key({key}) and effect({effect}) '
        'is not allowed"'
    )


TAINT_POLICY_CASES: list[tuple[str, list[Obj], bool, list[str]]] = [
    (
        "Non-repeating key-value pairs",
        [{"key": "key1", "effect": "NoSchedule"}, {"key": "key2", "effect": "PreferNoSchedule"}],
        True,
        [],
    ),
    (
        "There are duplicate key-value pairs",
        [{"key": "key1", "effect": "NoSchedule"}, {"key": "key1", "effect": "NoSchedule", "value": "value1"}],
        True,
        [_dup(0, "key1", "NoSchedule")],
    ),
    (
        "Some duplicate key-value pairs",
        [
            {"key": "key1", "effect": "NoSchedule"},
            {"key": "key2", "effect": "PreferNoSchedule"},
            {"key": "key1", "effect": "NoSchedule"},
        ],
        True,
        [_dup(0, "key1", "NoSchedule")],
    ),
    (
        "Multi duplicate key-value pairs",
        [
            {"key": "key1", "effect": "NoSchedule"},
            {"key": "key2", "effect": "SelectiveNoSchedule", "value": "value1"},
            {"key": "key1", "effect": "NoSchedule"},
            {"key": "key3", "effect": "NoExecute"},
            {"key": "key2", "effect": "SelectiveNoSchedule"},
        ],
        True,
        [_dup(0, "key1", "NoSchedule"), _dup(1, "key2", "SelectiveNoSchedule")],
    ),
    (
        "NoExecute effect is not allowed",
        [{"key": "key1", "effect": "NoExecute"}],
        False,
        [f"spec.taints[0]: Forbidden: {NO_EXECUTE}"],
    ),
]


@pytest.mark.parametrize(
    ("name", "taints", "allow", "expected"), TAINT_POLICY_CASES, ids=[c[0] for c in TAINT_POLICY_CASES]
)
def test_cluster_taint_policy(name: str, taints: list[Obj], allow: bool, expected: list[str]) -> None:
    assert [str(e) for e in taint_policy_errors({"taints": taints}, allow)] == expected


def test_cluster_taint_policy_denial_is_the_aggregate() -> None:
    request = Request("ClusterTaintPolicy", "CREATE", {"spec": {"taints": [{"key": "key1", "effect": "NoExecute"}]}})
    assert review(request) == f"spec.taints[0]: Forbidden: {NO_EXECUTE}"
    assert review(request, Context(allow_no_execute_taint_policy=True)) is None


# -- resourceinterpretercustomization -------------------------------------------------------------------


def _ric(name: str, kind: str = "Workload", **scripts: str) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {
            "target": {"apiVersion": "apps.example/v1", "kind": kind},
            "customizations": {key: {"luaScript": script} for key, script in scripts.items()},
        },
    }


RETAIN = "function Retain(desiredObj, observedObj)\n  return desiredObj\nend"
RIC_CASES: list[tuple[str, Obj, list[Obj], str | None]] = [
    ("Handle_ValidRequest_AllowsAdmission", _ric("a", retention=RETAIN), [], None),
    (
        "Handle_WrongLuaCustomizationRetentionScript_DeniesAdmission",
        _ric("a", retention="function Retain(desiredObj, observedObj)\n  return desiredObj"),
        [],
        "InterpreterOperation(Retain) Lua script error: ",
    ),
    (
        "conflicting operation of another customization of the same target",
        _ric("b", retention=RETAIN),
        [_ric("a", retention=RETAIN)],
        "conflicting with InterpreterOperation(Retain) of existing ResourceInterpreterCustomization(a)",
    ),
    ("the same customization updated", _ric("a", retention=RETAIN), [_ric("a", retention=RETAIN)], None),
    ("another target", _ric("b", "Other", retention=RETAIN), [_ric("a", retention=RETAIN)], None),
    (
        "dependencies may come from several customizations",
        _ric("b", dependencyInterpretation="function GetDependencies(o) return {} end"),
        [_ric("a", dependencyInterpretation="function GetDependencies(o) return {} end")],
        None,
    ),
]


@pytest.mark.parametrize(("name", "new", "existing", "expected"), RIC_CASES, ids=[c[0] for c in RIC_CASES])
def test_resource_interpreter_customization(name: str, new: Obj, existing: list[Obj], expected: str | None) -> None:
    problem = customization_problem(new, existing)
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and problem.startswith(expected), problem


def test_a_lua_syntax_error_names_the_line() -> None:
    problem = customization_problem(
        _ric("a", healthInterpretation="function InterpretHealth(o)\n  return = 1\nend"), []
    )
    assert problem is not None
    assert problem.startswith("InterpreterOperation(InterpretHealth) Lua script error: ")
    assert ":2:" in problem


# -- resourcedeletionprotection/validating_test.go ------------------------------------------------------

PROTECTED = "resourcetemplate.karmada.io/deletion-protected"
DELETION_CASES: list[tuple[str, str, Obj | None, str | None]] = [
    (
        "Handle_DeleteWithProtectionLabel_DeniesAdmission",
        "DELETE",
        {"metadata": {"labels": {PROTECTED: "Always"}}},
        f"This resource is protected, please make sure to remove the label: {PROTECTED}",
    ),
    ("Handle_DeleteWithoutLabel_AllowsAdmission", "DELETE", {"metadata": {}}, None),
    ("Handle_DeleteWithDifferentLabel_AllowsAdmission", "DELETE", {"metadata": {"labels": {PROTECTED: "No"}}}, None),
    ("Handle_CreateOperation_AllowsAdmission", "CREATE", None, None),
]


@pytest.mark.parametrize(("name", "operation", "old", "expected"), DELETION_CASES, ids=[c[0] for c in DELETION_CASES])
def test_deletion_protection(name: str, operation: str, old: Obj | None, expected: str | None) -> None:
    assert review(Request("Deployment", operation, {"metadata": {}}, old)) == expected


# -- resourcebinding/validating_test.go (annotations, components) ---------------------------------------


def _rb(annotations: Obj | None = None, components: list[Obj] | None = None) -> Obj:
    return {"metadata": {"name": "rb", "annotations": annotations or {}}, "spec": {"components": components or []}}


RB_CASES: list[tuple[str, Obj, str | None]] = [
    ("valid dependencies annotation", _rb({"resourcebinding.karmada.io/dependencies": "[]"}), None),
    (
        "invalid dependencies annotation",
        _rb({"resourcebinding.karmada.io/dependencies": "{not json"}),
        'metadata.annotations.resourcebinding.karmada.io/dependencies: Invalid value: "{not json": '
        "annotation value must be a valid JSON",
    ),
    ("unique component names", _rb(components=[{"name": "a"}, {"name": "b"}]), None),
    (
        "empty component name",
        _rb(components=[{"name": ""}]),
        'spec.components[0].name: Invalid value: "": component names must be non-empty',
    ),
    (
        "duplicate component names",
        _rb(components=[{"name": "a"}, {"name": "a"}]),
        'spec.components[1].name: Invalid value: "a": component names must be unique',
    ),
]


@pytest.mark.parametrize(("name", "binding", "expected"), RB_CASES, ids=[c[0] for c in RB_CASES])
def test_resource_binding(name: str, binding: Obj, expected: str | None) -> None:
    assert review(Request("ResourceBinding", "CREATE", binding, namespace="default")) == expected


# -- pkg/apis/cluster/validation/validation_test.go ------------------------------------------------------


def _cluster(name: str = "foo", **spec: Any) -> Obj:
    return {"metadata": {"name": name}, "spec": spec}


def _models(*grades: tuple[int, list[tuple[str, str, str]]]) -> list[Obj]:
    return [
        {"grade": grade, "ranges": [{"name": n, "min": low, "max": high} for n, low, high in ranges]}
        for grade, ranges in grades
    ]


CLUSTER_CASES: list[tuple[str, Obj, str]] = [
    ("zero-length name", _cluster("", syncMode="Push"), 'metadata.name: Invalid value: "": must be not empty'),
    (
        "invalid name",
        _cluster("^Invalid", syncMode="Push"),
        'metadata.name: Invalid value: "^Invalid": a lowercase RFC',
    ),
    (
        "invalid name that is too long",
        _cluster("a" * 49, syncMode="Push"),
        "must be no more than 48 characters",
    ),
    ("no sync mode", _cluster(), "spec.syncMode: Required value"),
    (
        "unsupported sync mode",
        _cluster(syncMode="^Invalid"),
        'spec.syncMode: Unsupported value: "^Invalid": supported values: "Pull", "Push"',
    ),
    (
        "invalid apiEndpoint",
        _cluster(syncMode="Push", apiEndpoint="^Invalid"),
        'spec.apiEndpoint: Invalid value: "": host must be provided; desired format: hostname, hostname:port, '
        "IP or IP:port",
    ),
    ("empty secretRef", _cluster(syncMode="Push", secretRef={}), "spec.secretRef.namespace: Required value"),
    (
        "empty impersonatorSecretRef",
        _cluster(syncMode="Push", impersonatorSecretRef={}),
        "spec.impersonatorSecretRef.namespace: Required value",
    ),
    (
        "invalid proxyURL",
        _cluster(syncMode="Push", proxyURL="^Invalid"),
        'spec.proxyURL: Invalid value: "^Invalid": unsupported scheme "", must be http, https, or socks5',
    ),
    (
        "invalid provider",
        _cluster(syncMode="Push", provider="Invalid Provider"),
        'spec.provider: Invalid value: "Invalid',
    ),
    (
        "invalid region",
        _cluster(syncMode="Push", region="Invalid Region"),
        'spec.region: Invalid value: "Invalid Region"',
    ),
    ("invalid zone", _cluster(syncMode="Push", zone="Invalid Zone"), 'spec.Zone: Invalid value: "Invalid Zone"'),
    (
        "invalid zones",
        _cluster(syncMode="Push", zones=["Invalid Zone", "Zone2"]),
        'spec.Zones: Invalid value: "Invalid Zone"',
    ),
    (
        "co-exist zones and zone",
        _cluster(syncMode="Push", zone="Zone", zones=["Zones"]),
        "Zone and Zones cannot co-exist",
    ),
    (
        "unsupported taint effect",
        _cluster(syncMode="Push", taints=[{"key": "foo", "value": "bar", "effect": "^Invalid"}]),
        'spec.taints[0].effect: Unsupported value: "^Invalid": supported values: "NoSchedule", "NoExecute"',
    ),
    (
        "invalid cluster resource models with the same grade",
        _cluster(syncMode="Push", resourceModels=_models((1, [("cpu", "0", "2")]), (1, [("cpu", "2", MAX_INT64)]))),
        "The grade of each models should not be the same",
    ),
    (
        "invalid cluster resource models with different numbers of resource types",
        _cluster(
            syncMode="Push",
            resourceModels=_models(
                (1, [("cpu", "0", "2")]), (2, [("cpu", "2", MAX_INT64), ("memory", "2", MAX_INT64)])
            ),
        ),
        "The number of resource types should be the same",
    ),
    (
        "invalid cluster resource models with unreasonable ranges",
        _cluster(syncMode="Push", resourceModels=_models((1, [("cpu", "2", "0")]))),
        "The max value of each resource must be greater than the min value",
    ),
    (
        "invalid cluster resource models which the min value of each resource in the first model is not 0",
        _cluster(syncMode="Push", resourceModels=_models((1, [("cpu", "1", MAX_INT64)]))),
        "The min value of each resource in the first model should be 0",
    ),
    (
        "invalid cluster resource models which the max value of each resource in the last model is not MaxInt64",
        _cluster(syncMode="Push", resourceModels=_models((1, [("cpu", "0", "2")]))),
        "The max value of each resource in the last model should be MaxInt64",
    ),
    (
        "invalid cluster resource models which the resource types of each models are different",
        _cluster(syncMode="Push", resourceModels=_models((1, [("cpu", "0", "2")]), (2, [("memory", "2", MAX_INT64)]))),
        "The resource types of each models should be the same",
    ),
    (
        "invalid cluster resource models with contiguous and non-overlapping",
        _cluster(syncMode="Push", resourceModels=_models((1, [("cpu", "0", "2")]), (2, [("cpu", "1", MAX_INT64)]))),
        "Model intervals for resources must be contiguous and non-overlapping",
    ),
]


@pytest.mark.parametrize(("name", "cluster", "expected"), CLUSTER_CASES, ids=[c[0] for c in CLUSTER_CASES])
def test_validate_cluster(name: str, cluster: Obj, expected: str) -> None:
    message = review(Request("Cluster", "CREATE", cluster))
    assert message is not None and expected in message, message


def test_a_valid_cluster_and_its_default_models_pass() -> None:
    cluster = mutate("Cluster", _cluster(syncMode="Pull", apiEndpoint="https://10.0.0.1:6443", zones=["z1"]), "CREATE")
    assert len(cluster["spec"]["resourceModels"]) == 9
    assert review(Request("Cluster", "CREATE", cluster)) is None


def test_cluster_name_is_immutable() -> None:
    old, new = _cluster("a", syncMode="Pull"), _cluster("b", syncMode="Pull")
    assert review(Request("Cluster", "UPDATE", new, old)) == 'metadata.name: Invalid value: "b": field is immutable'


def test_aggregate_drops_duplicates_and_brackets_several() -> None:
    from karmada.validation.errors import invalid

    one = invalid("a", 1, "x")
    assert aggregate([one, one]) == "a: Invalid value: 1: x"
    assert aggregate([one, invalid("b", "v", "y")]) == '[a: Invalid value: 1: x, b: Invalid value: "v": y]'


# -- mutating_test.go -----------------------------------------------------------------------------------


def test_propagation_policy_mutation_full_coverage() -> None:
    """propagationpolicy/mutating_test.go TestMutatingAdmission_Handle_FullCoverage."""
    policy = {
        "metadata": {"name": "test-propagation-policy"},
        "spec": {
            "placement": {
                "spreadConstraints": [{"spreadByLabel": "", "spreadByField": "", "minGroups": 0}],
                "replicaScheduling": {"replicaSchedulingType": "Divided"},
            },
            "propagateDeps": False,
            "resourceSelectors": [
                {"namespace": "", "kind": "ServiceImport", "apiVersion": "multicluster.x-k8s.io/v1alpha1"},
                {"namespace": ""},
            ],
            "failover": {"application": {"purgeMode": "Gracefully"}},
        },
    }
    got = mutate("PropagationPolicy", policy, "CREATE", "test-namespace", new_id=lambda: "some-unique-uuid")
    assert got["metadata"]["labels"] == {PP_ID: "some-unique-uuid"}
    assert got["metadata"]["finalizers"] == ["karmada.io/propagation-policy-controller"]
    spec = got["spec"]
    assert spec["placement"]["spreadConstraints"] == [{"spreadByLabel": "", "spreadByField": "cluster", "minGroups": 1}]
    assert spec["placement"]["replicaScheduling"]["replicaDivisionPreference"] == "Weighted"
    assert spec["propagateDeps"] is True
    assert [s["namespace"] for s in spec["resourceSelectors"]] == ["test-namespace", "test-namespace"]
    assert spec["failover"]["application"]["gracePeriodSeconds"] == 600
    assert policy["metadata"] == {"name": "test-propagation-policy"}  # the input is left alone


MUTATION_CASES: list[tuple[str, str, Obj, str, list[Obj]]] = [
    (
        "a new policy's copied id is replaced",
        "PropagationPolicy",
        {"metadata": {"labels": {PP_ID: "copied"}, "finalizers": ["karmada.io/propagation-policy-controller"]}},
        "CREATE",
        [{"op": "replace", "path": "/metadata/labels/propagationpolicy.karmada.io~1permanent-id", "value": "id-1"}],
    ),
    (
        "an updated policy keeps its id and gets no finalizer",
        "PropagationPolicy",
        {"metadata": {"labels": {PP_ID: "kept"}}, "spec": {}},
        "UPDATE",
        [],
    ),
    (
        "a cluster-wide policy keeps empty selector namespaces",
        "ClusterPropagationPolicy",
        {"metadata": {"labels": {CPP_ID: "x"}}, "spec": {"resourceSelectors": [{"kind": "Namespace"}]}},
        "UPDATE",
        [],
    ),
    (
        "an override policy's selectors get its namespace",
        "OverridePolicy",
        {"metadata": {"namespace": "ns"}, "spec": {"resourceSelectors": [{"kind": "ConfigMap"}]}},
        "UPDATE",
        [{"op": "add", "path": "/spec/resourceSelectors/0/namespace", "value": "ns"}],
    ),
    (
        "a new binding gets an id",
        "ResourceBinding",
        {"metadata": {"labels": {}}},
        "CREATE",
        [{"op": "add", "path": "/metadata/labels/resourcebinding.karmada.io~1permanent-id", "value": "id-1"}],
    ),
    (
        "a binding's id is kept",
        "ClusterResourceBinding",
        {"metadata": {"labels": {"clusterresourcebinding.karmada.io/permanent-id": "x"}}},
        "CREATE",
        [],
    ),
    (
        "a work gets an id and its manifests pruned and recorded",
        "Work",
        {
            "metadata": {"labels": {}},
            "spec": {
                "workload": {
                    "manifests": [
                        {
                            "apiVersion": "v1",
                            "kind": "ConfigMap",
                            "metadata": {"name": "c", "resourceVersion": "5", "labels": {"app": "x"}},
                        }
                    ]
                }
            },
        },
        "CREATE",
        [
            {"op": "add", "path": "/metadata/labels/work.karmada.io~1permanent-id", "value": "id-1"},
            {"op": "remove", "path": "/spec/workload/manifests/0/metadata/resourceVersion"},
            {
                "op": "add",
                "path": "/spec/workload/manifests/0/metadata/labels/work.karmada.io~1permanent-id",
                "value": "id-1",
            },
            {
                "op": "add",
                "path": "/spec/workload/manifests/0/metadata/annotations",
                "value": {
                    "resourcetemplate.karmada.io/managed-annotations": (
                        "resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels"
                    ),
                    "resourcetemplate.karmada.io/managed-labels": "app,work.karmada.io/permanent-id",
                },
            },
        ],
    ),
    ("other kinds are left alone", "Deployment", {"metadata": {}}, "CREATE", []),
]


@pytest.mark.parametrize(
    ("name", "kind", "obj", "operation", "patch"), MUTATION_CASES, ids=[c[0] for c in MUTATION_CASES]
)
def test_mutation_patches(name: str, kind: str, obj: Obj, operation: str, patch: list[Obj]) -> None:
    mutated = mutate(kind, obj, operation, new_id=lambda: "id-1")
    assert json_patch(obj, mutated) == patch


def test_a_mutated_object_passes_validation() -> None:
    policy = _pp(resourceSelectors=[{"apiVersion": "apps/v1", "kind": "Deployment"}])
    assert review(Request("PropagationPolicy", "CREATE", policy, None, "ns-1")) is not None
    mutated = mutate("PropagationPolicy", policy, "CREATE", "ns-1")
    assert review(Request("PropagationPolicy", "CREATE", mutated, None, "ns-1")) is None


def test_mutation_is_idempotent() -> None:
    policy = _pp(placement={"spreadConstraints": [{"maxGroups": 2}], "replicaScheduling": {}})
    once = mutate("PropagationPolicy", policy, "CREATE", "ns-1")
    assert json_patch(once, mutate("PropagationPolicy", copy.deepcopy(once), "UPDATE", "ns-1")) == []


JSON_PATCH_CASES: list[tuple[Any, Any, list[Obj]]] = [
    ({"a": 1}, {"a": 1}, []),
    ({"a": 1}, {"a": 2}, [{"op": "replace", "path": "/a", "value": 2}]),
    ({"a": 1}, {}, [{"op": "remove", "path": "/a"}]),
    ({"a/b": {}}, {"a/b": {"c~": 1}}, [{"op": "add", "path": "/a~1b/c~0", "value": 1}]),
    ({"l": [1, 2]}, {"l": [1, 3]}, [{"op": "replace", "path": "/l/1", "value": 3}]),
    ({"l": [1]}, {"l": [1, 2]}, [{"op": "replace", "path": "/l", "value": [1, 2]}]),
]


@pytest.mark.parametrize(("before", "after", "patch"), JSON_PATCH_CASES)
def test_json_patch(before: Any, after: Any, patch: list[Obj]) -> None:
    assert json_patch(before, after) == patch
