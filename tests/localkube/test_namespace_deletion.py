"""Namespace termination as kube-controller-manager's namespace controller does it
(k8s.io/kubernetes pkg/controller/namespace/deletion: namespaced_resources_deleter.go and
status_condition_utils.go): kube's conditions, and content held by a finalizer waited for. A
delete refused by a webhook: test_admission_webhooks.py."""

from __future__ import annotations

import datetime
import json
from collections import Counter
from typing import Any

import pytest

from localkube.namespace_deletion import (
    CONDITIONS,
    Content,
    deletable_resources,
    failure_conditions,
    pod_estimate,
    updated_conditions,
)
from localkube.resources import Registry
from tests.pullmode import wait_for
from tests.servers import Kubectl

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (Content(), {}),
        (
            Content(errors=["b failed", "a failed"]),
            {
                "NamespaceDeletionContentFailure": (
                    "ContentDeletionFailed",
                    "Failed to delete all resource types, 2 remaining: a failed, b failed",
                )
            },
        ),
        (
            # the core group leaves a trailing dot ("%s.%s" of resource and group)
            Content(remaining={"pods.": 9, "deployments.apps": 1, "leases.coordination.k8s.io": 0}),
            {
                "NamespaceContentRemaining": (
                    "SomeResourcesRemain",
                    "Some resources are remaining: deployments.apps has 1 resource instances, "
                    "pods. has 9 resource instances",
                )
            },
        ),
        (
            Content(remaining={"configmaps.": 2}, finalizers=Counter({"x.io/b": 1, "x.io/a": 2})),
            {
                "NamespaceContentRemaining": (
                    "SomeResourcesRemain",
                    "Some resources are remaining: configmaps. has 2 resource instances",
                ),
                "NamespaceFinalizersRemaining": (
                    "SomeFinalizersRemain",
                    "Some content in the namespace has finalizers remaining: x.io/a in 2 resource instances, "
                    "x.io/b in 1 resource instances",
                ),
            },
        ),
    ],
)
def test_failure_conditions(content: Content, expected: dict[str, tuple[str, str]]) -> None:
    assert failure_conditions(content) == expected


def _condition(kind: str, status: str, when: str, reason: str = "", message: str = "") -> dict[str, Any]:
    if not reason:
        reason, message = CONDITIONS[kind]
    return {"type": kind, "status": status, "lastTransitionTime": when, "reason": reason, "message": message}


ALL_OK = [_condition(kind, "False", "t0") for kind in CONDITIONS]
FAILED = ("ContentDeletionFailed", "Failed to delete all resource types, 1 remaining: no")


@pytest.mark.parametrize(
    ("current", "failures", "expected"),
    [
        # the five types added, in kube's order, after any other condition
        ([{"type": "Other", "status": "True"}], {}, [{"type": "Other", "status": "True"}, *ALL_OK]),
        # nothing changed: nothing to write
        (ALL_OK, {}, None),
        # a failure moves the transition time of its type only
        (
            ALL_OK,
            {"NamespaceDeletionContentFailure": FAILED},
            [
                *ALL_OK[:2],
                _condition("NamespaceDeletionContentFailure", "True", "t1", *FAILED),
                *ALL_OK[3:],
            ],
        ),
        # a new message with the same status keeps the transition time
        (
            [*ALL_OK[:2], _condition("NamespaceDeletionContentFailure", "True", "t0", "ContentDeletionFailed", "old")],
            {"NamespaceDeletionContentFailure": FAILED},
            [*ALL_OK[:2], _condition("NamespaceDeletionContentFailure", "True", "t0", *FAILED), *ALL_OK[3:]][:3]
            + [_condition(kind, "False", "t1") for kind in list(CONDITIONS)[3:]],
        ),
    ],
)
def test_updated_conditions(
    current: list[dict[str, Any]], failures: dict[str, tuple[str, str]], expected: list[dict[str, Any]] | None
) -> None:
    assert updated_conditions(current, failures, "t0" if not failures else "t1") == expected


@pytest.mark.parametrize(
    ("pods", "elapsed", "expected"),
    [
        ([], 0, 0),
        ([{"spec": {"terminationGracePeriodSeconds": 30}}, {"spec": {"terminationGracePeriodSeconds": 5}}], 10, 30),
        ([{"spec": {"terminationGracePeriodSeconds": 30}}], 30, 0),  # that long has passed
        ([{"spec": {"terminationGracePeriodSeconds": 30}, "status": {"phase": "Succeeded"}}], 0, 0),
    ],
)
def test_pod_estimate(pods: list[dict[str, Any]], elapsed: int, expected: int) -> None:
    assert pod_estimate(pods, T0, T0 + datetime.timedelta(seconds=elapsed)) == expected


def test_deletable_resources_are_the_preferred_namespaced_ones() -> None:
    found = [(rt.group, rt.version, rt.plural) for rt in deletable_resources(Registry())]
    assert ("", "v1", "configmaps") in found and ("apps", "v1", "deployments") in found
    assert ("autoscaling", "v2", "horizontalpodautoscalers") in found
    assert ("autoscaling", "v1", "horizontalpodautoscalers") not in found  # once, preferred version
    assert ("", "v1", "bindings") not in found  # create only
    assert ("", "v1", "namespaces") not in found  # not namespaced
    assert len(found) == len({(g, p) for g, _, p in found})


def namespace_object(admin: Kubectl, name: str) -> dict[str, Any] | None:
    got = admin("get", "namespace", name, "-o", "json", check=False)
    return json.loads(got.stdout) if got.returncode == 0 else None


def conditions_of(namespace: dict[str, Any] | None) -> dict[str, tuple[str, str, str]]:
    conditions = ((namespace or {}).get("status") or {}).get("conditions") or []
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in conditions}


def test_content_held_by_a_finalizer_is_reported_and_waited_for(admin: Kubectl) -> None:
    admin("create", "namespace", "ns-held")
    held = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "held", "namespace": "ns-held", "finalizers": ["example.com/hold"]},
    }
    admin("apply", "-f", "-", stdin=json.dumps(held))
    admin("delete", "namespace", "ns-held", "--wait=false")
    remaining = (
        "True",
        "SomeResourcesRemain",
        "Some resources are remaining: configmaps. has 1 resource instances",
    )
    found = wait_for(
        lambda: (
            (ns := namespace_object(admin, "ns-held"))
            and conditions_of(ns).get("NamespaceContentRemaining") == remaining
        ),
        what="the remaining content in the namespace's conditions",
    )
    assert found
    conditions = conditions_of(namespace_object(admin, "ns-held"))
    assert conditions["NamespaceFinalizersRemaining"] == (
        "True",
        "SomeFinalizersRemain",
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
    )
    assert conditions["NamespaceDeletionContentFailure"][:2] == ("False", "ContentDeleted")
    admin(
        "patch",
        "configmap",
        "held",
        "-n",
        "ns-held",
        "--type=json",
        "-p",
        '[{"op":"remove","path":"/metadata/finalizers"}]',
    )
    wait_for(lambda: namespace_object(admin, "ns-held") is None, what="the namespace to go")
