"""Registration refusals that must come early and clearly: an unknown token id,
a cluster name too long for the agent's certificate, and a second identity
for a member whose agent is alive (a leaked or shared token)."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, Plugin, ServerThread, start_server


def _register(pull_mode: PullMode, member: ServerThread, words: list[str], name: str, kubeconfig_user: str) -> Any:
    kubeconfig = member.kubeconfig(pull_mode.workdir, kubeconfig_user, ["system:masters"])
    args = [*words, "--cluster-name", name, "--agent-rollout-timeout=0", "--csr-timeout=20s"]
    return Plugin(kubeconfig)(*args, check=False, timeout=40)


def _with_token(words: list[str], token: str) -> list[str]:
    changed = list(words)
    changed[changed.index("--token") + 1] = token
    return changed


def test_unknown_token_id_fails_within_seconds(pull_mode: PullMode, member1: ServerThread) -> None:
    # the default discovery timeout (5m) stays; the subprocess timeout (40s) proves it is not waited out
    words = _with_token(pull_mode.register_command(), "zzzzzz.0123456789abcdef")
    result = _register(pull_mode, member1, words, "ghost", "ghost-admin")
    assert result.returncode == 1
    assert 'token id "zzzzzz" is invalid for this control plane or it has expired' in result.stderr
    waiting = '[discovery] waiting for the control plane to sign cluster-info for token id "zzzzzz"'
    assert waiting in result.stderr and waiting not in result.stdout, "progress goes to stderr"
    assert pull_mode.cluster("ghost") is None


def test_cluster_name_must_fit_the_agent_certificate(pull_mode: PullMode, member1: ServerThread) -> None:
    too_long = "a" * 44  # system:karmada:agent: (21) + 44 = 65 bytes, over X.509's 64 for a common name
    result = _register(pull_mode, member1, pull_mode.register_command(), too_long, "long-admin")
    assert result.returncode == 1
    assert f'invalid cluster name "{too_long}": must be no more than 43 characters for a pull-mode cluster' in (
        result.stderr
    )
    assert "[certificate]" not in result.stdout, "refused before any certificate request"
    csrs = json.loads(pull_mode.admin("get", "csr", "-o", "json").stdout)["items"]
    assert not [c for c in csrs if c["metadata"]["name"].startswith(too_long)]
    longest = "b" * 43
    joined = _register(pull_mode, member1, pull_mode.register_command(), longest, "longest-admin")
    assert joined.returncode == 0, joined.stderr
    assert pull_mode.cluster(longest) is not None


def _lease_age(pull_mode: PullMode, name: str) -> float:
    from karmada.timestamps import parse_time, utcnow

    lease = json.loads(pull_mode.admin("get", "lease", name, "-n", "karmada-cluster", "-o", "json").stdout)
    renewed = lease["spec"].get("renewTime")
    return (utcnow() - parse_time(renewed)).total_seconds() if renewed else 0.0


def _events(pull_mode: PullMode, reason: str) -> list[dict[str, Any]]:
    events = json.loads(pull_mode.admin("get", "events", "-A", "-o", "json").stdout)["items"]
    return [e for e in events if e.get("reason") == reason]


def test_no_second_identity_for_a_live_agent(pull_mode: PullMode, member2: ServerThread, member3: ServerThread) -> None:
    first = pull_mode.register_command()
    assert _register(pull_mode, member2, first, "live", "live2-admin").returncode == 0
    agent = pull_mode.start_agent(member2, "live")
    wait_for(lambda: pull_mode.ready("live") == "True", what="live Ready")
    registered_by = (pull_mode.cluster("live") or {})["metadata"]["annotations"]["agent.karmada.io/registered-by"]
    # the same token replayed (leaked), and a fresh token (shared with the wrong person), from another cluster
    for words in (first, pull_mode.register_command()):
        refused = _register(pull_mode, member3, words, "live", "live3-admin")
        assert refused.returncode == 1
        assert 'cluster "live" has a live agent' in refused.stderr and "unregister it first" in refused.stderr
    denied = _events(pull_mode, "AgentAlive")
    assert len(denied) == 2 and all(e["type"] == "Warning" for e in denied)
    assert all(e["involvedObject"]["kind"] == "CertificateSigningRequest" for e in denied)
    cluster = pull_mode.cluster("live") or {}
    assert cluster["metadata"]["annotations"]["agent.karmada.io/registered-by"] == registered_by
    member3_admin = pull_mode.member_admin(member3, "live3")
    assert member3_admin("get", "secret", "karmada-kubeconfig", "-n", "karmada-system", check=False).returncode == 1
    # the agent is gone and its credentials lost; once its Lease is older than the grace period (4s
    # here), the member registers again with a new token
    agent.stop()
    member2_admin = pull_mode.member_admin(member2, "live2")
    for kind, name in (("deploy", "karmada-agent"), ("secret", "karmada-kubeconfig"), ("sa", "karmada-agent-sa")):
        member2_admin("delete", kind, name, "-n", "karmada-system")
    wait_for(lambda: _lease_age(pull_mode, "live") > 4.5, timeout=20, what="the Lease to expire")
    again = pull_mode.register_command()
    back = _register(pull_mode, member2, again, "live", "live2-admin")
    assert back.returncode == 0, back.stderr
    new_holder = (pull_mode.cluster("live") or {})["metadata"]["annotations"]["agent.karmada.io/registered-by"]
    token_id = again[again.index("--token") + 1].split(".")[0]
    assert new_holder == f"system:bootstrap:{token_id}" != registered_by
    pull_mode.start_agent(member2, "live")
    wait_for(lambda: pull_mode.ready("live") == "True", what="live Ready again")


@pytest.fixture(scope="module")
def fresh_member() -> Iterator[ServerThread]:
    yield from start_server(port=0)


def test_an_agent_sees_only_its_own_csr(pull_mode: PullMode, fresh_member: ServerThread) -> None:
    name = "csr-owner"
    words = pull_mode.register_command()
    assert _register(pull_mode, fresh_member, words, name, "csr-owner-admin").returncode == 0
    agent = Kubectl(pull_mode.agent_kubeconfig(fresh_member, name), pull_mode.workdir / "cache")
    own = f"certificatesigningrequests.certificates.k8s.io/system:karmada:agent:{name}"
    answers = {
        ("create", "certificatesigningrequests.certificates.k8s.io"): "yes",
        ("get", own): "yes",
        ("delete", own): "yes",
        ("list", "certificatesigningrequests.certificates.k8s.io"): "no",
        ("watch", "certificatesigningrequests.certificates.k8s.io"): "no",
        ("get", "certificatesigningrequests.certificates.k8s.io/system:karmada:agent:other"): "no",
        ("delete", "certificatesigningrequests.certificates.k8s.io/system:karmada:agent:other"): "no",
    }
    for (verb, what), expected in answers.items():
        assert agent("auth", "can-i", verb, what, check=False).stdout.strip() == expected, (verb, what)
    listed = agent("get", "csr", check=False)
    assert listed.returncode == 1 and 'cannot list resource "certificatesigningrequests"' in listed.stderr
    watched = agent("get", "csr", "--watch", "--request-timeout=5s", check=False)
    assert watched.returncode == 1 and "Forbidden" in watched.stderr
    # the registration's own CSR (made with the bootstrap token) is not readable by the agent either
    csrs = json.loads(pull_mode.admin("get", "csr", "-o", "json").stdout)["items"]
    registration = next(c["metadata"]["name"] for c in csrs if c["metadata"]["name"].startswith(f"{name}-"))
    other = agent("get", "csr", registration, check=False)
    assert other.returncode == 1 and 'cannot get resource "certificatesigningrequests"' in other.stderr


def test_a_bootstrap_token_may_only_ask_for_a_certificate(pull_mode: PullMode) -> None:
    words = pull_mode.register_command()
    token = words[words.index("--token") + 1]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "cp",
                "cluster": {
                    "server": pull_mode.server.url,
                    "certificate-authority-data": base64.b64encode(pull_mode.server.server.ca_pem()).decode(),
                },
            }
        ],
        "users": [{"name": "bootstrap", "user": {"token": token}}],
        "contexts": [{"name": "cp", "context": {"cluster": "cp", "user": "bootstrap"}}],
        "current-context": "cp",
    }
    path = pull_mode.workdir / "bootstrap-token.kubeconfig"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(config, out)
    bootstrap = Kubectl(path, pull_mode.workdir / "cache")
    csrs = "certificatesigningrequests.certificates.k8s.io"
    answers = {("create", csrs): "yes", ("get", f"{csrs}/x"): "yes", ("list", csrs): "no", ("watch", csrs): "no"}
    for (verb, what), expected in answers.items():
        assert bootstrap("auth", "can-i", verb, what, check=False).stdout.strip() == expected, (verb, what)
    listed = bootstrap("get", "csr", check=False)
    assert listed.returncode == 1 and 'cannot list resource "certificatesigningrequests"' in listed.stderr
