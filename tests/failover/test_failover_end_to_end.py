"""Cluster and application failover with the real programs: the control plane
(``--feature-gates=Failover=true --enable-no-execute-taint-eviction=true``),
three simulated members and their agents, driven with the real kubectl and
``kubectl karmada taint``. Each test leaves the clusters untainted and its
objects deleted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from localkube.simulation import SimulationConfig
from tests.failover.flow import FAILOVER_FLAGS, MEMBERS, Bed, deployment, policy, selector
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
            wait_for(lambda name=name: pull.ready(name) == "True", timeout=60, what=f"{name} Ready")
        yield Bed(pull, servers)
    finally:
        pull.stop()
        for generator in stops:
            next(generator, None)


def clean(bed: Bed, *names: str) -> None:
    for name in names:
        bed.admin("delete", "deployment", name, "--ignore-not-found")
        bed.admin("delete", "propagationpolicy", name, "--ignore-not-found")
    for cluster in MEMBERS:
        for name in names:
            wait_for(
                lambda c=cluster, n=name: bed.in_member(c, "deployment", n) is None, timeout=30, what=f"{name} gone"
            )


def untaint_all(bed: Bed, key: str) -> None:
    for cluster in MEMBERS:
        bed.pull.plugin("taint", "clusters", cluster, f"{key}-", check=False)


def test_gracefully_keeps_the_old_copy_until_the_new_one_is_healthy(bed: Bed) -> None:
    bed.apply(
        deployment("nginx"),
        policy("nginx", [selector("Deployment", "nginx")], failover={"cluster": {"purgeMode": "Gracefully"}}),
    )
    old = bed.serving("nginx-deployment")
    try:
        bed.taint(old, "unavailable=true:NoExecute")
        tasks = wait_for(lambda: bed.tasks("nginx-deployment"), timeout=30, what="an eviction task")
        assert tasks[0]["fromCluster"] == old
        assert tasks[0]["reason"] == "TaintUntolerated" and tasks[0]["producer"] == "TaintManager"
        assert tasks[0]["purgeMode"] == "Gracefully"
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
        assert bed.condition("nginx-deployment")["reason"] == "EvictionCompleted"
        # untaint restores scheduling without moving the workload back
        bed.taint(old, "unavailable=true:NoExecute-")
        wait_for(lambda: "unavailable" not in bed.pull.taint_keys(old), what="untainted")
        assert bed.targets("nginx-deployment") == [new]
    finally:
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
        modes = set()

        def moved() -> str | None:
            modes.update(t.get("purgeMode") for t in bed.tasks("batch-deployment"))
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
            lambda: (
                bed.condition("pinned-deployment").get("reason") == "NoClusterFit"
                and bed.condition("pinned-deployment")
            ),
            timeout=30,
            what="Failover=False NoClusterFit",
        )
        assert condition["status"] == "False" and "stays in member1" in condition["message"]
        assert bed.targets("pinned-deployment") == ["member1"] and not bed.tasks("pinned-deployment")
        assert bed.in_member("member1", "deployment", "pinned") is not None
    finally:
        untaint_all(bed, "unavailable")
        clean(bed, "pinned")
    wait_for(lambda: not bed.condition("pinned-deployment"), timeout=10, what="binding gone") if bed.binding(
        "pinned-deployment"
    ) else None


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
            lambda: (
                bed.condition("web-deployment").get("reason") == "ClusterNotTainted" and bed.condition("web-deployment")
            ),
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
    bed.apply(
        deployment("flink"), policy("flink", [selector("Deployment", "flink")], propagateDeps=True, failover=failover)
    )
    old = bed.serving("flink-deployment")
    override = {
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
        bed.apply(override)
        tasks = wait_for(lambda: bed.tasks("flink-deployment"), timeout=60, what="an ApplicationFailure task")
        assert tasks[0]["fromCluster"] == old and tasks[0]["reason"] == "ApplicationFailure"
        assert tasks[0]["preservedLabelState"] == {"failover.example.io/replicas": "2"}
        assert tasks[0]["clustersBeforeFailover"] == [old]
        new = bed.serving("flink-deployment")
        assert new != old
        labels = (bed.in_member(new, "deployment", "flink") or {})["metadata"]["labels"]
        assert labels.get("failover.example.io/replicas") == "2"
        assert bed.condition("flink-deployment")["status"] == "True"
    finally:
        bed.admin("delete", "overridepolicy", "flink-unready", "--ignore-not-found")
        clean(bed, "flink")


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
