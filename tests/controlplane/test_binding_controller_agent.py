"""From a binding to the member cluster with the real programs: the control plane
(cluster, CSR approver and binding controllers), a registered member and its
agent. The binding is written by hand as the detector and scheduler would."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.pullmode import PullMode, wait_for
from tests.servers import ServerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def test_a_binding_lands_overridden_in_the_member_and_leaves_with_it(
    pull_mode: PullMode, member1: ServerThread
) -> None:
    pull_mode.register(member1, "member1")
    pull_mode.start_agent(member1, "member1")
    wait_for(lambda: pull_mode.ready("member1") == "True", timeout=40, what="member1 Ready")
    member = pull_mode.member_admin(member1, "member1")
    admin = pull_mode.admin
    admin("create", "deployment", "shop", "--image=nginx:1.25", "--replicas=4")
    policy = {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "OverridePolicy",
        "metadata": {"name": "shop", "namespace": "default"},
        "spec": {
            "overrideRules": [
                {
                    "targetCluster": {"clusterNames": ["member1"]},
                    "overriders": {
                        "imageOverrider": [{"component": "Registry", "operator": "replace", "value": "mirror.example"}]
                    },
                }
            ]
        },
    }
    admin("apply", "-f", "-", stdin=json.dumps(policy))
    template = json.loads(admin("get", "deployment", "shop", "-o", "json").stdout)
    meta = template["metadata"]
    binding = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": "shop-deployment",
            "namespace": "default",
            "labels": {"resourcebinding.karmada.io/permanent-id": "9a1f0c3e-77b2-4f0e-8e54-0d3c2b1a0f99"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "shop",
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "resource": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": "default",
                "name": "shop",
                "uid": meta["uid"],
                "resourceVersion": meta["resourceVersion"],
            },
            "replicas": 4,
            "placement": {"replicaScheduling": {"replicaSchedulingType": "Divided"}},
            "clusters": [{"name": "member1", "replicas": 3}],
        },
    }
    admin("apply", "-f", "-", stdin=json.dumps(binding))

    def member_shop() -> dict[str, Any] | None:
        result = member("get", "deployment", "shop", "-o", "json", check=False)
        return json.loads(result.stdout) if result.returncode == 0 else None

    wait_for(member_shop, timeout=30, what="shop in member1")
    found = member_shop() or {}
    spec = found["spec"]
    assert spec["replicas"] == 3
    assert spec["template"]["spec"]["containers"][0]["image"] == "mirror.example/nginx:1.25"
    labels = found["metadata"]["labels"]
    assert labels["karmada.io/managed"] == "true"
    assert labels["resourcebinding.karmada.io/permanent-id"] == "9a1f0c3e-77b2-4f0e-8e54-0d3c2b1a0f99"
    # the template goes: the binding is collected, its Work deleted, and the agent removes the copy
    admin("delete", "deployment", "shop")
    wait_for(lambda: member_shop() is None, timeout=30, what="shop gone from member1")
    wait_for(
        lambda: admin("get", "resourcebinding", "shop-deployment", check=False).returncode == 1,
        what="binding collected",
    )
    listing = admin("get", "works", "-n", "karmada-es-member1", "-o", "name").stdout
    assert "shop" not in listing
