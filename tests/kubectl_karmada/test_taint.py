"""``kubectl karmada taint clusters``, ``cordon``, ``uncordon`` with kubectl's syntax and flag placement."""

from __future__ import annotations

import json

from tests.servers import Kubectl, Plugin

CLUSTER = (
    '{"apiVersion":"cluster.karmada.io/v1alpha1","kind":"Cluster","metadata":{"name":"m1"},"spec":{"syncMode":"Pull"}}'
)


def _taints(admin: Kubectl, name: str = "m1") -> list[dict[str, str]]:
    spec = json.loads(admin("get", "cluster", name, "-o", "json").stdout)["spec"]
    return list(spec.get("taints") or [])


def test_taint_add_overwrite_and_remove(plugin: Plugin, admin: Kubectl) -> None:
    plugin("init", "--apiserver", "external")
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
    assert bad.returncode == 1 and "invalid taint effect: Sometimes, unsupported taint effect" in bad.stderr
    unknown = plugin("taint", "clusters", "nowhere", "k=v:NoSchedule", check=False)
    assert unknown.returncode == 1 and 'clusters.cluster.karmada.io "nowhere" not found' in unknown.stderr


def test_cordon_and_uncordon(plugin: Plugin, admin: Kubectl) -> None:
    plugin("init", "--apiserver", "external")
    admin("apply", "-f", "-", stdin=CLUSTER)
    assert plugin("cordon", "m1").stdout.strip() == "m1 cluster cordoned"
    assert plugin("cordon", "m1").stdout.strip() == "m1 cluster already cordoned"
    assert {"key": "cluster.karmada.io/unschedulable", "effect": "NoSchedule"} in _taints(admin)
    assert plugin("uncordon", "m1").stdout.strip() == "m1 cluster uncordoned"
    assert all(t["key"] != "cluster.karmada.io/unschedulable" for t in _taints(admin))
    assert plugin("uncordon", "m1").stdout.strip() == "m1 cluster already uncordoned"


def test_taint_grammar_as_kubectl_takes_it(plugin: Plugin, admin: Kubectl) -> None:
    plugin("init", "--apiserver", "external")
    admin("apply", "-f", "-", stdin=CLUSTER.replace('"m1"', '"g1"'))
    admin("apply", "-f", "-", stdin=CLUSTER.replace('"m1"', '"g2"'))
    added = plugin("taint", "clusters", "g1", "g2", "maintenance=true:NoSchedule", "gpu:NoExecute")
    assert added.stdout.splitlines() == ["cluster/g1 tainted", "cluster/g2 tainted"]
    # the seed documents' removal: key=value:Effect- (kubectl ignores the value)
    removed = plugin("taint", "clusters", "g1", "maintenance=true:NoSchedule-")
    assert removed.stdout.strip() == "cluster/g1 untainted"
    assert _taints(admin, "g1") == [{"key": "gpu", "effect": "NoExecute"}]
    refusals = {
        ("g1", "a=b"): "invalid taint spec: a=b, name part must consist of",
        ("g1", "k:NoSchedule", "g2"): "all resources must be specified before taint changes: g2",
        ("g1",): "at least one taint update is required",
        ("g1", "k=v:NoSchedule", "k-"): "can not both modify and remove the following taint(s) in the same command",
        ("g1", "k=1:NoSchedule", "k=2:NoSchedule"): "duplicated taints with the same key and effect",
    }
    for args, message in refusals.items():
        refused = plugin("taint", "clusters", *args, check=False)
        assert refused.returncode == 1 and message in refused.stderr, (args, refused.stderr)
    wrong_kind = plugin("taint", "nodes", "g1", "k:NoSchedule", check=False)
    assert wrong_kind.returncode == 1
    assert "invalid resource type nodes, only cluster types are supported" in wrong_kind.stderr
    assert _taints(admin, "g1") == [{"key": "gpu", "effect": "NoExecute"}], "a refused command changes nothing"
