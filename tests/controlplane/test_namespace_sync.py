"""The namespace controller: which namespaces go to members, the Work each
member gets (tables), and, against localkube, Works in every execution space,
the skip label, ClusterOverridePolicies, a new cluster, and deletion."""

from __future__ import annotations

import argparse
import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controlplane.namespace_sync import (
    decorate_manifest,
    namespace_work,
    selected_namespaces,
    should_sync,
    skips_auto_propagation,
)
from controlplane.options import add_flags, from_args
from karmada.api.names import work_name
from tests.factories import cluster
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread

SKIPPED = [re.compile("kube-.*")]


@pytest.mark.parametrize(
    ("name", "synced"),
    [
        ("team-a", True),
        ("default", False),
        ("karmada-system", False),
        ("karmada-cluster", False),
        ("karmada-es-m1", False),
        ("kube-system", False),
        ("kube-public", False),
        ("my-kube-ns", True),  # the pattern is anchored
        ("karmada-other", True),  # only Karmada's own namespaces are reserved
    ],
)
def test_should_sync(name: str, synced: bool) -> None:
    assert should_sync(name, SKIPPED) is synced


@pytest.mark.parametrize(
    ("labels", "skipped"),
    [({}, False), ({"namespace.karmada.io/skip-auto-propagation": "true"}, True)]
    + [({"namespace.karmada.io/skip-auto-propagation": v}, v.lower() == "true") for v in ("True", "false", "")],
)
def test_skip_label(labels: dict[str, str], skipped: bool) -> None:
    assert skips_auto_propagation({"metadata": {"name": "n", "labels": labels}}) is skipped


@pytest.mark.parametrize(
    ("argv", "patterns"),
    [([], ("kube-.*",)), (["--skipped-propagating-namespaces=kube-.*,team-[0-9]+"], ("kube-.*", "team-[0-9]+"))],
)
def test_skipped_namespaces_flag(argv: list[str], patterns: tuple[str, ...]) -> None:
    parser = argparse.ArgumentParser()
    add_flags(parser)
    assert from_args(parser.parse_args(argv)).skipped_propagating_namespaces == patterns


def test_skipped_namespaces_flag_refuses_a_bad_pattern(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    add_flags(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--skipped-propagating-namespaces=team-("])
    assert 'invalid regular expression "team-("' in capsys.readouterr().err


NAMESPACE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {
        "name": "team-a",
        "uid": "ns-uid",
        "resourceVersion": "12",
        "creationTimestamp": "2024-05-01T00:00:00Z",
        "labels": {"kubernetes.io/metadata.name": "team-a"},
        "annotations": {"owner": "a"},
        "managedFields": [{"manager": "kubectl"}],
    },
    "spec": {"finalizers": ["kubernetes"]},
    "status": {"phase": "Active"},
}
WORK = work_name("Namespace", "team-a")


def test_decorated_manifest() -> None:
    manifest = decorate_manifest(NAMESPACE, WORK, "karmada-es-m1", "work-id")
    assert manifest == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": "team-a",
            "labels": {
                "kubernetes.io/metadata.name": "team-a",
                "karmada.io/managed": "true",
                "work.karmada.io/permanent-id": "work-id",
            },
            "annotations": {
                "owner": "a",
                "resourcetemplate.karmada.io/uid": "ns-uid",
                "work.karmada.io/name": WORK,
                "work.karmada.io/namespace": "karmada-es-m1",
                "resourcetemplate.karmada.io/managed-annotations": (
                    "owner,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,"
                    "resourcetemplate.karmada.io/uid,work.karmada.io/name,work.karmada.io/namespace"
                ),
                "resourcetemplate.karmada.io/managed-labels": (
                    "karmada.io/managed,kubernetes.io/metadata.name,work.karmada.io/permanent-id"
                ),
            },
        },
        "spec": {"finalizers": ["kubernetes"]},
    }
    assert "status" in NAMESPACE and NAMESPACE["metadata"]["uid"] == "ns-uid"  # input untouched


def test_namespace_work_new_and_existing() -> None:
    new = namespace_work(NAMESPACE, "m1", NAMESPACE, {}, None)
    meta = new["metadata"]
    assert (meta["name"], meta["namespace"]) == (WORK, "karmada-es-m1")
    assert meta["finalizers"] == ["karmada.io/execution-controller"]
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "name": "team-a",
            "uid": "ns-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    work_id = meta["labels"]["work.karmada.io/permanent-id"]
    manifest = new["spec"]["workload"]["manifests"][0]
    assert manifest["metadata"]["labels"]["work.karmada.io/permanent-id"] == work_id
    assert "annotations" not in meta
    # an existing Work keeps its id, foreign labels and finalizers; stale override records go
    existing = json.loads(json.dumps(new))
    existing["metadata"]["labels"]["other"] = "x"
    existing["metadata"]["finalizers"].insert(0, "other/finalizer")
    existing["metadata"]["annotations"] = {"policy.karmada.io/applied-cluster-overrides": "[]", "keep": "me"}
    existing["metadata"]["resourceVersion"] = "5"
    again = namespace_work(NAMESPACE, "m1", NAMESPACE, {}, existing)
    assert again["metadata"]["labels"] == {"work.karmada.io/permanent-id": work_id, "other": "x"}
    assert again["metadata"]["finalizers"] == ["other/finalizer", "karmada.io/execution-controller"]
    assert again["metadata"]["annotations"] == {"keep": "me"} and again["metadata"]["resourceVersion"] == "5"
    assert again["spec"] == new["spec"]
    overridden = namespace_work(
        NAMESPACE, "m1", NAMESPACE, {"policy.karmada.io/applied-cluster-overrides": "[x]"}, None
    )
    assert overridden["metadata"]["annotations"] == {"policy.karmada.io/applied-cluster-overrides": "[x]"}


@pytest.mark.parametrize(
    ("selectors", "selected"),
    [
        ([], set()),
        ([{"apiVersion": "apps/v1", "kind": "Deployment"}], set()),
        (
            [
                {"apiVersion": "v1", "kind": "Namespace", "name": "a"},
                {"apiVersion": "v1", "kind": "Namespace", "name": "b"},
            ],
            {"a", "b"},
        ),
        ([{"apiVersion": "v1", "kind": "Namespace", "name": "a"}, {"apiVersion": "v1", "kind": "Namespace"}], None),
    ],
)
def test_selected_namespaces(selectors: list[dict[str, Any]], selected: set[str] | None) -> None:
    assert selected_namespaces({"spec": {"resourceSelectors": selectors}}) == selected


# -- against localkube ------------------------------------------------------------


@pytest.fixture(scope="module")
def env(localkube: ServerThread, workdir: Path) -> Iterator[PullMode]:
    pull = PullMode(localkube, workdir).install()
    for name in ("m1", "m2"):
        add_cluster(pull, name)
    pull.start_controlplane("--controllers=namespace", "--leader-elect=false")
    try:
        yield pull
    finally:
        pull.stop()


def add_cluster(env: PullMode, name: str, *, space: bool = True) -> None:
    # the cluster controller (not running here) would create the execution space
    if space:
        env.admin("create", "namespace", f"karmada-es-{name}")
    body = cluster(name, labels={"name": name}).to_dict()
    body.pop("status", None)
    env.admin("apply", "-f", "-", stdin=json.dumps(body))


def namespace_work_of(env: PullMode, namespace: str, name: str) -> dict[str, Any] | None:
    result = env.admin(
        "get", "work", work_name("Namespace", name), "-n", f"karmada-es-{namespace}", "-o", "json", check=False
    )
    return json.loads(result.stdout) if result.returncode == 0 else None


def test_namespaces_reach_every_cluster(env: PullMode) -> None:
    quiet = {"metadata": {"name": "quiet", "labels": {"namespace.karmada.io/skip-auto-propagation": "true"}}}
    env.admin("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "Namespace", **quiet}))
    env.admin("create", "namespace", "kube-extra")
    env.admin("create", "namespace", "team-a")
    uid = json.loads(env.admin("get", "namespace", "team-a", "-o", "json").stdout)["metadata"]["uid"]
    for member in ("m1", "m2"):
        work = wait_for(functools.partial(namespace_work_of, env, member, "team-a"), what=f"team-a Work in {member}")
        assert work["metadata"]["ownerReferences"][0]["uid"] == uid
        manifest = work["spec"]["workload"]["manifests"][0]
        assert manifest["metadata"]["name"] == "team-a" and manifest["kind"] == "Namespace"
        assert manifest["metadata"]["labels"]["karmada.io/managed"] == "true"
        assert manifest["metadata"]["annotations"]["work.karmada.io/namespace"] == f"karmada-es-{member}"
    # one worker, in order: the namespaces created before team-a were looked at and left alone
    for skipped in ("quiet", "kube-extra", "default", "karmada-system", "karmada-es-m1"):
        assert namespace_work_of(env, "m1", skipped) is None, skipped


def test_cluster_override_policy_and_a_new_cluster(env: PullMode) -> None:
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "ClusterOverridePolicy",
        "metadata": {"name": "team-label"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "v1", "kind": "Namespace", "name": "team-a"}],
            "overrideRules": [
                {
                    "targetCluster": {"clusterNames": ["m2"]},
                    "overriders": {"labelsOverrider": [{"operator": "add", "value": {"tier": "gold"}}]},
                }
            ],
        },
    }
    env.admin("apply", "-f", "-", stdin=json.dumps(policy))

    def labelled() -> bool:
        work = namespace_work_of(env, "m2", "team-a") or {"spec": {"workload": {"manifests": [{"metadata": {}}]}}}
        return (work["spec"]["workload"]["manifests"][0]["metadata"].get("labels") or {}).get("tier") == "gold"

    wait_for(labelled, what="override applied in m2")
    work = namespace_work_of(env, "m2", "team-a") or {}
    applied = json.loads(work["metadata"]["annotations"]["policy.karmada.io/applied-cluster-overrides"])
    assert applied[0]["policyName"] == "team-label"
    m1 = namespace_work_of(env, "m1", "team-a") or {}
    assert "tier" not in m1["spec"]["workload"]["manifests"][0]["metadata"]["labels"]
    # a cluster joining gets the Works of the namespaces that exist
    add_cluster(env, "m3", space=False)
    assert env.controlplane is not None
    log = env.controlplane
    wait_for(lambda: "waiting for execution space karmada-es-m3" in log.output(), what="waiting for the space")
    env.admin("create", "namespace", "karmada-es-m3")
    wait_for(lambda: namespace_work_of(env, "m3", "team-a"), what="team-a Work in the new cluster")
    events = env.admin("get", "events", "-n", "default", "--field-selector", "reason=SyncWorkFailed").stdout
    assert "team-a" not in events  # a cluster joining is no failure


def test_a_failing_override_fails_only_its_cluster(env: PullMode) -> None:
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "ClusterOverridePolicy",
        "metadata": {"name": "broken"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "v1", "kind": "Namespace", "name": "flaky"}],
            "overrideRules": [
                {
                    "targetCluster": {"clusterNames": ["m1"]},
                    "overriders": {"plaintext": [{"path": "/spec/nothing/here", "operator": "replace", "value": 1}]},
                }
            ],
        },
    }
    env.admin("apply", "-f", "-", stdin=json.dumps(policy))
    env.admin("create", "namespace", "flaky")
    for member in ("m2", "m3"):
        wait_for(functools.partial(namespace_work_of, env, member, "flaky"), what=f"flaky Work in {member}")

    def warning() -> dict[str, Any] | None:
        events = json.loads(env.admin("get", "events", "-n", "default", "-o", "json").stdout)["items"]
        return next((e for e in events if e["involvedObject"]["name"] == "flaky"), None)

    event = wait_for(warning, what="SyncWorkFailed on the namespace")
    assert (event["type"], event["reason"], event["involvedObject"]["kind"]) == (
        "Warning",
        "SyncWorkFailed",
        "Namespace",
    )
    assert event["message"].startswith("sync namespace(flaky) to cluster(m1) failed due to: ")
    assert "ClusterOverridePolicy broken" in event["message"]
    assert namespace_work_of(env, "m1", "flaky") is None
    env.admin("delete", "clusteroverridepolicy", "broken")
    wait_for(functools.partial(namespace_work_of, env, "m1", "flaky"), what="flaky Work in m1 once the policy is gone")


def test_a_restart_writes_nothing(env: PullMode) -> None:
    before = {m: (namespace_work_of(env, m, "team-a") or {})["metadata"]["resourceVersion"] for m in ("m1", "m2", "m3")}
    assert env.controlplane is not None
    env.controlplane.stop()
    env.start_controlplane("--controllers=namespace", "--leader-elect=false")
    env.admin("create", "namespace", "after-restart")
    # one worker: the namespaces listed at start were reconciled before this one
    wait_for(lambda: namespace_work_of(env, "m3", "after-restart"), what="a Work after the restart")
    after = {m: (namespace_work_of(env, m, "team-a") or {})["metadata"]["resourceVersion"] for m in ("m1", "m2", "m3")}
    assert after == before


def test_deleted_namespace_removes_its_works(env: PullMode) -> None:
    env.admin("delete", "namespace", "team-a", "--wait=false")

    def gone_or_going(member: str) -> bool:
        work = namespace_work_of(env, member, "team-a")
        # no agent runs here to drop the execution finalizer: being deleted is the end state
        return work is None or bool(work["metadata"].get("deletionTimestamp"))

    for member in ("m1", "m2", "m3"):
        wait_for(functools.partial(gone_or_going, member), what=f"team-a Work in {member} deleted")
