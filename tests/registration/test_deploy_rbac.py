"""``manifests/deploy`` gives karmada-controlplane what it needs and no more:
the manifests applied to a localkube, the control plane run with exactly
that service account's token (``kubectl create token``), a member
registered, Ready and unregistered through it; then what it must not do."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from manifests import deploy_files
from tests.programs import BIN_DIR, Background
from tests.pullmode import FAST_CONTROLPLANE, PullMode, wait_for
from tests.servers import Kubectl, Plugin, ServerThread

SERVICE_ACCOUNT = "system:serviceaccount:karmada-system:karmada-controlplane"


def _deployment_flags() -> list[str]:
    """The flags the Deployment runs the control plane with (its namespace for leader election)."""
    for path in deploy_files():
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "Deployment":
                command: list[str] = doc["spec"]["template"]["spec"]["containers"][0]["command"]
                assert command[0] == "karmada-controlplane"
                return command[1:]
    raise AssertionError("no Deployment in manifests/deploy")


def _token_kubeconfig(server: ServerThread, token: str, path: Path) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "host",
                "cluster": {
                    "server": server.url,
                    "certificate-authority-data": base64.b64encode(server.server.ca_pem()).decode(),
                },
            }
        ],
        "users": [{"name": "karmada-controlplane", "user": {"token": token}}],
        "contexts": [{"name": "host", "context": {"cluster": "host", "user": "karmada-controlplane"}}],
        "current-context": "host",
    }
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(config, out)
    return path


@pytest.fixture(scope="module")
def deployed(localkube: ServerThread, workdir: Path) -> Iterator[tuple[PullMode, Kubectl, Background]]:
    """Karmada installed by an admin, the deploy RBAC applied, the control plane running as its SA."""
    env = PullMode(localkube, workdir).install()
    rbac = next(p for p in deploy_files() if "rbac" in p.name)
    env.admin("apply", "-f", str(rbac))
    token = env.admin("create", "token", "karmada-controlplane", "-n", "karmada-system", "--duration=1h").stdout
    kubeconfig = _token_kubeconfig(localkube, token.strip(), workdir / "controlplane-sa.kubeconfig")
    identity = Kubectl(kubeconfig, workdir / "cache")
    assert identity("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").stdout == SERVICE_ACCOUNT
    args = [str(BIN_DIR / "karmada-controlplane"), f"--kubeconfig={kubeconfig}", *_deployment_flags()]
    controlplane = Background([*args, *FAST_CONTROLPLANE], workdir / "controlplane-sa.log").start()
    try:
        yield env, identity, controlplane
    finally:
        controlplane.stop()
        env.stop()


def test_the_rules_are_enough(deployed: tuple[PullMode, Kubectl, Background], member1: ServerThread) -> None:
    env, _, controlplane = deployed
    joined = env.register(member1, "member1")
    assert "cluster(member1) is joined successfully" in joined.stdout
    env.start_agent(member1, "member1")
    wait_for(lambda: env.ready("member1") == "True", what="member1 Ready")
    wait_for(lambda: env.taint_keys("member1") == [], what="not-ready taint removed")
    lease = json.loads(env.admin("get", "lease", "-n", "karmada-system", "-o", "json").stdout)["items"]
    assert any(item["spec"].get("holderIdentity") for item in lease), "it leads through its own Lease"
    # removal: execution namespace, the agent's RBAC and Lease, the finalizer
    member = env.member_admin(member1, "member1")
    out = Plugin(member.kubeconfig)("unregister", "member1").stdout
    assert "cluster member1 removed from the control plane" in out
    assert env.admin("get", "namespace", "karmada-es-member1", check=False).returncode == 1
    assert env.admin("get", "clusterrole", "system:karmada:member1:agent", check=False).returncode == 1
    env.agents["member1"].stop()
    log = controlplane.output()
    assert controlplane.running, log[-2000:]
    assert "forbidden" not in log.lower(), log[-2000:]


@pytest.mark.parametrize(
    ("verb", "what", "flags"),
    [
        ("get", "secrets", ["-A"]),
        ("list", "secrets", ["-n", "karmada-system"]),
        ("create", "secrets", ["-n", "karmada-system"]),
        ("escalate", "clusterroles", []),
        ("bind", "clusterroles", []),
        ("escalate", "roles", ["-n", "karmada-es-member1"]),
        ("bind", "roles", ["-n", "karmada-es-member1"]),
        ("*", "clusterroles", []),
        ("impersonate", "users", []),
        ("impersonate", "serviceaccounts", []),
        ("create", "pods", ["-n", "default"]),
        ("create", "deployments.apps", ["-n", "default"]),
        ("create", "serviceaccounts/token", ["-n", "karmada-system"]),
        ("approve", "signers.certificates.k8s.io/kubernetes.io/kubelet-serving", []),
        ("approve", "signers.certificates.k8s.io/kubernetes.io/kube-apiserver-client-kubelet", []),
        ("sign", "signers.certificates.k8s.io/kubernetes.io/kube-apiserver-client", []),
        ("update", "certificatesigningrequests.certificates.k8s.io", ["--subresource=status"]),
        ("create", "customresourcedefinitions.apiextensions.k8s.io", []),
        ("delete", "propagationpolicies.policy.karmada.io", ["-A"]),
    ],
)
def test_and_no_more(deployed: tuple[PullMode, Kubectl, Background], verb: str, what: str, flags: list[str]) -> None:
    _, identity, _ = deployed
    answer = identity("auth", "can-i", verb, what, *flags, check=False).stdout.strip()
    assert answer == "no", (verb, what, flags)


def test_no_star_or_secrets_in_the_manifest() -> None:
    rbac = next(p for p in deploy_files() if "rbac" in p.name)
    role = next(d for d in yaml.safe_load_all(rbac.read_text()) if d and d["kind"] == "ClusterRole")
    for rule in role["rules"]:
        assert "secrets" not in rule.get("resources", []), rule
        assert "escalate" not in rule["verbs"] and "bind" not in rule["verbs"], rule
        if "rbac.authorization.k8s.io" in rule.get("apiGroups", []) or "*" in rule.get("resources", []):
            assert "*" not in rule["verbs"] and "*" not in rule.get("resources", []), rule
