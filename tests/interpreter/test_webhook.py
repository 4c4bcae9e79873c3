"""Table tests of the pure interpreter-webhook exchange (karmada.interpreter.webhook)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from karmada.interpreter.native import Operation
from karmada.interpreter.webhook import (
    Attributes,
    InterpreterHook,
    WebhookError,
    context_request,
    first_relevant,
    hooks_of,
    patched,
    rule_matches,
    service_url,
    verify_response,
)

HOOK = InterpreterHook(
    "examples/workloads.example.com", "examples", "workloads.example.com", context_versions=("v1alpha1",)
)


def configuration(name: str, *webhooks: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "webhooks": list(webhooks)}


def webhook(name: str, *rules: dict[str, Any], timeout: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": name,
        "clientConfig": {"url": f"https://{name}/interpret"},
        "rules": list(rules),
        "interpreterContextVersions": ["v1alpha1"],
    }
    if timeout is not None:
        body["timeoutSeconds"] = timeout
    return body


def rule(operations: list[str], groups: list[str], versions: list[str], kinds: list[str]) -> dict[str, Any]:
    return {"operations": operations, "apiGroups": groups, "apiVersions": versions, "kinds": kinds}


@pytest.mark.parametrize(
    ("the_rule", "api_version", "kind", "operation", "expected"),
    [
        (
            rule(["InterpretReplica"], ["apps"], ["v1"], ["Deployment"]),
            "apps/v1",
            "Deployment",
            Operation.INTERPRET_REPLICA,
            True,
        ),
        (rule(["*"], ["*"], ["*"], ["*"]), "v1", "Pod", Operation.RETAIN, True),
        (
            rule(["InterpretReplica"], ["apps"], ["v1"], ["Deployment"]),
            "apps/v1",
            "Deployment",
            Operation.RETAIN,
            False,
        ),
        (rule(["Retain"], [""], ["v1"], ["Pod"]), "v1", "Pod", Operation.RETAIN, True),  # the core group is ""
        (rule(["Retain"], ["apps"], ["v1"], ["Pod"]), "v1", "Pod", Operation.RETAIN, False),
        (rule(["Retain"], ["apps"], ["v1beta1"], ["Deployment"]), "apps/v1", "Deployment", Operation.RETAIN, False),
        (rule(["Retain"], ["apps"], ["v1"], ["StatefulSet"]), "apps/v1", "Deployment", Operation.RETAIN, False),
        (rule(["ReviseReplica", "Retain"], ["x.io"], ["*"], ["*"]), "x.io/v2", "W", Operation.REVISE_REPLICA, True),
        (rule([], ["*"], ["*"], ["*"]), "x.io/v2", "W", Operation.REVISE_REPLICA, False),
    ],
)
def test_rule_matches(
    the_rule: dict[str, Any], api_version: str, kind: str, operation: Operation, expected: bool
) -> None:
    assert rule_matches(the_rule, api_version, kind, operation) is expected


def test_hooks_are_ordered_by_configuration_then_webhook_and_the_first_by_identifier_answers() -> None:
    everything = rule(["*"], ["*"], ["*"], ["*"])
    replicas = rule(["InterpretReplica"], ["x.io"], ["v1"], ["W"])
    hooks = hooks_of(
        [
            configuration("zeta", webhook("a.example.com", everything, timeout=3)),
            configuration("alpha", webhook("z.example.com", replicas), webhook("b.example.com", replicas)),
        ]
    )
    assert [h.uid for h in hooks] == ["alpha/z.example.com", "alpha/b.example.com", "zeta/a.example.com"]
    assert [h.timeout_seconds for h in hooks] == [10, 10, 3]  # Karmada's default is 10 seconds
    picked = first_relevant(hooks, "x.io/v1", "W", Operation.INTERPRET_REPLICA)
    assert picked is not None and picked.uid == "alpha/b.example.com"
    picked = first_relevant(hooks, "x.io/v1", "W", Operation.RETAIN)
    assert picked is not None and picked.uid == "zeta/a.example.com"
    assert first_relevant(hooks[:2], "x.io/v1", "W", Operation.RETAIN) is None


OBJ = {
    "apiVersion": "apps.example.io/v1",
    "kind": "Clone",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"replicas": 4},
}


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        (
            Attributes(Operation.INTERPRET_REPLICA, OBJ),
            {
                "uid": "u1",
                "kind": {"group": "apps.example.io", "version": "v1", "kind": "Clone"},
                "name": "web",
                "namespace": "default",
                "operation": "InterpretReplica",
                "object": OBJ,
                "replicas": 0,
            },
        ),
        (
            Attributes(Operation.REVISE_REPLICA, OBJ, replicas=2),
            {
                "uid": "u1",
                "kind": {"group": "apps.example.io", "version": "v1", "kind": "Clone"},
                "name": "web",
                "namespace": "default",
                "operation": "ReviseReplica",
                "object": OBJ,
                "replicas": 2,
            },
        ),
        (
            Attributes(
                Operation.RETAIN, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}, observed={"a": 1}
            ),
            {
                "uid": "u1",
                "kind": {"group": "", "version": "v1", "kind": "Node"},
                "name": "n",
                "operation": "Retain",
                "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}},
                "observedObject": {"a": 1},
                "replicas": 0,
            },
        ),
        (
            Attributes(
                Operation.AGGREGATE_STATUS, OBJ, aggregated_status=[{"clusterName": "member1", "applied": True}]
            ),
            {
                "uid": "u1",
                "kind": {"group": "apps.example.io", "version": "v1", "kind": "Clone"},
                "name": "web",
                "namespace": "default",
                "operation": "AggregateStatus",
                "object": OBJ,
                "replicas": 0,
                "aggregatedStatus": [{"clusterName": "member1", "applied": True}],
            },
        ),
    ],
)
def test_context_request(attributes: Attributes, expected: dict[str, Any]) -> None:
    assert context_request(HOOK, attributes, "u1") == {
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterContext",
        "request": expected,
    }


def test_a_hook_speaking_no_known_version_fails() -> None:
    hook = InterpreterHook("c/h", "c", "h", context_versions=("v2",))
    with pytest.raises(
        WebhookError,
        match=r'failed calling webhook "c/h": could not create ResourceInterpreterContext objects: '
        r"webhook does not accept known ResourceInterpreterContext versions \(v1alpha1\)",
    ):
        context_request(hook, Attributes(Operation.RETAIN, OBJ), "u")


def _b64(patch: list[dict[str, Any]]) -> str:
    return base64.b64encode(json.dumps(patch).encode()).decode()


def answer(**response: Any) -> dict[str, Any]:
    return {
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterContext",
        "response": {"uid": "u1", "successful": True, **response},
    }


PREFIX = 'Internal error occurred: failed calling webhook "examples/workloads.example.com": '


@pytest.mark.parametrize(
    ("operation", "body", "error"),
    [
        (Operation.INTERPRET_REPLICA, {}, "received invalid webhook response: webhook response was absent"),
        (
            Operation.INTERPRET_REPLICA,
            {"response": {"uid": "other", "successful": True}},
            'expected response.uid "u1", got "other"',
        ),
        (
            Operation.INTERPRET_REPLICA,
            {"response": {"uid": "u1", "successful": False}},
            "webhook require response.status when response.successful is false",
        ),
        (
            Operation.INTERPRET_REPLICA,
            {"response": {"uid": "u1", "successful": False, "status": {"code": 500, "message": "boom"}}},
            "webhook call failed, get status code: 500, msg: boom",
        ),
        (Operation.INTERPRET_REPLICA, answer(), "webhook returned nil response.replicas"),
        (Operation.REVISE_REPLICA, answer(patch=_b64([])), "webhook returned nil response.patchType"),
        (Operation.RETAIN, answer(patchType="JSONPatch"), "webhook returned empty response.patch"),
        (
            Operation.AGGREGATE_STATUS,
            answer(patch=_b64([]), patchType="MergePatch"),
            'webhook returned invalid response.patchType of "MergePatch"',
        ),
        (Operation.INTERPRET_STATUS, answer(), "webhook returned nill response.rawStatus"),
        (Operation.INTERPRET_HEALTH, answer(), "webhook returned nil response.healthy"),
        (
            Operation.INTERPRET_DEPENDENCY,
            answer(dependencies=[{"apiVersion": "v1", "kind": "ConfigMap"}]),
            'dependencies[0]: Invalid value: {"apiVersion": "v1", "kind": "ConfigMap"}: '
            "dependency can not leave name and labelSelector all empty",
        ),
        (
            Operation.INTERPRET_DEPENDENCY,
            answer(dependencies=[{"kind": "ConfigMap", "name": "c"}]),
            'dependencies[0].apiVersion: Invalid value: "": missing required apiVersion',
        ),
    ],
)
def test_bad_responses(operation: Operation, body: Any, error: str) -> None:
    with pytest.raises(WebhookError) as caught:
        verify_response(HOOK, "u1", operation, body)
    assert str(caught.value).startswith(PREFIX)
    assert error in str(caught.value)


def test_good_responses() -> None:
    replicas = verify_response(
        HOOK,
        "u1",
        Operation.INTERPRET_REPLICA,
        answer(replicas=3, replicaRequirements={"resourceRequest": {"cpu": "100m"}}),
    )
    assert replicas.replicas == 3
    assert replicas.replica_requirements is not None and replicas.replica_requirements.to_dict() == {
        "resourceRequest": {"cpu": "100m"}
    }
    assert verify_response(HOOK, "u1", Operation.INTERPRET_HEALTH, answer(healthy=False)).healthy is False
    assert verify_response(HOOK, "u1", Operation.INTERPRET_STATUS, answer(rawStatus={"ready": 1})).raw_status == {
        "ready": 1
    }
    deps = verify_response(
        HOOK,
        "u1",
        Operation.INTERPRET_DEPENDENCY,
        answer(dependencies=[{"apiVersion": "v1", "kind": "Secret", "namespace": "d", "name": "s"}]),
    )
    assert [d.name for d in deps.dependencies] == ["s"]
    # no patch at all: the object as it was
    assert patched(HOOK, OBJ, verify_response(HOOK, "u1", Operation.RETAIN, answer())) == OBJ


@pytest.mark.parametrize(
    ("patch", "expected_spec"),
    [
        ([{"op": "replace", "path": "/spec/replicas", "value": 2}], {"replicas": 2}),
        ([{"op": "add", "path": "/spec/paused", "value": True}], {"replicas": 4, "paused": True}),
        ([{"op": "remove", "path": "/spec/replicas"}], {}),
    ],
)
def test_patches_apply_to_a_copy(patch: list[dict[str, Any]], expected_spec: dict[str, Any]) -> None:
    response = verify_response(HOOK, "u1", Operation.REVISE_REPLICA, answer(patch=_b64(patch), patchType="JSONPatch"))
    assert patched(HOOK, OBJ, response)["spec"] == expected_spec
    assert OBJ["spec"] == {"replicas": 4}


def test_a_patch_that_does_not_apply_fails() -> None:
    response = verify_response(
        HOOK,
        "u1",
        Operation.REVISE_REPLICA,
        answer(patch=_b64([{"op": "replace", "path": "/spec/nothing/here", "value": 1}]), patchType="JSONPatch"),
    )
    with pytest.raises(WebhookError, match="applying the webhook's patch"):
        patched(HOOK, OBJ, response)


SERVICE_REF = {"namespace": "ns", "name": "hook", "port": 8443, "path": "/interpret"}


@pytest.mark.parametrize(
    ("ref", "service", "expected"),
    [
        (SERVICE_REF, None, "https://hook.ns.svc:8443/interpret"),
        ({"namespace": "ns", "name": "hook"}, None, "https://hook.ns.svc:443"),
        (
            SERVICE_REF,
            {"spec": {"type": "ClusterIP", "clusterIP": "10.0.0.7", "ports": [{"port": 8443}]}},
            "https://10.0.0.7:8443/interpret",
        ),
        (
            SERVICE_REF,
            {"spec": {"clusterIP": "fd00::7", "ports": [{"port": 8443}]}},
            "https://[fd00::7]:8443/interpret",
        ),
        (
            SERVICE_REF,
            {"spec": {"type": "ExternalName", "externalName": "hooks.example.com"}},
            "https://hooks.example.com:8443/interpret",
        ),
    ],
)
def test_service_url(ref: dict[str, Any], service: dict[str, Any] | None, expected: str) -> None:
    assert service_url(ref, service) == expected


@pytest.mark.parametrize(
    ("service", "error"),
    [
        ({"spec": {"type": "ClusterIP", "clusterIP": "None"}}, 'cannot route to service with ClusterIP "None"'),
        (
            {"spec": {"type": "NodePort", "clusterIP": "10.0.0.7", "ports": [{"port": 80}]}},
            'no service port 8443 found for service "hook"',
        ),
        ({"spec": {"type": "Weird"}}, 'unsupported service type "Weird"'),
    ],
)
def test_service_url_errors(service: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        service_url(SERVICE_REF, service)


def test_the_context_version_is_the_config_groups() -> None:
    # written out in karmada.interpreter.webhook so that the agent does not load the API models
    from karmada.api.interpreter import CONFIG_GROUP_VERSION
    from karmada.interpreter.webhook import CONTEXT_API_VERSION

    assert CONTEXT_API_VERSION == CONFIG_GROUP_VERSION
