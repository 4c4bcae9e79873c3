"""Label selectors, cluster affinity, tolerations and resource selectors."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.api import LabelSelector, ResourceSelector, Taint, Toleration
from karmada.api.policy import ClusterAffinity
from karmada.selectors import (
    ImplicitPriority,
    cluster_matches,
    find_untolerated_taint,
    label_selector_matches,
    selector_priority,
    tolerates,
)
from karmada.selectors.clusters import compile_cluster_affinity
from tests.factories import cluster

LABELS = {"env": "prod", "tier": "web", "size": "10"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ({}, True),
        ({"matchLabels": {"env": "prod"}}, True),
        ({"matchLabels": {"env": "dev"}}, False),
        ({"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "dev"]}]}, True),
        ({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}, False),
        ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, False),
        # malformed selectors match nothing (LabelSelectorAsSelector fails)
        ({"matchExpressions": [{"key": "env", "operator": "In", "values": []}]}, False),
        ({"matchExpressions": [{"key": "env", "operator": "Exists", "values": ["x"]}]}, False),
        ({"matchExpressions": [{"key": "size", "operator": "Gt", "values": ["5"]}]}, False),
    ],
)
def test_label_selector(selector: dict[str, Any], matches: bool) -> None:
    assert label_selector_matches(LabelSelector.from_dict(selector), LABELS) is matches


MEMBER = cluster("member1", labels={"env": "prod"}, provider="aws", region="cn-east-1", zones=["z1", "z2"])


@pytest.mark.parametrize(
    ("affinity", "matches"),
    [
        ({}, True),
        ({"clusterNames": ["member1", "member2"]}, True),
        ({"clusterNames": ["member2"]}, False),
        ({"exclude": ["member1"]}, False),
        ({"exclude": ["member1"], "clusterNames": ["member1"]}, False),
        ({"labelSelector": {"matchLabels": {"env": "prod"}}}, True),
        ({"labelSelector": {"matchLabels": {"env": "prod"}}, "clusterNames": ["member2"]}, False),
        (
            {"fieldSelector": {"matchExpressions": [{"key": "provider", "operator": "In", "values": ["aws"]}]}},
            True,
        ),
        (
            {"fieldSelector": {"matchExpressions": [{"key": "region", "operator": "NotIn", "values": ["us"]}]}},
            True,
        ),
        (
            {
                "fieldSelector": {
                    "matchExpressions": [
                        {"key": "provider", "operator": "In", "values": ["aws"]},
                        {"key": "region", "operator": "NotIn", "values": ["cn-east-1"]},
                    ]
                }
            },
            False,
        ),
        (
            {"fieldSelector": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z2", "z9"]}]}},
            True,
        ),
        (
            {"fieldSelector": {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["z1"]}]}},
            False,
        ),
        ({"fieldSelector": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}, True),
        ({"fieldSelector": {"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}}, False),
    ],
)
def test_cluster_matches(affinity: dict[str, Any], matches: bool) -> None:
    parsed = ClusterAffinity.from_dict(affinity)
    assert cluster_matches(MEMBER, parsed) is matches
    assert compile_cluster_affinity(parsed)(MEMBER) is matches


def test_region_selector_on_cluster_without_region() -> None:
    bare = cluster("bare")
    notin = {"fieldSelector": {"matchExpressions": [{"key": "region", "operator": "NotIn", "values": ["x"]}]}}
    inside = {"fieldSelector": {"matchExpressions": [{"key": "region", "operator": "In", "values": ["x"]}]}}
    assert cluster_matches(bare, ClusterAffinity.from_dict(notin))
    assert not cluster_matches(bare, ClusterAffinity.from_dict(inside))


@pytest.mark.parametrize(
    ("toleration", "taint", "tolerated"),
    [
        (
            {"key": "dedicated", "value": "special-user", "effect": "NoSchedule"},
            {"key": "dedicated", "value": "special-user", "effect": "NoSchedule"},
            True,
        ),
        (
            {"key": "dedicated", "value": "other", "effect": "NoSchedule"},
            {"key": "dedicated", "value": "special-user", "effect": "NoSchedule"},
            False,
        ),
        (
            {"key": "dedicated", "operator": "Exists"},
            {"key": "dedicated", "value": "x", "effect": "NoExecute"},
            True,
        ),
        ({"operator": "Exists"}, {"key": "anything", "effect": "NoSchedule"}, True),
        (
            {"key": "a", "operator": "Exists", "effect": "NoExecute"},
            {"key": "a", "effect": "NoSchedule"},
            False,
        ),
        (
            {"key": "a", "operator": "Lt", "value": "1"},
            {"key": "a", "value": "0", "effect": "NoSchedule"},
            False,
        ),
        (
            {
                "key": "cluster-failure",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 3600,
            },
            {"key": "cluster-failure", "effect": "NoExecute"},
            True,
        ),
    ],
)
def test_tolerates(toleration: dict[str, Any], taint: dict[str, Any], tolerated: bool) -> None:
    assert tolerates(Toleration.from_dict(toleration), Taint.from_dict(taint)) is tolerated


def test_find_untolerated_taint_ignores_other_effects() -> None:
    taints = [
        Taint.from_dict({"key": "soft", "effect": "PreferNoSchedule"}),
        Taint.from_dict({"key": "hard", "effect": "NoSchedule"}),
    ]
    found = find_untolerated_taint(taints, [], ("NoSchedule", "NoExecute"))
    assert found is not None and found.key == "hard"
    assert find_untolerated_taint(taints, [Toleration(key="hard", operator="Exists")], ("NoSchedule",)) is None


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}},
}


@pytest.mark.parametrize(
    ("selector", "priority"),
    [
        ({"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}, ImplicitPriority.MATCH_NAME),
        ({"apiVersion": "apps/v1", "kind": "Deployment", "name": "other"}, ImplicitPriority.MISMATCH),
        (
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "labelSelector": {"matchLabels": {"app": "nginx"}},
            },
            ImplicitPriority.MATCH_LABEL_SELECTOR,
        ),
        (
            {"apiVersion": "apps/v1", "kind": "Deployment", "labelSelector": {}},
            ImplicitPriority.MATCH_LABEL_SELECTOR,
        ),
        (
            {"apiVersion": "apps/v1", "kind": "Deployment", "labelSelector": {"matchLabels": {"app": "x"}}},
            ImplicitPriority.MISMATCH,
        ),
        ({"apiVersion": "apps/v1", "kind": "Deployment"}, ImplicitPriority.MATCH_ALL),
        ({"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "other"}, ImplicitPriority.MISMATCH),
        ({"apiVersion": "apps/v1beta1", "kind": "Deployment"}, ImplicitPriority.MISMATCH),
        # name wins over labelSelector when both are set
        (
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "nginx",
                "labelSelector": {"matchLabels": {"app": "x"}},
            },
            ImplicitPriority.MATCH_NAME,
        ),
    ],
)
def test_selector_priority(selector: dict[str, Any], priority: ImplicitPriority) -> None:
    assert selector_priority(DEPLOYMENT, ResourceSelector.from_dict(selector)) == priority
