"""The manifests for a real host cluster (``manifests/deploy``) and the agent's
objects (``register``): every object accepted by the API server's schemas in a
server-side dry run with the real kubectl, the image tag pinned to the package
version, and the hardening a real cluster expects (probes on the paths the
programs serve, non-root, read-only root filesystem, PodDisruptionBudgets)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from karmada.images import AGENT_IMAGE, CONTROLPLANE_IMAGE, IMAGE
from karmada.install import manifestgen
from karmada.registration.member import AgentSettings, member_objects
from karmada.version import __version__
from manifests import controlplane_files, deploy_files, host_files, load_documents
from tests.servers import Kubectl

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]


def deploy_documents() -> list[Obj]:
    return [doc for path in deploy_files() for doc in load_documents(path)]


def agent_documents() -> list[Obj]:
    kubeconfig = {"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [], "contexts": []}
    return member_objects(AgentSettings("member1", "https://member1.example:6443", replicas=2), kubeconfig)


def deployments(documents: list[Obj]) -> list[Obj]:
    return [doc for doc in documents if doc["kind"] == "Deployment"]


# ---- the image tag


def test_the_image_tag_is_the_package_version() -> None:
    assert IMAGE == f"karmada-py:{__version__}" == CONTROLPLANE_IMAGE == AGENT_IMAGE


@pytest.mark.parametrize("name", ["karmada-controlplane", "karmada-webhook", "karmada-agent"])
def test_every_deployment_pins_the_same_tag(name: str) -> None:
    (deployment,) = [d for d in deployments(deploy_documents() + agent_documents()) if d["metadata"]["name"] == name]
    images = {c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]}
    assert images == {IMAGE}


def test_the_dockerfile_tag_comment_reads_the_same_version() -> None:
    # the build command in the Dockerfile and hack/kind-e2e.sh derive the tag from karmada.version
    assert "karmada.version" in (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "karmada.images" in (ROOT / "hack" / "kind-e2e.sh").read_text(encoding="utf-8")


# ---- hardening, per Deployment


@pytest.mark.parametrize(
    ("name", "port", "replicas"),
    [("karmada-controlplane", 10357, 2), ("karmada-webhook", 8000, 2), ("karmada-agent", 10357, 2)],
)
def test_deployment_is_hardened_and_probed(name: str, port: int, replicas: int) -> None:
    (deployment,) = [d for d in deployments(deploy_documents() + agent_documents()) if d["metadata"]["name"] == name]
    spec = deployment["spec"]
    assert spec["replicas"] == replicas
    pod = spec["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert isinstance(pod["securityContext"]["runAsUser"], int) and pod["securityContext"]["runAsUser"] > 0
    (container,) = pod["containers"]
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    assert container["command"][0] == name  # the command picks the program, not the image
    assert f"--health-probe-bind-address=:{port}" in container["command"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["health"] == port
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert "/tmp" in mounts  # the only writable place with a read-only root


@pytest.mark.parametrize("name", ["karmada-controlplane", "karmada-webhook", "karmada-agent"])
def test_each_deployment_has_a_disruption_budget_selecting_its_pods(name: str) -> None:
    documents = deploy_documents() + agent_documents()
    (deployment,) = [d for d in deployments(documents) if d["metadata"]["name"] == name]
    (budget,) = [d for d in documents if d["kind"] == "PodDisruptionBudget" and d["metadata"]["name"] == name]
    assert budget["spec"]["selector"] == deployment["spec"]["selector"]
    assert budget["metadata"]["namespace"] == deployment["metadata"]["namespace"]


def test_the_controlplane_elects_a_leader() -> None:
    (deployment,) = [d for d in deployments(deploy_documents()) if d["metadata"]["name"] == "karmada-controlplane"]
    assert "--leader-elect=true" in deployment["spec"]["template"]["spec"]["containers"][0]["command"]


# ---- accepted by the API server (server-side dry run, real kubectl)


def _names(output: str) -> set[str]:
    return {line.split(" ")[0] for line in output.splitlines() if line.strip()}


def _expected(documents: list[Obj]) -> set[str]:
    names = set()
    for doc in documents:
        group = doc["apiVersion"].split("/")[0] if "/" in doc["apiVersion"] else ""
        kind = doc["kind"].lower() + (f".{group}" if group else "")
        names.add(f"{kind}/{doc['metadata']['name']}")
    return names


@pytest.fixture(scope="module")
def namespaces(admin: Kubectl) -> Kubectl:
    # the namespaces init creates; namespaced objects cannot be dry-run into a missing namespace
    for path in controlplane_files():
        admin("apply", "--server-side", "-f", str(path))
    admin("create", "namespace", "karmada-system", check=False)
    return admin


def _dry_run(admin: Kubectl, documents: list[Obj], workdir: Path, name: str) -> Any:
    path = workdir / name
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False), encoding="utf-8")
    return admin(
        "apply", "--server-side", "--dry-run=server", "--validate=strict", "-o", "name", "-f", str(path), check=False
    )


@pytest.mark.parametrize("path", deploy_files(), ids=lambda p: p.name)
def test_every_deploy_manifest_is_accepted_by_a_server_side_dry_run(namespaces: Kubectl, path: Path) -> None:
    result = namespaces(
        "apply", "--server-side", "--dry-run=server", "--validate=strict", "-o", "name", "-f", str(path)
    )
    assert _names(result.stdout) == _expected(load_documents(path)), result.stdout


@pytest.mark.parametrize("path", host_files(), ids=lambda p: p.name)
def test_every_host_manifest_is_accepted_by_a_server_side_dry_run(namespaces: Kubectl, path: Path) -> None:
    result = namespaces(
        "apply", "--server-side", "--dry-run=server", "--validate=strict", "-o", "name", "-f", str(path)
    )
    assert _names(result.stdout) == _expected(load_documents(path)), result.stdout


def test_the_host_manifests_are_the_three_layouts_and_up_to_date() -> None:
    assert [p.name for p in host_files()] == sorted(manifestgen.LAYOUTS)
    for path in host_files():
        assert path.read_text() == manifestgen.render(path.name), (
            f"{path} is stale; run: python -m karmada.install.manifestgen"
        )
    assert manifestgen.main(["--check"]) == 0


@pytest.mark.parametrize(
    ("name", "etcd", "apiservers"), [("kube.yaml", 1, 1), ("kube-ha.yaml", 3, 2)], ids=["kube", "kube-ha"]
)
def test_the_kube_layouts_replicas(name: str, etcd: int, apiservers: int) -> None:
    (path,) = [p for p in host_files() if p.name == name]
    replicas = {d["metadata"]["name"]: d["spec"].get("replicas") for d in load_documents(path) if "spec" in d}
    assert replicas["etcd"] == etcd and replicas["karmada-apiserver"] == apiservers


def test_the_agents_objects_are_accepted_by_a_server_side_dry_run(namespaces: Kubectl, workdir: Path) -> None:
    documents = agent_documents()
    result = _dry_run(namespaces, documents, workdir, "agent.yaml")
    assert result.returncode == 0, result.stderr
    assert _names(result.stdout) == _expected(documents)


def test_a_dry_run_creates_nothing(namespaces: Kubectl) -> None:
    result = namespaces("get", "deployments,poddisruptionbudgets", "-n", "karmada-system", "-o", "json")
    assert json.loads(result.stdout)["items"] == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda pod: pod["containers"][0]["readinessProbe"]["httpGet"].update(pth="/readyz"), "pth"),
        (lambda pod: pod.pop("volumes"), 'volumeMounts[0].name: Not found: "tmp"'),
        (lambda pod: pod["containers"][0].pop("name"), "name"),
    ],
    ids=["unknown-field", "mount-without-volume", "missing-required"],
)
def test_the_dry_run_rejects_a_broken_deployment(namespaces: Kubectl, workdir: Path, change: Any, message: str) -> None:
    (deployment,) = copy.deepcopy(
        [d for d in deployments(deploy_documents()) if d["metadata"]["name"] == "karmada-controlplane"]
    )
    change(deployment["spec"]["template"]["spec"])
    result = _dry_run(namespaces, [deployment], workdir, "broken.yaml")
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
