"""propagateDeps under the deployed control plane's RBAC (``manifests/deploy``),
which grants nothing on Secrets: a workload's ConfigMap still follows it, its
Secret does not, and its binding says why (``SyncScheduleResultToDependenciesFailed``
naming the cache it cannot list)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from manifests import deploy_files
from tests.programs import BIN_DIR, Background
from tests.pullmode import FAST_CONTROLPLANE, PullMode, wait_for
from tests.registration.test_deploy_rbac import _deployment_flags, _token_kubeconfig
from tests.servers import ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def deployed(localkube: ServerThread, workdir: Path, member1: ServerThread) -> Iterator[PullMode]:
    env = PullMode(localkube, workdir).install()
    rbac = next(p for p in deploy_files() if "rbac" in p.name)
    env.admin("apply", "-f", str(rbac))
    token = env.admin("create", "token", "karmada-controlplane", "-n", "karmada-system", "--duration=1h").stdout
    kubeconfig = _token_kubeconfig(localkube, token.strip(), workdir / "controlplane-sa.kubeconfig")
    args = [str(BIN_DIR / "karmada-controlplane"), f"--kubeconfig={kubeconfig}", *_deployment_flags()]
    controlplane = Background([*args, *FAST_CONTROLPLANE], workdir / "controlplane-sa.log").start()
    try:
        env.register(member1, "member1")
        env.start_agent(member1, "member1")
        wait_for(lambda: env.ready("member1") == "True", timeout=30, what="member1 Ready")
        yield env
    finally:
        env.stop()
        controlplane.stop()


def test_secrets_need_a_rule(deployed: PullMode, member1: ServerThread) -> None:
    env = deployed
    objects = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app-cfg", "namespace": "default"}},
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "app-secret", "namespace": "default"},
            "stringData": {"password": "do-not-log-me"},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "app", "namespace": "default"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "app"}},
                "template": {
                    "metadata": {"labels": {"app": "app"}},
                    "spec": {
                        "containers": [{"name": "c", "image": "nginx"}],
                        "volumes": [
                            {"name": "c", "configMap": {"name": "app-cfg"}},
                            {"name": "s", "secret": {"secretName": "app-secret"}},
                        ],
                    },
                },
            },
        },
        {
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "PropagationPolicy",
            "metadata": {"name": "app", "namespace": "default"},
            "spec": {
                "propagateDeps": True,
                "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "app"}],
                "placement": {"clusterAffinity": {"clusterNames": ["member1"]}},
            },
        },
    ]
    env.admin("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    member = env.member_admin(member1, "member1")

    def present(kind: str, name: str) -> bool:
        out = member("get", kind, name, "-n", "default", "--ignore-not-found", "-o", "name").stdout
        return bool(out.strip())

    wait_for(lambda: present("configmap", "app-cfg"), timeout=60, what="the ConfigMap in member1")

    def failed() -> list[str]:
        out = env.admin(
            "get",
            "events",
            "-n",
            "default",
            "--field-selector",
            "reason=SyncScheduleResultToDependenciesFailed",
            "-o",
            "json",
        ).stdout
        return [e["message"] for e in json.loads(out)["items"] if e["involvedObject"]["name"] == "app-deployment"]

    (message, *_) = wait_for(failed, timeout=60, what="SyncScheduleResultToDependenciesFailed on app-deployment")
    assert "secrets" in message and "list and watch" in message, message
    assert not present("secret", "app-secret")
    assert env.admin("get", "resourcebinding", "app-secret-secret", "-n", "default", check=False).returncode == 1
