"""The real ``karmada-webhook`` program answering AdmissionReview v1 requests over TLS,
as kube-apiserver sends them: verified against the CA ``init`` generated."""

from __future__ import annotations

import base64
import json
import ssl
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from karmada.install.webhook import load_or_create
from tests.programs import BIN_DIR, Background, free_port
from tests.servers import Kubectl, Plugin, ServerThread

Obj = dict[str, Any]


class Webhook:
    def __init__(self, program: Background, port: int, ca: Path) -> None:
        self.program, self.port, self.ca = program, port, ca
        self.url = f"https://127.0.0.1:{port}"

    def ssl(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))


def _start(tmp_path: Path, *extra: str) -> Webhook:
    cert_dir = tmp_path / "certs"
    load_or_create(cert_dir)
    port = free_port()
    args = [str(BIN_DIR / "karmada-webhook"), "--bind-address=127.0.0.1", f"--secure-port={port}"]
    program = Background([*args, f"--cert-dir={cert_dir}", *extra], tmp_path / "webhook.log").start()
    webhook = Webhook(program, port, cert_dir / "ca.crt")
    deadline = time.monotonic() + 20
    while "serving on https://" not in program.output():
        if not program.running or time.monotonic() > deadline:
            program.stop()
            raise AssertionError(f"karmada-webhook did not start:\n{program.output()}")
        time.sleep(0.05)
    return webhook


@pytest.fixture
def webhook(tmp_path: Path) -> Iterator[Webhook]:
    started = _start(tmp_path, "--kubeconfig=/nonexistent/kubeconfig")
    yield started
    started.program.stop()


def review(kind: str, operation: str, obj: Obj | None, old: Obj | None = None, namespace: str = "") -> Obj:
    group, version = ("policy.karmada.io", "v1alpha1")
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": kind.lower() + "s"},
            "name": ((obj or old or {}).get("metadata") or {}).get("name", ""),
            "namespace": namespace,
            "operation": operation,
            "userInfo": {"username": "kubernetes-admin"},
            "object": obj,
            "oldObject": old,
            "dryRun": False,
        },
    }


async def post(webhook: Webhook, path: str, body: Any) -> tuple[int, Obj]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(webhook.url + path, json=body, ssl=webhook.ssl()) as response,
    ):
        return response.status, await response.json()


POLICY: Obj = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "PropagationPolicy",
    "metadata": {"name": "nginx", "namespace": "default"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
        "placement": {"spreadConstraints": [{"spreadByField": "region", "maxGroups": 2}]},
    },
}


async def test_mutating_answers_with_a_json_patch(webhook: Webhook) -> None:
    body = review("PropagationPolicy", "CREATE", POLICY, namespace="default")
    status, answer = await post(webhook, "/mutate-propagationpolicy", body)
    assert status == 200
    assert answer["apiVersion"] == "admission.k8s.io/v1" and answer["kind"] == "AdmissionReview"
    response = answer["response"]
    assert response["uid"] == body["request"]["uid"]
    assert response["allowed"] is True
    assert response["patchType"] == "JSONPatch"
    patch = json.loads(base64.b64decode(response["patch"]))
    paths = {op["path"] for op in patch}
    assert {
        "/metadata/labels",
        "/metadata/finalizers",
        "/spec/resourceSelectors/0/namespace",
        "/spec/placement/spreadConstraints/0/minGroups",
    } <= paths


async def test_validating_denies_with_karmadas_message(webhook: Webhook) -> None:
    labelled = json.loads(json.dumps(POLICY))
    labelled["metadata"]["labels"] = {"propagationpolicy.karmada.io/permanent-id": "x"}
    labelled["spec"]["resourceSelectors"][0]["namespace"] = "default"  # as the mutating webhook left it
    body = review("PropagationPolicy", "CREATE", labelled, namespace="default")
    status, answer = await post(webhook, "/validate-propagationpolicy", body)
    assert status == 200
    response = answer["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 403
    assert response["status"]["reason"] == "Forbidden"
    assert response["status"]["message"] == (
        'spec.placement.spreadConstraints: Invalid value: [{"maxGroups":2,"spreadByField":"region"}]: '
        "the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled"
    )


async def test_allowed_requests_and_deletion_protection(webhook: Webhook) -> None:
    ok = review("ClusterTaintPolicy", "CREATE", {"metadata": {"name": "t"}, "spec": {"taints": []}})
    _, answer = await post(webhook, "/validate-clustertaintpolicy", ok)
    assert answer["response"]["allowed"] is True and answer["response"]["status"] == {"code": 200}
    protected = {"metadata": {"name": "c", "labels": {"resourcetemplate.karmada.io/deletion-protected": "Always"}}}
    body = review("ConfigMap", "DELETE", None, protected, "default")
    _, answer = await post(webhook, "/validate-resourcedeletionprotection", body)
    assert answer["response"]["status"]["message"] == (
        "This resource is protected, please make sure to remove the label: "
        "resourcetemplate.karmada.io/deletion-protected"
    )
    # without --allow-no-execute-taint-policy, Karmada's default, NoExecute taint policies are refused
    no_execute = review("ClusterTaintPolicy", "CREATE", {"spec": {"taints": [{"key": "k", "effect": "NoExecute"}]}})
    _, answer = await post(webhook, "/validate-clustertaintpolicy", no_execute)
    assert answer["response"]["status"]["message"].startswith(
        "spec.taints[0]: Forbidden: Configuring taint with NoExecute"
    )


async def test_bad_requests_and_readiness(webhook: Webhook) -> None:
    status, answer = await post(webhook, "/validate-propagationpolicy", {"kind": "AdmissionReview"})
    assert status == 400 and "cannot decode the AdmissionReview" in answer["message"]
    # an object the rules cannot read is answered as Karmada's decoder failing: code 400, not allowed
    malformed = review("Work", "CREATE", {"metadata": {"name": "w"}, "spec": ["not", "a", "map"]})
    _, answer = await post(webhook, "/mutate-work", malformed)
    assert answer["response"]["allowed"] is False and answer["response"]["status"]["code"] == 400
    assert answer["response"]["status"]["message"].startswith("cannot decode the object: ")
    async with aiohttp.ClientSession() as session:
        async with session.get(webhook.url + "/readyz", ssl=webhook.ssl()) as response:
            assert response.status == 200
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            # a client that does not trust the generated CA cannot talk to it
            await session.get(webhook.url + "/readyz", ssl=ssl.create_default_context())


def test_refuses_to_start_without_certificates(tmp_path: Path) -> None:
    program = Background(
        [str(BIN_DIR / "karmada-webhook"), f"--cert-dir={tmp_path / 'none'}", "--secure-port=0"], tmp_path / "log"
    ).start()
    deadline = time.monotonic() + 20
    while program.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not program.running
    assert f"error: cannot load the serving certificate from {tmp_path / 'none'}" in program.output()


async def test_customizations_conflict_with_the_ones_stored(
    tmp_path: Path, localkube: ServerThread, plugin: Plugin, admin: Kubectl
) -> None:
    plugin("init", "--apiserver", "external")
    stored = {
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": "first"},
        "spec": {
            "target": {"apiVersion": "apps.example/v1", "kind": "Workload"},
            "customizations": {"retention": {"luaScript": "function Retain(d, o) return d end"}},
        },
    }
    admin("apply", "-f", "-", stdin=json.dumps(stored))
    kubeconfig = localkube.kubeconfig(tmp_path)
    started = _start(tmp_path, f"--kubeconfig={kubeconfig}")
    try:
        second = json.loads(json.dumps(stored))
        second["metadata"]["name"] = "second"
        _, answer = await post(
            started,
            "/validate-resourceinterpretercustomization",
            review("ResourceInterpreterCustomization", "CREATE", second),
        )
        assert answer["response"]["status"]["message"] == (
            "conflicting with InterpreterOperation(Retain) of existing ResourceInterpreterCustomization(first)"
        )
        broken = json.loads(json.dumps(stored))
        broken["spec"]["customizations"]["retention"]["luaScript"] = "function Retain(d, o) return d"
        _, answer = await post(
            started,
            "/validate-resourceinterpretercustomization",
            review("ResourceInterpreterCustomization", "UPDATE", broken),
        )
        assert answer["response"]["status"]["message"].startswith("InterpreterOperation(Retain) Lua script error: ")
    finally:
        started.program.stop()
