"""What a ClusterSnapshot precomputes for the filters, read off the Cluster once per version."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.api.cluster import Cluster
from karmada.scheduling.snapshot import ClusterSnapshot
from tests.factories import cluster

TAINT = {"key": "k", "value": "v", "effect": "NoSchedule"}


def _zone_only() -> Cluster:
    obj = cluster("old").to_dict()
    obj["spec"]["zone"] = "z-legacy"
    return Cluster.from_dict(obj)


CASES: list[tuple[str, Cluster, dict[str, Any]]] = [
    ("plain", cluster("a"), {"taints": None, "provider": None, "region": None, "zones": ()}),
    (
        "placed",
        cluster("b", provider="aws", region="eu", zones=["eu-1", "eu-2"]),
        {"provider": "aws", "region": "eu", "zones": ("eu-1", "eu-2")},
    ),
    ("the deprecated zone stands in for zones", _zone_only(), {"zones": ("z-legacy",)}),
    ("tainted", cluster("c", taints=[TAINT]), {"taints_keys": ["k"]}),
    ("an empty taint list is no taints", cluster("d", taints=[]), {"taints": None}),
    ("deleting", cluster("e", deleting=True), {"deleting": True}),
]


@pytest.mark.parametrize(("obj", "wanted"), [(c, w) for _, c, w in CASES], ids=[n for n, _, _ in CASES])
def test_snapshot_fields(obj: Cluster, wanted: dict[str, Any]) -> None:
    snap = ClusterSnapshot.of(obj)
    assert snap.name == obj.metadata.name
    for field, value in wanted.items():
        if field == "taints_keys":
            assert [t.key for t in snap.taints or []] == value
        else:
            assert getattr(snap, field) == value, field
