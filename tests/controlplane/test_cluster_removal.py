"""Removing a Cluster cannot hang: ``karmada-controlplane --controllers=cluster,scheduler``
against localkube, driven with the real kubectl. A binding the scheduler will not move (its
policy was deleted, or no other cluster fits) still lets go of a deleting cluster."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controlplane.failover_bindings import clusters_named
from karmada.api.keys import CLUSTER_CONTROLLER_FINALIZER
from tests.controlplane.test_scheduler import add_cluster, binding, create, get
from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread


@pytest.fixture(scope="module")
def env(localkube: ServerThread, workdir: Path) -> Iterator[PullMode]:
    env = PullMode(localkube, workdir).install()
    add_cluster(env.admin, "member1", {"env": "prod"})
    add_cluster(env.admin, "member9", {"env": "prod"})
    env.start_controlplane("--controllers=cluster,scheduler", "--leader-elect=false")
    try:
        yield env
    finally:
        env.stop()


def finalized(env: PullMode, name: str) -> bool:
    out = env.admin("get", "cluster", name, "-o", "json", check=False)
    return out.returncode == 0 and CLUSTER_CONTROLLER_FINALIZER in json.loads(out.stdout)["metadata"].get(
        "finalizers", []
    )


def test_a_deleted_cluster_leaves_bindings_no_scheduler_moves(env: PullMode) -> None:
    wait_for(lambda: finalized(env, "member9"), what="member9 finalized by the cluster controller")
    divided = {
        "clusterAffinity": {"clusterNames": ["member1", "member9"]},
        "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"},
    }
    # its policy was deleted: the detector took the policy's labels away, nobody schedules it
    orphan = create(
        env.admin, binding("orphan", divided, replicas=2, labels={}, clusters=[{"name": "member9", "replicas": 2}])
    )
    # claimed, but no cluster other than the deleting one fits it
    only = {"clusterAffinity": {"clusterNames": ["member9"]}}
    pinned = create(env.admin, binding("pinned", only, kind="ConfigMap", clusters=[{"name": "member9"}]))
    env.admin("delete", "cluster", "member9", "--wait=false")
    wait_for(
        lambda: env.admin("get", "cluster", "member9", check=False).returncode != 0,
        timeout=60,
        what="member9's deletion completed",
    )
    for name in (orphan, pinned):
        assert "member9" not in {t["name"] for t in get(env.admin, name)["spec"].get("clusters") or []}
    events = env.admin(
        "get", "events", "-n", "default", "--field-selector", f"involvedObject.name={orphan}", "-o", "json"
    )
    messages = {(e["reason"], e["message"]) for e in json.loads(events.stdout)["items"]}
    assert ("EvictWorkloadFromClusterSucceed", "Evict from cluster member9 succeed.") in messages


@pytest.mark.parametrize(
    ("spec", "tasks", "expected"),
    [
        ({}, True, set()),
        ({"clusters": [{"name": "m1"}, {"name": "m2", "replicas": 1}]}, False, {"m1", "m2"}),
        ({"clusters": [{"name": "m1"}], "gracefulEvictionTasks": [{"fromCluster": "m3"}]}, False, {"m1"}),
        ({"clusters": [{"name": "m1"}], "gracefulEvictionTasks": [{"fromCluster": "m3"}]}, True, {"m1", "m3"}),
        ({"clusters": [{}], "gracefulEvictionTasks": [{}]}, True, set()),
    ],
)
def test_clusters_named(spec: dict[str, Any], tasks: bool, expected: set[str]) -> None:
    assert clusters_named({"spec": spec}, tasks=tasks) == expected
