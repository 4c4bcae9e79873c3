"""Karmada's naming rules, checked against names real Karmada produced."""

from __future__ import annotations

import pytest

from karmada.api import names


@pytest.mark.parametrize(
    ("kind", "name", "namespace", "expected"),
    [
        # reference section 2.4 / pkg/util/names/names_test.go
        ("Deployment", "nginx", "default", "nginx-687f7fb96f"),
        ("ClusterRole", "karmada-impersonator", "", "karmada-impersonator-7cbb6bd5c9"),
        ("ClusterRoleBinding", "karmada-impersonator", "", "karmada-impersonator-84f8c8f8c6"),
    ],
)
def test_work_name(kind: str, name: str, namespace: str, expected: str) -> None:
    assert names.work_name(kind, name, namespace) == expected


def test_work_name_dots_colons_and_lowercases() -> None:
    got = names.work_name("ClusterRole", "System:Controller", "")
    assert got.startswith("system.controller-")
    assert got == got.lower()


@pytest.mark.parametrize(
    ("kind", "name", "expected"),
    [
        ("Deployment", "nginx", "nginx-deployment"),
        ("ConfigMap", "my-config", "my-config-configmap"),
        ("ClusterRole", "system:aggregate-to-edit", "system.aggregate-to-edit-clusterrole"),
    ],
)
def test_binding_name(kind: str, name: str, expected: str) -> None:
    assert names.binding_name(kind, name) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # FNV-1a 32-bit reference values
        (b"", 0x811C9DC5),
        (b"a", 0xE40C292C),
        (b"foobar", 0xBF9CF968),
    ],
)
def test_fnv32a(data: bytes, expected: int) -> None:
    assert names.fnv32a(data) == expected


def test_safe_encode_maps_digits() -> None:
    assert names.safe_encode("0123456789") == "456789bcdf"


@pytest.mark.parametrize(
    ("api_version", "kind", "expected"),
    [("apps/v1", "Deployment", "apps/v1, Kind=Deployment"), ("v1", "ConfigMap", "/v1, Kind=ConfigMap")],
)
def test_gvk_string(api_version: str, kind: str, expected: str) -> None:
    assert names.gvk_string(api_version, kind) == expected


def test_policy_name_uses_namespace_and_gvk() -> None:
    a = names.policy_name("default", "nginx", "apps/v1", "Deployment")
    b = names.policy_name("other", "nginx", "apps/v1", "Deployment")
    assert a.startswith("nginx-") and b.startswith("nginx-") and a != b
    assert a == "nginx-" + names.name_hash("defaultapps/v1, Kind=Deployment")


@pytest.mark.parametrize(
    ("namespace", "reserved"),
    [
        ("karmada-system", True),
        ("karmada-cluster", True),
        ("karmada-es-member1", True),
        ("default", False),
        ("kube-system", False),
    ],
)
def test_reserved_namespaces(namespace: str, reserved: bool) -> None:
    assert names.is_reserved_namespace(namespace) is reserved


def test_execution_space_round_trip() -> None:
    assert names.execution_space("member1") == "karmada-es-member1"
    assert names.cluster_of_execution_space("karmada-es-member1") == "member1"
    assert names.cluster_of_execution_space("default") is None


def test_depended_by_label_key() -> None:
    key = names.depended_by_label_key("default", "myapp-deployment")
    assert key == "resourcebinding.karmada.io/depended-by-" + names.name_hash("default/myapp-deployment")
    assert names.depended_by_label_key("", "crb").endswith(names.name_hash("crb"))


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("member1", True),
        ("a" * 48, True),
        ("a" * 49, False),
        ("Member1", False),
        ("-member", False),
        ("member_1", False),
        ("", False),
    ],
)
def test_validate_cluster_name(name: str, ok: bool) -> None:
    assert (names.validate_cluster_name(name) == []) is ok
