"""The propagation bench's member sizing and its capped-run report (benchmarks/propagation_bench.py)."""

from __future__ import annotations

import pytest

from benchmarks.propagation_bench import MemberSize, PendingPods, _unschedulable, member_size


@pytest.mark.parametrize(
    ("deployments", "replicas", "rate", "seconds", "node_pods", "expected"),
    [
        # the run: 1000 + 601 Deployments of 2 replicas, all of them in one member at worst
        (1000, 2, 10.0, 60.0, 0, MemberSize(3, 1078, "79", "314Gi", 3202)),
        # a small run keeps the default node
        (10, 2, 1.0, 5.0, 0, MemberSize(3, 110, "8", "32Gi", 32)),
        # no steady phase
        (500, 3, 10.0, 0.0, 0, MemberSize(3, 510, "38", "149Gi", 1500)),
        # pods per node given: the sandbox's default, capped on purpose
        (1000, 2, 10.0, 60.0, 110, MemberSize(3, 110, "8", "32Gi", 3202)),
    ],
)
def test_member_size(
    deployments: int, replicas: int, rate: float, seconds: float, node_pods: int, expected: MemberSize
) -> None:
    size = member_size(deployments, replicas, rate, seconds, node_pods)
    assert size == expected
    if not node_pods:
        assert size.nodes * size.node_pods >= size.needed_pods


def test_pending_pods_report() -> None:
    pods = PendingPods(
        pending={"member1": 186, "member2": 0, "member10": 186},
        unschedulable={"member1": 186, "member2": 0, "member10": 186},
        rejected={"member1": 0, "member2": 0, "member10": 1},
    )
    assert pods.total_unschedulable == 373
    assert pods.describe() == (
        "pending Pods per member: member1=186, member10=186; unschedulable: member1=186, member10=186; "
        "rejected by a node: member10=1"
    )


def test_unschedulable_reads_pod_scheduled() -> None:
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    assert _unschedulable({"status": {"phase": "Pending", "conditions": [cond]}})
    assert not _unschedulable({"status": {"phase": "Pending"}})
    assert not _unschedulable({"status": {"conditions": [{**cond, "status": "True"}]}})
