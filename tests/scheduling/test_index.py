"""Which bindings a changed cluster concerns, looked up through the index."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.api.policy import ClusterAffinity
from karmada.scheduling.index import BindingIndex
from karmada.scheduling.triggers import ANY_CLUSTER, AnyCluster
from tests.factories import cluster


def affinity(**fields: Any) -> ClusterAffinity:
    return ClusterAffinity.from_dict(fields)


BINDINGS: dict[str, ClusterAffinity | AnyCluster] = {
    "anything": ANY_CLUSTER,
    "named-m1": affinity(clusterNames=["m1"]),
    "named-m1-m2": affinity(clusterNames=["m1", "m2"]),
    "named-but-excluded": affinity(clusterNames=["m1"], exclude=["m1"]),
    "named-and-labelled": affinity(clusterNames=["m1", "m2"], labelSelector={"matchLabels": {"env": "prod"}}),
    "prod": affinity(labelSelector={"matchLabels": {"env": "prod"}}),
    "not-m2": affinity(exclude=["m2"]),
    "east": affinity(fieldSelector={"matchExpressions": [{"key": "region", "operator": "In", "values": ["east"]}]}),
}


@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        (cluster("m1"), {"anything", "named-m1", "named-m1-m2", "not-m2"}),
        (
            cluster("m1", labels={"env": "prod"}),
            {"anything", "named-m1", "named-m1-m2", "named-and-labelled", "prod", "not-m2"},
        ),
        (cluster("m2", labels={"env": "prod"}), {"anything", "named-m1-m2", "named-and-labelled", "prod"}),
        (cluster("m3", region="east"), {"anything", "not-m2", "east"}),
    ],
)  # fmt: skip
def test_affected_bindings(changed: Any, expected: set[str]) -> None:
    index: BindingIndex[str] = BindingIndex()
    for key, value in BINDINGS.items():
        index.put(key, value)
    assert index.affected(changed) == expected


def test_reindexing_and_removal_leave_nothing_behind() -> None:
    index: BindingIndex[str] = BindingIndex()
    index.put("b", affinity(clusterNames=["m1"]))
    index.put("b", affinity(clusterNames=["m2"]))  # the policy changed
    assert index.affected(cluster("m1")) == set()
    assert index.affected(cluster("m2")) == {"b"}
    index.remove("b")
    index.remove("b")  # twice is fine
    assert len(index) == 0 and "b" not in index
    assert index.affected(cluster("m2")) == set()
    assert index._by_name == {} and index._any == set() and index._selective == set()
