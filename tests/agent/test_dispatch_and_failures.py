"""Work dispatching as Karmada's execution controller does it: suspension, a kind
the member lacks until its CRD arrives, a manifest the member rejects (each
failing only its own Work, with the member's message and Karmada's events),
conflicts with unmanaged objects, and deletion that preserves the member object."""

from __future__ import annotations

import json
from typing import Any

from tests.agent.flow import (
    NS,
    apply,
    condition,
    get_work,
    ready_member,
    reasons,
    wait_condition,
    work,
)
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread

CONFLICT = "work.karmada.io/conflict-resolution"


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": data}


def crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }


def test_suspended_work_waits_until_resumed(pull_mode: PullMode, member1: ServerThread) -> None:
    member = ready_member(pull_mode, member1)
    apply(pull_mode, work("paused", configmap("paused", a="1"), suspendDispatching=True))
    dispatching = wait_condition(pull_mode, "paused", "Dispatching", "False")
    assert (dispatching["reason"], dispatching["message"]) == (
        "SuspendDispatching",
        "Work dispatching is in a suspended state.",
    )
    assert condition(pull_mode, "paused", "Applied") is None
    assert member("get", "cm", "paused", check=False).returncode == 1, "a suspended Work is not applied"
    assert reasons(pull_mode, NS, "paused")["WorkDispatching"] == ["Work dispatching is in a suspended state."]
    pull_mode.admin("patch", "work", "paused", "-n", NS, "--type=merge", "-p", '{"spec":{"suspendDispatching":false}}')
    wait_condition(pull_mode, "paused", "Applied", "True")
    dispatching = condition(pull_mode, "paused", "Dispatching") or {}
    assert (dispatching["status"], dispatching["reason"], dispatching["message"]) == (
        "True",
        "Dispatching",
        "Work is being dispatched to member clusters.",
    )
    assert member("get", "cm", "paused", "-o", "jsonpath={.data.a}").stdout == "1"
    assert sorted(reasons(pull_mode, NS, "paused")["WorkDispatching"]) == [
        "Work dispatching is in a suspended state.",
        "Work is being dispatched to member clusters.",
    ]


def test_kind_missing_in_member_fails_alone_until_its_crd_arrives(pull_mode: PullMode, member1: ServerThread) -> None:
    member = ready_member(pull_mode, member1)
    apply(pull_mode, crd())  # the control plane serves Widgets, the member not yet
    wait_for(lambda: pull_mode.admin("get", "widgets", check=False).returncode == 0, what="widgets served")
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}}
    widget["spec"] = {"size": 3}
    apply(pull_mode, work("widget", widget))
    apply(pull_mode, work("beside", configmap("beside", b="2")))
    wait_condition(pull_mode, "beside", "Applied", "True")
    failed = wait_condition(pull_mode, "widget", "Applied", "False")
    # the member's own answer to the request for a resource it does not serve
    refusal = member("get", "--raw", "/apis/example.com/v1/namespaces/default/widgets", check=False).stderr
    assert failed["reason"] == "AppliedFailed"
    assert failed["message"] == "Failed to apply all manifests (0/1): the server could not find the requested resource"
    assert "NotFound" in refusal or "could not find" in refusal
    failure = reasons(pull_mode, NS, "widget")["SyncFailed"]
    assert failure == [
        "Failed to sync work(karmada-es-member1/widget) to cluster(member1), "
        "err: the server could not find the requested resource"
    ]
    # the agent writes events only in its own namespace: none on the template
    assert not reasons(pull_mode, "default", "w")
    member("apply", "-f", "-", stdin=json.dumps(crd()))  # the CRD arrives in the member: the retry applies
    wait_condition(pull_mode, "widget", "Applied", "True", timeout=40)
    assert member("get", "widget", "w", "-o", "jsonpath={.spec.size}").stdout == "3"
    assert (
        "Sync work(karmada-es-member1/widget) to cluster(member1) successful."
        in (reasons(pull_mode, NS, "widget")["SyncSucceed"])
    )
    assert not reasons(pull_mode, "default", "w")


def test_rejected_manifest_fails_alone_with_the_members_message(pull_mode: PullMode, member1: ServerThread) -> None:
    member = ready_member(pull_mode, member1)
    bad: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "bad", "namespace": "default"},
        "spec": {
            "replicas": -1,
            "selector": {"matchLabels": {"app": "bad"}},
            "template": {"metadata": {"labels": {"app": "bad"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    }
    apply(pull_mode, work("rejected", bad))
    apply(pull_mode, work("fine", configmap("fine", c="3")))
    wait_condition(pull_mode, "fine", "Applied", "True")
    failed = wait_condition(pull_mode, "rejected", "Applied", "False")
    # what the member says to anyone creating it (kubectl words the object's name its own way)
    refusal = member("create", "-f", "-", stdin=json.dumps(bad), check=False).stderr.strip()
    assert "is invalid" in refusal and "spec.replicas" in refusal
    assert failed["message"].startswith('Failed to apply all manifests (0/1): Deployment.apps "bad" is invalid: ')
    assert "spec.replicas: Invalid value: -1" in failed["message"]
    assert failed["message"].split(" is invalid: ", 1)[1] in refusal
    assert reasons(pull_mode, NS, "rejected")["SyncFailed"][0].startswith(
        'Failed to sync work(karmada-es-member1/rejected) to cluster(member1), err: Deployment.apps "bad" is invalid'
    )
    assert reasons(pull_mode, NS, "fine")["SyncSucceed"] == [
        "Sync work(karmada-es-member1/fine) to cluster(member1) successful."
    ]
    # fixing the manifest applies it
    bad["spec"]["replicas"] = 1
    apply(pull_mode, work("rejected", bad))
    wait_condition(pull_mode, "rejected", "Applied", "True")
    assert member("get", "deploy", "bad", "-o", "jsonpath={.spec.replicas}").stdout == "1"


def test_conflict_with_a_cluster_scoped_object(pull_mode: PullMode, member1: ServerThread) -> None:
    member = ready_member(pull_mode, member1)
    member("create", "namespace", "theirs-ns")
    namespace: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "theirs-ns", "labels": {"x": "y"}, "annotations": {CONFLICT: "abort"}},
    }
    apply(pull_mode, work("ns-conflict", namespace))
    failed = wait_condition(pull_mode, "ns-conflict", "Applied", "False")
    assert failed["message"] == (
        "Failed to apply all manifests (0/1): resource(kind=Namespace, /theirs-ns) already exists in the cluster "
        "member1 and the work.karmada.io/conflict-resolution strategy value is empty, Karmada will not manage this "
        "resource"
    )
    assert member("get", "ns", "theirs-ns", "-o", "jsonpath={.metadata.labels.x}").stdout == ""
    namespace["metadata"]["annotations"] = {CONFLICT: "overwrite"}
    apply(pull_mode, work("ns-conflict", namespace))
    wait_condition(pull_mode, "ns-conflict", "Applied", "True")
    labels = json.loads(member("get", "ns", "theirs-ns", "-o", "jsonpath={.metadata.labels}").stdout)
    assert labels["x"] == "y" and labels["karmada.io/managed"] == "true"


def test_deletion_preserving_the_member_object(pull_mode: PullMode, member1: ServerThread) -> None:
    member = ready_member(pull_mode, member1)
    kept = configmap("kept", d="4")
    kept["metadata"]["labels"] = {
        "app": "kept",
        "propagationpolicy.karmada.io/permanent-id": "p-1",
        "resourcebinding.karmada.io/permanent-id": "b-1",
        "work.karmada.io/permanent-id": "w-1",
    }
    kept["metadata"]["annotations"] = {
        "note": "mine",
        "propagationpolicy.karmada.io/name": "pp",
        "propagationpolicy.karmada.io/namespace": "default",
        "resourcebinding.karmada.io/name": "kept-configmap",
        "resourcebinding.karmada.io/namespace": "default",
    }
    apply(pull_mode, work("keep", kept, preserveResourcesOnDeletion=True))
    wait_condition(pull_mode, "keep", "Applied", "True")
    member("label", "cm", "kept", "member-side=1")  # a member controller's label survives
    pull_mode.admin("delete", "work", "keep", "-n", NS, "--wait=false")
    wait_for(lambda: get_work(pull_mode, "keep") is None, what="Work gone")
    meta = json.loads(member("get", "cm", "kept", "-o", "json").stdout)["metadata"]
    assert meta["labels"] == {"app": "kept", "member-side": "1"}
    assert meta.get("annotations") == {"note": "mine"}
    # and a deleted Work's object without preserve goes, in the background
    apply(pull_mode, work("gone", configmap("gone", e="5")))
    wait_condition(pull_mode, "gone", "Applied", "True")
    pull_mode.admin("delete", "work", "gone", "-n", NS, "--wait=false")
    wait_for(lambda: member("get", "cm", "gone", check=False).returncode == 1, what="member object deleted")
    wait_for(lambda: get_work(pull_mode, "gone") is None, what="Work gone")
