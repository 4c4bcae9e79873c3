"""What join creates, as data: Karmada's names and rules in the member, the
Secrets and the Cluster on the control plane; and how the control plane turns
a Push cluster's Secret back into a connection (or says why it cannot)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from controlplane.push_members import access_key, member_config, secret_ownership_problem
from karmada.registration.join import CLUSTER_POLICY_RULES, JoinOptions, control_plane_objects, member_objects, redacted


def test_member_objects_are_karmadas() -> None:
    objects = member_objects("m1")
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("Namespace", "karmada-cluster"),
        ("ServiceAccount", "karmada-impersonator"),
        ("ServiceAccount", "karmada-m1"),
        ("ClusterRole", "karmada-controller-manager:karmada-m1"),
        ("ClusterRoleBinding", "karmada-controller-manager:karmada-m1"),
        ("ClusterRole", "karmada-impersonator"),
        ("ClusterRoleBinding", "karmada-impersonator"),
    ]
    assert {verb for rule in objects[5]["rules"] for verb in rule["verbs"]} == {"impersonate"}
    assert objects[3]["rules"] == [
        {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
        {"nonResourceURLs": ["*"], "verbs": ["get"]},
    ]
    assert objects[4]["subjects"] == [{"kind": "ServiceAccount", "name": "karmada-m1", "namespace": "karmada-cluster"}]
    assert all(o["metadata"]["labels"] == {"karmada.io/system": "true"} for o in objects)
    objects[3]["rules"].append({"verbs": ["x"]})
    assert len(CLUSTER_POLICY_RULES) == 2, "the module's rules are not shared with a caller's copy"


@pytest.mark.parametrize(
    ("options", "ca", "expected"),
    [
        (
            JoinOptions("m1"),
            b"CA",
            {
                "id": "uid-1",
                "syncMode": "Push",
                "apiEndpoint": "https://10.0.0.1:6443",
                "secretRef": {"namespace": "karmada-cluster", "name": "m1"},
                "impersonatorSecretRef": {"namespace": "karmada-cluster", "name": "m1-impersonator"},
            },
        ),
        (
            JoinOptions("m1", provider="aws", region="eu", zones=["a", "b"]),
            None,
            {
                "id": "uid-1",
                "syncMode": "Push",
                "apiEndpoint": "https://10.0.0.1:6443",
                "secretRef": {"namespace": "karmada-cluster", "name": "m1"},
                "impersonatorSecretRef": {"namespace": "karmada-cluster", "name": "m1-impersonator"},
                "insecureSkipTLSVerification": True,
                "provider": "aws",
                "region": "eu",
                "zones": ["a", "b"],
            },
        ),
    ],
)
def test_the_cluster_and_its_secrets(options: JoinOptions, ca: bytes | None, expected: dict[str, Any]) -> None:
    namespace, secret, impersonator, cluster = control_plane_objects(
        options, "https://10.0.0.1:6443", ca, "tok", "imp", "uid-1"
    )
    assert namespace["metadata"]["name"] == "karmada-cluster"
    assert cluster["spec"] == expected
    assert base64.b64decode(secret["data"]["token"]) == b"tok"
    assert ("caBundle" in secret["data"]) == (ca is not None)
    assert base64.b64decode(impersonator["data"]["token"]) == b"imp"
    shown = redacted([secret, impersonator])
    assert shown[0]["data"]["token"] == "<redacted>" and base64.b64decode(secret["data"]["token"]) == b"tok"


CLUSTER_META = {"name": "member1", "uid": "uid-1"}
OWNER = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "controller": True, **CLUSTER_META}


def _secret(owners: list[dict[str, Any]] | None = None, **data: bytes) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "m1",
            "namespace": "karmada-cluster",
            "ownerReferences": [OWNER] if owners is None else owners,
        },
        "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
    }


def test_member_config_from_the_secret() -> None:
    cluster = {
        "metadata": CLUSTER_META,
        "spec": {"apiEndpoint": "https://10.0.0.1:6443/", "secretRef": {"namespace": "karmada-cluster", "name": "m1"}},
    }
    config = member_config(cluster, _secret(token=b"tok", caBundle=b"PEM"))
    assert (config.server, config.ca_pem, config.credentials.token, config.insecure) == (
        "https://10.0.0.1:6443",
        b"PEM",
        "tok",
        False,
    )
    assert access_key(cluster) == ("https://10.0.0.1:6443/", "karmada-cluster", "m1", False, "")


@pytest.mark.parametrize(
    ("spec", "secret", "message"),
    [
        ({}, _secret(token=b"t"), "spec.apiEndpoint is empty"),
        ({"apiEndpoint": "https://x"}, _secret(caBundle=b"c"), "Secret karmada-cluster/m1 has no token"),
    ],
)
def test_member_config_says_what_is_missing(spec: dict[str, Any], secret: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        member_config({"metadata": CLUSTER_META, "spec": spec}, secret)


NOT_OURS = "Secret karmada-cluster/m1 is not this cluster's: it has no controller ownerReference to Cluster member1"


@pytest.mark.parametrize(
    ("owners", "problem"),
    [
        ([OWNER], None),
        ([], NOT_OURS),
        ([{**OWNER, "name": "member2"}], NOT_OURS),  # another member's Secret
        ([{**OWNER, "uid": "uid-old"}], NOT_OURS),  # a Cluster of the same name deleted and made again
        ([{**OWNER, "controller": False}], NOT_OURS),
        ([{**OWNER, "kind": "ConfigMap", "apiVersion": "v1"}], NOT_OURS),
        ([{**OWNER, "name": "member2", "uid": "u2"}, OWNER], None),
    ],
)
def test_a_push_cluster_reads_only_a_secret_it_owns(owners: list[dict[str, Any]], problem: str | None) -> None:
    cluster = {"metadata": CLUSTER_META, "spec": {"apiEndpoint": "https://127.0.0.1:1"}}
    secret = _secret(owners, token=b"tok")
    found = secret_ownership_problem(cluster, secret)
    assert found == problem if problem is None else (found or "").startswith(problem)
    if problem is not None:
        with pytest.raises(ValueError, match="is not this cluster's"):
            member_config(cluster, secret)
