"""The API models: field-named errors, lossless round trips, schema defaults."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from karmada.api import (
    APIValidationError,
    Cluster,
    ClusterSpec,
    PropagationPolicy,
    PropagationSpec,
    ResourceBinding,
    ResourceSelector,
    Work,
    parse_object,
)
from karmada.api.parse import check_documents


def _policy(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}]}
    base.update(spec)
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": base,
    }


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            _policy(placement={"replicaScheduling": {"replicaSchedulingType": "Dup"}}),
            'spec.placement.replicaScheduling.replicaSchedulingType: must be one of Duplicated, Divided (got "Dup")',
        ),
        (
            {**_policy(), "spec": {}},
            "spec.resourceSelectors: Required value",
        ),
        (
            _policy(resourceSelectors=[]),
            "spec.resourceSelectors: must have at least 1 item(s)",
        ),
        (
            _policy(resourceSelectors=[{"kind": "Deployment"}]),
            "spec.resourceSelectors[0].apiVersion: Required value",
        ),
        (
            _policy(priority="5"),
            "spec.priority: must be an integer",
        ),
        (
            _policy(priority=2**31),
            "spec.priority: must fit in a 32-bit signed integer",
        ),
        (
            _policy(propagateDeps="true"),
            "spec.propagateDeps: must be a boolean",
        ),
        (
            _policy(
                placement={
                    "replicaScheduling": {
                        "weightPreference": {"staticWeightList": [{"targetCluster": {}, "weight": 0}]}
                    }
                }
            ),
            "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: "
            "must be greater than or equal to 1",
        ),
        (
            _policy(placement={"clusterAffinities": [{"affinityName": "x" * 33}]}),
            "spec.placement.clusterAffinities[0].affinityName: must be at most 32 character(s) long",
        ),
        (
            _policy(placement={"clusterAffinity": {"clusterNames": "member1"}}),
            "spec.placement.clusterAffinity.clusterNames: must be a list",
        ),
        (
            _policy(placement={"spreadConstraints": [{"spreadByField": "rack"}]}),
            "spec.placement.spreadConstraints[0].spreadByField: "
            'must be one of cluster, region, zone, provider (got "rack")',
        ),
        (
            {
                "apiVersion": "cluster.karmada.io/v1alpha1",
                "kind": "Cluster",
                "metadata": {"name": "m"},
                "spec": {
                    "syncMode": "Pull",
                    "resourceModels": [{"grade": 0, "ranges": [{"name": "cpu", "min": "one", "max": 1}]}],
                },
            },
            "spec.resourceModels[0].ranges[0].min: must be a quantity (an integer or a string such as 100m or 1Gi)",
        ),
        (
            {
                "apiVersion": "cluster.karmada.io/v1alpha1",
                "kind": "Cluster",
                "metadata": {"name": "m"},
                "spec": {},
            },
            "spec.syncMode: Required value",
        ),
        (
            {
                "apiVersion": "work.karmada.io/v1alpha1",
                "kind": "Work",
                "metadata": {"name": "w"},
                "spec": {},
                "status": {
                    "conditions": [
                        {
                            "type": "Applied",
                            "status": "Yes",
                            "lastTransitionTime": "2024-01-02T03:04:05Z",
                            "reason": "AppliedSuccessful",
                            "message": "",
                        }
                    ]
                },
            },
            'status.conditions[0].status: must be one of True, False, Unknown (got "Yes")',
        ),
        (
            {
                "apiVersion": "work.karmada.io/v1alpha1",
                "kind": "Work",
                "metadata": {"name": "w"},
                "spec": {},
                "status": {
                    "conditions": [
                        {
                            "type": "Applied",
                            "status": "True",
                            "lastTransitionTime": "yesterday",
                            "reason": "AppliedSuccessful",
                            "message": "",
                        }
                    ]
                },
            },
            "status.conditions[0].lastTransitionTime: must match an RFC 3339 date-time such as 2024-01-02T15:04:05Z",
        ),
        (
            {"apiVersion": "policy.karmada.io/v1beta9", "kind": "PropagationPolicy"},
            "kind: PropagationPolicy in policy.karmada.io/v1beta9 is not a Karmada kind this version serves",
        ),
    ],
)
def test_invalid_objects_name_the_field(obj: dict[str, Any], expected: str) -> None:
    with pytest.raises(APIValidationError) as caught:
        parse_object(obj)
    assert expected in [str(e) for e in caught.value.errors]


def test_all_errors_are_reported_at_once() -> None:
    obj = _policy(priority="x", preemption="Sometimes")
    with pytest.raises(APIValidationError) as caught:
        parse_object(obj)
    assert {e.path for e in caught.value.errors} == {"spec.priority", "spec.preemption"}


def test_unknown_fields_kept_or_rejected() -> None:
    obj = _policy(placement={"clusterAffinity": {"clusterNames": ["a"], "clusterName": "typo"}})
    model = parse_object(obj)
    assert model.to_dict() == obj, "unknown fields survive a round trip"
    assert model.unknown_fields() == ["spec.placement.clusterAffinity.clusterName"]
    with pytest.raises(APIValidationError, match=r"clusterAffinity\.clusterName: unknown field"):
        parse_object(obj, strict_fields=True)


def test_schema_defaults_are_visible_but_not_serialised() -> None:
    model = PropagationPolicy.from_dict(_policy(placement={"replicaScheduling": {}}))
    assert model.spec.priority == 0
    assert model.spec.preemption == "Never"
    assert model.spec.conflict_resolution == "Abort"
    assert model.spec.scheduler_name == "default-scheduler"
    assert model.spec.placement is not None and model.spec.placement.replica_scheduling is not None
    assert model.spec.placement.replica_scheduling.replica_scheduling_type == "Divided"
    assert model.to_dict()["spec"]["placement"] == {"replicaScheduling": {}}


def test_python_construction_serialises_like_go() -> None:
    policy = PropagationPolicy(
        spec=PropagationSpec(
            resource_selectors=[ResourceSelector(api_version="apps/v1", kind="Deployment", name=None)],
            placement=None,
        )
    )
    assert policy.to_dict() == {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}]},
    }


def test_json_names_that_differ_from_camel_case() -> None:
    cluster = Cluster(
        spec=ClusterSpec(sync_mode="Pull", proxy_url="socks5://p:1080", insecure_skip_tls_verification=True)
    )
    assert cluster.to_dict()["spec"] == {
        "syncMode": "Pull",
        "proxyURL": "socks5://p:1080",
        "insecureSkipTLSVerification": True,
    }
    binding = ResourceBinding.from_dict(
        {
            "apiVersion": "work.karmada.io/v1alpha2",
            "kind": "ResourceBinding",
            "metadata": {"name": "nginx-deployment", "namespace": "default"},
            "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}},
            "status": {"schedulerObservingAffinityName": "primary"},
        }
    )
    assert binding.status is not None and binding.status.scheduler_observed_affinity_name == "primary"


def test_work_manifests_are_kept_verbatim() -> None:
    manifest = {
        "apiVersion": "example.io/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "annotations": {"a": "1"}},
        "spec": {"anything": [1, 2.5, None, {"deep": True}], "null": None},
        "x-vendor": {"y": "z"},
    }
    data = {
        "apiVersion": "work.karmada.io/v1alpha1",
        "kind": "Work",
        "metadata": {"name": "w-1", "namespace": "karmada-es-member1"},
        "spec": {"workload": {"manifests": [copy.deepcopy(manifest)]}},
    }
    work = Work.from_dict(data)
    assert work.to_dict() == data
    assert work.unknown_fields() == []


@pytest.mark.parametrize("quantity", [1, "100m", "1.5Gi", "2e3", "+1k", ".5"])
def test_quantities_round_trip(quantity: int | str) -> None:
    data = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"},
            "replicaRequirements": {"resourceRequest": {"cpu": quantity}},
        },
    }
    assert parse_object(data).to_dict() == data


@pytest.mark.parametrize("quantity", ["1 Gi", "ten", True, 0.5, "1.5.5"])
def test_bad_quantities_are_rejected(quantity: object) -> None:
    data = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"},
            "replicaRequirements": {"resourceRequest": {"cpu": quantity}},
        },
    }
    with pytest.raises(
        APIValidationError, match=r"spec\.replicaRequirements\.resourceRequest\.cpu: must be a quantity"
    ):
        parse_object(data)


def test_check_documents_reports_each_document() -> None:
    text = """
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: ok}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: bad}
spec:
  overrideRules:
    - overriders:
        imageOverrider: [{component: Registry, operator: prepend, value: x}]
"""
    checks = check_documents(text)
    assert [(c.kind, c.karmada_kind, c.errors) for c in checks] == [
        ("ConfigMap", False, ()),
        ("ClusterPropagationPolicy", True, ()),
        (
            "OverridePolicy",
            True,
            (
                "spec.overrideRules[0].overriders.imageOverrider[0].operator: "
                'must be one of add, remove, replace (got "prepend")',
            ),
        ),
    ]


def test_check_documents_reports_yaml_syntax_errors() -> None:
    (check,) = check_documents("a: [unclosed")
    assert check.errors and check.errors[0].startswith("invalid YAML")
