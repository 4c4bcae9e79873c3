"""The committed CRDs equal a fresh generation and are structural."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from karmada.api import KINDS, KindInfo
from karmada.api.crdgen import crd_filename, generate, main
from manifests import crd_files, crds_dir


def test_committed_crds_match_a_fresh_generation() -> None:
    wanted = generate()
    committed = {p.name: p.read_text() for p in crd_files()}
    assert sorted(committed) == sorted(wanted), "run: python -m karmada.api.crdgen"
    for name, text in wanted.items():
        assert committed[name] == text, f"{name} is stale; run: python -m karmada.api.crdgen"


def test_generator_check_mode_detects_drift(tmp_path: Any) -> None:
    assert main([str(tmp_path)]) == 0
    assert main([str(tmp_path), "--check"]) == 0
    victim = tmp_path / crd_filename(KINDS[0])
    victim.write_text(victim.read_text() + "# edited\n")
    (tmp_path / "stale.yaml").write_text("{}\n")
    assert main([str(tmp_path), "--check"]) == 1
    assert main([str(tmp_path)]) == 0
    assert not (tmp_path / "stale.yaml").exists()


def _load(info: KindInfo) -> dict[str, Any]:
    docs = list(yaml.safe_load_all((crds_dir() / crd_filename(info)).read_text()))
    assert len(docs) == 1
    crd: dict[str, Any] = docs[0]
    return crd


def _walk(schema: dict[str, Any], path: str) -> list[str]:
    """Paths that break the structural-schema rules kube-apiserver enforces."""
    problems: list[str] = []
    free_form = schema.get("x-kubernetes-preserve-unknown-fields") or schema.get("x-kubernetes-int-or-string")
    if "type" not in schema and not free_form:
        problems.append(f"{path}: no type")
    if "anyOf" in schema and not schema.get("x-kubernetes-int-or-string"):
        problems.append(f"{path}: anyOf outside int-or-string")
    for key, child in (schema.get("properties") or {}).items():
        problems += _walk(child, f"{path}.{key}")
    if isinstance(schema.get("items"), dict):
        problems += _walk(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        problems += _walk(schema["additionalProperties"], f"{path}{{}}")
    if "properties" in schema and "additionalProperties" in schema:
        problems.append(f"{path}: both properties and additionalProperties")
    for name in schema.get("required", []):
        if name not in (schema.get("properties") or {}):
            problems.append(f"{path}: required {name} is not a property")
    return problems


@pytest.mark.parametrize("info", KINDS, ids=lambda k: k.kind)
def test_crd_is_structural_and_matches_the_kind_table(info: KindInfo) -> None:
    crd = _load(info)
    spec = crd["spec"]
    assert crd["metadata"]["name"] == info.crd_name
    assert spec["group"] == info.group and spec["scope"] == info.scope
    assert spec["names"]["kind"] == info.kind and spec["names"]["plural"] == info.plural
    assert spec["names"].get("shortNames", []) == list(info.short_names)
    (version,) = spec["versions"]
    assert version["name"] == info.version and version["served"] and version["storage"]
    assert ("status" in version.get("subresources", {})) is info.status_subresource
    schema = version["schema"]["openAPIV3Schema"]
    assert _walk(schema, "") == []
    # every kind requires its spec, but ResourceInterpreterWebhookConfiguration (no spec: its webhooks)
    assert ("spec" if "spec" in schema["properties"] else "webhooks") in schema["required"]


@pytest.mark.parametrize(
    ("kind", "path", "expected"),
    [
        # Karmada's CRD schema defaults (reference, section 0)
        ("PropagationPolicy", "spec.priority", 0),
        ("PropagationPolicy", "spec.preemption", "Never"),
        ("PropagationPolicy", "spec.conflictResolution", "Abort"),
        ("PropagationPolicy", "spec.schedulerName", "default-scheduler"),
        ("PropagationPolicy", "spec.placement.replicaScheduling.replicaSchedulingType", "Divided"),
        ("PropagationPolicy", "spec.failover.application.purgeMode", "Gracefully"),
        ("PropagationPolicy", "spec.failover.application.decisionConditions.tolerationSeconds", 300),
        ("PropagationPolicy", "spec.failover.cluster.purgeMode", "Gracefully"),
        ("ClusterPropagationPolicy", "spec.priority", 0),
        ("ResourceBinding", "spec.conflictResolution", "Abort"),
        ("ResourceBinding", "spec.schedulePriority.priority", 0),
    ],
)
def test_schema_defaults(kind: str, path: str, expected: object) -> None:
    info = next(k for k in KINDS if k.kind == kind)
    schema = _load(info)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for part in path.split("."):
        schema = schema["properties"][part]
    assert schema["default"] == expected


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("Work", "spec.workload.manifests[]"),
        ("ResourceBinding", "status.aggregatedStatus[].status"),
        ("OverridePolicy", "spec.overrideRules[].overriders.plaintext[].value"),
        ("OverridePolicy", "spec.overrideRules[].overriders.fieldOverrider[].json[].value"),
        ("Work", "status.manifestStatuses[].status"),
    ],
)
def test_free_form_content_preserves_unknown_fields(kind: str, path: str) -> None:
    info = next(k for k in KINDS if k.kind == kind)
    schema = _load(info)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for part in path.split("."):
        name = part.removesuffix("[]")
        schema = schema["properties"][name]
        if part.endswith("[]"):
            schema = schema["items"]
    assert schema["x-kubernetes-preserve-unknown-fields"] is True
    assert "properties" not in schema


def test_quantities_are_int_or_string() -> None:
    info = next(k for k in KINDS if k.kind == "Cluster")
    schema = _load(info)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    allocatable = schema["properties"]["status"]["properties"]["resourceSummary"]["properties"]["allocatable"]
    value = allocatable["additionalProperties"]
    assert value["x-kubernetes-int-or-string"] is True
    assert value["anyOf"] == [{"type": "integer"}, {"type": "string"}]


def test_karmada_category_and_printer_columns() -> None:
    by_kind = {k.kind: _load(k) for k in KINDS}
    for kind in ("PropagationPolicy", "ResourceBinding", "Work", "ResourceInterpreterCustomization"):
        assert by_kind[kind]["spec"]["names"]["categories"] == ["karmada-io"]
    assert "categories" not in by_kind["ClusterTaintPolicy"]["spec"]["names"]
    columns = by_kind["Cluster"]["spec"]["versions"][0]["additionalPrinterColumns"]
    assert [c["name"] for c in columns if not c.get("priority")] == ["VERSION", "MODE", "READY", "AGE"]
    assert [c["name"] for c in columns if c.get("priority")] == [
        "ZONES",
        "REGION",
        "PROVIDER",
        "API-ENDPOINT",
        "PROXY-URL",
    ]
