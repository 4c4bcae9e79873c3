"""Policy matching (pkg/detector/compare.go rules, reference section 4)."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.api import ClusterPropagationPolicy, PropagationPolicy
from karmada.matching import claim_of, claimed_by_other_feature, match_policy, skip_reason

NGINX = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}},
}


def pp(
    name: str,
    selector: dict[str, Any],
    priority: int | None = None,
    namespace: str = "default",
    deleting: bool = False,
) -> PropagationPolicy:
    spec: dict[str, Any] = {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", **selector}]}
    if priority is not None:
        spec["priority"] = priority
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return PropagationPolicy.from_dict(
        {
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "PropagationPolicy",
            "metadata": meta,
            "spec": spec,
        }
    )


def cpp(name: str, selector: dict[str, Any], priority: int | None = None) -> ClusterPropagationPolicy:
    spec: dict[str, Any] = {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", **selector}]}
    if priority is not None:
        spec["priority"] = priority
    return ClusterPropagationPolicy.from_dict(
        {
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "ClusterPropagationPolicy",
            "metadata": {"name": name},
            "spec": spec,
        }
    )


BY_NAME = {"name": "nginx"}
BY_LABEL = {"labelSelector": {"matchLabels": {"app": "nginx"}}}
ALL: dict[str, Any] = {}


@pytest.mark.parametrize(
    ("pps", "cpps", "winner"),
    [
        ([pp("a", ALL), pp("b", BY_LABEL), pp("c", BY_NAME)], [], "c"),  # name > label > all
        ([pp("a", ALL), pp("b", BY_LABEL)], [], "b"),
        ([pp("z", BY_NAME), pp("y", BY_NAME)], [], "y"),  # tie: smallest name
        ([pp("a", BY_NAME), pp("b", ALL, priority=5)], [], "b"),  # explicit priority first
        ([pp("a", BY_NAME, priority=-1), pp("b", ALL)], [], "b"),
        ([pp("a", ALL)], [cpp("c", BY_NAME, priority=100)], "a"),  # any PP beats every CPP
        ([pp("a", BY_NAME, namespace="other")], [cpp("c", ALL)], "c"),  # PPs of other namespaces are ignored
        ([pp("a", BY_NAME, deleting=True)], [cpp("c", ALL)], "c"),  # policies being deleted are skipped
        ([], [cpp("c", ALL), cpp("b", BY_LABEL)], "b"),
        ([pp("a", {"name": "other"})], [], None),
    ],
)
def test_match_policy(pps: list[PropagationPolicy], cpps: list[ClusterPropagationPolicy], winner: str | None) -> None:
    match = match_policy(NGINX, pps, cpps)
    assert (match.winner.policy.metadata.name if match else None) == winner


def test_cluster_scoped_templates_only_see_cluster_policies() -> None:
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"}}
    policy = PropagationPolicy.from_dict(
        {
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "PropagationPolicy",
            "metadata": {"name": "p", "namespace": ""},
            "spec": {"resourceSelectors": [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"}]},
        }
    )
    assert match_policy(role, [policy], []) is None


def test_match_explains_itself() -> None:
    match = match_policy(NGINX, [pp("a", ALL), pp("c", BY_NAME)], [])
    assert match is not None
    assert match.reason == (
        "PropagationPolicy default/c matches by match name with priority 0; it beats PropagationPolicy default/a"
    )


def test_claims() -> None:
    claimed = {
        "metadata": {
            "labels": {
                "propagationpolicy.karmada.io/permanent-id": "id-1",
                "clusterpropagationpolicy.karmada.io/permanent-id": "id-2",
            },
            "annotations": {
                "propagationpolicy.karmada.io/namespace": "default",
                "propagationpolicy.karmada.io/name": "p",
                "clusterpropagationpolicy.karmada.io/name": "c",
            },
        }
    }
    claim = claim_of(claimed)
    assert claim is not None and (claim.cluster_wide, claim.namespace, claim.name) == (False, "default", "p")
    half = {"metadata": {"labels": {"propagationpolicy.karmada.io/permanent-id": "id-1"}}}
    assert claim_of(half) is None
    cluster_claim = {
        "metadata": {
            "labels": {"clusterpropagationpolicy.karmada.io/permanent-id": "x"},
            "annotations": {"clusterpropagationpolicy.karmada.io/name": "c"},
        }
    }
    assert claim_of(cluster_claim) == claim_of(cluster_claim) and claim_of(cluster_claim).cluster_wide  # type: ignore[union-attr]
    assert claimed_by_other_feature({"metadata": {"labels": {"resourcetemplate.karmada.io/claimed-by": "mcs"}}})


@pytest.mark.parametrize(
    ("template", "skipped"),
    [
        (NGINX, False),
        (
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "c", "namespace": "karmada-es-m1"},
            },
            True,
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "c", "namespace": "karmada-system"},
            },
            True,
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "kube-public"}},
            True,
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "my-kube-x"}},
            False,
        ),
        ({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"}}, True),
        (
            {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": "e", "namespace": "default"},
            },
            True,
        ),
        (
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": "l", "namespace": "default"},
            },
            True,
        ),
        (
            {
                "apiVersion": "policy.karmada.io/v1alpha1",
                "kind": "PropagationPolicy",
                "metadata": {"name": "p"},
            },
            True,
        ),
        ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}, False),
    ],
)
def test_skip_reason(template: dict[str, Any], skipped: bool) -> None:
    assert (skip_reason(template) is not None) is skipped
