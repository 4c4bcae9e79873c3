"""Works applied in the member: create, drift correction, conflicts, a broken
manifest failing only its own Work, and deletion with the finalizer. Run for
both modes: the agent in a Pull member, the control plane for a Push member
(the same code, :mod:`karmada.members.execution`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread


@dataclass
class Target:
    """The member cluster the Works go to, in one mode."""

    cluster: str
    member: Kubectl

    @property
    def ns(self) -> str:
        return f"karmada-es-{self.cluster}"


@pytest.fixture(scope="module", params=["pull", "push"])
def target(request: pytest.FixtureRequest, pull_mode: PullMode, member1: ServerThread, member2: ServerThread) -> Target:
    """member1 registered (Pull, its agent applies) or member2 joined (Push, the control plane applies)."""
    server, name = (member1, "member1") if request.param == "pull" else (member2, "member2")
    pull_mode.add_member(server, name, request.param)
    wait_for(lambda: pull_mode.ready(name) == "True", timeout=40, what=f"{name} Ready")
    return Target(name, pull_mode.member_admin(server, name))


def work(name: str, manifest: dict[str, Any], ns: str) -> dict[str, Any]:
    meta = manifest.setdefault("metadata", {})
    meta.setdefault("labels", {})["karmada.io/managed"] = "true"
    meta.setdefault("annotations", {}).update({"work.karmada.io/name": name, "work.karmada.io/namespace": ns})
    return {
        "apiVersion": "work.karmada.io/v1alpha1",
        "kind": "Work",
        "metadata": {"name": name, "namespace": ns, "finalizers": ["karmada.io/execution-controller"]},
        "spec": {"workload": {"manifests": [manifest]}},
    }


def deployment(name: str, replicas: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def _condition(pull_mode: PullMode, target: Target, name: str, kind: str) -> dict[str, Any] | None:
    result = pull_mode.admin("get", "work", name, "-n", target.ns, "-o", "json", check=False)
    if result.returncode:
        return None
    for condition in (json.loads(result.stdout).get("status") or {}).get("conditions") or []:
        if condition["type"] == kind:
            return dict(condition)
    return None


def test_apply_drift_and_delete(pull_mode: PullMode, target: Target) -> None:
    member = target.member
    pull_mode.admin("apply", "-f", "-", stdin=json.dumps(work("web", deployment("web"), target.ns)))
    wait_for(lambda: (_condition(pull_mode, target, "web", "Applied") or {}).get("status") == "True", what="Applied")
    applied = _condition(pull_mode, target, "web", "Applied") or {}
    assert (applied["reason"], applied["message"]) == ("AppliedSuccessful", "Manifest has been successfully applied")
    stored = json.loads(member("get", "deploy", "web", "-o", "json").stdout)
    assert stored["spec"]["replicas"] == 2 and stored["metadata"]["labels"]["karmada.io/managed"] == "true"
    statuses = json.loads(pull_mode.admin("get", "work", "web", "-n", target.ns, "-o", "json").stdout)["status"]
    identifier = statuses["manifestStatuses"][0]["identifier"]
    assert identifier == {
        "ordinal": 0,
        "group": "apps",
        "version": "v1",
        "kind": "Deployment",
        "resource": "deployments",
        "namespace": "default",
        "name": "web",
    }
    # drift in the member is corrected
    member("scale", "deployment/web", "--replicas=5")
    wait_for(
        lambda: member("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").stdout == "2", what="drift fixed"
    )
    member("delete", "deployment", "web")
    wait_for(lambda: member("get", "deploy", "web", check=False).returncode == 0, what="deleted object recreated")
    # deleting the Work removes the member object, then the finalizer
    pull_mode.admin("delete", "work", "web", "-n", target.ns, "--wait=false")
    wait_for(lambda: member("get", "deploy", "web", check=False).returncode == 1, what="member object removed")
    wait_for(
        lambda: pull_mode.admin("get", "work", "web", "-n", target.ns, check=False).returncode == 1, what="Work gone"
    )


def test_conflicts_and_broken_manifests_fail_only_their_work(pull_mode: PullMode, target: Target) -> None:
    member = target.member
    member("create", "configmap", "theirs", "--from-literal=k=v")
    mine: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "theirs", "namespace": "default"},
        "data": {},
    }
    broken = {"apiVersion": "example.com/v1", "kind": "Nothing", "metadata": {"name": "x", "namespace": "default"}}
    good = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ours", "namespace": "default"},
        "data": {"a": "b"},
    }
    for name, manifest in (("conflict", mine), ("broken", broken), ("good", good)):
        pull_mode.admin("apply", "-f", "-", stdin=json.dumps(work(name, manifest, target.ns)))
    wait_for(
        lambda: (_condition(pull_mode, target, "good", "Applied") or {}).get("status") == "True", what="good applied"
    )
    wait_for(
        lambda: (_condition(pull_mode, target, "conflict", "Applied") or {}).get("status") == "False", what="conflict"
    )
    conflict = _condition(pull_mode, target, "conflict", "Applied") or {}
    assert conflict["reason"] == "AppliedFailed" and conflict["message"].startswith(
        "Failed to apply all manifests (0/1): "
    )
    events = pull_mode.admin(
        "get", "events", "-n", target.ns, "--field-selector", "involvedObject.name=conflict"
    ).stdout
    assert "SyncFailed" in events
    assert (
        f"already exists in the cluster {target.cluster} and the "
        "work.karmada.io/conflict-resolution strategy value is empty" in (conflict["message"])
    )
    assert member("get", "cm", "theirs", "-o", "jsonpath={.data.k}").stdout == "v", "not taken over"
    wait_for(lambda: (_condition(pull_mode, target, "broken", "Applied") or {}).get("status") == "False", what="broken")
    assert "Nothing" in (_condition(pull_mode, target, "broken", "Applied") or {})["message"]
    # overwrite takes it over
    overwrite = dict(mine)
    overwrite["metadata"] = {**mine["metadata"], "annotations": {"work.karmada.io/conflict-resolution": "overwrite"}}
    overwrite["data"] = {"k": "ours"}
    pull_mode.admin("apply", "-f", "-", stdin=json.dumps(work("conflict", overwrite, target.ns)))
    wait_for(lambda: member("get", "cm", "theirs", "-o", "jsonpath={.data.k}").stdout == "ours", what="overwritten")


def test_a_deleted_work_leaves_member_objects_that_are_not_its_own(pull_mode: PullMode, target: Target) -> None:
    member = target.member
    # made in the member by someone else, named as the Work's manifests: one without Karmada's
    # label, one with the label copied but not the Work's permanent id
    for name, labels in (("someones", {}), ("lookalike", {"karmada.io/managed": "true"})):
        theirs = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}}
        member("create", "-f", "-", stdin=json.dumps({**theirs, "data": {"owner": "someone"}}))
    manifests = []
    for name in ("someones", "lookalike"):
        labels = {"work.karmada.io/permanent-id": "7d1f0c52-0000-4000-8000-000000000001"}
        manifests.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}})
    body = work("not-mine", manifests[0], target.ns)
    body["spec"]["workload"]["manifests"].append(manifests[1])
    body["spec"]["suspendDispatching"] = True  # nothing applied: the member objects stay someone else's
    pull_mode.admin("apply", "-f", "-", stdin=json.dumps(body))
    wait_for(
        lambda: (_condition(pull_mode, target, "not-mine", "Dispatching") or {}).get("status") == "False",
        what="the agent saw the Work",
    )
    pull_mode.admin("delete", "work", "not-mine", "-n", target.ns, "--wait=false")
    wait_for(
        lambda: pull_mode.admin("get", "work", "not-mine", "-n", target.ns, check=False).returncode != 0,
        what="Work gone",
    )
    for name in ("someones", "lookalike"):
        data = json.loads(member("get", "configmap", name, "-o", "json").stdout).get("data")
        assert data == {"owner": "someone"}, name

    def skipped() -> set[str]:
        events = pull_mode.admin(
            "get", "events", "-n", target.ns, "--field-selector", "involvedObject.name=not-mine", "-o", "json"
        )
        items = json.loads(events.stdout)["items"]
        return {e["message"] for e in items if e["reason"] == "DeleteWorkloadSkipped" and e["type"] == "Warning"}

    where = f"which exists in the member cluster {target.cluster}"
    wanted = {
        f"Abort deleting the resource(kind=ConfigMap, default/someones) {where} but is not managed by Karmada.",
        f"Abort deleting the resource(kind=ConfigMap, default/lookalike) {where} but is not this Work's: "
        "it has no work.karmada.io/permanent-id, this Work's is 7d1f0c52-0000-4000-8000-000000000001.",
    }
    try:
        wait_for(lambda: skipped() >= wanted, what="DeleteWorkloadSkipped events on the Work")
    finally:
        for name in ("someones", "lookalike"):
            member("delete", "configmap", name, check=False)
