"""Rendering a binding's Works: targets, replicas revision, Job completions,
overrides, decoration, conflict resolution, suspension, and the merge with the
stored Work that decides whether anything is written."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from karmada.api import ResourceBindingSpec
from karmada.api.cluster import Cluster
from karmada.api.override import ClusterOverridePolicy, OverridePolicy
from karmada.interpreter import NativeInterpreter
from karmada.overrides import OverrideError
from karmada.works import (
    CLUSTER_RESOURCE_BINDING,
    RESOURCE_BINDING,
    RenderError,
    completions_by_cluster,
    conflict_resolution,
    desired_work,
    directly_purged_clusters,
    expected_clusters,
    render_work,
    suspend_dispatching,
    target_clusters,
    work_changed,
)
from tests.factories import cluster

Obj = dict[str, Any]
NATIVE = NativeInterpreter()


def deployment(replicas: int = 5, annotations: dict[str, str] | None = None) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "nginx",
            "namespace": "default",
            "uid": "tmpl-uid",
            "generation": 2,
            "resourceVersion": "7",
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "labels": {"app": "nginx", "propagationpolicy.karmada.io/permanent-id": "pp-id"},
            "annotations": {"propagationpolicy.karmada.io/name": "pp", **(annotations or {})},
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25", "args": ["-g"]}]},
            },
        },
        "status": {"replicas": 5},
    }


def spec(**fields: Any) -> ResourceBindingSpec:
    data: Obj = {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx"}}
    data.update(fields)
    return ResourceBindingSpec.from_dict(data)


def binding(binding_spec: ResourceBindingSpec, kind: str = "ResourceBinding") -> Obj:
    meta: Obj = {"name": "nginx-deployment", "labels": {"resourcebinding.karmada.io/permanent-id": "rb-id"}}
    if kind == "ClusterResourceBinding":
        meta = {"name": "nginx-deployment", "labels": {"clusterresourcebinding.karmada.io/permanent-id": "crb-id"}}
    else:
        meta["namespace"] = "default"
    return {"apiVersion": "work.karmada.io/v1alpha2", "kind": kind, "metadata": meta, "spec": binding_spec.to_dict()}


def op(name: str, overriders: Obj, target: Obj | None = None, selectors: list[Obj] | None = None) -> OverridePolicy:
    rule: Obj = {"overriders": overriders}
    if target is not None:
        rule["targetCluster"] = target
    body: Obj = {"overrideRules": [rule]}
    if selectors is not None:
        body["resourceSelectors"] = selectors
    return OverridePolicy.from_dict(
        {
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "OverridePolicy",
            "metadata": {"name": name, "namespace": "default"},
            "spec": body,
        }
    )


def render(
    template: Obj,
    binding_spec: ResourceBindingSpec,
    target: str = "member1",
    *,
    ops: list[OverridePolicy] | None = None,
    cops: list[ClusterOverridePolicy] | None = None,
    member: Cluster | None = None,
) -> Any:
    targets = {t.name: t for t in target_clusters(binding_spec)}
    return render_work(
        template,
        binding(binding_spec),
        binding_spec,
        RESOURCE_BINDING,
        targets[target],
        member or cluster(target),
        cops or [],
        ops or [],
        NATIVE,
        completions_by_cluster(template, binding_spec, list(targets.values())),
    )


# --- targets ------------------------------------------------------------------------------------


def test_targets_merge_required_by_first_occurrence_wins() -> None:
    s = spec(
        clusters=[{"name": "a", "replicas": 2}],
        requiredBy=[
            {"namespace": "default", "name": "x", "clusters": [{"name": "a", "replicas": 9}, {"name": "b"}]},
            {"name": "y", "clusters": [{"name": "c", "replicas": 1}, {"name": "b", "replicas": 4}]},
        ],
    )
    assert [(t.name, t.replicas) for t in target_clusters(s)] == [("a", 2), ("b", None), ("c", 1)]


EVICTION = {"reason": "TaintUntolerated", "producer": "TaintManager"}


@pytest.mark.parametrize(
    ("tasks", "expected", "directly"),
    [
        ([], {"a"}, set()),
        ([{"fromCluster": "old", **EVICTION}], {"a", "old"}, set()),
        ([{"fromCluster": "old", "purgeMode": "Gracefully", **EVICTION}], {"a", "old"}, set()),
        ([{"fromCluster": "old", "purgeMode": "Never", **EVICTION}], {"a", "old"}, set()),
        ([{"fromCluster": "old", "purgeMode": "Directly", **EVICTION}], {"a"}, {"old"}),
    ],
)
def test_expected_clusters_keep_graceful_evictions(tasks: list[Obj], expected: set[str], directly: set[str]) -> None:
    s = spec(clusters=[{"name": "a"}], gracefulEvictionTasks=tasks)
    assert expected_clusters(s) == expected
    assert directly_purged_clusters(s) == directly


# --- conflict resolution and suspension -----------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "binding_value", "expected", "warns"),
    [
        (None, "Abort", "abort", False),
        (None, "Overwrite", "overwrite", False),
        (None, None, "abort", False),
        ("overwrite", "Abort", "overwrite", False),
        ("abort", "Overwrite", "abort", False),
        ("Overwrite", "Overwrite", "overwrite", True),  # not exactly overwrite/abort: ignored
        ("yes", "Abort", "abort", True),
    ],
)
def test_conflict_resolution(annotation: str | None, binding_value: str | None, expected: str, warns: bool) -> None:
    annotations = {"work.karmada.io/conflict-resolution": annotation} if annotation else {}
    value, warning = conflict_resolution({"metadata": {"annotations": annotations}}, binding_value)
    assert value == expected and (warning is not None) == warns


@pytest.mark.parametrize(
    ("suspension", "cluster_name", "expected"),
    [
        (None, "a", False),
        ({}, "a", False),
        ({"dispatching": False}, "a", False),
        ({"dispatching": True}, "a", True),
        ({"dispatchingOnClusters": {"clusterNames": ["a"]}}, "a", True),
        ({"dispatchingOnClusters": {"clusterNames": ["a"]}}, "b", False),
        ({"dispatchingOnClusters": {}}, "a", False),
    ],
)
def test_suspend_dispatching(suspension: Obj | None, cluster_name: str, expected: bool) -> None:
    fields = {"suspension": suspension} if suspension is not None else {}
    assert suspend_dispatching(spec(**fields), cluster_name) is expected


def test_suspension_reaches_the_work_spec() -> None:
    s = spec(
        replicas=5,
        clusters=[{"name": "member1", "replicas": 2}, {"name": "member2", "replicas": 3}],
        suspension={"dispatchingOnClusters": {"clusterNames": ["member2"]}},
        preserveResourcesOnDeletion=True,
    )
    one, two = (desired_work(None, render(deployment(), s, c), "id") for c in ("member1", "member2"))
    assert one["spec"]["suspendDispatching"] is False and two["spec"]["suspendDispatching"] is True
    assert one["spec"]["preserveResourcesOnDeletion"] is True


# --- replicas -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "target", "expected"),
    [
        ({"replicas": 5, "clusters": [{"name": "member1", "replicas": 2}]}, "member1", 2),
        # Duplicated: the scheduler gives every cluster the full count
        ({"replicas": 5, "clusters": [{"name": "member1", "replicas": 5}]}, "member1", 5),
        # a workload with no share in this cluster (requiredBy snapshot without replicas): 0
        ({"replicas": 5, "requiredBy": [{"name": "x", "clusters": [{"name": "member1"}]}]}, "member1", 0),
        # requirements alone make it a workload
        ({"replicaRequirements": {"resourceRequest": {"cpu": "1"}}, "clusters": [{"name": "member1"}]}, "member1", 0),
        # not a workload (replicas 0, no requirements): the template's count stays
        ({"clusters": [{"name": "member1", "replicas": 3}]}, "member1", 5),
    ],
)
def test_replicas_revised_to_the_cluster_share(fields: Obj, target: str, expected: int) -> None:
    rendered = render(deployment(5), spec(**fields), target)
    assert rendered.manifest["spec"]["replicas"] == expected


def job(completions: int | None, parallelism: int = 4) -> Obj:
    body: Obj = {"parallelism": parallelism, "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}
    if completions is not None:
        body["completions"] = completions
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", "uid": "job-uid"},
        "spec": body,
    }


def job_spec(placement: Obj) -> ResourceBindingSpec:
    return spec(
        resource={"apiVersion": "batch/v1", "kind": "Job", "namespace": "default", "name": "pi"},
        replicas=4,
        placement=placement,
        clusters=[{"name": "member1", "replicas": 3}, {"name": "member2", "replicas": 1}],
    )


DIVIDED = {"replicaScheduling": {"replicaSchedulingType": "Divided"}}
DUPLICATED = {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}


@pytest.mark.parametrize(
    ("completions", "placement", "expected"),
    [
        (8, DIVIDED, {"member1": (3, 6), "member2": (1, 2)}),
        (None, DIVIDED, {"member1": (3, None), "member2": (1, None)}),  # work-queue Job: no completions
        (8, DUPLICATED, {"member1": (3, 8), "member2": (1, 8)}),
        (8, {}, {"member1": (3, 8), "member2": (1, 8)}),  # no replicaScheduling means Duplicated
    ],
)
def test_job_parallelism_and_completions(completions: int | None, placement: Obj, expected: Obj) -> None:
    s = job_spec(placement)
    for name, (parallelism, share) in expected.items():
        manifest = render(job(completions), s, name).manifest
        assert manifest["spec"]["parallelism"] == parallelism
        assert manifest["spec"].get("completions") == share


def test_job_completions_for_an_unknown_cluster_fail() -> None:
    s = job_spec(DIVIDED)
    targets = target_clusters(s)
    with pytest.raises(RenderError, match="no completions found for cluster member3"):
        render_work(
            job(8),
            binding(s),
            s,
            RESOURCE_BINDING,
            targets[0].model_copy(update={"name": "member3"}),
            cluster("member3"),
            [],
            [],
            NATIVE,
            {"member1": 6, "member2": 2},
        )


# --- decoration -----------------------------------------------------------------------------------


def test_manifest_and_work_decoration() -> None:
    s = spec(replicas=5, clusters=[{"name": "member1", "replicas": 2}])
    work = desired_work(None, render(deployment(), s), "work-id")
    manifest = work["spec"]["workload"]["manifests"][0]
    assert work["metadata"] == {
        "name": "nginx-687f7fb96f",
        "namespace": "karmada-es-member1",
        "labels": {"resourcebinding.karmada.io/permanent-id": "rb-id", "work.karmada.io/permanent-id": "work-id"},
        "annotations": {
            "resourcebinding.karmada.io/namespace": "default",
            "resourcebinding.karmada.io/name": "nginx-deployment",
            "work.karmada.io/conflict-resolution": "abort",
        },
        "finalizers": ["karmada.io/execution-controller"],
    }
    assert manifest["metadata"] == {
        "name": "nginx",
        "namespace": "default",
        "labels": {
            "app": "nginx",
            "propagationpolicy.karmada.io/permanent-id": "pp-id",  # the claim travels too
            "resourcebinding.karmada.io/permanent-id": "rb-id",
            "karmada.io/managed": "true",
            "work.karmada.io/permanent-id": "work-id",
        },
        "annotations": {
            "propagationpolicy.karmada.io/name": "pp",
            "resourcetemplate.karmada.io/generation": "2",
            "resourcebinding.karmada.io/namespace": "default",
            "resourcebinding.karmada.io/name": "nginx-deployment",
            "resourcetemplate.karmada.io/uid": "tmpl-uid",
            "work.karmada.io/name": "nginx-687f7fb96f",
            "work.karmada.io/namespace": "karmada-es-member1",
            "work.karmada.io/conflict-resolution": "abort",
            "resourcetemplate.karmada.io/managed-annotations": ",".join(
                [
                    "propagationpolicy.karmada.io/name",
                    "resourcebinding.karmada.io/name",
                    "resourcebinding.karmada.io/namespace",
                    "resourcetemplate.karmada.io/generation",
                    "resourcetemplate.karmada.io/managed-annotations",
                    "resourcetemplate.karmada.io/managed-labels",
                    "resourcetemplate.karmada.io/uid",
                    "work.karmada.io/conflict-resolution",
                    "work.karmada.io/name",
                    "work.karmada.io/namespace",
                ]
            ),
            "resourcetemplate.karmada.io/managed-labels": ",".join(
                [
                    "app",
                    "karmada.io/managed",
                    "propagationpolicy.karmada.io/permanent-id",
                    "resourcebinding.karmada.io/permanent-id",
                    "work.karmada.io/permanent-id",
                ]
            ),
        },
    }
    assert "status" not in manifest and manifest["spec"]["replicas"] == 2
    assert work["spec"]["suspendDispatching"] is False and work["spec"]["preserveResourcesOnDeletion"] is False


def test_cluster_resource_binding_decoration() -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "karmada-impersonator", "uid": "r-uid"},
        "rules": [],
    }
    s = spec(
        resource={"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "karmada-impersonator"},
        clusters=[{"name": "member1"}],
        conflictResolution="Overwrite",
    )
    crb = binding(s, "ClusterResourceBinding")
    rendered = render_work(
        role, crb, s, CLUSTER_RESOURCE_BINDING, target_clusters(s)[0], cluster("member1"), [], [], NATIVE
    )
    work = desired_work(None, rendered, "w")
    assert work["metadata"]["name"] == "karmada-impersonator-7cbb6bd5c9"
    assert work["metadata"]["labels"]["clusterresourcebinding.karmada.io/permanent-id"] == "crb-id"
    assert work["metadata"]["annotations"] == {
        "clusterresourcebinding.karmada.io/name": "nginx-deployment",
        "work.karmada.io/conflict-resolution": "overwrite",
    }
    manifest = work["spec"]["workload"]["manifests"][0]
    assert manifest["metadata"]["annotations"]["clusterresourcebinding.karmada.io/name"] == "nginx-deployment"
    assert "resourcetemplate.karmada.io/generation" not in manifest["metadata"]["annotations"]  # no generation


def test_template_conflict_annotation_goes_to_work_and_manifest() -> None:
    s = spec(clusters=[{"name": "member1"}], conflictResolution="Abort")
    work = desired_work(
        None, render(deployment(annotations={"work.karmada.io/conflict-resolution": "overwrite"}), s), "w"
    )
    assert work["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] == "overwrite"
    manifest = work["spec"]["workload"]["manifests"][0]
    assert manifest["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] == "overwrite"


# --- overrides ------------------------------------------------------------------------------------

IMAGE = {"imageOverrider": [{"component": "Registry", "operator": "replace", "value": "mirror.example"}]}
ARGS = {"argsOverrider": [{"containerName": "nginx", "operator": "add", "value": ["--debug"]}]}
PLAIN = {"plaintext": [{"path": "/metadata/labels/env", "operator": "add", "value": "prod"}]}


def test_overrides_per_cluster_and_recorded_on_the_work() -> None:
    s = spec(replicas=2, clusters=[{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 1}])
    policies = [
        op("image", IMAGE, target={"clusterNames": ["member1"]}),
        op("args", {**ARGS, **PLAIN}, selectors=[{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}]),
    ]
    one = desired_work(None, render(deployment(), s, "member1", ops=policies), "w1")
    two = desired_work(None, render(deployment(), s, "member2", ops=policies), "w2")
    c1 = one["spec"]["workload"]["manifests"][0]["spec"]["template"]["spec"]["containers"][0]
    c2 = two["spec"]["workload"]["manifests"][0]["spec"]["template"]["spec"]["containers"][0]
    assert (c1["image"], c1["args"]) == ("mirror.example/nginx:1.25", ["-g", "--debug"])
    assert (c2["image"], c2["args"]) == ("nginx:1.25", ["-g", "--debug"])
    assert one["spec"]["workload"]["manifests"][0]["metadata"]["labels"]["env"] == "prod"
    applied = json.loads(one["metadata"]["annotations"]["policy.karmada.io/applied-overrides"])
    assert [a["policyName"] for a in applied] == ["args", "image"]
    assert applied[1]["overriders"] == IMAGE
    assert "policy.karmada.io/applied-cluster-overrides" not in one["metadata"]["annotations"]


def test_a_failed_override_names_policy_rule_and_path() -> None:
    s = spec(clusters=[{"name": "member1"}])
    broken = op("broken", {"plaintext": [{"path": "/spec/nothing/deep", "operator": "replace", "value": 1}]})
    with pytest.raises(OverrideError) as caught:
        render(deployment(), s, ops=[broken])
    message = str(caught.value)
    assert "OverridePolicy default/broken" in message and "overrideRules[0]" in message
    assert "/spec/nothing/deep" in message


# --- merge with the stored Work ---------------------------------------------------------------------


def test_merge_keeps_the_work_identity_and_foreign_metadata() -> None:
    s = spec(clusters=[{"name": "member1"}])
    rendered = render(deployment(), s)
    first = desired_work(None, rendered, "first-id")
    stored = copy.deepcopy(first)
    stored["metadata"].update(resourceVersion="9", uid="w-uid")
    stored["metadata"]["labels"]["someone"] = "else"
    stored["metadata"]["finalizers"].append("example.com/keep")
    stored["status"] = {"conditions": []}
    again = desired_work(stored, rendered, "second-id")
    assert again["metadata"]["labels"]["work.karmada.io/permanent-id"] == "first-id"
    assert again["metadata"]["labels"]["someone"] == "else"
    assert again["metadata"]["finalizers"] == ["example.com/keep", "karmada.io/execution-controller"]
    assert again["metadata"]["resourceVersion"] == "9" and "status" not in again
    assert not work_changed(stored, again)


def test_applied_overrides_annotations_go_when_no_policy_applies_any_more() -> None:
    s = spec(clusters=[{"name": "member1"}])
    with_policy = desired_work(None, render(deployment(), s, ops=[op("p", PLAIN)]), "id")
    assert "policy.karmada.io/applied-overrides" in with_policy["metadata"]["annotations"]
    without = desired_work(with_policy, render(deployment(), s), "id")
    assert "policy.karmada.io/applied-overrides" not in without["metadata"]["annotations"]
    assert work_changed(with_policy, without)


@pytest.mark.parametrize(
    "change",
    [
        lambda w: w["spec"]["workload"]["manifests"][0]["spec"].update(replicas=9),
        lambda w: w["spec"].update(suspendDispatching=True),
        lambda w: w["metadata"]["annotations"].pop("work.karmada.io/conflict-resolution"),
        lambda w: w["metadata"]["labels"].update({"resourcebinding.karmada.io/permanent-id": "old"}),
        lambda w: w["metadata"].update(finalizers=[]),
    ],
)
def test_any_drift_is_a_change(change: Any) -> None:
    rendered = render(deployment(), spec(clusters=[{"name": "member1"}]))
    stored = desired_work(None, rendered, "id")
    change(stored)
    assert work_changed(stored, desired_work(stored, rendered, "id"))
    assert work_changed(None, stored)
