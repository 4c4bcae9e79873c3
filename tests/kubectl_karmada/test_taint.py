"""``kubectl karmada taint clusters``, ``cordon``, ``uncordon`` with kubectl's syntax and flag placement."""

from __future__ import annotations

import json

from tests.servers import Kubectl, Plugin

CLUSTER = (
    '{"apiVersion":"cluster.karmada.io/v1alpha1","kind":"Cluster","metadata":{"name":"m1"},"spec":{"syncMode":"Pull"}}'
)


def _taints(admin: Kubectl) -> list[dict[str, str]]:
    spec = json.loads(admin("get", "cluster", "m1", "-o", "json").stdout)["spec"]
    return list(spec.get("taints") or [])


def test_taint_add_overwrite_and_remove(plugin: Plugin, admin: Kubectl) -> None:
    plugin("init")
    admin("apply", "-f", "-", stdin=CLUSTER)
    # global flags after the command, as kubectl users write them
    kubeconfig = str(plugin.kubeconfig)
    bare = Plugin(None)
    out = bare("taint", "clusters", "m1", "dedicated=batch:NoSchedule", "gpu:NoExecute", "--kubeconfig", kubeconfig)
    assert out.stdout.strip() == "cluster/m1 tainted"
    assert [(t["key"], t.get("value"), t["effect"]) for t in _taints(admin)] == [
        ("dedicated", "batch", "NoSchedule"),
        ("gpu", None, "NoExecute"),
    ]
    again = plugin("taint", "clusters", "m1", "dedicated=other:NoSchedule", check=False)
    assert again.returncode == 1
    assert "cluster m1 already has [dedicated] taint(s) with same effect(s) and --overwrite is false" in again.stderr
    assert plugin("taint", "clusters", "m1", "dedicated=other:NoSchedule", "--overwrite").stdout.strip() == (
        "cluster/m1 modified"
    )
    assert _taints(admin)[0] == {"key": "dedicated", "value": "other", "effect": "NoSchedule"}
    assert plugin("taint", "cluster", "m1", "gpu-").stdout.strip() == "cluster/m1 untainted"
    missing = plugin("taint", "clusters", "m1", "nope:NoSchedule-", check=False)
    assert missing.returncode == 1 and 'taint "nope:NoSchedule" not found' in missing.stderr
    dry = plugin("taint", "clusters", "m1", "x=y:PreferNoSchedule", "--dry-run", "-o", "json")
    assert any(t["key"] == "x" for t in json.loads(dry.stdout)["spec"]["taints"])
    assert all(t["key"] != "x" for t in _taints(admin))
    bad = plugin("taint", "clusters", "m1", "k=v:Sometimes", check=False)
    assert bad.returncode == 1 and 'unsupported taint effect "Sometimes"' in bad.stderr
    unknown = plugin("taint", "clusters", "nowhere", "k=v:NoSchedule", check=False)
    assert unknown.returncode == 1 and 'clusters.cluster.karmada.io "nowhere" not found' in unknown.stderr


def test_cordon_and_uncordon(plugin: Plugin, admin: Kubectl) -> None:
    plugin("init")
    admin("apply", "-f", "-", stdin=CLUSTER)
    assert plugin("cordon", "m1").stdout.strip() == "m1 cluster cordoned"
    assert plugin("cordon", "m1").stdout.strip() == "m1 cluster already cordoned"
    assert {"key": "cluster.karmada.io/unschedulable", "effect": "NoSchedule"} in _taints(admin)
    assert plugin("uncordon", "m1").stdout.strip() == "m1 cluster uncordoned"
    assert all(t["key"] != "cluster.karmada.io/unschedulable" for t in _taints(admin))
    assert plugin("uncordon", "m1").stdout.strip() == "m1 cluster already uncordoned"
