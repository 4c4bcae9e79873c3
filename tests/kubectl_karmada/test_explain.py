"""``kubectl karmada explain`` against the sandbox, on the seed scenarios of ``examples/``:
the tainted cluster names its taint, the affinity miss names the term and the label, the
static split shows weights and replicas, the override shows the rewritten image; errors
exit 1 with kubectl's ``error: ...``."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.examples.sandbox import LocalSandbox, sandbox_at
from tests.examples.scenarios import _await_replicas, _clean
from tests.programs import kubectl

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSandbox]:
    yield from sandbox_at(tmp_path_factory.mktemp("home"))


def _explain(sandbox: LocalSandbox, *args: str) -> subprocess.CompletedProcess[str]:
    kubeconfig = Path(sandbox.dir) / "karmada.config"
    return subprocess.run(
        [kubectl(), "karmada", "explain", *args, "--kubeconfig", str(kubeconfig)],
        capture_output=True,
        text=True,
        env=sandbox.env,
        timeout=60,
        check=False,
    )


def _ok(sandbox: LocalSandbox, *args: str) -> str:
    result = _explain(sandbox, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _run(sandbox: LocalSandbox, folder: str) -> None:
    sandbox.run_block(folder, "Setup")
    sandbox.run_block(folder, "Run")


def test_tainted_cluster_names_the_taint(sandbox: LocalSandbox) -> None:
    try:
        _run(sandbox, "cluster-tolerations")
        _await_replicas(sandbox, {"member1": 6, "member2": None, "member3": 6})
        text = _ok(sandbox, "deployment/nginx")
        member2 = next(line for line in text.splitlines() if line.strip().startswith("member2"))
        assert "Filtered" in member2 and "untolerated taint {maintenance=true:NoSchedule}" in member2
        assert "Policy:       PropagationPolicy default/nginx-propagation" in text
        data = json.loads(_ok(sandbox, "deploy", "nginx", "-o", "json"))
        rows = {r["name"]: r for r in data["clusters"]}
        assert rows["member1"]["result"] == "Selected" and rows["member1"]["replicas"] == 6
        assert rows["member2"]["filters"] == [
            {"plugin": "TaintToleration", "reason": "cluster(s) had untolerated taint {maintenance=true:NoSchedule}"}
        ]
        assert data["decision"]["stale"] is False
    finally:
        _clean(sandbox, "cluster-tolerations")


def test_affinity_miss_names_the_term_and_the_label(sandbox: LocalSandbox) -> None:
    try:
        _run(sandbox, "cluster-affinity-labels")
        _await_replicas(sandbox, {"member1": 6, "member2": 6, "member3": None})
        text = _ok(sandbox, "deployments.apps/nginx", "-n", "default")
        assert "affinity clusterAffinity needs labelSelector env=prod, cluster has no env" in text
        data = json.loads(_ok(sandbox, "deployment/nginx", "-o", "json"))
        member3 = {r["name"]: r for r in data["clusters"]}["member3"]
        assert member3["affinityMisses"] == [
            {"term": "clusterAffinity", "field": "labelSelector", "requirement": "env=prod", "key": "env"}
        ]
    finally:
        _clean(sandbox, "cluster-affinity-labels")


def test_static_split_shows_weights_and_replicas(sandbox: LocalSandbox) -> None:
    try:
        _run(sandbox, "static-weight")
        _await_replicas(sandbox, {"member1": 2, "member2": 4, "member3": None})
        data = json.loads(_ok(sandbox, "deployment/nginx", "-o", "json"))
        rows = {r["name"]: r for r in data["clusters"]}
        assert (rows["member1"]["weight"], rows["member1"]["replicas"]) == (1, 2)
        assert (rows["member2"]["weight"], rows["member2"]["replicas"]) == (2, 4)
        assert data["binding"]["replicas"] == 6
        text = _ok(sandbox, "deployment/nginx")
        member2 = next(line for line in text.splitlines() if line.strip().startswith("member2"))
        assert member2.split()[:4] == ["member2", "Selected", "4", "2"]
        yaml_out = _ok(sandbox, "deployment/nginx", "-o", "yaml")
        assert "weight: 2" in yaml_out
    finally:
        _clean(sandbox, "static-weight")


def test_override_shows_the_rewritten_image(sandbox: LocalSandbox) -> None:
    try:
        _run(sandbox, "override-per-region")
        _await_replicas(sandbox, {"member1": 6, "member2": 6, "member3": None})
        data = json.loads(_ok(sandbox, "deployment/nginx", "-o", "json"))
        assert data["overrides"]["member1"] == [
            {
                "policy": "ClusterOverridePolicy nginx-override",
                "rule": 0,
                "overrider": "imageOverrider",
                "path": "/spec/template/spec/containers/0/image",
                "component": "Registry",
                "operator": "add",
                "value": "registry.cn-east-1.example.com/nginx:1.25",
            }
        ]
        assert "member2" not in data["overrides"]
        assert "/spec/template/spec/containers/0/image = registry.cn-east-1.example.com/nginx:1.25" in _ok(
            sandbox, "deployment/nginx"
        )
    finally:
        _clean(sandbox, "override-per-region")


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (("nosuchtype/x",), 'error: the server doesn\'t have a resource type "nosuchtype"\n'),
        (("deployment/absent",), 'Error from server (NotFound): deployments.apps "absent" not found\n'),
        (("deployment",), "error: you must specify the name of the resource to explain, as TYPE/NAME or TYPE NAME\n"),
        (("deployment/x", "-o", "wide"), "error: unable to match a printer suitable for the output format"),
    ],
)
def test_errors_exit_1_as_kubectl(sandbox: LocalSandbox, args: tuple[str, ...], stderr: str) -> None:
    result = _explain(sandbox, *args)
    assert result.returncode == 1
    assert result.stderr.startswith(stderr) and result.stdout == ""


def test_a_template_no_policy_claims(sandbox: LocalSandbox) -> None:
    sandbox.karmada("create", "configmap", "lonely", "--from-literal=a=b")
    try:
        text = _ok(sandbox, "cm/lonely")
        assert "Policy:       <none>" in text and "Binding:      <none>" in text
    finally:
        sandbox.karmada("delete", "configmap", "lonely")
