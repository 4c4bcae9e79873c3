"""The sandbox runs karmada-webhook and registers it; ``kubectl apply`` of a policy Karmada
refuses is refused with Karmada's message, since localkube calls admission webhooks.

That localkube calls them is checked first, so a regression fails with its cause: a
server-side dry-run create of a valid policy comes back carrying the permanent-id label
only if the mutating webhook ran (a dry run never reaches the controllers, which would
add it otherwise). It fails rather than skips: a skip would hide the regression.
"""

from __future__ import annotations

import json
import os
import signal
import ssl
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from karmada.sandbox.sandbox import WEBHOOK
from karmada.sandbox.sandbox import Sandbox as SandboxState
from tests.pullmode import wait_for
from tests.servers import Kubectl, Plugin

pytestmark = pytest.mark.slow

POLICY = """\
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: {name}, namespace: default}}
spec:
  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: nginx}}]
  placement:
{placement}
"""
REJECTED = {
    "clusterAffinity with clusterAffinities": (
        "    clusterAffinity: {clusterNames: [member1]}\n"
        "    clusterAffinities: [{affinityName: a, clusterNames: [member1]}]",
        "spec.placement: Invalid value: ",
        "clusterAffinities cannot co-exist with clusterAffinity",
    ),
    "spreadByField region without a cluster constraint": (
        "    spreadConstraints: [{spreadByField: region, maxGroups: 2}]",
        "spec.placement.spreadConstraints: Invalid value: ",
        "the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled",
    ),
    "field selector on an unknown key": (
        "    clusterAffinity:\n      fieldSelector:\n        matchExpressions: [{key: foo, operator: In, values: [x]}]",
        "spec.placement.clusterAffinity.fieldSelector: Invalid value: ",
        'unsupported key "foo", must be provider, region, or zone',
    ),
}


class Sandbox:
    def __init__(self, directory: Path, karmada: Kubectl) -> None:
        self.directory, self.karmada = directory, karmada


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    tmp = tmp_path_factory.mktemp("webhook-sandbox")
    directory = tmp / "sandbox"
    plugin = Plugin(None)
    try:
        plugin("local", "up", "--dir", str(directory), "--members", "1", "--nodes-per-member", "1", timeout=150)
        yield Sandbox(directory, Kubectl(directory / "karmada.config", tmp / "cache"))
    finally:
        plugin("local", "down", "--dir", str(directory), check=False)


def _webhook_url(karmada: Kubectl) -> str:
    config = json.loads(karmada("get", "validatingwebhookconfiguration", "validating-config", "-o", "json").stdout)
    url: str = config["webhooks"][0]["clientConfig"]["url"]
    return url.rsplit("/", 1)[0]


def test_the_sandbox_runs_and_registers_the_webhook(sandbox: Sandbox) -> None:
    url = _webhook_url(sandbox.karmada)
    assert url.startswith("https://127.0.0.1:")
    mutating = json.loads(
        sandbox.karmada("get", "mutatingwebhookconfiguration", "mutating-config", "-o", "json").stdout
    )
    assert {h["name"] for h in mutating["webhooks"]} >= {"propagationpolicy.karmada.io", "work.karmada.io"}
    context = ssl.create_default_context(cafile=str(sandbox.directory / "karmada-webhook" / "ca.crt"))
    with urllib.request.urlopen(url + "/readyz", context=context, timeout=5) as response:
        assert response.status == 200
    status = Plugin(None)("local", "status", "--dir", str(sandbox.directory)).stdout
    assert "karmada-webhook" in status


def assert_webhooks_called(karmada: Kubectl) -> None:
    placement = "    clusterAffinity: {clusterNames: [member1]}"
    result = karmada(
        "create", "--dry-run=server", "-o", "json", "-f", "-", stdin=POLICY.format(name="probe", placement=placement)
    )
    created: dict[str, Any] = json.loads(result.stdout)
    labels = created["metadata"].get("labels") or {}
    assert "propagationpolicy.karmada.io/permanent-id" in labels, (
        "localkube did not call the admission webhooks: a server-side dry-run create of a valid policy came back "
        f"without the mutating webhook's permanent-id label (labels {labels}); see localkube/admission_webhooks.py"
    )


@pytest.mark.parametrize("case", list(REJECTED))
def test_kubectl_apply_is_refused_with_karmadas_message(sandbox: Sandbox, case: str) -> None:
    assert_webhooks_called(sandbox.karmada)
    placement, path, sentence = REJECTED[case]
    result = sandbox.karmada("apply", "-f", "-", stdin=POLICY.format(name="rejected", placement=placement), check=False)
    assert result.returncode == 1
    message = result.stderr.strip()
    assert 'admission webhook "propagationpolicy.karmada.io" denied the request: ' + path in message, message
    assert message.endswith(sentence), message
    assert sandbox.karmada("get", "propagationpolicy", "rejected", check=False).returncode == 1


def test_a_valid_policy_is_stored_with_the_webhooks_defaults(sandbox: Sandbox) -> None:
    assert_webhooks_called(sandbox.karmada)
    placement = "    spreadConstraints: [{maxGroups: 1}]\n    replicaScheduling: {replicaSchedulingType: Divided}"
    sandbox.karmada("apply", "-f", "-", stdin=POLICY.format(name="good", placement=placement))
    stored = json.loads(sandbox.karmada("get", "propagationpolicy", "good", "-o", "json").stdout)
    spec = stored["spec"]
    assert spec["resourceSelectors"][0]["namespace"] == "default"
    assert spec["placement"]["spreadConstraints"] == [{"maxGroups": 1, "minGroups": 1, "spreadByField": "cluster"}]
    assert spec["placement"]["replicaScheduling"]["replicaDivisionPreference"] == "Weighted"
    assert "karmada.io/propagation-policy-controller" in stored["metadata"]["finalizers"]


def test_a_protected_deployment_keeps_its_namespace_terminating(sandbox: Sandbox) -> None:
    """Karmada's resourcedeletionprotection webhook refuses the namespace controller's delete of a
    Deployment labelled ``deletion-protected: Always``: the Deployment stays and the Namespace stays
    Terminating, the refusal in its conditions, until the label goes (localkube/namespace_deletion.py)."""
    karmada, ns, label = sandbox.karmada, "protected-ns", "resourcetemplate.karmada.io/deletion-protected"
    karmada("create", "namespace", ns)
    karmada("create", "deployment", "guarded", "--image=nginx", "-n", ns)
    karmada("label", "deployment", "guarded", "-n", ns, f"{label}=Always")
    karmada("delete", "namespace", ns, "--wait=false")
    refused = (
        "True",
        "ContentDeletionFailed",
        'Failed to delete all resource types, 1 remaining: admission webhook "resourcedeletionprotection.karmada.io" '
        f"denied the request: This resource is protected, please make sure to remove the label: {label}",
    )

    def conditions() -> dict[str, Any]:
        got = karmada("get", "namespace", ns, "-o", "json", check=False)
        found = json.loads(got.stdout).get("status", {}).get("conditions", []) if got.returncode == 0 else []
        return {c["type"]: (c["status"], c["reason"], c["message"]) for c in found}

    wait_for(lambda: conditions().get("NamespaceDeletionContentFailure") == refused, what="the refusal")
    assert karmada("get", "deployment", "guarded", "-n", ns, check=False).returncode == 0
    karmada("label", "deployment", "guarded", "-n", ns, f"{label}-")
    wait_for(
        lambda: karmada("get", "namespace", ns, check=False).returncode == 1, timeout=90, what="the namespace to go"
    )


# (field path in the denial, merge patch) an agent sends with its own kubeconfig
AGENT_PATCHES = {
    "syncMode": ("spec.syncMode", {"spec": {"syncMode": "Push"}}),
    "apiEndpoint": ("spec.apiEndpoint", {"spec": {"apiEndpoint": "https://127.0.0.1:1"}}),
    "secretRef": ("spec.secretRef", {"spec": {"secretRef": {"namespace": "karmada-cluster", "name": "other"}}}),
    "impersonatorSecretRef": (
        "spec.impersonatorSecretRef",
        {"spec": {"impersonatorSecretRef": {"namespace": "karmada-cluster", "name": "other"}}},
    ),
    "insecureSkipTLSVerification": (
        "spec.insecureSkipTLSVerification",
        {"spec": {"insecureSkipTLSVerification": True}},
    ),
    "proxyURL": ("spec.proxyURL", {"spec": {"proxyURL": "http://127.0.0.1:3128"}}),
    "proxyHeader": ("spec.proxyHeader", {"spec": {"proxyHeader": {"X-Who": "me"}}}),
    "taints": ("spec.taints", {"spec": {"taints": [{"key": "mine", "effect": "NoSchedule"}]}}),
    "labels": ("metadata.labels[gpu]", {"metadata": {"labels": {"gpu": "yes"}}}),
    "annotations": ("metadata.annotations[note]", {"metadata": {"annotations": {"note": "x"}}}),
}


def _agent(sandbox: Sandbox) -> Kubectl:
    """kubectl with the credentials the sandbox's member1 agent runs with (its issued certificate)."""
    return Kubectl(sandbox.directory / "member1" / "karmada-agent.kubeconfig", sandbox.karmada.cache_dir)


@pytest.mark.parametrize("field", list(AGENT_PATCHES))
def test_an_agent_cannot_change_what_it_does_not_report(sandbox: Sandbox, field: str) -> None:
    assert_webhooks_called(sandbox.karmada)
    path, patch = AGENT_PATCHES[field]
    before = json.loads(sandbox.karmada("get", "cluster", "member1", "-o", "json").stdout)
    result = _agent(sandbox)("patch", "cluster", "member1", "--type", "merge", "-p", json.dumps(patch), check=False)
    assert result.returncode == 1, result.stdout
    message = result.stderr.strip()
    denial = f'Error from server (Forbidden): admission webhook "cluster.karmada.io" denied the request: {path}: '
    assert message.startswith(denial + "Forbidden: may not be changed by a cluster agent"), message
    after = json.loads(sandbox.karmada("get", "cluster", "member1", "-o", "json").stdout)
    assert (after["spec"], after["metadata"].get("labels"), after["metadata"].get("annotations")) == (
        before["spec"],
        before["metadata"].get("labels"),
        before["metadata"].get("annotations"),
    )
    # the same patch from the administrator is the administrator's to make
    if field == "labels":
        sandbox.karmada("patch", "cluster", "member1", "--type", "merge", "-p", json.dumps(patch))
        sandbox.karmada("label", "cluster", "member1", "gpu-")


def test_the_agent_still_heartbeats_and_reports_status(sandbox: Sandbox) -> None:
    karmada = sandbox.karmada
    renewed = karmada("get", "lease", "member1", "-n", "karmada-cluster", "-o", "jsonpath={.spec.renewTime}").stdout
    wait_for(
        lambda: (
            karmada("get", "lease", "member1", "-n", "karmada-cluster", "-o", "jsonpath={.spec.renewTime}").stdout
            != renewed
        ),
        timeout=60,
        what="the agent to renew its Lease",
    )
    ready = '{.status.conditions[?(@.type=="Ready")].status}'
    assert karmada("get", "cluster", "member1", "-o", f"jsonpath={ready}").stdout == "True"
    # status is the status subresource, which the webhook does not see: the agent's own writes pass
    version = karmada("get", "cluster", "member1", "-o", "jsonpath={.status.kubernetesVersion}").stdout
    status = json.dumps({"status": {"kubernetesVersion": version}})
    _agent(sandbox)("patch", "cluster", "member1", "--subresource=status", "--type", "merge", "-p", status)


def test_a_stopped_webhook_refuses_the_agent_too(sandbox: Sandbox) -> None:
    """failurePolicy Fail: with karmada-webhook frozen (SIGSTOP, so its calls time out) an
    agent's change is refused, not let through unchecked; heartbeats go on, and once the
    webhook runs again the same patch gets the webhook's own refusal."""
    state = SandboxState.load(sandbox.directory)
    assert state is not None
    webhook = next(p for p in state.processes if p.name == WEBHOOK)
    pid = webhook.program_pid()
    assert pid is not None
    patch = json.dumps(AGENT_PATCHES["syncMode"][1])
    lease = ("get", "lease", "member1", "-n", "karmada-cluster", "-o", "jsonpath={.spec.renewTime}")
    os.kill(pid, signal.SIGSTOP)
    try:
        result = _agent(sandbox)("patch", "cluster", "member1", "--type", "merge", "-p", patch, check=False)
        assert result.returncode == 1, result.stdout
        assert 'failed calling webhook "cluster.karmada.io"' in result.stderr, result.stderr
        renewed = sandbox.karmada(*lease).stdout
        wait_for(lambda: sandbox.karmada(*lease).stdout != renewed, timeout=60, what="a heartbeat while it is down")
    finally:
        os.kill(pid, signal.SIGCONT)
    assert json.loads(sandbox.karmada("get", "cluster", "member1", "-o", "json").stdout)["spec"]["syncMode"] == "Pull"
    result = _agent(sandbox)("patch", "cluster", "member1", "--type", "merge", "-p", patch, check=False)
    assert "denied the request: spec.syncMode: Forbidden" in result.stderr, result.stderr
