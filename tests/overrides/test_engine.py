"""Which override rules apply and in what order (overridemanager.go), end to end on manifests."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from karmada.api import ClusterOverridePolicy, OverridePolicy
from karmada.overrides import OverrideError, apply_overrides
from tests.factories import cluster

SEED_COP = yaml.safe_load("""
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata:
  name: nginx-override
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      labelSelector:
        matchLabels:
          app: nginx
  overrideRules:
    - targetCluster:
        fieldSelector:
          matchExpressions:
            - key: region
              operator: In
              values:
                - cn-east-1
      overriders:
        imageOverrider:
          - component: Registry
            operator: add
            value: registry.cn-east-1.example.com
    - targetCluster:
        clusterNames:
          - edge-member1
      overriders:
        plaintext:
          - path: /spec/template/spec/containers/0/resources/limits/cpu
            operator: replace
            value: 500m
""")

NGINX: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}},
    "spec": {
        "replicas": 6,
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "nginx",
                        "image": "nginx:1.25",
                        "resources": {"limits": {"cpu": "1", "memory": "256Mi"}},
                    }
                ]
            }
        },
    },
}


def container(manifest: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = manifest["spec"]["template"]["spec"]["containers"][0]
    return result


def op(name: str, spec: dict[str, Any], namespace: str = "default") -> OverridePolicy:
    return OverridePolicy.from_dict(
        {
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "OverridePolicy",
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec,
        }
    )


def labels_rule(value: dict[str, str]) -> dict[str, Any]:
    return {"overriders": {"labelsOverrider": [{"operator": "add", "value": value}]}}


def test_seed_cluster_override_policy() -> None:
    cop = ClusterOverridePolicy.from_dict(SEED_COP)
    east = cluster("member1", region="cn-east-1")
    edge = cluster("edge-member1", region="cn-west-1")
    other = cluster("member3", region="us")
    r_east = apply_overrides(NGINX, east, [cop], [])
    assert container(r_east.manifest)["image"] == "registry.cn-east-1.example.com/nginx:1.25"
    assert container(r_east.manifest)["resources"]["limits"]["cpu"] == "1"
    r_edge = apply_overrides(NGINX, edge, [cop], [])
    assert container(r_edge.manifest)["image"] == "nginx:1.25"
    assert container(r_edge.manifest)["resources"]["limits"]["cpu"] == "500m"
    assert apply_overrides(NGINX, other, [cop], []).manifest == NGINX
    assert [(r.policy_name, r.rule_index) for r in r_east.cluster_rules] == [("nginx-override", 0)]
    annotation = json.loads(r_east.annotations()["policy.karmada.io/applied-cluster-overrides"])
    assert annotation == [
        {"policyName": "nginx-override", "overriders": SEED_COP["spec"]["overrideRules"][0]["overriders"]}
    ]
    assert "policy.karmada.io/applied-overrides" not in r_east.annotations()


def test_most_specific_policy_applies_last_and_cluster_policies_first() -> None:
    m1 = cluster("m1")
    by_name = op(
        "a-by-name",
        {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
            "overrideRules": [labels_rule({"winner": "name"})],
        },
    )
    by_label = op(
        "b-by-label",
        {
            "resourceSelectors": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "labelSelector": {"matchLabels": {"app": "nginx"}},
                }
            ],
            "overrideRules": [labels_rule({"winner": "label", "label": "yes"})],
        },
    )
    everything = op("c-all", {"overrideRules": [labels_rule({"winner": "all", "all": "yes"})]})
    other_ns = op("d-other", {"overrideRules": [labels_rule({"other": "yes"})]}, namespace="other")
    cop = ClusterOverridePolicy.from_dict(
        {**SEED_COP, "spec": {"overrideRules": [labels_rule({"winner": "cop", "cop": "yes"})]}}
    )
    result = apply_overrides(NGINX, m1, [cop], [by_name, everything, by_label, other_ns])
    assert result.manifest["metadata"]["labels"] == {
        "app": "nginx",
        "winner": "name",
        "label": "yes",
        "all": "yes",
        "cop": "yes",
    }
    assert [r.policy_name for r in result.namespaced_rules] == ["c-all", "b-by-label", "a-by-name"]
    applied = json.loads(result.annotations()["policy.karmada.io/applied-overrides"])
    assert [item["policyName"] for item in applied] == ["a-by-name", "b-by-label", "c-all"]


def test_cluster_scoped_manifests_ignore_override_policies() -> None:
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"}}
    result = apply_overrides(role, cluster("m1"), [], [op("x", {"overrideRules": [labels_rule({"a": "b"})]})])
    assert result.manifest == role and not result.namespaced_rules


def test_deprecated_target_cluster_and_overriders() -> None:
    policy = op(
        "old",
        {
            "targetCluster": {"clusterNames": ["m1"]},
            "overriders": {"labelsOverrider": [{"operator": "add", "value": {"old": "style"}}]},
        },
    )
    assert apply_overrides(NGINX, cluster("m1"), [], [policy]).manifest["metadata"]["labels"]["old"] == "style"
    assert "old" not in apply_overrides(NGINX, cluster("m2"), [], [policy]).manifest["metadata"]["labels"]


def test_failures_name_policy_rule_overrider_and_path() -> None:
    bad = op(
        "broken",
        {
            "overrideRules": [
                labels_rule({"fine": "yes"}),
                {"overriders": {"plaintext": [{"path": "/spec/missing/field", "operator": "replace", "value": 1}]}},
            ]
        },
    )
    with pytest.raises(OverrideError) as caught:
        apply_overrides(NGINX, cluster("m1"), [], [bad])
    assert str(caught.value) == (
        "OverridePolicy default/broken: overrideRules[1].overriders.plaintext: "
        "replace operation does not apply: doc is missing path /spec/missing/field"
    )
    image = op(
        "img",
        {
            "overrideRules": [
                {
                    "overriders": {
                        "imageOverrider": [
                            {
                                "predicate": {"path": "/spec/template/spec/containers/0/name"},
                                "component": "Tag",
                                "operator": "add",
                                "value": ":",
                            }
                        ]
                    }
                }
            ]
        },
    )
    broken = {**NGINX, "spec": {"template": {"spec": {"containers": [{"name": "Bad Name", "image": "x"}]}}}}
    with pytest.raises(
        OverrideError, match=r"overriders\.imageOverrider\[0\]: failed to parse image value\(Bad Name\)"
    ):
        apply_overrides(broken, cluster("m1"), [], [image])
