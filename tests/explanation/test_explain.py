"""explain() reads what was recorded: claim and why it wins, the decision and whether it is
stale, each cluster's filter reasons or figures, the overrides each Work records, deps."""

from __future__ import annotations

import json
from typing import Any

import pytest

from karmada.api.binding import ResourceBindingStatus
from karmada.api.keys import (
    APPLIED_CLUSTER_OVERRIDES_ANNOTATION,
    APPLIED_OVERRIDES_ANNOTATION,
    BINDING_DEPENDENCIES_ANNOTATION,
    PROPAGATION_POLICY_NAME_ANNOTATION,
    PROPAGATION_POLICY_NAMESPACE_ANNOTATION,
    PROPAGATION_POLICY_PERMANENT_ID_LABEL,
)
from karmada.explanation import Inputs, UnknownType, explain, render_text, resolve_type
from karmada.scheduling import ScheduleFailure, encode_decisions, schedule
from tests.factories import binding_spec, cluster

Obj = dict[str, Any]


def deployment(*, claimed: bool = True, image: str = "nginx:1.25") -> Obj:
    meta: Obj = {"name": "nginx", "namespace": "default", "generation": 1, "labels": {"app": "nginx"}}
    if claimed:
        meta["labels"][PROPAGATION_POLICY_PERMANENT_ID_LABEL] = "id-1"
        meta["annotations"] = {
            PROPAGATION_POLICY_NAMESPACE_ANNOTATION: "default",
            PROPAGATION_POLICY_NAME_ANNOTATION: "nginx-propagation",
        }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "nginx", "image": image}]}}},
    }


def policy(name: str, *, priority: int = 0, by_name: bool = True) -> Obj:
    selector: Obj = {"apiVersion": "apps/v1", "kind": "Deployment"}
    if by_name:
        selector["name"] = "nginx"
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"priority": priority, "resourceSelectors": [selector], "placement": {}},
    }


CLUSTERS = [
    cluster("member1", labels={"env": "prod"}, allocatable={"pods": 10}),
    cluster("member2", labels={"env": "prod"}, allocatable={"pods": 10}),
    cluster(
        "member3", allocatable={"pods": 10}, taints=[{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]
    ),
]


def binding(placement: Obj, *, generation: int = 1, observed: int | None = 1, replicas: int = 3) -> Obj:
    spec = binding_spec(replicas=replicas, placement=placement)
    try:
        result = schedule(spec, None, CLUSTERS)
        decisions, targets, outcome = result.decisions, result.clusters, "Success"
    except ScheduleFailure as failure:
        decisions, targets, outcome = failure.decisions, [], failure.reason
    text = encode_decisions(decisions, generation=observed or 0, affinity_name=None, outcome=outcome)
    data = spec.to_dict()
    data["clusters"] = [t.to_dict() for t in targets]
    status: Obj = {}
    if observed is not None:
        status["schedulerObservedGeneration"] = observed
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": "nginx-deployment",
            "namespace": "default",
            "generation": generation,
            "annotations": {"scheduler.karmada-py.io/decisions": text},
        },
        "spec": data,
        "status": status,
    }


def rows(explanation: Obj) -> dict[str, Obj]:
    return {r["name"]: r for r in explanation["clusters"]}


@pytest.mark.parametrize(
    ("template", "policies", "claimed", "reason"),
    [
        (
            deployment(),
            [policy("nginx-propagation")],
            True,
            "PropagationPolicy default/nginx-propagation matches by match name with priority 0",
        ),
        (
            deployment(),
            [policy("nginx-propagation"), policy("all", by_name=False)],
            True,
            "PropagationPolicy default/nginx-propagation matches by match name with priority 0; "
            "it beats PropagationPolicy default/all",
        ),
        (
            deployment(),
            [policy("nginx-propagation"), policy("urgent", priority=5)],
            True,
            "claimed by PropagationPolicy default/nginx-propagation, and a claim stays put; "
            "matched anew, PropagationPolicy default/urgent matches by match name with priority 5; "
            "it beats PropagationPolicy default/nginx-propagation",
        ),
        (deployment(), [], True, "claimed by PropagationPolicy default/nginx-propagation, which no longer exists"),
        (deployment(claimed=False), [], False, "no PropagationPolicy or ClusterPropagationPolicy matches the template"),
        (
            deployment(claimed=False),
            [policy("p")],
            False,
            "not claimed yet; PropagationPolicy default/p matches by match name with priority 0",
        ),
    ],
)
def test_policy_and_why_it_won(template: Obj, policies: list[Obj], claimed: bool, reason: str) -> None:
    out = explain(Inputs(template=template, propagation_policies=policies))
    assert out["policy"]["claimed"] is claimed
    assert out["policy"]["reason"] == reason
    assert out["binding"] is None
    assert "Binding:      <none>" in render_text(out)


def test_taint_and_affinity_misses_name_the_taint_and_the_label() -> None:
    placement = {"clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}}}
    out = explain(Inputs(template=deployment(), binding=binding(placement)))
    by = rows(out)
    assert by["member1"]["result"] == "Selected" and by["member1"]["replicas"] == 3
    assert by["member3"]["result"] == "Filtered"
    assert {
        "plugin": "TaintToleration",
        "reason": "cluster(s) had untolerated taint {maintenance=true:NoSchedule}",
    } in (by["member3"]["filters"])
    assert by["member3"]["affinityMisses"] == [
        {"term": "clusterAffinity", "field": "labelSelector", "requirement": "env=prod", "key": "env"}
    ]
    text = render_text(out)
    assert "maintenance=true:NoSchedule" in text
    assert "affinity clusterAffinity needs labelSelector env=prod, cluster has no env" in text
    assert out["decision"] == {"generation": 1, "outcome": "Success", "truncated": 0, "stale": False}


def test_static_weights_and_replicas() -> None:
    placement = {
        "clusterAffinity": {"clusterNames": ["member1", "member2"]},
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
    out = explain(Inputs(template=deployment(), binding=binding(placement)))
    by = rows(out)
    assert (by["member1"]["weight"], by["member1"]["replicas"]) == (1, 1)
    assert (by["member2"]["weight"], by["member2"]["replicas"]) == (2, 2)
    line = next(line for line in render_text(out).splitlines() if line.strip().startswith("member2"))
    assert line.split()[:4] == ["member2", "Selected", "2", "2"]


@pytest.mark.parametrize(
    ("generation", "observed", "stale"),
    [
        (1, 1, None),
        (2, 1, "the binding's generation 2 is newer than the scheduled generation 1"),
        (3, None, "the binding has no schedulerObservedGeneration: the scheduler has not settled on it yet"),
    ],
)
def test_staleness(generation: int, observed: int | None, stale: str | None) -> None:
    out = explain(Inputs(template=deployment(), binding=binding({}, generation=generation, observed=observed)))
    assert out["decision"]["stale"] is (stale is not None)
    assert out["decision"].get("staleReason") == stale
    assert ("STALE:" in render_text(out)) is (stale is not None)


def test_no_recorded_decision_is_stale_and_the_result_still_shows() -> None:
    b = binding({})
    del b["metadata"]["annotations"]
    out = explain(Inputs(template=deployment(), binding=b))
    assert out["decision"]["stale"] is True and "no recorded decision" in out["decision"]["staleReason"]
    assert {r["name"] for r in out["clusters"]} == {"member1", "member2"}


def test_unschedulable_outcome_shows_the_available_replicas() -> None:
    placement = {
        "clusterAffinity": {"clusterNames": ["member1"]},
        "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
    }
    out = explain(Inputs(template=deployment(), binding=binding(placement, replicas=50)))
    assert out["decision"]["outcome"] == "Unschedulable"
    assert rows(out)["member1"]["availableReplicas"] == 10


def _work(cluster: str, image: str, annotations: dict[str, str]) -> Obj:
    return {
        "apiVersion": "work.karmada.io/v1alpha1",
        "kind": "Work",
        "metadata": {"name": "nginx-687f7fb96f", "namespace": f"karmada-es-{cluster}", "annotations": annotations},
        "spec": {"workload": {"manifests": [deployment(image=image)]}},
        "status": {"conditions": [{"type": "Applied", "status": "True"}]},
    }


COP = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "ClusterOverridePolicy",
    "metadata": {"name": "region-images"},
    "spec": {
        "overrideRules": [
            {
                "targetCluster": {"clusterNames": ["member9"]},
                "overriders": {"labelsOverrider": [{"operator": "add", "value": {"x": "y"}}]},
            },
            {
                "targetCluster": {"clusterNames": ["member1"]},
                "overriders": {
                    "imageOverrider": [{"component": "Registry", "operator": "replace", "value": "registry.cn"}]
                },
            },
        ]
    },
}


def test_overrides_name_policy_rule_overrider_path_and_rewritten_value() -> None:
    shadow = json.dumps(
        [
            {
                "policyName": "region-images",
                "overriders": {
                    "imageOverrider": [{"component": "Registry", "operator": "replace", "value": "registry.cn"}]
                },
            }
        ]
    )
    plain = json.dumps(
        [
            {
                "policyName": "replicas",
                "overriders": {"plaintext": [{"path": "/spec/replicas", "operator": "replace", "value": 5}]},
            }
        ]
    )
    works = [
        _work("member1", "registry.cn/nginx:1.25", {APPLIED_CLUSTER_OVERRIDES_ANNOTATION: shadow}),
        _work("member2", "nginx:1.25", {APPLIED_OVERRIDES_ANNOTATION: plain}),
    ]
    out = explain(Inputs(template=deployment(), binding=binding({}), works=works, cluster_override_policies=[COP]))
    assert out["overrides"]["member1"] == [
        {
            "policy": "ClusterOverridePolicy region-images",
            "rule": 1,
            "overrider": "imageOverrider",
            "path": "/spec/template/spec/containers/0/image",
            "component": "Registry",
            "operator": "replace",
            "value": "registry.cn/nginx:1.25",
        }
    ]
    # the OverridePolicy is not at hand: no rule index, but the path and value still show
    assert out["overrides"]["member2"] == [
        {
            "policy": "OverridePolicy default/replicas",
            "rule": None,
            "overrider": "plaintext",
            "path": "/spec/replicas",
            "operator": "replace",
            "value": 3,
        }
    ]
    assert out["works"] == {
        "member1": {"name": "nginx-687f7fb96f", "state": "Applied"},
        "member2": {"name": "nginx-687f7fb96f", "state": "Applied"},
    }
    text = render_text(out)
    assert (
        "member1: ClusterOverridePolicy region-images rule 1 imageOverrider (Registry replace) "
        "/spec/template/spec/containers/0/image = registry.cn/nginx:1.25"
    ) in text


def test_a_broken_annotation_is_reported_not_raised() -> None:
    works = [_work("member1", "nginx", {APPLIED_OVERRIDES_ANNOTATION: "{not json"})]
    out = explain(Inputs(template=deployment(), binding=binding({}), works=works))
    assert out["overrides"]["member1"][0]["error"].endswith("is not JSON")
    assert "is not JSON" in render_text(out)


def test_dependencies_from_the_binding() -> None:
    b = binding({})
    deps = [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "my-config"}]
    b["metadata"]["annotations"][BINDING_DEPENDENCIES_ANNOTATION] = json.dumps(deps)
    out = explain(Inputs(template=deployment(), binding=b))
    assert out["dependencies"] == deps
    assert "ConfigMap default/my-config (v1)" in render_text(out)
    assert "Dependencies: <none>" in render_text(explain(Inputs(template=deployment(), binding=binding({}))))


CORE = {
    "groupVersion": "v1",
    "resources": [
        {
            "name": "configmaps",
            "kind": "ConfigMap",
            "namespaced": True,
            "singularName": "configmap",
            "shortNames": ["cm"],
        },
        {"name": "pods/status", "kind": "Pod"},
    ],
}
APPS = {
    "groupVersion": "apps/v1",
    "resources": [
        {
            "name": "deployments",
            "kind": "Deployment",
            "namespaced": True,
            "singularName": "deployment",
            "shortNames": ["deploy"],
        }
    ],
}


@pytest.mark.parametrize(
    ("word", "plural"),
    [
        ("deploy", "deployments"),
        ("Deployment", "deployments"),
        ("deployments.apps", "deployments"),
        ("deployment.apps", "deployments"),
        ("cm", "configmaps"),
        ("configmap", "configmaps"),
    ],
)
def test_resolve_type(word: str, plural: str) -> None:
    assert resolve_type(word, [CORE, APPS]).plural == plural


@pytest.mark.parametrize("word", ["deployments.core", "pods/status", "pod", "nope"])
def test_resolve_type_unknown(word: str) -> None:
    with pytest.raises(UnknownType, match=f'the server doesn\'t have a resource type "{word}"'):
        resolve_type(word, [CORE, APPS])


def test_clusteraffinities_terms_tried_first_are_shown() -> None:
    placement = {
        "clusterAffinities": [
            {"affinityName": "gpu", "labelSelector": {"matchLabels": {"gpu": "true"}}},
            {"affinityName": "any", "clusterNames": ["member1"]},
        ]
    }
    spec = binding_spec(replicas=1, placement=placement)
    result = schedule(spec, None, CLUSTERS)
    assert result.affinity_name == "any"
    tried = [(["gpu", "any"][i], str(e)) for i, e in result.term_failures]
    text = encode_decisions(
        result.decisions, generation=1, affinity_name=result.affinity_name, outcome="Success", term_failures=tried
    )
    b = binding(placement)
    b["metadata"]["annotations"]["scheduler.karmada-py.io/decisions"] = text
    out = explain(Inputs(template=deployment(), binding=b))
    assert out["decision"]["affinityName"] == "any"
    assert out["decision"]["termFailures"] == [
        {
            "term": "gpu",
            "error": "0/3 clusters are available: 1 cluster(s) had untolerated taint "
            "{maintenance=true:NoSchedule}, 2 cluster(s) did not match the placement cluster affinity constraint.",
        }
    ]
    rendered = render_text(out)
    assert (
        "with clusterAffinities term any" in rendered and "Tried:      term gpu: 0/3 clusters are available" in rendered
    )


def test_overflow_tiers_show_per_cluster() -> None:
    placement = {
        "clusterAffinities": [
            {
                "affinityName": "primary",
                "clusterNames": ["member1"],
                "overflowAffinities": [{"affinityName": "burst", "clusterNames": ["member2"]}],
            }
        ],
        "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
    }
    spec = binding_spec(replicas=15, placement=placement)
    status = {"schedulerObservingAffinityName": "primary"}
    result = schedule(spec, ResourceBindingStatus.from_dict(status), CLUSTERS)
    b = binding(placement)
    b["spec"]["clusters"] = [t.to_dict() for t in result.clusters]
    b["metadata"]["annotations"]["scheduler.karmada-py.io/decisions"] = encode_decisions(
        result.decisions, generation=1, affinity_name=result.affinity_name, outcome="Success"
    )
    by = rows(explain(Inputs(template=deployment(), binding=b)))
    assert (by["member1"]["overflowTier"], by["member1"]["replicas"]) == (0, 10)
    assert (by["member2"]["overflowTier"], by["member2"]["replicas"]) == (1, 5)
    assert by["member3"]["result"] == "Filtered"


def test_explanation_exports_are_honest() -> None:
    from tests.test_exports import test_all_is_honest

    test_all_is_honest("karmada.explanation")
