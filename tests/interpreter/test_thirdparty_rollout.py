"""Argo Rollout's shipped script on the Argo Rollouts getting-started example
(``rollouts-demo``: a canary in steps), as its controller reports it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from karmada.api.binding import AggregatedStatusItem
from karmada.interpreter.customized import CustomizedInterpreter

ROLLOUT: dict[str, Any] = {
    "apiVersion": "argoproj.io/v1alpha1",
    "kind": "Rollout",
    "metadata": {
        "name": "rollouts-demo",
        "namespace": "default",
        "generation": 1,
        "annotations": {"resourcetemplate.karmada.io/generation": "1"},
    },
    "spec": {
        "replicas": 5,
        "revisionHistoryLimit": 2,
        "selector": {"matchLabels": {"app": "rollouts-demo"}},
        "strategy": {
            "canary": {
                "steps": [
                    {"setWeight": 20},
                    {"pause": {}},
                    {"setWeight": 40},
                    {"pause": {"duration": 10}},
                    {"setWeight": 60},
                    {"pause": {"duration": 10}},
                ]
            }
        },
        "template": {
            "metadata": {"labels": {"app": "rollouts-demo"}},
            "spec": {
                "containers": [
                    {
                        "name": "rollouts-demo",
                        "image": "argoproj/rollouts-demo:blue",
                        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                        "resources": {"requests": {"memory": "32Mi", "cpu": "5m"}},
                        "envFrom": [{"configMapRef": {"name": "demo-settings"}}],
                    }
                ]
            },
        },
    },
    "status": {
        "observedGeneration": "1",
        "phase": "Healthy",
        "replicas": 5,
        "updatedReplicas": 5,
        "readyReplicas": 5,
        "availableReplicas": 5,
        "currentPodHash": "687d76d795",
        "stableRS": "687d76d795",
        "selector": "app=rollouts-demo",
        "conditions": [{"type": "Available", "status": "True", "reason": "AvailableReason"}],
    },
}

INTERPRETER = CustomizedInterpreter()


def with_status(**changes: Any) -> dict[str, Any]:
    rollout = copy.deepcopy(ROLLOUT)
    rollout["status"].update(changes)
    return rollout


@pytest.mark.parametrize(
    ("rollout", "healthy"),
    [
        (ROLLOUT, True),
        (with_status(observedGeneration="0"), False),  # the controller has not seen the spec yet
        (with_status(phase="Degraded"), False),
        (with_status(phase="Paused", updatedReplicas=1), True),  # a canary paused at 20% on purpose
        (with_status(phase="Progressing", updatedReplicas=3), False),
        (with_status(phase="Progressing", availableReplicas=4), False),
    ],
)
def test_health(rollout: dict[str, Any], healthy: bool) -> None:
    assert INTERPRETER.interpret_health(rollout) is healthy


def test_replicas_revision_and_dependencies() -> None:
    replicas, needs = INTERPRETER.get_replicas(ROLLOUT)
    assert replicas == 5
    assert needs is not None and needs.to_dict() == {"resourceRequest": {"cpu": "5m", "memory": "32Mi"}}
    assert INTERPRETER.revise_replica(ROLLOUT, 2)["spec"]["replicas"] == 2
    deps = [d.to_dict() for d in INTERPRETER.get_dependencies(ROLLOUT)]
    assert deps == [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "demo-settings"}]


def test_status_reflected_and_summed() -> None:
    reflected = INTERPRETER.reflect_status(ROLLOUT)
    assert reflected is not None
    assert reflected["replicas"] == 5 and reflected["phase"] == "Healthy"
    assert reflected["generation"] == 1 and reflected["resourceTemplateGeneration"] == 1
    assert reflected["observedGeneration"] == 1
    items = [
        AggregatedStatusItem.from_dict({"clusterName": f"member{i}", "applied": True, "status": reflected})
        for i in (1, 2)
    ]
    status = INTERPRETER.aggregate_status(ROLLOUT, items, "2026-01-01T00:00:00Z")["status"]
    assert status["replicas"] == 10 and status["availableReplicas"] == 10
    assert status["observedGeneration"] == 1 and status["stableRS"] == "687d76d795"
