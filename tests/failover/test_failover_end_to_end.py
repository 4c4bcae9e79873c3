"""Cluster and application failover with the real programs: the control plane
(``--feature-gates=Failover=true --enable-no-execute-taint-eviction=true``),
three simulated members and their agents, driven with the real kubectl and
``kubectl karmada taint``. Each test leaves the clusters untainted and its
objects deleted."""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from karmada.timestamps import parse_time
from localkube.simulation import SimulationConfig
from tests.failover.flow import FAILOVER_FLAGS, MEMBERS, Bed, deployment, policy, selector, unready_in
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread, start_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def bed(localkube: ServerThread, workdir: Path) -> Iterator[Bed]:
    servers: dict[str, ServerThread] = {}
    stops = []
    for name in MEMBERS:
        generator = start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix=name, workloads=True))
        servers[name] = next(generator)
        stops.append(generator)
    pull = PullMode(localkube, workdir).install()
    pull.start_controlplane(*FAILOVER_FLAGS, "--graceful-eviction-timeout=90s")
    try:
        for name, server in servers.items():
            pull.register(server, name)
            pull.start_agent(server, name)
        for name in MEMBERS:
            wait_for(partial(is_ready, pull, name), timeout=60, what=f"{name} Ready")
        yield Bed(pull, servers)
    finally:
        pull.stop()
        for generator in stops:
            next(generator, None)


def is_ready(pull: PullMode, name: str) -> bool:
    return pull.ready(name) == "True"


def absent(bed: Bed, cluster: str, name: str) -> bool:
    return bed.in_member(cluster, "deployment", name) is None


def condition_with(bed: Bed, binding: str, reason: str) -> dict[str, str] | None:
    condition = bed.condition(binding)
    return condition if condition.get("reason") == reason else None


def clean(bed: Bed, *names: str) -> None:
    for name in names:
        bed.admin("delete", "deployment", name, "--ignore-not-found")
        bed.admin("delete", "propagationpolicy", name, "--ignore-not-found")
    for cluster in MEMBERS:
        for name in names:
            wait_for(partial(absent, bed, cluster, name), timeout=30, what=f"{name} gone from {cluster}")


def untaint_all(bed: Bed, key: str) -> None:
    for cluster in MEMBERS:
        bed.pull.plugin("taint", "clusters", cluster, f"{key}-", check=False)


def test_gracefully_keeps_the_old_copy_until_the_new_one_is_healthy(bed: Bed) -> None:
    bed.apply(
        deployment("nginx"),
        policy("nginx", [selector("Deployment", "nginx")], failover={"cluster": {"purgeMode": "Gracefully"}}),
    )
    old = bed.serving("nginx-deployment")
    # the new copy is held unready at first, so the pending task can be looked at however slow kubectl is
    bed.apply(unready_in("nginx", [c for c in MEMBERS if c != old]))
    try:
        bed.taint(old, "unavailable=true:NoExecute")
        tasks = wait_for(lambda: bed.tasks("nginx-deployment"), timeout=30, what="an eviction task")
        assert tasks[0]["fromCluster"] == old
        assert tasks[0]["reason"] == "TaintUntolerated" and tasks[0]["producer"] == "TaintManager"
        assert tasks[0]["purgeMode"] == "Gracefully"
        new = wait_for(lambda: bed.targets("nginx-deployment"), timeout=30, what="a new target")[0]
        wait_for(lambda: bed.in_member(new, "deployment", "nginx"), timeout=30, what=f"the new copy in {new}")
        pending = bed.condition("nginx-deployment", "GracefulEviction")
        assert pending["reason"] == "EvictionPending" and old in pending["message"], pending
        # while the new copy is unready, the old one stays
        assert bed.in_member(old, "deployment", "nginx") is not None and bed.tasks("nginx-deployment")
        bed.admin("delete", "overridepolicy", "nginx-unready")
        # sample what a user would see until the old copy is gone: it never goes before a new one is ready
        samples: list[tuple[bool, bool]] = []

        def old_gone() -> bool:
            others = [c for c in MEMBERS if c != old]
            samples.append(
                (bed.in_member(old, "deployment", "nginx") is not None, any(bed.ready_in(c, "nginx") for c in others))
            )
            return not samples[-1][0]

        wait_for(old_gone, timeout=90, interval=0.1, what="the old copy removed")
        first_gone = next(i for i, (present, _) in enumerate(samples) if not present)
        assert any(ready for _, ready in samples[: first_gone + 1]), samples
        new = bed.serving("nginx-deployment")
        assert new != old
        wait_for(lambda: not bed.tasks("nginx-deployment"), timeout=60, what="the task gone")
        assert bed.ready_in(new, "nginx")
        assert any(
            f"Evict from cluster {old} succeed." in e for e in bed.events("default", "EvictWorkloadFromClusterSucceed")
        )
        assert bed.condition("nginx-deployment", "GracefulEviction")["reason"] == "EvictionCompleted"
        # untaint restores scheduling without moving the workload back
        bed.taint(old, "unavailable=true:NoExecute-")
        wait_for(lambda: "unavailable" not in bed.pull.taint_keys(old), what="untainted")
        assert bed.targets("nginx-deployment") == [new]
    finally:
        bed.admin("delete", "overridepolicy", "nginx-unready", "--ignore-not-found")
        untaint_all(bed, "unavailable")
        clean(bed, "nginx")


def test_directly_removes_the_old_copy_first(bed: Bed) -> None:
    bed.apply(
        deployment("batch"),
        policy("batch", [selector("Deployment", "batch")], failover={"cluster": {"purgeMode": "Directly"}}),
    )
    old = bed.serving("batch-deployment")
    try:
        bed.taint(old, "maintenance=true:NoExecute")
        seen_both = []
        modes: set[str] = set()

        def moved() -> str | None:
            modes.update(str(t.get("purgeMode")) for t in bed.tasks("batch-deployment"))
            placed = bed.placed("deployment", "batch")
            if len(placed) > 1:
                seen_both.append(placed)
            return placed[0] if placed and placed != [old] else None

        new = wait_for(moved, timeout=60, interval=0.05, what="batch elsewhere")
        assert new != old and not seen_both, f"old and new ran together: {seen_both}"
        assert modes <= {"Directly"}, modes
        events = bed.events("default", "EvictWorkloadFromClusterSucceed")
        assert f"Deployment/batch: Evict from cluster {old} succeed." in events
    finally:
        untaint_all(bed, "maintenance")
        clean(bed, "batch")


def test_nowhere_else_to_go_keeps_the_workload_and_says_why(bed: Bed) -> None:
    bed.apply(deployment("pinned"), policy("pinned", [selector("Deployment", "pinned")], clusters=("member1",)))
    assert bed.serving("pinned-deployment") == "member1"
    try:
        bed.taint("member1", "unavailable=true:NoExecute")
        condition = wait_for(
            partial(condition_with, bed, "pinned-deployment", "NoClusterFit"),
            timeout=30,
            what="Failover=False NoClusterFit",
        )
        assert condition["status"] == "False" and "stays in member1" in condition["message"]
        assert bed.targets("pinned-deployment") == ["member1"] and not bed.tasks("pinned-deployment")
        assert bed.in_member("member1", "deployment", "pinned") is not None
        # the taint removed: the hold no longer applies and goes
        bed.taint("member1", "unavailable=true:NoExecute-")
        wait_for(lambda: not bed.condition("pinned-deployment"), timeout=30, what="the hold cleared on untaint")
        assert bed.targets("pinned-deployment") == ["member1"]
        # held again, then another cluster fits: the workload moves and the hold is gone
        bed.taint("member1", "unavailable=true:NoExecute")
        wait_for(partial(condition_with, bed, "pinned-deployment", "NoClusterFit"), timeout=30, what="held again")
        bed.apply(policy("pinned", [selector("Deployment", "pinned")], clusters=("member1", "member2")))
        wait_for(lambda: bed.targets("pinned-deployment") == ["member2"], timeout=30, what="pinned moved to member2")
        wait_for(
            lambda: bed.condition("pinned-deployment").get("reason") != "NoClusterFit",
            timeout=30,
            what="the hold gone once the workload moved",
        )
    finally:
        untaint_all(bed, "unavailable")
        clean(bed, "pinned")


TAINT_POLICY = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "ClusterTaintPolicy",
    "metadata": {"name": "not-ready-no-execute"},
    "spec": {
        "addOnConditions": [{"conditionType": "Ready", "operator": "In", "statusValues": ["False", "Unknown"]}],
        "removeOnConditions": [{"conditionType": "Ready", "operator": "In", "statusValues": ["True"]}],
        "taints": [{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}],
    },
}


def test_silent_agent_moves_nothing_until_a_taint_policy_says_so(bed: Bed) -> None:
    bed.apply(
        deployment("web"),
        policy("web", [selector("Deployment", "web")], failover={"cluster": {"purgeMode": "Gracefully"}}),
    )
    old = bed.serving("web-deployment")
    agent = bed.pull.agents[old]
    try:
        agent.kill()
        wait_for(lambda: bed.pull.ready(old) == "Unknown", timeout=30, what=f"{old} Ready=Unknown")
        condition = wait_for(
            partial(condition_with, bed, "web-deployment", "ClusterNotTainted"),
            timeout=30,
            what="the binding saying nothing is evicted",
        )
        assert condition["status"] == "False" and f"{old} is Ready=Unknown" in condition["message"]
        assert bed.targets("web-deployment") == [old] and not bed.tasks("web-deployment")
        # the policy taints the silent cluster NoExecute, and the workload moves
        bed.apply(TAINT_POLICY)
        wait_for(lambda: "cluster.karmada.io/not-ready" in bed.pull.taint_keys(old), timeout=30, what="policy taint")
        new = bed.serving("web-deployment")
        assert new != old
        # the old copy cannot be removed while its agent is away: it stays in the member
        assert bed.in_member(old, "deployment", "web") is not None
    finally:
        bed.pull.start_agent(bed.servers[old], old)
        wait_for(lambda: bed.pull.ready(old) == "True", timeout=60, what=f"{old} back")
    # back: the policy removes its taint; the agent removes the evicted copy (its Work was deleted)
    wait_for(lambda: "cluster.karmada.io/not-ready" not in bed.pull.taint_keys(old), timeout=30, what="taint removed")
    wait_for(lambda: bed.in_member(old, "deployment", "web") is None, timeout=60, what="old copy removed on return")
    bed.admin("delete", "clustertaintpolicy", "not-ready-no-execute")
    clean(bed, "web")


def test_application_failover_moves_an_unhealthy_workload_with_its_state(bed: Bed) -> None:
    failover = {
        "application": {
            "decisionConditions": {"tolerationSeconds": 5},
            "purgeMode": "Directly",
            "statePreservation": {
                "rules": [{"aliasLabelName": "failover.example.io/replicas", "jsonPath": "{.replicas}"}]
            },
        }
    }
    # ordered affinity terms: member1 first, member2 when member1 cannot take it
    flink_policy = policy("flink", [selector("Deployment", "flink")], propagateDeps=True, failover=failover)
    placement = flink_policy["spec"]["placement"]
    del placement["clusterAffinity"]
    placement["clusterAffinities"] = [
        {"affinityName": "primary", "clusterNames": ["member1"]},
        {"affinityName": "backup", "clusterNames": ["member2"]},
    ]
    old = "member1"
    override: dict[str, Any] = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "OverridePolicy",
        "metadata": {"name": "flink-unready", "namespace": "default"},
        "spec": {
            "resourceSelectors": [selector("Deployment", "flink")],
            "overrideRules": [
                {
                    "targetCluster": {"clusterNames": [old]},
                    "overriders": {
                        "plaintext": [
                            {
                                "path": "/spec/template/metadata/annotations",
                                "operator": "add",
                                "value": {"simulation.localkube.io/unready": "true"},
                            }
                        ]
                    },
                }
            ],
        },
    }
    try:
        # unhealthy in member2 too at first, so the old task stays and can be looked at
        override["spec"]["overrideRules"][0]["targetCluster"]["clusterNames"] = ["member1", "member2"]
        bed.apply(override, deployment("flink"), flink_policy)
        wait_for(lambda: bed.in_member(old, "deployment", "flink"), timeout=30, what="flink in member1")
        tasks = wait_for(lambda: bed.tasks("flink-deployment"), timeout=60, what="an ApplicationFailure task")
        assert tasks[0]["fromCluster"] == old and tasks[0]["reason"] == "ApplicationFailure"
        assert tasks[0]["producer"] == "resource-binding-application-failover-controller"
        assert tasks[0]["preservedLabelState"] == {"failover.example.io/replicas": "2"}
        assert tasks[0]["clustersBeforeFailover"] == [old]
        assert bed.targets("flink-deployment") == ["member2"]

        def labelled() -> bool:
            found = bed.in_member("member2", "deployment", "flink") or {}
            return bool((found.get("metadata") or {}).get("labels", {}).get("failover.example.io/replicas") == "2")

        wait_for(labelled, timeout=30, what="the preserved state as a label in member2")
        # unhealthy in member2 as well, with nowhere else to go: it stays there and the binding says why
        condition = wait_for(
            partial(condition_with, bed, "flink-deployment", "UnhealthyNoClusterFit"),
            timeout=30,
            what="Failover=False UnhealthyNoClusterFit",
        )
        assert "stays in member2" in condition["message"]
        assert bed.targets("flink-deployment") == ["member2"]
        # member2 recovers: the task goes (the label with it, as in Karmada) and flink runs there
        override["spec"]["overrideRules"][0]["targetCluster"]["clusterNames"] = ["member1"]
        bed.apply(override)
        wait_for(lambda: not bed.tasks("flink-deployment"), timeout=60, what="the task gone once member2 is healthy")
        assert bed.serving("flink-deployment") == "member2"
        wait_for(lambda: bed.in_member(old, "deployment", "flink") is None, timeout=30, what="gone from member1")
    finally:
        bed.admin("delete", "overridepolicy", "flink-unready", "--ignore-not-found")
        clean(bed, "flink")


MICRO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def binding_events(bed: Bed, binding: str) -> dict[str, list[dict[str, Any]]]:
    """The binding's events by reason, as ``kubectl get events`` lists them."""
    found = json.loads(
        bed.admin(
            "get", "events", "-n", "default", "-o", "json", f"--field-selector=involvedObject.name={binding}"
        ).stdout
    )["items"]
    by_reason: dict[str, list[dict[str, Any]]] = {}
    for event in found:
        if event["involvedObject"]["kind"] == "ResourceBinding":
            by_reason.setdefault(event["reason"], []).append(event)
    return by_reason


def stamped(event: dict[str, Any]) -> datetime.datetime:
    """The time to the microsecond an event's message carries."""
    match = MICRO_TIME.search(event["message"])
    assert match, event["message"]
    return parse_time(match.group(0))


def test_application_failover_directly_creates_the_new_copy_after_the_old_one_is_gone(bed: Bed) -> None:
    """A finalizer on the old copy holds it terminating in member1: while it is there, member2 gets
    neither a Work nor a Deployment; once it goes, the binding's events say, in order, that the old
    copy is confirmed gone and that the new Work was created."""
    failover = {"application": {"decisionConditions": {"tolerationSeconds": 10}, "purgeMode": "Directly"}}
    stream_policy = policy("stream", [selector("Deployment", "stream")], propagateDeps=True, failover=failover)
    placement = stream_policy["spec"]["placement"]
    del placement["clusterAffinity"]
    placement["clusterAffinities"] = [
        {"affinityName": "primary", "clusterNames": ["member1"]},
        {"affinityName": "backup", "clusterNames": ["member2"]},
    ]
    old, new, hold = bed.members["member1"], "member2", "example.io/hold"
    try:
        bed.apply(unready_in("stream", ["member1"]), deployment("stream"), stream_policy)
        wait_for(lambda: bed.in_member("member1", "deployment", "stream"), timeout=30, what="stream in member1")
        old("patch", "deployment", "stream", "--type=merge", "-p", json.dumps({"metadata": {"finalizers": [hold]}}))
        tasks = wait_for(lambda: bed.tasks("stream-deployment"), timeout=60, what="an ApplicationFailure task")
        assert (tasks[0]["fromCluster"], tasks[0]["purgeMode"]) == ("member1", "Directly"), tasks

        def terminating() -> bool:
            found = bed.in_member("member1", "deployment", "stream") or {}
            return bool((found.get("metadata") or {}).get("deletionTimestamp"))

        wait_for(terminating, timeout=30, what="the old copy terminating in member1 (held by its finalizer)")
        wait_for(lambda: bed.targets("stream-deployment") == [new], timeout=30, what="member2 scheduled")
        wait_for(
            lambda: binding_events(bed, "stream-deployment").get("PurgeWorkloadFromClusterPending"),
            timeout=30,
            what="the binding controller waiting for the purge",
        )
        # the old copy is still there: the new one has neither a Work nor a member object
        works = json.loads(bed.admin("get", "works", "-n", f"karmada-es-{new}", "-o", "json").stdout)["items"]
        assert not [w for w in works if w["metadata"]["name"].startswith("stream-")], works
        assert bed.in_member(new, "deployment", "stream") is None
        assert terminating()
        old("patch", "deployment", "stream", "--type=merge", "-p", json.dumps({"metadata": {"finalizers": None}}))
        created = wait_for(lambda: bed.in_member(new, "deployment", "stream"), timeout=60, what="the new copy")
        assert bed.in_member("member1", "deployment", "stream") is None

        def ordered_events() -> dict[str, list[dict[str, Any]]] | None:
            events = binding_events(bed, "stream-deployment")
            wanted = ("PurgeWorkloadFromClusterPending", "PurgeWorkloadFromClusterSucceed", "CreateWorkSucceed")
            return events if all(events.get(reason) for reason in wanted) else None

        events = wait_for(ordered_events, timeout=30, what="the purge and creation events")
        (pending,) = events["PurgeWorkloadFromClusterPending"]
        (purged,) = events["PurgeWorkloadFromClusterSucceed"]
        (work,) = events["CreateWorkSucceed"]
        assert "member1" in pending["message"] and "Purge workload from cluster member1 succeed" in purged["message"]
        assert f"for cluster {new} succeed" in work["message"] and "purged from member1" in work["message"]
        assert stamped(pending) < stamped(purged) < stamped(work), (pending, purged, work)
        assert parse_time(purged["firstTimestamp"]) <= parse_time(work["firstTimestamp"])
        # the member object of the new copy was made after the old one was confirmed gone
        assert parse_time(created["metadata"]["creationTimestamp"]) >= stamped(purged).replace(microsecond=0)
    finally:
        old("patch", "deployment", "stream", "--type=merge", "-p", '{"metadata":{"finalizers":null}}', check=False)
        bed.admin("delete", "overridepolicy", "stream-unready", "--ignore-not-found")
        clean(bed, "stream")


def test_agent_back_after_an_outage_applies_the_current_works_and_deletes_only_deleted_ones(bed: Bed) -> None:
    pinned = ("member3",)
    bed.apply(
        deployment("keep"),
        deployment("gone"),
        policy("keep", [selector("Deployment", "keep"), selector("Deployment", "gone")], clusters=pinned),
    )
    wait_for(
        lambda: bed.ready_in("member3", "keep") and bed.ready_in("member3", "gone"), timeout=60, what="both in member3"
    )
    member = bed.members["member3"]
    # an object Karmada does not manage, and one that looks managed but belongs to no Work
    member("create", "configmap", "local-only", "--from-literal=a=b")
    stray = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "stray", "namespace": "default", "labels": {"karmada.io/managed": "true"}},
        "data": {"a": "b"},
    }
    member("apply", "-f", "-", stdin=json.dumps(stray))
    agent = bed.pull.agents["member3"]
    agent.kill()
    try:
        wait_for(lambda: bed.pull.ready("member3") == "Unknown", timeout=30, what="member3 Ready=Unknown")
        bed.admin("scale", "deployment", "keep", "--replicas=3")
        bed.admin("delete", "deployment", "gone")
        work = json.loads(bed.admin("get", "works", "-n", "karmada-es-member3", "-o", "json").stdout)["items"]
        deleting = [w["metadata"]["name"] for w in work if w["metadata"].get("deletionTimestamp")]
        wait_for(
            lambda: any(
                "gone" in w["metadata"]["name"] and w["metadata"].get("deletionTimestamp")
                for w in json.loads(bed.admin("get", "works", "-n", "karmada-es-member3", "-o", "json").stdout)["items"]
            ),
            timeout=30,
            what="the Work of 'gone' waiting for the agent",
        )
        assert deleting is not None
        # nothing changed in the member while the agent is away
        assert bed.in_member("member3", "deployment", "gone") is not None
    finally:
        bed.pull.start_agent(bed.servers["member3"], "member3")
    wait_for(lambda: bed.pull.ready("member3") == "True", timeout=60, what="member3 back")
    wait_for(
        lambda: (bed.in_member("member3", "deployment", "keep") or {}).get("spec", {}).get("replicas") == 3,
        timeout=30,
        what="the current Work applied",
    )
    wait_for(
        lambda: bed.in_member("member3", "deployment", "gone") is None,
        timeout=30,
        what="the deleted Work's object removed",
    )
    assert bed.in_member("member3", "configmap", "local-only") is not None
    assert bed.in_member("member3", "configmap", "stray") is not None
    member("delete", "configmap", "local-only", "stray")
    clean(bed, "keep")


def test_a_cluster_resource_binding_moves_too(bed: Bed) -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "failover-reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
    }
    cpp = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "ClusterPropagationPolicy",
        "metadata": {"name": "failover-reader"},
        "spec": {
            "failover": {"cluster": {"purgeMode": "Directly"}},
            "resourceSelectors": [
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "failover-reader"}
            ],
            "placement": {
                "clusterAffinity": {"clusterNames": list(MEMBERS)},
                "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}],
            },
        },
    }
    bed.apply(role, cpp)

    def where() -> list[str]:
        return [
            c for c in MEMBERS if bed.members[c]("get", "clusterrole", "failover-reader", check=False).returncode == 0
        ]

    old = wait_for(lambda: where() if len(where()) == 1 else None, timeout=60, what="the ClusterRole in one cluster")[0]
    try:
        bed.taint(old, "unavailable=true:NoExecute")
        new = wait_for(lambda: [c for c in where() if c != old] or None, timeout=60, what="the ClusterRole elsewhere")
        assert old not in where() and len(new) == 1
        crb = json.loads(bed.admin("get", "clusterresourcebinding", "failover-reader-clusterrole", "-o", "json").stdout)
        assert [c["name"] for c in crb["spec"]["clusters"]] == new
    finally:
        untaint_all(bed, "unavailable")
        bed.admin("delete", "clusterpropagationpolicy", "failover-reader", "--ignore-not-found")
        bed.admin("delete", "clusterrole", "failover-reader", "--ignore-not-found")


def test_dependencies_follow_a_gracefully_evicted_workload(bed: Bed) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "shop-config", "namespace": "default"},
        "data": {"greeting": "hello"},
    }
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "shop-secret", "namespace": "default"},
        "stringData": {"password": "not-a-real-one"},
    }
    shop = deployment("shop")
    shop["spec"]["template"]["spec"]["volumes"] = [
        {"name": "config", "configMap": {"name": "shop-config"}},
        {"name": "secret", "secret": {"secretName": "shop-secret"}},
    ]
    # the seed's failover policy, with propagateDeps
    shop_policy = policy(
        "shop",
        [selector("Deployment", "shop")],
        propagateDeps=True,
        failover={"cluster": {"purgeMode": "Gracefully"}},
    )
    bed.apply(config, secret, shop, shop_policy)
    old = bed.serving("shop-deployment")

    def deps_in(cluster: str) -> bool:
        return all(bed.in_member(cluster, kind, name) is not None for kind, name in DEPENDENCIES)

    wait_for(partial(deps_in, old), timeout=30, what=f"the ConfigMap and Secret in {old}")
    bed.apply(unready_in("shop", [c for c in MEMBERS if c != old]))  # the new copy held unready: the task stays pending
    try:
        bed.taint(old, "unavailable=true:NoExecute")
        wait_for(lambda: bed.tasks("shop-deployment"), timeout=30, what="an eviction task")
        new = wait_for(lambda: bed.targets("shop-deployment"), timeout=30, what="a new target")[0]
        wait_for(partial(deps_in, new), timeout=30, what=f"the ConfigMap and Secret in {new}")
        # pending: the old Deployment and its dependencies stay (Karmada would have removed the dependencies)
        assert deps_in(old) and bed.in_member(old, "deployment", "shop") is not None and bed.tasks("shop-deployment")
        for kind, name in DEPENDENCIES:
            snapshots = bed.binding(f"{name}-{kind}")["spec"]["requiredBy"]
            assert [[c["name"] for c in s.get("clusters") or []] for s in snapshots] == [[new, old]]
        bed.admin("delete", "overridepolicy", "shop-unready")
        # what a user would see until the old copies are gone: none goes before the new Deployment is ready
        samples: list[tuple[bool, bool, bool, bool]] = []

        def kinds_in(cluster: str) -> set[str]:
            names = ["deployment/shop", *(f"{kind}/{name}" for kind, name in DEPENDENCIES)]
            found = bed.members[cluster]("get", *names, "-o", "json", "--ignore-not-found", check=False).stdout
            return {item["kind"] for item in (json.loads(found) if found.strip() else {}).get("items") or []}

        def old_copies_gone() -> bool:
            there = kinds_in(old)
            ready_elsewhere = any(bed.ready_in(c, "shop") for c in MEMBERS if c != old)
            pending = bool(bed.tasks("shop-deployment"))  # read last: pending now means pending above too
            samples.append(("Deployment" in there, {"ConfigMap", "Secret"} <= there, ready_elsewhere, pending))
            return not there

        wait_for(old_copies_gone, timeout=90, interval=0.1, what="the old copies removed")
        # while the old copy waited for its replacement, its dependencies waited with it (Karmada removes them)
        assert all(present and deps for present, deps, _, pending in samples if pending), samples
        first_gone = next(i for i, (present, deps, _, _) in enumerate(samples) if not (present and deps))
        assert any(ready for _, _, ready, _ in samples[: first_gone + 1]), samples
        assert bed.serving("shop-deployment") == new != old and deps_in(new)
        # the attached bindings follow the independent one
        for kind, name in DEPENDENCIES:
            attached = bed.binding(f"{name}-{kind}")
            snapshots = attached["spec"]["requiredBy"]
            assert [[c["name"] for c in s.get("clusters") or []] for s in snapshots] == [[new]], attached["spec"]
    finally:
        bed.admin("delete", "overridepolicy", "shop-unready", "--ignore-not-found")
        untaint_all(bed, "unavailable")
        clean(bed, "shop")
        for kind, name in DEPENDENCIES:
            bed.admin("delete", kind, name, "--ignore-not-found")


DEPENDENCIES = (("configmap", "shop-config"), ("secret", "shop-secret"))
