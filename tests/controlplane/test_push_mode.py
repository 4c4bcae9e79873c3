"""Push mode end to end with the real programs and the real kubectl: member1
joined in Push mode next to member2 registered in Pull mode, the README's
static-weight example split 1:2 over both, the same status and health
either way, a member's killed localkube (the real program, with a data
directory) turning Ready=False with the not-ready taint and, restarted,
coming back with its join token still good, and unjoin cleaning up the
control plane and the member."""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from localkube.process import LocalKubeProcess
from localkube.simulation import SimulationConfig
from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread, start_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "static-weight"


# members that run their workloads (localkube's simulation), so status and health have something to say
@pytest.fixture(scope="module")
def member1() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix="m1", workloads=True))


@pytest.fixture(scope="module")
def member2() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix="m2", workloads=True))


def _json(kubectl: Kubectl, *args: str) -> dict[str, Any] | None:
    result = kubectl(*args, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def _replicas(kubectl: Kubectl) -> int | None:
    deployment = _json(kubectl, "get", "deploy", "nginx")
    return None if deployment is None else int(deployment["spec"]["replicas"])


def test_join_refuses_what_it_must(pull_mode: PullMode, member1: ServerThread, workdir: Path) -> None:
    unreachable = workdir / "unreachable.kubeconfig"
    config = yaml.safe_load(member1.kubeconfig(workdir, "member1-admin", ["system:masters"]).read_text())
    config["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    unreachable.write_text(json.dumps(config))
    result = pull_mode.plugin("join", "member1", "--cluster-kubeconfig", str(unreachable), check=False)
    assert result.returncode != 0 and "cannot reach the member cluster at https://127.0.0.1:1" in result.stderr
    assert pull_mode.cluster("member1") is None
    assert pull_mode.member_admin(member1, "member1")("get", "ns", "karmada-cluster", check=False).returncode != 0
    dry = pull_mode.join(member1, "member1", "--dry-run", "-o", "json")
    kinds = [o["kind"] for o in json.loads(dry.stdout)["items"]]
    # the controller manager's account and role, then the impersonator's impersonate-only role
    in_member = ["Namespace", "ServiceAccount", "ServiceAccount", *["ClusterRole", "ClusterRoleBinding"] * 2]
    assert kinds == [*in_member, "Namespace", "Secret", "Secret", "Cluster"]
    assert pull_mode.cluster("member1") is None
    bad = pull_mode.join(member1, "Member_1", check=False)
    assert bad.returncode != 0 and 'invalid cluster name "Member_1"' in bad.stderr


def test_static_weight_over_a_push_and_a_pull_member(
    pull_mode: PullMode, member1: ServerThread, member2: ServerThread, workdir: Path
) -> None:
    pull_mode.add_member(member1, "member1", "push")
    pull_mode.add_member(member2, "member2", "pull")
    wait_for(lambda: pull_mode.ready("member1") == "True", timeout=40, what="member1 (push) Ready")
    wait_for(lambda: pull_mode.ready("member2") == "True", timeout=40, what="member2 (pull) Ready")
    push, pull = pull_mode.cluster("member1") or {}, pull_mode.cluster("member2") or {}
    assert push["spec"]["syncMode"] == "Push" and pull["spec"]["syncMode"] == "Pull"
    assert push["spec"]["apiEndpoint"] == member1.url
    assert push["spec"]["secretRef"] == {"namespace": "karmada-cluster", "name": "member1"}
    assert push["spec"]["impersonatorSecretRef"] == {"namespace": "karmada-cluster", "name": "member1-impersonator"}
    secret = _json(pull_mode.admin, "get", "secret", "member1", "-n", "karmada-cluster") or {}
    assert sorted(secret["data"]) == ["caBundle", "token"]
    assert secret["metadata"]["ownerReferences"][0]["uid"] == push["metadata"]["uid"]
    # the same status either way: version, API enablements, node and resource summaries, conditions
    wait_for(lambda: (pull_mode.cluster("member1") or {}).get("status", {}).get("nodeSummary"), what="summary")
    push_status, pull_status = (
        (pull_mode.cluster("member1") or {})["status"],
        (pull_mode.cluster("member2") or {})["status"],
    )
    assert sorted(push_status) == sorted(pull_status)
    assert push_status["kubernetesVersion"] == pull_status["kubernetesVersion"]
    assert push_status["apiEnablements"] == pull_status["apiEnablements"]
    assert sorted(c["type"] for c in push_status["conditions"]) == sorted(c["type"] for c in pull_status["conditions"])
    ready = next(c for c in push_status["conditions"] if c["type"] == "Ready")
    assert (ready["reason"], ready["message"]) == ("ClusterReady", "cluster is healthy and ready to accept workloads")
    lease = _json(pull_mode.admin, "get", "lease", "member1", "-n", "karmada-cluster") or {}
    assert lease["spec"]["holderIdentity"] == "member1"
    # a name already taken, in either mode, is refused before anything is created
    for name in ("member1", "member2"):
        again = pull_mode.join(member1 if name == "member1" else member2, name, check=False)
        assert again.returncode != 0 and f"the cluster name {name} has been registered" in again.stderr

    pull_mode.admin("apply", "-f", str(EXAMPLE))
    member1_admin, member2_admin = (
        pull_mode.member_admin(member1, "member1"),
        pull_mode.member_admin(member2, "member2"),
    )
    wait_for(lambda: _replicas(member1_admin) == 2, timeout=30, what="member1 (push) nginx with 2 replicas")
    wait_for(lambda: _replicas(member2_admin) == 4, timeout=30, what="member2 (pull) nginx with 4 replicas")

    def summed() -> bool:
        status = (_json(pull_mode.admin, "get", "deploy", "nginx") or {}).get("status") or {}
        return status.get("readyReplicas") == 6

    wait_for(summed, timeout=30, what="the template's status summed from both members")
    work = _json(pull_mode.admin, "get", "work", "-n", "karmada-es-member1") or {}
    statuses = work["items"][0]["status"]
    assert next(c for c in statuses["conditions"] if c["type"] == "Applied")["reason"] == "AppliedSuccessful"
    assert statuses["manifestStatuses"][0]["health"] == "Healthy"
    # drift in the push member is corrected by the control plane
    member1_admin("scale", "deploy", "nginx", "--replicas=5")
    wait_for(lambda: _replicas(member1_admin) == 2, timeout=20, what="drift corrected in member1")
    pull_mode.admin("scale", "deploy", "nginx", "--replicas=3")
    wait_for(lambda: _replicas(member1_admin) == 1, timeout=20, what="member1 scaled to 1")

    # unjoin: the Works' objects leave the member, then the Cluster, its Secrets and join's access objects
    member_kubeconfig = member1.kubeconfig(workdir, "member1-admin", ["system:masters"])
    out = pull_mode.plugin("unjoin", "member1", "--cluster-kubeconfig", str(member_kubeconfig)).stdout
    assert "cluster(member1) is unjoined successfully" in out
    assert pull_mode.cluster("member1") is None
    assert _json(pull_mode.admin, "get", "lease", "member1", "-n", "karmada-cluster") is None
    assert member1_admin("get", "deploy", "nginx", check=False).returncode != 0
    assert _json(pull_mode.admin, "get", "secret", "member1", "-n", "karmada-cluster") is None
    assert _json(member1_admin, "get", "sa", "karmada-member1", "-n", "karmada-cluster") is None
    assert _json(member1_admin, "get", "clusterrole", "karmada-controller-manager:karmada-member1") is None
    # a pull cluster is not unjoined
    refused = pull_mode.plugin("unjoin", "member2", check=False)
    assert refused.returncode != 0 and "is in Pull mode" in refused.stderr


def test_a_killed_push_member_turns_not_ready_comes_back_and_can_be_unjoined_dead(
    pull_mode: PullMode, workdir: Path
) -> None:
    """The real ``localkube serve`` with a data directory, killed and restarted on the same
    port: the join token stored on the control plane still works (the member kept its
    service-account key), what changed meanwhile is applied, nothing is lost."""
    data, kubeconfig = workdir / "member4-data", workdir / "member4-admin.kubeconfig"
    member = LocalKubeProcess(kubeconfig, data_dir=data, log=workdir / "member4.log")
    port = int(member.start().rsplit(":", 1)[1])
    try:
        in_member = Kubectl(kubeconfig, workdir / "cache")
        pull_mode.plugin("join", "member4", "--cluster-kubeconfig", str(kubeconfig))
        wait_for(lambda: pull_mode.ready("member4") == "True", timeout=40, what="member4 Ready")
        policy = _namespace_policy("member4", ["shop", "late"])
        policy["spec"]["resourceSelectors"].append({"apiVersion": "v1", "kind": "ConfigMap", "name": "settings"})
        pull_mode.admin("apply", "-f", "-", stdin=json.dumps(policy))
        pull_mode.admin("create", "namespace", "shop")
        pull_mode.admin("create", "configmap", "settings", "--from-literal=level=1")
        wait_for(lambda: in_member("get", "ns", "shop", check=False).returncode == 0, what="shop in member4")
        wait_for(lambda: _data(in_member, "settings") == {"level": "1"}, what="settings level=1 in member4")
        secret = _json(pull_mode.admin, "get", "secret", "member4", "-n", "karmada-cluster") or {}

        member.kill()
        wait_for(lambda: pull_mode.ready("member4") == "False", timeout=20, what="member4 not Ready")
        cluster = pull_mode.cluster("member4") or {}
        ready = next(c for c in cluster["status"]["conditions"] if c["type"] == "Ready")
        assert (ready["reason"], ready["message"]) == ("ClusterNotReachable", "cluster is not reachable")
        # the cluster controller's taint for scheduling (NoExecute ones come from ClusterTaintPolicies)
        wait_for(lambda: ("cluster.karmada.io/not-ready", "NoSchedule") in _taints(pull_mode, "member4"), what="taint")
        others = [c["metadata"]["name"] for c in (_json(pull_mode.admin, "get", "clusters") or {})["items"]]
        assert all(pull_mode.ready(o) == "True" for o in others if o != "member4"), "the others are not held up"
        # what changes while the member is away is applied when it is back
        pull_mode.admin("create", "namespace", "late")
        pull_mode.admin("patch", "configmap", "settings", "--type=merge", "-p", '{"data":{"level":"2"}}')

        member = LocalKubeProcess(kubeconfig, data_dir=data, port=port, log=workdir / "member4.log")
        member.start()
        wait_for(lambda: pull_mode.ready("member4") == "True", timeout=40, what="member4 Ready again")
        wait_for(lambda: not _taints(pull_mode, "member4"), what="member4 untainted")
        wait_for(lambda: in_member("get", "ns", "late", check=False).returncode == 0, what="late in member4")
        wait_for(lambda: _data(in_member, "settings") == {"level": "2"}, what="settings level=2 in member4")
        assert in_member("get", "ns", "shop", check=False).returncode == 0
        # with the credentials join stored, unchanged: the restarted member still accepts its token
        after = _json(pull_mode.admin, "get", "secret", "member4", "-n", "karmada-cluster") or {}
        assert after["metadata"]["resourceVersion"] == secret["metadata"]["resourceVersion"]
        work = _json(pull_mode.admin, "get", "work", "-n", "karmada-es-member4") or {}
        applied = [next(c for c in w["status"]["conditions"] if c["type"] == "Applied") for w in work["items"]]
        assert {c["status"] for c in applied} == {"True"}, applied

        # gone for good: nobody can run the Works' finalizers, the control plane releases them
        member.kill()
        wait_for(lambda: pull_mode.ready("member4") == "False", timeout=20, what="member4 not Ready")
        out = pull_mode.plugin("unjoin", "member4").stdout
        assert "cluster(member4) is unjoined successfully" in out
        assert pull_mode.cluster("member4") is None
    finally:
        member.stop()
        pull_mode.admin("delete", "configmap", "settings", "--ignore-not-found")


def _data(kubectl: Kubectl, name: str) -> Any:
    return (_json(kubectl, "get", "configmap", name) or {}).get("data")


def _taints(pull_mode: PullMode, name: str) -> list[tuple[str, str]]:
    cluster = pull_mode.cluster(name) or {}
    return [(t["key"], t["effect"]) for t in (cluster.get("spec") or {}).get("taints") or []]


def _namespace_policy(cluster: str, names: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "ClusterPropagationPolicy",
        "metadata": {"name": "namespaces-to-" + cluster},
        "spec": {
            "resourceSelectors": [{"apiVersion": "v1", "kind": "Namespace", "name": n} for n in names],
            "placement": {"clusterAffinity": {"clusterNames": [cluster]}},
        },
    }


def test_a_push_cluster_never_uses_a_secret_it_does_not_own(pull_mode: PullMode, workdir: Path) -> None:
    """A Cluster whose secretRef names a Secret not owned by it (another member's, or one made by
    hand) gets an UnusableCredentials event, and its apiEndpoint never sees a connection."""
    connections: list[object] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connections.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    token = base64.b64encode(b"another-members-token").decode()
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "not-thief", "namespace": "karmada-cluster"},
        "data": {"token": token},
    }
    cluster = {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "thief"},
        "spec": {
            "syncMode": "Push",
            "apiEndpoint": f"https://127.0.0.1:{listener.getsockname()[1]}",
            "secretRef": {"namespace": "karmada-cluster", "name": "not-thief"},
        },
    }
    try:
        pull_mode.admin("create", "namespace", "karmada-cluster", check=False)
        pull_mode.admin("apply", "-f", "-", stdin=json.dumps(secret))
        pull_mode.admin("apply", "-f", "-", stdin=json.dumps(cluster))

        def refused() -> str:
            events = _json(pull_mode.admin, "get", "events", "-A", "--field-selector", "involvedObject.name=thief")
            for event in (events or {}).get("items") or []:
                if event.get("reason") == "UnusableCredentials":
                    return str(event["message"])
            return ""

        message = wait_for(refused, timeout=30, what="the UnusableCredentials event")
        assert message.startswith(
            "Secret karmada-cluster/not-thief is not this cluster's: "
            "it has no controller ownerReference to Cluster thief"
        )
        assert connections == []
    finally:
        stop.set()
        thread.join()
        listener.close()
        pull_mode.admin("delete", "cluster", "thief", "--ignore-not-found")
        pull_mode.admin("delete", "secret", "not-thief", "-n", "karmada-cluster", "--ignore-not-found")
