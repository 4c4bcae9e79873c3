"""End to end, on whatever clusters ``conftest.py`` found (the sandbox, or kind):
every member Ready; a Deployment with a PropagationPolicy divided by static
weight over two members, an OverridePolicy changing its image in one, the
status summed back onto the template, and deletion reaching the members. Only
kubectl, only the clusters' public APIs: the same test runs against both."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import Clusters

IMAGE = "registry.k8s.io/pause:3.10"
OVERRIDDEN = "registry.k8s.io/pause:3.9"

pytestmark = pytest.mark.slow


def wait(observe: Callable[[], Any], expected: Any, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    seen = observe()
    while seen != expected:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}: want {expected}, last seen {seen}")
        time.sleep(1)
        seen = observe()


@pytest.fixture(scope="module")
def namespace(clusters: Clusters) -> Iterator[str]:
    # a namespace of the run's own, propagated to every member by Karmada's namespace sync
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    clusters.kubectl(None, "create", "namespace", name)
    try:
        yield name
    finally:
        clusters.kubectl(None, "delete", "namespace", name, "--ignore-not-found", "--wait=false")


def _documents(namespace: str, first: str, second: str) -> list[dict[str, Any]]:
    labels = {"app": "e2e"}
    return [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "e2e", "namespace": namespace, "labels": labels},
            "spec": {
                "replicas": 4,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "containers": [{"name": "app", "image": IMAGE, "resources": {"requests": {"cpu": "10m"}}}]
                    },
                },
            },
        },
        {
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "PropagationPolicy",
            "metadata": {"name": "e2e", "namespace": namespace},
            "spec": {
                "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "e2e"}],
                "placement": {
                    "clusterAffinity": {"clusterNames": [first, second]},
                    "replicaScheduling": {
                        "replicaSchedulingType": "Divided",
                        "replicaDivisionPreference": "Weighted",
                        "weightPreference": {
                            "staticWeightList": [
                                {"targetCluster": {"clusterNames": [first]}, "weight": 1},
                                {"targetCluster": {"clusterNames": [second]}, "weight": 1},
                            ]
                        },
                    },
                },
            },
        },
        {
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "OverridePolicy",
            "metadata": {"name": "e2e", "namespace": namespace},
            "spec": {
                "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "e2e"}],
                "overrideRules": [
                    {
                        "targetCluster": {"clusterNames": [second]},
                        "overriders": {"imageOverrider": [{"component": "Tag", "operator": "replace", "value": "3.9"}]},
                    }
                ],
            },
        },
    ]


def test_every_member_is_ready(clusters: Clusters) -> None:
    def ready() -> dict[str, str]:
        found = json.loads(clusters.kubectl(None, "get", "clusters", "-o", "json").stdout)["items"]
        statuses = {}
        for cluster in found:
            conditions = (cluster.get("status") or {}).get("conditions") or []
            statuses[cluster["metadata"]["name"]] = next((c["status"] for c in conditions if c["type"] == "Ready"), "")
        return {name: statuses.get(name, "") for name in clusters.members}

    wait(ready, dict.fromkeys(clusters.members, "True"), "every member Ready", clusters.timeout)


def test_a_workload_is_divided_overridden_and_summed_back(clusters: Clusters, namespace: str) -> None:
    first, second = clusters.members[:2]
    others = clusters.members[2:]
    clusters.kubectl(None, "apply", "-f", "-", stdin=yaml.safe_dump_all(_documents(namespace, first, second)))

    def placed() -> dict[str, Any]:
        result = {}
        for member in clusters.members:
            found = clusters.get(member, "deployment", "e2e", namespace)
            result[member] = (
                None
                if found is None
                else (
                    found["spec"]["replicas"],
                    found["spec"]["template"]["spec"]["containers"][0]["image"],
                )
            )
        return result

    expected = {first: (2, IMAGE), second: (2, OVERRIDDEN), **dict.fromkeys(others)}
    wait(placed, expected, "2 + 2 replicas, the second member's image overridden", clusters.timeout)

    def summed() -> int:
        template = clusters.get(None, "deployment", "e2e", namespace) or {}
        return int((template.get("status") or {}).get("readyReplicas") or 0)

    wait(summed, 4, "the members' ready replicas summed onto the template", clusters.timeout * 2)


def test_deleting_the_template_removes_it_from_the_members(clusters: Clusters, namespace: str) -> None:
    clusters.kubectl(None, "delete", "deployment", "e2e", "-n", namespace, "--ignore-not-found")

    def left() -> list[str]:
        return [m for m in clusters.members if clusters.get(m, "deployment", "e2e", namespace) is not None]

    wait(left, [], "the Deployment gone from every member", clusters.timeout)


@pytest.mark.parametrize(
    ("environ", "reason"),
    [
        ({}, "KARMADA_E2E_KUBECONFIG, KARMADA_E2E_MEMBERS_KUBECONFIG, KARMADA_E2E_MEMBERS"),
        (
            {"KARMADA_E2E_KUBECONFIG": "k", "KARMADA_E2E_MEMBERS_KUBECONFIG": "m", "KARMADA_E2E_MEMBERS": "one"},
            "fewer than two",
        ),
    ],
)
def test_the_kind_run_says_why_it_cannot_run(
    environ: dict[str, str], reason: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from tests.e2e.conftest import kind_settings

    # kind and docker as present (empty executables), so the environment check is reached
    for tool in ("kind", "docker"):
        path = tmp_path / tool
        path.write_text("#!/bin/sh\n", encoding="utf-8")
        path.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    settings = kind_settings(environ)
    assert isinstance(settings, str) and reason in settings


def test_the_kind_run_needs_kind_and_docker(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from tests.e2e.conftest import kind_settings

    monkeypatch.setenv("PATH", str(tmp_path))
    assert kind_settings({}) == "KARMADA_E2E_KIND=1 needs kind and docker on PATH"
