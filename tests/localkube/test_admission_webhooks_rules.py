"""Tables for the pure parts of localkube's admission webhooks: rule matching, selectors,
response checks, denial messages, the dry-run rule and the configurations' validation."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from localkube.admission_webhooks import (
    Webhook,
    denial,
    dry_run_refusal,
    object_selected,
    options_object,
    rule_matches,
    verify_response,
)
from localkube.admission_webhooks_validation import set_defaults, validate_configuration

RULE = {"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}


@pytest.mark.parametrize(
    ("rule", "request_", "expected"),
    [
        (RULE, ("CREATE", "apps", "v1", "deployments", "", "Namespaced"), True),
        (RULE, ("UPDATE", "apps", "v1", "deployments", "", "Namespaced"), False),
        (RULE, ("CREATE", "", "v1", "deployments", "", "Namespaced"), False),
        (RULE, ("CREATE", "apps", "v1beta1", "deployments", "", "Namespaced"), False),
        (RULE, ("CREATE", "apps", "v1", "deployments", "status", "Namespaced"), False),
        ({**RULE, "operations": ["*"]}, ("DELETE", "apps", "v1", "deployments", "", "Namespaced"), True),
        ({**RULE, "resources": ["deployments/status"]}, ("CREATE", "apps", "v1", "deployments", "status", "N"), True),
        ({**RULE, "resources": ["deployments/*"]}, ("CREATE", "apps", "v1", "deployments", "scale", "N"), True),
        # as rules.Matcher has it: a "*" subresource matches the resource itself too
        ({**RULE, "resources": ["deployments/*"]}, ("CREATE", "apps", "v1", "deployments", "", "N"), True),
        ({**RULE, "resources": ["*"]}, ("CREATE", "apps", "v1", "replicasets", "", "N"), True),
        ({**RULE, "resources": ["*"]}, ("CREATE", "apps", "v1", "replicasets", "status", "N"), False),
        ({**RULE, "resources": ["*/*"]}, ("CREATE", "apps", "v1", "replicasets", "status", "N"), True),
        ({**RULE, "resources": ["*/scale"]}, ("CREATE", "apps", "v1", "statefulsets", "scale", "N"), True),
        ({**RULE, "apiGroups": ["*"], "apiVersions": ["*"]}, ("CREATE", "x.io", "v9", "deployments", "", "N"), True),
        ({**RULE, "scope": "Cluster"}, ("CREATE", "apps", "v1", "deployments", "", "Namespaced"), False),
        ({**RULE, "scope": "Namespaced"}, ("CREATE", "apps", "v1", "deployments", "", "Namespaced"), True),
        ({**RULE, "scope": "*"}, ("CREATE", "apps", "v1", "deployments", "", "Cluster"), True),
    ],
)
def test_rule_matching(rule: dict[str, Any], request_: tuple[str, ...], expected: bool) -> None:
    assert rule_matches(rule, *request_) is expected


@pytest.mark.parametrize(
    ("selector", "new", "old", "expected"),
    [
        ({}, None, None, True),
        ({"matchLabels": {"a": "1"}}, {"metadata": {"labels": {"a": "1"}}}, None, True),
        ({"matchLabels": {"a": "1"}}, {"metadata": {"labels": {"a": "2"}}}, {"metadata": {"labels": {"a": "1"}}}, True),
        ({"matchLabels": {"a": "1"}}, {"metadata": {}}, None, False),
        ({"matchLabels": {"a": "1"}}, None, None, False),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"metadata": {}}, None, True),
    ],
)
def test_object_selector(selector: dict[str, Any], new: Any, old: Any, expected: bool) -> None:
    assert object_selected(selector, new, old) is expected


def _review(response: dict[str, Any], api_version: str = "admission.k8s.io/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}


PATCH = base64.b64encode(b'[{"op":"add","path":"/x","value":1}]').decode()


@pytest.mark.parametrize(
    ("mutating", "review", "error"),
    [
        (True, {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}, "webhook response was absent"),
        (True, _review({"uid": "other", "allowed": True}), 'expected response.uid="u", got "other"'),
        (
            True,
            _review({"uid": "u", "allowed": True}, "admission.k8s.io/v1beta1"),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got "
            "admission.k8s.io/v1beta1, Kind=AdmissionReview",
        ),
        (True, _review({"uid": "u", "allowed": True, "patch": PATCH}), "webhook returned response.patch but not "),
        (True, _review({"uid": "u", "allowed": True, "patchType": "JSONPatch"}), "returned response.patchType but not"),
        (
            False,
            _review({"uid": "u", "allowed": True, "patch": PATCH}),
            "validating webhook may not return response.patch",
        ),
        (True, {"response": {"uid": "u"}}, "Object 'Kind' is missing in"),
    ],
)
def test_invalid_responses(mutating: bool, review: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError) as caught:
        verify_response("v1", "u", mutating, review)
    assert error in str(caught.value)


def test_valid_response_carries_patch_and_warnings() -> None:
    answer = verify_response(
        "v1",
        "u",
        True,
        _review({"uid": "u", "allowed": True, "patch": PATCH, "patchType": "JSONPatch", "warnings": ["w"]}),
    )
    assert answer.allowed and answer.patch.startswith(b"[") and answer.warnings == ["w"]
    # v1beta1 reviews are not checked for uid or kind, and their patches are JSONPatch
    loose = verify_response("v1beta1", "u", True, {"kind": "AdmissionReview", "response": {"patch": PATCH}})
    assert loose.patch and not loose.allowed


@pytest.mark.parametrize(
    ("status", "code", "reason", "message"),
    [
        (None, 400, "", 'admission webhook "w.x.y" denied the request without explanation'),
        ({"message": "no"}, 400, "", 'admission webhook "w.x.y" denied the request: no'),
        ({"reason": "Because"}, 400, "Because", 'admission webhook "w.x.y" denied the request: Because'),
        ({"code": 403, "reason": "Forbidden", "message": "no"}, 403, "Forbidden", "denied the request: no"),
        ({"code": 200, "message": "no"}, 400, "", "denied the request: no"),
    ],
)
def test_denials(status: dict[str, Any] | None, code: int, reason: str, message: str) -> None:
    error = denial("w.x.y", status)
    assert (error.code, error.reason) == (code, reason) and error.message.endswith(message)


@pytest.mark.parametrize(("side_effects", "refused"), [("None", False), ("NoneOnDryRun", False), ("Some", True)])
def test_dry_run_needs_no_side_effects(side_effects: str, refused: bool) -> None:
    hook = Webhook("c", 0, False, {"name": "w.x.y", "sideEffects": side_effects})
    error = dry_run_refusal(hook)
    assert (error is not None) is refused
    if error is not None:
        assert (error.code, error.message) == (400, 'admission webhook "w.x.y" does not support dry run')


def test_options_objects() -> None:
    assert options_object("CreateOptions", {"fieldManager": "kubectl-create", "dryRun": "All"}) == {
        "kind": "CreateOptions",
        "apiVersion": "meta.k8s.io/v1",
        "dryRun": ["All"],
        "fieldManager": "kubectl-create",
    }
    assert options_object("DeleteOptions", {}, {"propagationPolicy": "Background", "other": 1}) == {
        "kind": "DeleteOptions",
        "apiVersion": "meta.k8s.io/v1",
        "propagationPolicy": "Background",
    }


def _hook(**fields: Any) -> dict[str, Any]:
    hook: dict[str, Any] = {
        "name": "ok.example.com",
        "clientConfig": {"url": "https://hooks.example.com/x"},
        "rules": [RULE],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    hook.update(fields)
    return {key: value for key, value in hook.items() if value is not None}


@pytest.mark.parametrize(
    ("hook", "message"),
    [
        (_hook(), None),
        (_hook(name=None), "webhooks[0].name: Required value"),
        (_hook(name="Bad_Name.x.y"), 'webhooks[0].name: Invalid value: "Bad_Name.x.y": a lowercase RFC 1123'),
        (_hook(sideEffects="Some"), 'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", '),
        (_hook(failurePolicy="Maybe"), 'failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"'),
        (_hook(matchPolicy="Close"), 'matchPolicy: Unsupported value: "Close": supported values: "Equivalent", '),
        (_hook(reinvocationPolicy="Always"), 'reinvocationPolicy: Unsupported value: "Always": supported values: '),
        (_hook(timeoutSeconds=0), "timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30"),
        (_hook(admissionReviewVersions=[]), "admissionReviewVersions: Required value: must specify one of v1, v1beta1"),
        (
            _hook(admissionReviewVersions=["v2"]),
            'admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
        ),
        (_hook(clientConfig={}), "webhooks[0].clientConfig: Required value: exactly one of url or service is required"),
        (_hook(clientConfig={"url": "https://h.example.com/x?a=b"}), 'Invalid value: "a=b": query parameters are not'),
        (_hook(clientConfig={"url": "https://u@h.example.com/"}), 'Invalid value: "u": user information is not'),
        (
            _hook(clientConfig={"service": {"namespace": "ns", "name": "s", "path": "x"}}),
            "webhooks[0].clientConfig.service.path: Invalid value: \"x\": must start with a '/'",
        ),
        (
            _hook(clientConfig={"service": {"namespace": "ns", "name": "s", "port": 0}}),
            "clientConfig.service.port: Invalid value: 0: port is not valid",
        ),
        (
            _hook(rules=[{**RULE, "operations": ["*", "CREATE"]}]),
            'rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: if \'*\' is ',
        ),
        (_hook(rules=[{**RULE, "operations": ["PATCH"]}]), 'rules[0].operations[0]: Unsupported value: "PATCH"'),
        (_hook(rules=[{**RULE, "apiGroups": []}]), "webhooks[0].rules[0].apiGroups: Required value"),
        (
            _hook(rules=[{**RULE, "resources": ["*/*", "pods"]}]),
            "if '*/*' is present, must not specify other resources",
        ),
        (
            _hook(rules=[{**RULE, "resources": ["pods/*", "pods/status"]}]),
            "rules[0].resources[1]: Invalid value: \"pods/status\": if 'pods/*' is present, must not specify "
            "pods/status",
        ),
        (_hook(rules=[{**RULE, "scope": "Global"}]), 'rules[0].scope: Unsupported value: "Global": supported values: '),
        (
            _hook(objectSelector={"matchExpressions": [{"key": "a", "operator": "In"}]}),
            "objectSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In'",
        ),
        (_hook(matchConditions=[{"name": "a", "expression": "true"}]), "matchConditions: Forbidden: "),
    ],
)
def test_configuration_validation(hook: dict[str, Any], message: str | None) -> None:
    obj = {"metadata": {"name": "c"}, "webhooks": [hook]}
    set_defaults(obj, mutating=True)
    causes = [f"{c.field}: {c.message}" for c in validate_configuration(obj, mutating=True)]
    if message is None:
        assert causes == []
    else:
        assert any(message in cause for cause in causes), causes


def test_duplicate_webhook_names() -> None:
    obj = {"webhooks": [_hook(), _hook()]}
    causes = [f"{c.field}: {c.message}" for c in validate_configuration(obj, mutating=False)]
    assert causes == ['webhooks[1].name: Duplicate value: "ok.example.com"']
