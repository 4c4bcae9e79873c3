"""bindingStatus and namespace sync with a real agent and a member that runs
workloads (localkube's simulation): a control-plane namespace appears in the
member and goes with it, and a Deployment's Work rolled out in the member makes
``kubectl rollout status`` against the control plane finish."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from karmada.api.names import work_name
from localkube.simulation import SimulationConfig
from tests.pullmode import PullMode, wait_for
from tests.servers import Kubectl, ServerThread, start_server

CONTROLLERS = "--controllers=cluster,agentcsrapproving,bindingStatus,namespace"


@pytest.fixture(scope="module")
def member() -> Iterator[ServerThread]:
    yield from start_server(port=0, simulation=SimulationConfig(nodes=1, node_prefix="e2e", workloads=True))


@pytest.fixture(scope="module")
def env(localkube: ServerThread, workdir: Path, member: ServerThread) -> Iterator[tuple[PullMode, Kubectl]]:
    pull = PullMode(localkube, workdir).install()
    pull.start_controlplane(CONTROLLERS, "--leader-elect=false")
    try:
        pull.register(member, "member1")
        pull.start_agent(member, "member1")
        wait_for(lambda: pull.ready("member1") == "True", timeout=60, what="member1 Ready")
        yield pull, pull.member_admin(member, "member1")
    finally:
        pull.stop()


def exists(kubectl: Kubectl, *args: str) -> bool:
    return bool(kubectl("get", *args, check=False).returncode == 0)


def test_namespace_comes_and_goes_in_the_member(env: tuple[PullMode, Kubectl]) -> None:
    pull, member = env
    pull.admin("create", "namespace", "scratch")
    wait_for(lambda: exists(member, "namespace", "scratch"), timeout=30, what="namespace in the member")
    labels = json.loads(member("get", "namespace", "scratch", "-o", "json").stdout)["metadata"]["labels"]
    assert labels["karmada.io/managed"] == "true"
    pull.admin("delete", "namespace", "scratch")
    wait_for(lambda: not exists(member, "namespace", "scratch"), timeout=30, what="namespace gone from the member")
    work = work_name("Namespace", "scratch")
    wait_for(lambda: not exists(pull.admin, "work", work, "-n", "karmada-es-member1"), what="namespace Work gone")


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }


def test_rollout_status_on_the_control_plane_follows_the_member(env: tuple[PullMode, Kubectl]) -> None:
    pull, member = env
    pull.admin("create", "namespace", "shop")
    wait_for(lambda: exists(member, "namespace", "shop"), timeout=30, what="namespace shop in the member")
    pull.admin("apply", "-f", "-", stdin=json.dumps(deployment()))
    template = json.loads(pull.admin("get", "deploy", "web", "-n", "shop", "-o", "json").stdout)
    binding_id = str(uuid.uuid4())
    binding = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": "web-deployment",
            "namespace": "shop",
            "labels": {"resourcebinding.karmada.io/permanent-id": binding_id},
        },
        "spec": {
            "resource": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": "shop",
                "name": "web",
                "uid": template["metadata"]["uid"],
            },
            "replicas": 2,
            "clusters": [{"name": "member1", "replicas": 2}],
        },
    }
    pull.admin("apply", "-f", "-", stdin=json.dumps(binding))
    pull.admin(
        "patch",
        "resourcebinding",
        "web-deployment",
        "-n",
        "shop",
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": {"lastScheduledTime": "2024-05-01T00:00:00Z"}}),
    )
    # the Work as the binding controller writes it (reference 6.2, 6.3)
    name, space = work_name("Deployment", "web", "shop"), "karmada-es-member1"
    manifest = deployment()
    manifest["metadata"]["labels"] = {
        "karmada.io/managed": "true",
        "resourcebinding.karmada.io/permanent-id": binding_id,
    }
    manifest["metadata"]["annotations"] = {
        "resourcetemplate.karmada.io/generation": str(template["metadata"]["generation"]),
        "resourcetemplate.karmada.io/uid": template["metadata"]["uid"],
        "resourcebinding.karmada.io/namespace": "shop",
        "resourcebinding.karmada.io/name": "web-deployment",
        "work.karmada.io/name": name,
        "work.karmada.io/namespace": space,
    }
    work = {
        "apiVersion": "work.karmada.io/v1alpha1",
        "kind": "Work",
        "metadata": {
            "name": name,
            "namespace": space,
            "finalizers": ["karmada.io/execution-controller"],
            "labels": {"resourcebinding.karmada.io/permanent-id": binding_id},
            "annotations": {
                "resourcebinding.karmada.io/namespace": "shop",
                "resourcebinding.karmada.io/name": "web-deployment",
            },
        },
        "spec": {"workload": {"manifests": [manifest]}},
    }
    pull.admin("apply", "-f", "-", stdin=json.dumps(work))
    result = pull.admin("rollout", "status", "deploy/web", "-n", "shop", "--timeout=60s", timeout=90, check=False)
    assert result.returncode == 0, result.stderr
    assert 'deployment "web" successfully rolled out' in result.stdout
    status = json.loads(pull.admin("get", "deploy", "web", "-n", "shop", "-o", "json").stdout)["status"]
    assert status["observedGeneration"] == 1 and status["availableReplicas"] == 2
    rb = json.loads(pull.admin("get", "rb", "web-deployment", "-n", "shop", "-o", "json").stdout)
    fully = next(c for c in rb["status"]["conditions"] if c["type"] == "FullyApplied")
    assert fully["status"] == "True"
    assert rb["status"]["aggregatedStatus"][0]["health"] == "Healthy"
