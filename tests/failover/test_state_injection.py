"""Karmada's StatefulFailoverInjection in Work rendering (karmada.works.render)."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.api.binding import ResourceBindingSpec, TargetCluster
from karmada.works.render import inject_preserved_label_state

RESOURCE = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "flink"}


def task(purge: str, before: list[str] | None = None) -> dict[str, Any]:
    return {
        "fromCluster": "member1",
        "purgeMode": purge,
        "reason": "ApplicationFailure",
        "producer": "p",
        "preservedLabelState": {"checkpoint.flink.io/id": "42"},
        **({"clustersBeforeFailover": before} if before else {}),
    }


@pytest.mark.parametrize(
    ("tasks", "target", "clusters", "labelled"),
    [
        ([task("Directly", ["member1"])], "member2", 1, True),
        ([task("Directly", ["member1", "member2"])], "member2", 1, False),  # it ran there before
        ([task("Gracefully", ["member1"])], "member2", 1, False),  # Karmada injects for Directly only
        ([task("Directly", ["member1"])], "member2", 2, False),  # spread over several clusters
        ([], "member2", 1, False),
        ([task("Gracefully"), task("Directly", ["member1"])], "member2", 1, True),  # the last task counts
    ],
)
def test_injection(tasks: list[dict[str, Any]], target: str, clusters: int, labelled: bool) -> None:
    spec = ResourceBindingSpec.from_dict({"resource": RESOURCE, "gracefulEvictionTasks": tasks or None})
    manifest: dict[str, Any] = {"metadata": {"name": "flink", "labels": {"app": "flink"}}}
    inject_preserved_label_state(spec, TargetCluster(name=target), manifest, clusters)
    expected = {"app": "flink", **({"checkpoint.flink.io/id": "42"} if labelled else {})}
    assert manifest["metadata"]["labels"] == expected
