"""run_operation: each operation's named results (karmadactl's names), and the errors
for missing inputs and kinds without a rule."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.explanation import InterpretError, parse_operation, run_operation, status_items
from karmada.interpreter import NativeInterpreter, Operation

Obj = dict[str, Any]


def deployment(replicas: int = 3, **status: Any) -> Obj:
    obj: Obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", "generation": 2},
        "spec": {
            "replicas": replicas,
            "template": {
                "spec": {
                    "containers": [{"name": "nginx", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}],
                    "volumes": [{"name": "c", "configMap": {"name": "my-config"}}],
                }
            },
        },
    }
    if status:
        obj["status"] = status
    return obj


CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}


@pytest.mark.parametrize(
    ("word", "operation"),
    [
        ("InterpretReplica", Operation.INTERPRET_REPLICA),
        ("interpretReplica", Operation.INTERPRET_REPLICA),
        ("retain", Operation.RETAIN),
        ("AGGREGATESTATUS", Operation.AGGREGATE_STATUS),
    ],
)
def test_parse_operation(word: str, operation: Operation) -> None:
    assert parse_operation(word) is operation


def test_parse_operation_unknown_names_the_choices() -> None:
    with pytest.raises(InterpretError, match=r"operation interpretSomething is not supported\. Use one of: "):
        parse_operation("interpretSomething")


def run(operation: Operation, obj: Obj, **kwargs: Any) -> list[tuple[str, Any]]:
    return run_operation(NativeInterpreter(), operation, obj, **kwargs)


def test_replica() -> None:
    assert run(Operation.INTERPRET_REPLICA, deployment()) == [
        ("replica", 3),
        ("requires", {"resourceRequest": {"cpu": "100m"}}),
    ]


def test_revise_replica() -> None:
    [(name, revised)] = run(Operation.REVISE_REPLICA, deployment(), replica=5)
    assert name == "revised" and revised["spec"]["replicas"] == 5


def test_retain_keeps_the_members_replicas_with_the_retain_label() -> None:
    desired = deployment()
    desired["metadata"]["labels"] = {"resourcetemplate.karmada.io/retain-replicas": "true"}
    [(name, retained)] = run(Operation.RETAIN, desired, observed=deployment(replicas=9))
    assert name == "retained" and retained["spec"]["replicas"] == 9
    [(_, unlabelled)] = run(Operation.RETAIN, deployment(), observed=deployment(replicas=9))
    assert unlabelled["spec"]["replicas"] == 3


def test_status_health_dependencies() -> None:
    ready = deployment(replicas=2) | {
        "status": {
            "observedGeneration": 2,
            "replicas": 2,
            "updatedReplicas": 2,
            "availableReplicas": 2,
            "readyReplicas": 2,
        }
    }
    assert run(Operation.INTERPRET_HEALTH, ready) == [("healthy", True)]
    not_ready = ready | {"status": {**ready["status"], "availableReplicas": 1}}
    assert run(Operation.INTERPRET_HEALTH, not_ready) == [("healthy", False)]
    [(name, status)] = run(Operation.INTERPRET_STATUS, ready)
    assert name == "status" and status["readyReplicas"] == 2
    assert run(Operation.INTERPRET_DEPENDENCY, deployment()) == [
        ("dependencies", [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "my-config"}])
    ]


def test_aggregate_status_sums_members() -> None:
    items = status_items(
        [
            [
                {"clusterName": "member1", "status": {"replicas": 1, "readyReplicas": 1}, "applied": True},
                {"clusterName": "member2", "status": {"replicas": 2, "readyReplicas": 1}, "applied": True},
            ]
        ]
    )
    [(name, aggregated)] = run(Operation.AGGREGATE_STATUS, deployment(), status=items, now="2024-01-01T00:00:00Z")
    assert name == "aggregatedStatus"
    assert (aggregated["status"]["replicas"], aggregated["status"]["readyReplicas"]) == (3, 2)


@pytest.mark.parametrize(
    ("operation", "obj", "kwargs", "message"),
    [
        (Operation.REVISE_REPLICA, deployment(), {}, "--desired-replica is required for ReviseReplica"),
        (Operation.REVISE_REPLICA, deployment(), {"replica": -1}, "--desired-replica must not be negative"),
        (Operation.RETAIN, deployment(), {}, "--observed is required for Retain"),
        (Operation.AGGREGATE_STATUS, deployment(), {}, "--status is required for AggregateStatus"),
        (Operation.INTERPRET_REPLICA, CONFIGMAP, {}, "InterpretReplica rule is not enabled for v1/ConfigMap"),
        (Operation.INTERPRET_HEALTH, CONFIGMAP, {}, "InterpretHealth rule is not enabled for v1/ConfigMap"),
        (Operation.INTERPRET_STATUS, {"kind": "X"}, {}, "the object must have apiVersion and kind"),
    ],
)
def test_errors(operation: Operation, obj: Obj, kwargs: Obj, message: str) -> None:
    with pytest.raises(InterpretError, match=message):
        run(operation, obj, **kwargs)


def test_bad_status_item_names_the_field() -> None:
    with pytest.raises(InterpretError, match=r"--status: .*status\[0\]\.clusterName"):
        status_items([[{"status": {}}]])
