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


def test_a_snapshot_without_api_enablements_keeps_what_the_filters_read() -> None:
    obj = cluster("f", region="eu", taints=[TAINT]).to_dict()
    obj["status"] = {
        "apiEnablements": [
            {"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]},
            {"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"}]},
        ],
        "resourceSummary": {"allocatable": {"cpu": "4", "pods": "110"}, "allocated": {"cpu": "1"}},
    }
    model = Cluster.from_dict(obj)
    full = ClusterSnapshot.of(model)
    lean = full.without_api_enablements()
    assert lean.api_kinds == full.api_kinds == {("apps/v1", "Deployment"), ("v1", "ConfigMap")}
    assert (lean.free, lean.region, lean.taints, lean.name) == (full.free, full.region, full.taints, full.name)
    assert lean.cluster.status is not None and lean.cluster.status.api_enablements is None
    assert lean.cluster.status.resource_summary == full.cluster.status.resource_summary  # type: ignore[union-attr]
    # the model it was made from is not changed, and a cluster without enablements is returned as it is
    assert model.status is not None and model.status.api_enablements is not None
    assert lean.without_api_enablements() is lean
