"""``kubectl karmada interpret`` through the real kubectl: karmadactl's result format,
files and stdin, and exit 1 with ``error: ...`` on bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.seeds import REPO_ROOT
from tests.servers import Plugin

DEPLOYMENT = str(REPO_ROOT / "examples" / "static-weight" / "deployment.yaml")


@pytest.fixture
def plugin() -> Plugin:
    return Plugin()


def test_interpret_replica_prints_karmadactls_format(plugin: Plugin) -> None:
    result = plugin("interpret", "-f", DEPLOYMENT, "--operation", "InterpretReplica")
    assert result.stdout == (
        "---\n# [1/2] replica:\n6\n---\n# [2/2] requires:\nresourceRequest:\n  cpu: 100m\n  memory: 128Mi\n"
    )


def test_revise_replica_from_stdin(plugin: Plugin) -> None:
    text = Path(DEPLOYMENT).read_text(encoding="utf-8")
    result = plugin("interpret", "-f", "-", "--operation", "reviseReplica", "--desired-replica", "2", stdin=text)
    header, body = result.stdout.split("# [1/1] revised:\n")
    assert header == "---\n"
    assert yaml.safe_load(body)["spec"]["replicas"] == 2


def test_aggregate_status_from_a_status_file(plugin: Plugin, tmp_path: Path) -> None:
    items = [
        {"clusterName": "member1", "status": {"replicas": 2, "readyReplicas": 2}, "applied": True},
        {"clusterName": "member2", "status": {"replicas": 4, "readyReplicas": 3}, "applied": True},
    ]
    status = tmp_path / "status.yaml"
    status.write_text(yaml.safe_dump(items), encoding="utf-8")
    result = plugin("interpret", "-f", DEPLOYMENT, "--operation", "AggregateStatus", "--status", str(status))
    aggregated = yaml.safe_load(result.stdout.split("# [1/1] aggregatedStatus:\n")[1])
    assert (aggregated["status"]["replicas"], aggregated["status"]["readyReplicas"]) == (6, 5)


def test_health_and_dependencies(plugin: Plugin) -> None:
    health = plugin("interpret", "-f", DEPLOYMENT, "--operation", "InterpretHealth")
    assert health.stdout == "---\n# [1/1] healthy:\nfalse\n"  # a template that has no status is not ready
    deps = plugin("interpret", "-f", DEPLOYMENT, "--operation", "InterpretDependency")
    assert deps.stdout == "---\n# [1/1] dependencies:\n[]\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--operation", "Retain"), "error: --observed is required for Retain"),
        (("--operation", "Nope"), "error: operation Nope is not supported. Use one of: InterpretReplica"),
        (("--operation", "Retain", "--observed", "/nonexistent.yaml"), "error: the path '/nonexistent.yaml' cannot"),
    ],
)
def test_errors_exit_1(plugin: Plugin, args: tuple[str, ...], message: str) -> None:
    result = plugin("interpret", "-f", DEPLOYMENT, *args, check=False)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(message)


def test_configmap_has_no_replica_rule(plugin: Plugin, tmp_path: Path) -> None:
    cm = tmp_path / "cm.yaml"
    cm.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", encoding="utf-8")
    result = plugin("interpret", "-f", str(cm), "--operation", "InterpretReplica", check=False)
    assert (result.returncode, result.stderr) == (1, "error: InterpretReplica rule is not enabled for v1/ConfigMap\n")


CUSTOMIZATION = """apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: clones
spec:
  target:
    apiVersion: apps.example.io/v1
    kind: Clone
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(obj)
          return obj.spec.size * 2, {}
        end
"""
CLONE = "apiVersion: apps.example.io/v1\nkind: Clone\nmetadata:\n  name: web\nspec:\n  size: 3\n"


def test_a_customization_file_answers_for_its_kind(plugin: Plugin, tmp_path: Path) -> None:
    (tmp_path / "ric.yaml").write_text(CUSTOMIZATION, encoding="utf-8")
    (tmp_path / "clone.yaml").write_text(CLONE, encoding="utf-8")
    args = ("interpret", "-f", str(tmp_path / "clone.yaml"), "--operation", "InterpretReplica")
    assert plugin(*args, check=False).returncode == 1, "no rule for the kind without its customization"
    result = plugin(*args, "--customization", str(tmp_path / "ric.yaml"))
    assert result.stdout.startswith("---\n# [1/2] replica:\n6\n")
    broken = CUSTOMIZATION.replace("obj.spec.size * 2", "obj.spec.size * nil")
    (tmp_path / "broken.yaml").write_text(broken, encoding="utf-8")
    failed = plugin(*args, "--customization", str(tmp_path / "broken.yaml"), check=False)
    assert failed.returncode == 1 and failed.stderr.startswith("error: ")
    (tmp_path / "other.yaml").write_text(CLONE, encoding="utf-8")
    wrong = plugin(*args, "--customization", str(tmp_path / "other.yaml"), check=False)
    assert wrong.returncode == 1 and "not a ResourceInterpreterCustomization" in wrong.stderr
