"""Pull mode end to end, as users run it: ``token create --print-register-command``,
``register`` against the member, the agent process with the Deployment's command,
the control plane process; over TLS with real credentials and the real kubectl."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, Plugin, ServerThread


def test_register_until_ready(pull_mode: PullMode, member1: ServerThread) -> None:
    result = pull_mode.register(
        member1, "member1", "--cluster-provider=aws", "--cluster-region=eu-west-1", "--cluster-zones=a,b"
    )
    assert "cluster(member1) is joined successfully" in result.stdout
    cluster = pull_mode.cluster("member1")
    assert cluster is not None and cluster["spec"]["syncMode"] == "Pull"
    assert cluster["metadata"]["annotations"]["agent.karmada.io/registered-by"].startswith("system:bootstrap:")
    pull_mode.start_agent(member1, "member1")
    wait_for(lambda: pull_mode.ready("member1") == "True", what="member1 Ready")
    wait_for(lambda: pull_mode.taint_keys("member1") == [], what="not-ready taint removed")
    cluster = pull_mode.cluster("member1")
    assert cluster is not None
    spec, status = cluster["spec"], cluster["status"]
    assert (spec["provider"], spec["region"], spec["zones"]) == ("aws", "eu-west-1", ["a", "b"])
    assert spec["apiEndpoint"] == member1.url and spec["id"]
    assert status["kubernetesVersion"].startswith("v1.32")
    assert any(e["groupVersion"] == "apps/v1" for e in status["apiEnablements"])
    lines = pull_mode.admin("get", "clusters").stdout.splitlines()
    assert lines[0].split() == ["NAME", "VERSION", "MODE", "READY", "AGE"]
    assert lines[1].split()[:4] == ["member1", status["kubernetesVersion"], "Pull", "True"]
    lease = json.loads(pull_mode.admin("get", "lease", "member1", "-n", "karmada-cluster", "-o", "json").stdout)
    assert lease["spec"]["holderIdentity"] == "member1" and lease["spec"]["renewTime"]
    assert lease["metadata"]["ownerReferences"][0]["uid"] == cluster["metadata"]["uid"]
    namespaces = pull_mode.admin("get", "namespace", "karmada-es-member1", "-o", "name").stdout.strip()
    assert namespaces == "namespace/karmada-es-member1"


def test_agent_loss_and_return(pull_mode: PullMode, member1: ServerThread) -> None:
    if pull_mode.ready("member1") != "True":
        pull_mode.register(member1, "member1")
        pull_mode.start_agent(member1, "member1")
    wait_for(lambda: pull_mode.ready("member1") == "True", what="member1 Ready")
    pull_mode.agents["member1"].kill()
    wait_for(lambda: pull_mode.ready("member1") == "Unknown", timeout=15, what="Ready=Unknown after agent loss")
    wait_for(lambda: pull_mode.taint_keys("member1") == ["cluster.karmada.io/unreachable"], what="unreachable taint")
    cluster = pull_mode.cluster("member1") or {}
    ready = next(c for c in cluster["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["reason"], ready["message"]) == (
        "ClusterStatusUnknown",
        "Cluster status controller stopped posting cluster status.",
    )
    pull_mode.start_agent(member1, "member1")
    wait_for(lambda: pull_mode.ready("member1") == "True", what="Ready again")
    wait_for(lambda: pull_mode.taint_keys("member1") == [], what="unreachable taint removed")
    events = pull_mode.admin("get", "events", "--field-selector", "involvedObject.name=member1").stdout
    assert "TaintClusterSucceed" in events


def test_agent_reaches_only_its_own_objects(
    pull_mode: PullMode, member1: ServerThread, member2: ServerThread, workdir: Path
) -> None:
    for member, name in ((member1, "member1"), (member2, "member2")):
        if pull_mode.cluster(name) is None:
            pull_mode.register(member, name)
    agent = Kubectl(pull_mode.agent_kubeconfig(member1, "member1"), workdir / "cache")
    assert (
        agent("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").stdout == "system:karmada:agent:member1"
    )
    allowed = [
        ("get", "clusters.cluster.karmada.io/member1", ""),
        ("update", "clusters.cluster.karmada.io/member1", ""),
        ("update", "clusters.cluster.karmada.io/member1", "--subresource=status"),
        ("update", "leases/member1", "-n=karmada-cluster"),
        ("create", "works.work.karmada.io", "-n=karmada-es-member1"),
        ("delete", "works.work.karmada.io", "-n=karmada-es-member1"),
    ]
    denied = [
        ("get", "clusters.cluster.karmada.io/member2", ""),
        ("update", "clusters.cluster.karmada.io/member2", "--subresource=status"),
        ("create", "clusters.cluster.karmada.io", ""),
        ("list", "clusters.cluster.karmada.io", ""),
        ("get", "leases/member2", "-n=karmada-cluster"),
        ("create", "leases", "-n=karmada-cluster"),
        ("list", "works.work.karmada.io", "-n=karmada-es-member2"),
        ("get", "secrets", "-n=kube-system"),
        ("create", "clusterroles", ""),
    ]
    for verb, what, flag in allowed:
        args = ["auth", "can-i", verb, what] + ([flag] if flag else [])
        assert agent(*args, check=False).stdout.strip() == "yes", args
    for verb, what, flag in denied:
        args = ["auth", "can-i", verb, what] + ([flag] if flag else [])
        assert agent(*args, check=False).stdout.strip() == "no", args
    forbidden = agent("get", "works", "-n", "karmada-es-member2", check=False)
    assert forbidden.returncode == 1 and "Forbidden" in forbidden.stderr
    other = agent("get", "cluster", "member2", check=False)
    assert other.returncode == 1 and 'cannot get resource "clusters"' in other.stderr
    lease = agent("get", "lease", "member2", "-n", "karmada-cluster", check=False)
    assert lease.returncode == 1 and "Forbidden" in lease.stderr
    mine = agent("get", "cluster", "member1", "-o", "jsonpath={.metadata.name}")
    assert mine.stdout == "member1"


def test_refusals_create_nothing(pull_mode: PullMode, member1: ServerThread, member3: ServerThread) -> None:
    if pull_mode.cluster("member1") is None:
        pull_mode.register(member1, "member1")
    again = _register(pull_mode, member1, pull_mode.register_command(), "member1-again")
    assert again.returncode == 1 and "an agent is already installed in this cluster" in again.stderr
    fresh = member3  # a cluster nobody registered yet
    words = pull_mode.register_command()
    member = pull_mode.member_admin(fresh, "member3")
    bad_hash = [*words[:4], "--discovery-token-ca-cert-hash", "sha256:" + "0" * 64]
    refused = _register(pull_mode, fresh, bad_hash, "wrong-hash")
    assert refused.returncode == 1 and "none of the public keys" in refused.stderr and "are pinned" in refused.stderr
    # a token the control plane does not know (deleted) fails discovery
    token = words[words.index("--token") + 1]
    pull_mode.plugin("token", "delete", token.split(".")[0])
    deleted = _register(pull_mode, fresh, [*words, "--discovery-timeout=1s"], "deleted-token")
    assert deleted.returncode == 1 and "is invalid for this control plane or it has expired" in deleted.stderr
    # an expired token: its Secret is removed by the token cleaner, its signature with it
    expired = pull_mode.register_command(ttl="1s")
    wait_for(lambda: _token_gone(pull_mode, expired), timeout=20, what="expired token cleaned up")
    late = _register(pull_mode, fresh, [*expired, "--discovery-timeout=1s"], "expired-token")
    assert late.returncode == 1 and "expired" in late.stderr
    # a name held by another registration
    taken = _register(pull_mode, fresh, pull_mode.register_command(), "member1")
    assert taken.returncode == 1
    # denied either way: held by another identity, or (when earlier tests left its agent running) alive
    assert (
        'cluster name "member1" is already registered by another identity' in taken.stderr
        or 'cluster "member1" has a live agent' in taken.stderr
    )
    invalid = _register(pull_mode, fresh, pull_mode.register_command(), "Bad_Name")
    assert invalid.returncode == 1 and 'invalid cluster name "Bad_Name"' in invalid.stderr
    for name in ("wrong-hash", "deleted-token", "expired-token", "Bad_Name"):
        assert pull_mode.cluster(name) is None
    assert member("get", "secret", "karmada-kubeconfig", "-n", "karmada-system", check=False).returncode == 1
    assert member("get", "deploy", "karmada-agent", "-n", "karmada-system", check=False).returncode == 1


def _register(pull_mode: PullMode, member: ServerThread, words: list[str], name: str) -> Any:
    kubeconfig = member.kubeconfig(pull_mode.workdir, f"{name}-admin".lower().replace("_", "-"), ["system:masters"])
    return Plugin(kubeconfig)(
        *words, "--cluster-name", name, "--agent-rollout-timeout=0", "--csr-timeout=10s", check=False
    )


def _token_gone(pull_mode: PullMode, words: list[str]) -> bool:
    token_id = words[words.index("--token") + 1].split(".")[0]
    return not re.search(rf"^{token_id}\b", pull_mode.plugin("token", "list").stdout, re.MULTILINE)


def test_no_secrets_in_logs(pull_mode: PullMode, member1: ServerThread) -> None:
    if pull_mode.cluster("member1") is None:
        pull_mode.register(member1, "member1")
    secret_material = []
    for line in pull_mode.plugin("token", "list", "-o", "json").stdout.splitlines():
        assert "token-secret" not in line
    kubeconfig = pull_mode.agent_kubeconfig(member1, "member1").read_text()
    secret_material += re.findall(r"client-key-data: (\S+)", kubeconfig)
    logs = (pull_mode.controlplane.output() if pull_mode.controlplane else "") + "".join(
        agent.output() for agent in pull_mode.agents.values()
    )
    assert logs, "the programs logged something"
    for material in secret_material:
        assert material[:40] not in logs
    assert "BEGIN" not in logs and "PRIVATE KEY" not in logs
    assert not re.search(r"\b[a-z0-9]{6}\.[a-z0-9]{16}\b", logs), "no bootstrap token in logs"


def test_invalid_cluster_names_are_reported_not_served(pull_mode: PullMode) -> None:
    name = "a" * 49  # 48 characters at most: karmada-es-<name> must stay a valid namespace name
    body = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name}}
    pull_mode.admin("apply", "-f", "-", stdin=json.dumps({**body, "spec": {"syncMode": "Push"}}))

    def events() -> str:
        selector = f"involvedObject.name={name}"
        return str(pull_mode.admin("get", "events", "--field-selector", selector, "-o", "json").stdout)

    wait_for(lambda: "InvalidClusterName" in events(), what="a warning about the name")
    assert pull_mode.admin("get", "namespace", f"karmada-es-{name}", check=False).returncode == 1
    pull_mode.admin("delete", "cluster", name)


def test_agent_csrs_from_unauthorized_users_stay_pending(pull_mode: PullMode, workdir: Path) -> None:
    import base64

    from karmada.pki import client_csr, new_ec_key
    from tests.conftest import UserFactory

    pull_mode.admin(
        "create", "clusterrolebinding", "mallory-csr", "--clusterrole=system:node-bootstrapper", "--user=mallory"
    )
    mallory = UserFactory(pull_mode.server, workdir)("mallory")
    request = client_csr(new_ec_key(), "system:karmada:agent:stolen", ["system:karmada:agents"])
    csr = {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "mallory-agent"},
        "spec": {
            "request": base64.b64encode(request).decode(),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["digital signature", "client auth"],
        },
    }
    mallory("apply", "-f", "-", stdin=json.dumps(csr))

    def reason() -> str:
        selector = "involvedObject.name=mallory-agent"
        return str(pull_mode.admin("get", "events", "--field-selector", selector, "-o", "json").stdout)

    wait_for(lambda: "AgentCSRNotAuthorized" in reason(), what="the approver's reason")
    stored = json.loads(pull_mode.admin("get", "csr", "mallory-agent", "-o", "json").stdout)
    assert not (stored.get("status") or {}).get("conditions"), "neither approved nor denied"
    assert pull_mode.cluster("stolen") is None
