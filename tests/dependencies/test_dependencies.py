"""Table tests of the pure PropagateDeps rules (karmada.dependencies)."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.api import ResourceBindingSpec
from karmada.api.interpreter import DependentObjectReference
from karmada.api.names import depended_by_label_key
from karmada.dependencies import (
    OwnerConflict,
    annotation_value,
    attach,
    describe_dependencies,
    detach,
    parse_annotation,
    reference_matches,
    resolve_policies,
    snapshot_of,
)
from karmada.scheduling import triggers
from karmada.works import target_clusters

Obj = dict[str, Any]
LABEL_A = depended_by_label_key("default", "a-deployment")
LABEL_B = depended_by_label_key("default", "b-deployment")


def _ref(**fields: Any) -> DependentObjectReference:
    return DependentObjectReference.from_dict({"apiVersion": "v1", "kind": "ConfigMap", **fields})


def _configmap(name: str = "cfg", uid: str = "u1", labels: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "uid": uid, "resourceVersion": "7"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def _independent(name: str, clusters: list[str], cr: str | None = None, preserve: bool | None = None) -> Obj:
    spec: Obj = {"propagateDeps": True, "clusters": [{"name": c, "replicas": 1} for c in clusters]}
    if cr is not None:
        spec["conflictResolution"] = cr
    if preserve is not None:
        spec["preserveResourcesOnDeletion"] = preserve
    return {
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"resourcebinding.karmada.io/permanent-id": f"id-{name}"},
        },
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("refs", "value"),
    [
        ([], "null"),
        (
            [_ref(namespace="default", name="my-config")],
            '[{"apiVersion":"v1","kind":"ConfigMap","namespace":"default","name":"my-config"}]',
        ),
        (
            [_ref(namespace="ns", labelSelector={"matchLabels": {"a": "b"}})],
            '[{"apiVersion":"v1","kind":"ConfigMap","namespace":"ns","labelSelector":{"matchLabels":{"a":"b"}}}]',
        ),
    ],
)
def test_annotation_round_trip(refs: list[DependentObjectReference], value: str) -> None:
    assert annotation_value(refs) == value
    assert parse_annotation(value) == refs


@pytest.mark.parametrize(
    ("value", "error"),
    [("{", "not JSON"), ('{"a":1}', "not a JSON array"), ('[{"kind":"ConfigMap"}]', "apiVersion")],
)
def test_bad_annotation_names_the_problem(value: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_annotation(value)


def test_describe_is_gos_plus_v() -> None:
    assert describe_dependencies([_ref(namespace="default", name="my-config")]) == (
        "[{APIVersion:v1 Kind:ConfigMap Namespace:default Name:my-config LabelSelector:<nil>}]"
    )


@pytest.mark.parametrize(
    ("ref", "template", "matches"),
    [
        (_ref(namespace="default", name="cfg"), _configmap(), True),
        (_ref(namespace="default", name="other"), _configmap(), False),
        (_ref(namespace="elsewhere", name="cfg"), _configmap(), False),
        (
            DependentObjectReference(api_version="v1", kind="Secret", namespace="default", name="cfg"),
            _configmap(),
            False,
        ),
        (_ref(namespace="default", labelSelector={"matchLabels": {"app": "x"}}), _configmap(labels={"app": "x"}), True),
        (
            _ref(namespace="default", labelSelector={"matchLabels": {"app": "x"}}),
            _configmap(labels={"app": "y"}),
            False,
        ),
        (_ref(namespace="default"), _configmap(), False),  # neither name nor selector names nothing
    ],
)
def test_reference_matches(ref: DependentObjectReference, template: Obj, matches: bool) -> None:
    assert reference_matches(ref, template) is matches


@pytest.mark.parametrize(
    ("referrers", "cr", "preserve", "message"),
    [
        ([{"spec": {}}], "Abort", False, None),
        ([{"spec": {"conflictResolution": "Overwrite"}}], "Overwrite", False, None),
        (
            [{"spec": {"conflictResolution": "Overwrite"}}, {"spec": {}}],
            "Overwrite",
            False,
            "Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs Abort).",
        ),
        (
            [{"spec": {"preserveResourcesOnDeletion": True}}, {"spec": {"preserveResourcesOnDeletion": False}}],
            "Abort",
            True,
            "Dependency policy conflict detected: PreserveResourcesOnDeletion conflicted (true vs false).",
        ),
        (
            [
                {"spec": {"conflictResolution": "Abort", "preserveResourcesOnDeletion": True}},
                {"spec": {"conflictResolution": "Overwrite"}},
            ],
            "Overwrite",
            True,
            "Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs Abort); "
            "PreserveResourcesOnDeletion conflicted (true vs false).",
        ),
    ],
)
def test_resolve_policies(referrers: list[Obj], cr: str, preserve: bool, message: str | None) -> None:
    resolution = resolve_policies(referrers)
    assert (resolution.conflict_resolution, resolution.preserve_resources_on_deletion) == (cr, preserve)
    assert resolution.conflict_message == message


def test_attach_creates_the_binding_karmada_names() -> None:
    a = _independent("a-deployment", ["member1", "member2"])
    update = attach(None, _configmap(), a, lambda ns, n: a)
    meta, spec = update.binding["metadata"], update.binding["spec"]
    assert meta["name"] == "cfg-configmap" and meta["namespace"] == "default"
    assert meta["labels"] == {LABEL_A: "id-a-deployment"}
    assert meta["finalizers"] == ["karmada.io/binding-controller"]
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "cfg",
            "uid": "u1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert spec["resource"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "namespace": "default",
        "name": "cfg",
        "uid": "u1",
        "resourceVersion": "7",
    }
    assert spec["requiredBy"] == [
        {
            "namespace": "default",
            "name": "a-deployment",
            "clusters": [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 1}],
        }
    ]
    assert (spec["conflictResolution"], spec["preserveResourcesOnDeletion"]) == ("Abort", False)
    assert "placement" not in spec and "clusters" not in spec
    assert update.conflict_message is None


def test_attach_merges_snapshots_and_resolves_conflicts() -> None:
    a = _independent("a-deployment", ["member1"], cr="Overwrite")
    b = _independent("b-deployment", ["member2"], preserve=True)
    bindings = {"a-deployment": a, "b-deployment": b}
    first = attach(None, _configmap(), a, lambda ns, n: bindings.get(n)).binding
    second = attach(first, _configmap(), b, lambda ns, n: bindings.get(n))
    spec = second.binding["spec"]
    assert [s["name"] for s in spec["requiredBy"]] == ["a-deployment", "b-deployment"]
    assert (spec["conflictResolution"], spec["preserveResourcesOnDeletion"]) == ("Overwrite", True)
    assert second.binding["metadata"]["labels"] == {LABEL_A: "id-a-deployment", LABEL_B: "id-b-deployment"}
    assert second.conflict_message is not None and "Overwrite vs Abort" in second.conflict_message
    # a's clusters change: its snapshot is replaced in place
    moved = _independent("a-deployment", ["member3"], cr="Overwrite")
    bindings["a-deployment"] = moved
    third = attach(second.binding, _configmap(), moved, lambda ns, n: bindings.get(n)).binding
    assert third["spec"]["requiredBy"][0]["clusters"] == [{"name": "member3", "replicas": 1}]
    assert len(third["spec"]["requiredBy"]) == 2


def test_attach_leaves_a_policys_binding_its_own_settings() -> None:
    a = _independent("a-deployment", ["member1"], cr="Overwrite")
    own = {
        "metadata": {
            "name": "cfg-configmap",
            "namespace": "default",
            "labels": {"propagationpolicy.karmada.io/permanent-id": "p"},
            "ownerReferences": [{"uid": "u1", "controller": True}],
        },
        "spec": {
            "resource": {},
            "placement": {"clusterAffinity": {"clusterNames": ["member2"]}},
            "clusters": [{"name": "member2"}],
            "conflictResolution": "Abort",
        },
    }
    spec = attach(own, _configmap(), a, lambda ns, n: a).binding["spec"]
    assert spec["conflictResolution"] == "Abort" and "preserveResourcesOnDeletion" not in spec
    assert spec["clusters"] == [{"name": "member2"}] and spec["requiredBy"][0]["name"] == "a-deployment"


def test_attach_refuses_another_objects_binding() -> None:
    a = _independent("a-deployment", ["member1"])
    stale = attach(None, _configmap(uid="old"), a, lambda ns, n: a).binding
    with pytest.raises(OwnerConflict, match="different owner reference UID"):
        attach(stale, _configmap(uid="new"), a, lambda ns, n: a)


def test_detach_resolves_again_then_clears() -> None:
    a = _independent("a-deployment", ["member1"], cr="Overwrite")
    b = _independent("b-deployment", ["member2"])
    bindings = {"a-deployment": a, "b-deployment": b}
    both = attach(
        attach(None, _configmap(), a, lambda ns, n: bindings.get(n)).binding,
        _configmap(),
        b,
        lambda ns, n: bindings.get(n),
    ).binding
    del bindings["a-deployment"]
    only_b = detach(both, "default", "a-deployment", lambda ns, n: bindings.get(n))
    assert [s["name"] for s in only_b["spec"]["requiredBy"]] == ["b-deployment"]
    assert only_b["spec"]["conflictResolution"] == "Abort"
    assert only_b["metadata"]["labels"] == {LABEL_B: "id-b-deployment"}
    none = detach(only_b, "default", "b-deployment", lambda ns, n: None)
    assert "requiredBy" not in none["spec"] and "conflictResolution" not in none["spec"]
    assert "preserveResourcesOnDeletion" not in none["spec"] and none["metadata"]["labels"] == {}


def test_snapshot_of_an_unscheduled_binding_has_no_clusters() -> None:
    assert snapshot_of({"metadata": {"name": "x", "namespace": "ns"}, "spec": {}}) == {"namespace": "ns", "name": "x"}


def test_the_scheduler_leaves_attached_bindings_alone() -> None:
    # as Karmada's: a binding no policy claims (no policy permanent-id label) is not scheduled
    a = _independent("a-deployment", ["member1"])
    attached = attach(None, _configmap(), a, lambda ns, n: a).binding
    assert not triggers.ours(attached)
    claimed = {**a, "metadata": {**a["metadata"], "labels": {"propagationpolicy.karmada.io/permanent-id": "p"}}}
    assert triggers.ours(claimed)


def test_works_go_to_the_union_of_clusters_and_required_by() -> None:
    a = _independent("a-deployment", ["member1", "member2"])
    b = _independent("b-deployment", ["member2", "member3"])
    bindings = {"a-deployment": a, "b-deployment": b}
    first = attach(None, _configmap(), a, lambda ns, n: bindings.get(n)).binding
    both = attach(first, _configmap(), b, lambda ns, n: bindings.get(n)).binding
    spec = ResourceBindingSpec.from_dict({**both["spec"], "clusters": [{"name": "member4"}]})
    assert [t.name for t in target_clusters(spec)] == ["member4", "member1", "member2", "member3"]


@pytest.mark.parametrize(
    ("clusters", "tasks", "expected"),
    [
        (["member2"], [], ["member2"]),
        # a Gracefully (or Never) evicted cluster keeps the dependency until its task goes
        (["member2"], [{"fromCluster": "member1", "purgeMode": "Gracefully"}], ["member2", "member1"]),
        ([], [{"fromCluster": "member1", "purgeMode": "Gracefully"}], ["member1"]),
        (["member2"], [{"fromCluster": "member1", "purgeMode": "Never"}], ["member2", "member1"]),
        (["member2"], [{"fromCluster": "member1"}], ["member2", "member1"]),
        # Directly removes first: the dependency goes with the workload
        (["member2"], [{"fromCluster": "member1", "purgeMode": "Directly"}], ["member2"]),
        # a task for a cluster still targeted adds nothing twice
        (["member1"], [{"fromCluster": "member1", "purgeMode": "Gracefully"}], ["member1"]),
    ],
)
def test_snapshots_keep_clusters_with_pending_eviction_tasks(
    clusters: list[str], tasks: list[dict[str, str]], expected: list[str]
) -> None:
    independent = _independent("a-deployment", clusters)
    independent["spec"]["gracefulEvictionTasks"] = tasks
    assert [c["name"] for c in snapshot_of(independent).get("clusters") or []] == expected
