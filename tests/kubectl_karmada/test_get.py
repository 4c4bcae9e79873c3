"""``kubectl karmada get`` against a sandbox with the real kubectl: the CLUSTER and
ADOPTION columns around kubectl's own columns, scopes, namespaces, selectors, every
output format, rows read from Work status, watching, and the error exits. member1 is
joined in push mode (the others register with an agent), so without the members'
kubeconfig it is read through the credentials of its Cluster, the others from their
Work status."""

from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Iterator
from functools import partial

import pytest
import yaml

from tests.examples.sandbox import DEFAULT_DIR, LocalSandbox, sandbox_at, wait_until
from tests.kubectl_karmada.inspection_helpers import members, ok, plugin, table
from tests.programs import kubectl
from tests.seeds import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    home = tmp_path_factory.mktemp("home")
    for running in sandbox_at(home, DEFAULT_DIR, "--push-members", "1"):
        listed = partial(ok, running, "get", "deploy", "nginx", "--all-clusters")
        running.karmada("apply", "-f", str(REPO_ROOT / "examples" / "static-weight"))
        wait_until(
            lambda: [r[2] for r in table(listed())[1:]] == ["2/2", "4/4"],  # noqa: B023 (called within the loop)
            "nginx 2/2 in member1 and 4/4 in member2",
            60,
            last=listed,
        )
        yield running


def test_members_table_has_cluster_and_adoption(sandbox: LocalSandbox) -> None:
    result = plugin(sandbox, "get", "deploy", "--all-clusters")
    assert result.returncode == 0
    rows = table(result.stdout)
    assert rows[0] == ["NAME", "CLUSTER", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "ADOPTION"]
    assert [(r[0], r[1], r[2], r[-1]) for r in rows[1:]] == [
        ("nginx", "member1", "2/2", "Y"),
        ("nginx", "member2", "4/4", "Y"),
    ]
    # the sandbox is the default control plane, and the plugin says so
    assert "using the sandbox's control plane" in result.stderr and "karmada.config" in result.stderr


def test_scopes(sandbox: LocalSandbox) -> None:
    karmada_only = table(ok(sandbox, "get", "deploy", "nginx"))
    assert [r[1] for r in karmada_only[1:]] == ["Karmada"] and karmada_only[1][-1] == "-"
    everything = table(ok(sandbox, "get", "deploy", "nginx", "--operation-scope", "all", "-C", "member1"))
    assert [(r[1], r[2], r[-1]) for r in everything[1:]] == [("Karmada", "6/6", "-"), ("member1", "2/2", "Y")]
    members_scope = table(ok(sandbox, "get", "deploy", "nginx", "--operation-scope", "members"))
    assert [r[1] for r in members_scope[1:]] == ["member1", "member2"]


def test_all_namespaces_and_unmanaged_objects(sandbox: LocalSandbox) -> None:
    members(sandbox, "member3", "create", "configmap", "local-only", "--from-literal=a=b")
    rows = table(ok(sandbox, "get", "configmap", "-A", "-C", "member3"))
    assert rows[0][:3] == ["NAMESPACE", "NAME", "CLUSTER"] and rows[0][-1] == "ADOPTION"
    assert rows[[r[1] for r in rows].index("local-only")][:4] == ["default", "local-only", "member3", "1"]
    assert rows[[r[1] for r in rows].index("local-only")][-1] == "N"


def test_rows_from_work_status_say_so(sandbox: LocalSandbox, tmp_path: object) -> None:
    empty = sandbox.home / "no-members.config"
    empty.write_text("{}\n")
    rows = table(ok(sandbox, "get", "deploy", "--all-clusters", "--members-kubeconfig", str(empty)))
    assert rows[0] == ["NAME", "CLUSTER", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "SOURCE", "ADOPTION"]
    assert [(r[1], r[2], r[6], r[7]) for r in rows[1:]] == [
        ("member1", "2/2", "member", "Y"),  # push: its own API server, through its Cluster's Secret
        ("member2", "4/4", "work-status", "Y"),
    ]
    obj = json.loads(
        ok(sandbox, "get", "deploy", "nginx", "-C", "member2", "--members-kubeconfig", str(empty), "-o", "json")
    )
    assert obj["kind"] == "Deployment" and obj["spec"]["replicas"] == 4 and obj["status"]["readyReplicas"] == 4
    annotations = obj["metadata"]["annotations"]
    assert annotations["resource.karmada.io/cached-from-cluster"] == "member2"
    assert annotations["inspection.karmada-py.io/source"] == "work-status"


def test_structured_outputs(sandbox: LocalSandbox) -> None:
    listed = json.loads(ok(sandbox, "get", "deploy", "--all-clusters", "-o", "json"))
    assert listed["kind"] == "List"
    assert [
        (i["metadata"]["annotations"]["resource.karmada.io/cached-from-cluster"], i["spec"]["replicas"])
        for i in listed["items"]
    ] == [
        ("member1", 2),
        ("member2", 4),
    ]
    assert ok(sandbox, "get", "deploy", "-C", "member1", "-o", "name") == "deployment.apps/nginx\n"
    cluster = "{.metadata.annotations['resource.karmada.io/cached-from-cluster']}"
    path = f"jsonpath={{range .items[*]}}{cluster}={{.spec.replicas}} {{end}}"
    assert ok(sandbox, "get", "deploy", "--all-clusters", "-o", path).split() == ["member1=2", "member2=4"]
    assert "kind: Deployment" in ok(sandbox, "get", "deploy", "nginx", "-C", "member1", "-o", "yaml")
    wide = table(ok(sandbox, "get", "deploy", "--all-clusters", "-o", "wide"))
    assert "SOURCE" in wide[0] and {r[wide[0].index("SOURCE")] for r in wide[1:]} == {"member"}


def test_selectors_and_empty_results(sandbox: LocalSandbox) -> None:
    pods = table(ok(sandbox, "get", "pods", "-l", "app=nginx", "-C", "member1,member2"))
    assert pods[0] == ["NAME", "CLUSTER", "READY", "STATUS", "RESTARTS", "AGE"]  # ADOPTION is wide-only for pods
    assert sorted(r[1] for r in pods[1:]) == ["member1"] * 2 + ["member2"] * 4
    assert "ADOPTION" in table(ok(sandbox, "get", "pods", "-l", "app=nginx", "-C", "member1", "-o", "wide"))[0]
    none = plugin(sandbox, "get", "pods", "-l", "app=other", "--all-clusters")
    assert none.returncode == 0 and none.stdout == "" and "No resources found in default namespace." in none.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("get", "foo", "--all-clusters"), 'error: the server doesn\'t have a resource type "foo"'),
        (("get", "deploy", "-C", "nope"), "error: clusters don't exist: nope"),
        (
            ("get", "deploy", "missing", "--all-clusters"),
            'Error from server (NotFound): deployments.apps "missing" not found',
        ),
        (("get", "deploy", "-o", "table"), 'error: unable to match a printer suitable for the output format "table"'),
        (("get", "pods", "-l", "a in b", "-C", "member1"), "error: unable to parse requirement"),
    ],
)
def test_errors_exit_1(sandbox: LocalSandbox, args: tuple[str, ...], message: str) -> None:
    result = plugin(sandbox, *args)
    assert result.returncode == 1 and message in result.stderr, result.stderr


def test_ignore_not_found(sandbox: LocalSandbox) -> None:
    result = plugin(sandbox, "get", "deploy", "missing", "--all-clusters", "--ignore-not-found")
    assert result.returncode == 0 and result.stdout == ""


def test_watch_streams_changes(sandbox: LocalSandbox) -> None:
    watcher = subprocess.Popen(
        [kubectl(), "karmada", "get", "deploy", "nginx", "-C", "member1", "-w"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=sandbox.env,
    )
    try:
        assert watcher.stdout is not None
        header = watcher.stdout.readline().split()
        assert header[:3] == ["NAME", "CLUSTER", "READY"]
        assert watcher.stdout.readline().split()[:3] == ["nginx", "member1", "2/2"]
        sandbox.karmada("scale", "deploy", "nginx", "--replicas=3")
        deadline = time.monotonic() + 45
        seen = []
        while time.monotonic() < deadline:
            line = watcher.stdout.readline().split()
            seen.append(line)
            if line[:3] == ["nginx", "member1", "1/1"]:
                break
        else:
            raise AssertionError(f"no 1/1 row for member1 while watching: {seen}")
    finally:
        watcher.terminate()
        watcher.wait(10)
        if watcher.stdout is not None:
            watcher.stdout.close()
        sandbox.karmada("scale", "deploy", "nginx", "--replicas=6")


def test_a_joined_push_member_is_read_directly(sandbox: LocalSandbox) -> None:
    """member1, joined by the sandbox in push mode, read as the control plane reaches it."""
    cluster = json.loads(sandbox.karmada("get", "cluster", "member1", "-o", "json"))
    assert cluster["spec"]["syncMode"] == "Push"
    empty = sandbox.home / "no-members.config"
    empty.write_text("{}\n")
    # a member-only object: no Work reports it, so only a direct read can show it
    members(sandbox, "member1", "create", "configmap", "only-in-member1", "--from-literal=k=v")
    rows = table(
        ok(sandbox, "get", "cm", "only-in-member1", "-C", "member1", "--members-kubeconfig", str(empty), "-o", "wide")
    )
    assert (rows[1][0], rows[1][1], rows[1][-2], rows[1][-1]) == ("only-in-member1", "member1", "member", "N")
    obj = json.loads(
        ok(sandbox, "get", "deploy", "nginx", "-C", "member1", "--members-kubeconfig", str(empty), "-o", "json")
    )
    annotations = obj["metadata"]["annotations"]
    assert annotations["inspection.karmada-py.io/source"] == "member" and "uid" in obj["metadata"]
    pods = partial(ok, sandbox, "get", "pods", "-l", "app=nginx", "--all-clusters", "--members-kubeconfig", str(empty))
    # pods of pull members are not in their Work status; member1's own are (an earlier test scaled: let it settle)
    wait_until(lambda: sorted(r[1] for r in table(pods())[1:]) == ["member1"] * 2, "member1's 2 pods", 45, last=pods)
    # watched directly too: no SOURCE column (every row from a member), and a change no Work reports shows
    command = [kubectl(), "karmada", "get", "deploy", "nginx", "-C", "member1", "-w"]
    watcher = subprocess.Popen(
        [*command, "--members-kubeconfig", str(empty)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=sandbox.env,
    )
    try:
        assert watcher.stdout is not None
        header = watcher.stdout.readline().split()
        assert header[:3] == ["NAME", "CLUSTER", "READY"] and header[-1] == "ADOPTION" and "SOURCE" not in header
        assert watcher.stdout.readline().split()[:3] == ["nginx", "member1", "2/2"]
        members(sandbox, "member1", "annotate", "deploy", "nginx", "seen=yes")
        line = watcher.stdout.readline().split()
        assert line[:3] == ["nginx", "member1", "2/2"] and line[-1] == "Y"
    finally:
        watcher.terminate()
        watcher.wait(10)
        if watcher.stdout is not None:
            watcher.stdout.close()
        members(sandbox, "member1", "delete", "configmap", "only-in-member1")


def test_push_cluster_read_through_its_secret(sandbox: LocalSandbox) -> None:
    """A Push cluster is read as Karmada's control plane reaches it: apiEndpoint + secretRef."""
    config = yaml.safe_load((sandbox.dir / "members.config").read_text())
    entry = next(c["cluster"] for c in config["clusters"] if c["name"] == "member3")
    members(sandbox, "member3", "create", "serviceaccount", "karmada-reader")
    members(
        sandbox, "member3", "create", "clusterrolebinding", "karmada-reader",
        "--clusterrole=view", "--serviceaccount=default:karmada-reader",
    )  # fmt: skip
    members(sandbox, "member3", "create", "configmap", "push-visible", "--from-literal=k=v")
    token = members(sandbox, "member3", "create", "token", "karmada-reader").strip()
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "pushed", "namespace": "karmada-cluster"},
        "data": {"token": base64.b64encode(token.encode()).decode(), "caBundle": entry["certificate-authority-data"]},
    }
    cluster = {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "pushed"},
        "spec": {
            "syncMode": "Push",
            "apiEndpoint": entry["server"],
            "secretRef": {"namespace": "karmada-cluster", "name": "pushed"},
        },
    }
    empty = sandbox.home / "no-members.config"
    empty.write_text("{}\n")
    manifest = sandbox.home / "pushed.json"
    manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [secret, cluster]}))
    sandbox.karmada("apply", "-f", str(manifest))
    try:
        rows = table(
            ok(sandbox, "get", "cm", "push-visible", "-C", "pushed", "--members-kubeconfig", str(empty), "-o", "wide")
        )
        assert rows[0][:2] == ["NAME", "CLUSTER"] and rows[0][-2:] == ["SOURCE", "ADOPTION"]
        assert (rows[1][0], rows[1][1], rows[1][-2], rows[1][-1]) == ("push-visible", "pushed", "member", "N")
    finally:
        sandbox.karmada("delete", "cluster", "pushed", "--wait=false")


def test_several_types_print_one_table_each(sandbox: LocalSandbox) -> None:
    out = ok(sandbox, "get", "deploy,cm", "-C", "member1")
    deployments, configmaps = out.split("\n\n")
    assert [r[:2] for r in table(deployments)] == [["NAME", "CLUSTER"], ["deployment.apps/nginx", "member1"]]
    assert table(configmaps)[0][:3] == ["NAME", "CLUSTER", "DATA"]
    assert "configmap/kube-root-ca.crt" in {r[0] for r in table(configmaps)}
    listed = json.loads(ok(sandbox, "get", "deploy,cm", "-C", "member1", "-o", "json"))
    assert {i["kind"] for i in listed["items"]} == {"Deployment", "ConfigMap"}
    refused = plugin(sandbox, "get", "deploy,cm", "-C", "member1", "-w")
    assert refused.returncode == 1 and "error: watch is only supported on individual resources" in refused.stderr


def test_watch_rows_from_work_status(sandbox: LocalSandbox) -> None:
    empty = sandbox.home / "no-members.config"
    empty.write_text("{}\n")
    command = [
        kubectl(),
        "karmada",
        "get",
        "deploy",
        "nginx",
        "-C",
        "member2",
        "-w",
        "--members-kubeconfig",
        str(empty),
    ]
    # an earlier test scaled back to 6: start from the settled state
    settled = ["get", "deploy", "nginx", "-C", "member2", "--members-kubeconfig", str(empty)]
    wait_until(lambda: table(ok(sandbox, *settled))[1][2] == "4/4", "member2 back at 4/4", 45)
    watcher = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=sandbox.env)
    try:
        assert watcher.stdout is not None
        assert watcher.stdout.readline().split()[-2:] == ["SOURCE", "ADOPTION"]
        first = watcher.stdout.readline().split()
        assert first[:3] == ["nginx", "member2", "4/4"] and first[-2:] == ["work-status", "Y"]
        sandbox.karmada("scale", "deploy", "nginx", "--replicas=3")
        deadline = time.monotonic() + 45
        seen = []
        while time.monotonic() < deadline:
            line = watcher.stdout.readline().split()
            seen.append(line)
            if line[:3] == ["nginx", "member2", "2/2"]:
                assert line[-2:] == ["work-status", "Y"]
                break
        else:
            raise AssertionError(f"no 2/2 row for member2 while watching its Work: {seen}")
    finally:
        watcher.terminate()
        watcher.wait(10)
        if watcher.stdout is not None:
            watcher.stdout.close()
        sandbox.karmada("scale", "deploy", "nginx", "--replicas=6")


def test_an_unreachable_member_fails_alone(sandbox: LocalSandbox) -> None:
    dead = sandbox.home / "dead-member1.config"
    dead.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: member1\n"
        "clusters: [{name: member1, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "contexts: [{name: member1, context: {cluster: member1, user: u}}]\nusers: [{name: u, user: {token: x}}]\n"
    )
    result = plugin(sandbox, "get", "deploy", "nginx", "-C", "member1,member2", "--members-kubeconfig", str(dead))
    assert result.returncode == 1
    assert "error: cluster(member1): " in result.stderr
    rows = table(result.stdout)
    assert [(r[1], r[-2]) for r in rows[1:]] == [("member2", "work-status")]  # member2 has no context there
