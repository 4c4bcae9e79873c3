"""An agent's life after registration: certificate rotation without restart,
and unregister with the agent's own credentials."""

from __future__ import annotations

import base64
import json

import yaml
from cryptography import x509

from tests.pullmode import PullMode, wait_for
from tests.servers import Plugin, ServerThread


def _secret_cert(pull_mode: PullMode, member: ServerThread, name: str) -> bytes:
    kubeconfig = pull_mode.agent_kubeconfig(member, name).read_text()
    user = yaml.safe_load(kubeconfig)["users"][0]["user"]
    return base64.b64decode(user["client-certificate-data"])


def test_certificate_rotation_without_restart(pull_mode: PullMode, member1: ServerThread) -> None:
    pull_mode.register(member1, "member1", "--cert-expiration-seconds=600")
    first = x509.load_pem_x509_certificate(_secret_cert(pull_mode, member1, "member1"))
    # rotate as soon as 1% of the lifetime is gone, checking every second
    agent = pull_mode.start_agent(
        member1, "member1", "--cert-rotation-checking-interval=1s", "--cert-rotation-remaining-time-threshold=0.99"
    )
    wait_for(lambda: pull_mode.ready("member1") == "True", what="member1 Ready")
    wait_for(lambda: "switched to the renewed certificate" in agent.output(), timeout=30, what="a rotation")
    renewed = x509.load_pem_x509_certificate(_secret_cert(pull_mode, member1, "member1"))
    assert renewed.serial_number != first.serial_number
    assert renewed.subject == first.subject
    assert agent.running, "the agent switched certificates without restarting"
    csrs = json.loads(pull_mode.admin("get", "csr", "-o", "json").stdout)["items"]
    renewals = [c for c in csrs if c["spec"]["username"] == "system:karmada:agent:member1"]
    assert renewals and renewals[0]["status"]["conditions"][0]["message"] == (
        "Auto approving self karmada agent certificate after SubjectAccessReview."
    )

    # still heartbeating with the new certificate
    def lease() -> str:
        stored = pull_mode.admin("get", "lease", "member1", "-n", "karmada-cluster", "-o", "json").stdout
        return str(json.loads(stored)["spec"]["renewTime"])

    before = lease()
    wait_for(lambda: lease() != before, what="a lease renewal after rotation")
    # the next rotation replaces the agent's one CSR (a fixed name its RBAC grants)
    switched = "switched to the renewed certificate"
    wait_for(lambda: agent.output().count(switched) >= 2, timeout=30, what="a second rotation")
    names = [c["metadata"]["name"] for c in json.loads(pull_mode.admin("get", "csr", "-o", "json").stdout)["items"]]
    assert names.count("system:karmada:agent:member1") == 1


def test_unregister_with_the_agents_credentials(pull_mode: PullMode, member1: ServerThread) -> None:
    if pull_mode.cluster("member1") is None:
        pull_mode.register(member1, "member1")
    if "member1" not in pull_mode.agents or not pull_mode.agents["member1"].running:
        pull_mode.start_agent(member1, "member1")
    wait_for(lambda: pull_mode.ready("member1") == "True", what="member1 Ready")
    member = pull_mode.member_admin(member1, "member1")
    out = Plugin(member.kubeconfig)("unregister", "member1").stdout
    assert "cluster member1 removed from the control plane" in out
    assert "cluster(member1) is unregistered successfully" in out
    assert pull_mode.cluster("member1") is None
    assert pull_mode.admin("get", "namespace", "karmada-es-member1", check=False).returncode == 1
    rbac = pull_mode.admin("get", "clusterrole", "system:karmada:member1:agent", check=False)
    assert rbac.returncode == 1, "the agent's access went with its Cluster"
    assert pull_mode.admin("get", "lease", "member1", "-n", "karmada-cluster", check=False).returncode == 1
    assert member("get", "deploy", "karmada-agent", "-n", "karmada-system", check=False).returncode == 1
    assert member("get", "secret", "karmada-kubeconfig", "-n", "karmada-system", check=False).returncode == 1
    pull_mode.agents["member1"].stop()
    # the name is free again
    pull_mode.register(member1, "member1")
    assert pull_mode.cluster("member1") is not None
