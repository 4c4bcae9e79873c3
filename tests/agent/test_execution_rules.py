"""The pure rules of the agent's execution controller, as tables: the object written
over a member object, what a preserved object loses, Karmada's messages, and
which Work events are worth a reconcile, and when a deleted object counts as gone."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.members.execution import (
    aggregate,
    applied_failed_message,
    conflict_message,
    deletion_confirmed,
    dispatching_condition,
    merge_for_update,
    strip_karmada_marks,
    work_spec_changed,
)


def cm(meta: dict[str, Any], **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns", **meta}, "data": data}


MANAGED = "resourcetemplate.karmada.io/managed-labels"


@pytest.mark.parametrize(
    ("desired", "observed", "expected_meta"),
    [
        # the server's bookkeeping and member-side metadata are kept
        (
            cm({"labels": {"a": "1"}}),
            cm({"resourceVersion": "7", "finalizers": ["f"], "labels": {"member": "x"}, "ownerReferences": [{"n": 1}]}),
            {
                "resourceVersion": "7",
                "finalizers": ["f"],
                "ownerReferences": [{"n": 1}],
                "labels": {"member": "x", "a": "1"},
            },
        ),
        # desired wins over observed for the same key
        (cm({"labels": {"a": "new"}}), cm({"labels": {"a": "old"}}), {"labels": {"a": "new"}}),
        # a label Karmada managed (listed on the member object) and since dropped goes
        (
            cm({"labels": {"b": "1"}}),
            cm({"labels": {"a": "1", "b": "1", "member": "x"}, "annotations": {MANAGED: "a,b"}}),
            {"labels": {"b": "1", "member": "x"}, "annotations": {MANAGED: "a,b"}},
        ),
        # nothing observed, nothing invented
        (cm({}), cm({"resourceVersion": "3"}), {"resourceVersion": "3"}),
    ],
)
def test_merge_for_update(desired: dict[str, Any], observed: dict[str, Any], expected_meta: dict[str, Any]) -> None:
    merged = merge_for_update(desired, observed)
    assert merged["metadata"] == {"name": "c", "namespace": "ns", **expected_meta}
    assert merged["data"] == desired["data"]


@pytest.mark.parametrize(
    ("meta", "kept"),
    [
        (
            {
                "namespace": "ns",
                "labels": {
                    "app": "x",
                    "karmada.io/managed": "true",
                    "work.karmada.io/permanent-id": "w",
                    "resourcebinding.karmada.io/permanent-id": "b",
                    "propagationpolicy.karmada.io/permanent-id": "p",
                },
                "annotations": {
                    "note": "n",
                    "work.karmada.io/name": "w",
                    "work.karmada.io/namespace": "karmada-es-m",
                    "resourcetemplate.karmada.io/uid": "u",
                    "resourcetemplate.karmada.io/generation": "1",
                    "resourcetemplate.karmada.io/managed-annotations": "x",
                    "resourcetemplate.karmada.io/managed-labels": "y",
                    "resourcebinding.karmada.io/name": "b",
                    "resourcebinding.karmada.io/namespace": "ns",
                    "propagationpolicy.karmada.io/name": "pp",
                    "propagationpolicy.karmada.io/namespace": "ns",
                    "work.karmada.io/conflict-resolution": "overwrite",
                },
            },
            # Karmada keeps the conflict-resolution annotation (not in its lists)
            {
                "namespace": "ns",
                "labels": {"app": "x"},
                "annotations": {"note": "n", "work.karmada.io/conflict-resolution": "overwrite"},
            },
        ),
        # a cluster-scoped object loses the ClusterPropagationPolicy's claim
        (
            {
                "labels": {"clusterpropagationpolicy.karmada.io/permanent-id": "c", "karmada.io/managed": "true"},
                "annotations": {"clusterpropagationpolicy.karmada.io/name": "cpp"},
            },
            {},
        ),
    ],
)
def test_strip_karmada_marks(meta: dict[str, Any], kept: dict[str, Any]) -> None:
    manifest: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", **meta}}
    assert strip_karmada_marks(manifest)["metadata"] == {"name": "c", **kept}
    assert manifest["metadata"]["labels"], "the Work's manifest itself is untouched"


@pytest.mark.parametrize(
    ("errors", "succeeded", "total", "message"),
    [
        (["boom"], 0, 1, "Failed to apply all manifests (0/1): boom"),
        (["a", "b"], 1, 3, "Failed to apply all manifests (1/3): [a, b]"),
    ],
)
def test_applied_failed_message(errors: list[str], succeeded: int, total: int, message: str) -> None:
    assert applied_failed_message(succeeded, total, errors) == message
    assert aggregate(errors) == message.split(": ", 1)[1]


@pytest.mark.parametrize(
    ("meta", "where"),
    [({"name": "web", "namespace": "default"}, "default/web"), ({"name": "ns1"}, "/ns1")],
)
def test_conflict_message(meta: dict[str, Any], where: str) -> None:
    assert conflict_message({"kind": "K", "metadata": meta}, "m1") == (
        f"resource(kind=K, {where}) already exists in the cluster m1 and the work.karmada.io/conflict-resolution "
        "strategy value is empty, Karmada will not manage this resource"
    )


@pytest.mark.parametrize(
    ("spec", "condition"),
    [
        ({}, ("Dispatching", "True", "Dispatching", "Work is being dispatched to member clusters.")),
        (
            {"suspendDispatching": False},
            ("Dispatching", "True", "Dispatching", "Work is being dispatched to member clusters."),
        ),
        (
            {"suspendDispatching": True},
            ("Dispatching", "False", "SuspendDispatching", "Work dispatching is in a suspended state."),
        ),
    ],
)
def test_dispatching_condition(spec: dict[str, Any], condition: tuple[str, str, str, str]) -> None:
    assert dispatching_condition({"spec": spec}) == condition


def _work(generation: int, deleting: bool = False, rv: str = "1") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "w", "generation": generation, "resourceVersion": rv}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta}


SAME = _work(1)


@pytest.mark.parametrize(
    ("kind", "obj", "old", "wanted"),
    [
        ("ADDED", _work(1), None, True),
        ("DELETED", _work(1), _work(1), True),
        ("MODIFIED", _work(2, rv="2"), _work(1), True),  # spec changed
        ("MODIFIED", _work(1, deleting=True, rv="2"), _work(1), True),  # deletion started
        ("MODIFIED", _work(1, rv="2"), _work(1), False),  # a status write (ours): no work
        ("MODIFIED", SAME, SAME, True),  # a resync replays the cached object
    ],
)
def test_which_work_events_reconcile(kind: str, obj: dict[str, Any], old: dict[str, Any] | None, wanted: bool) -> None:
    assert work_spec_changed(kind, obj, old) is wanted


TERMINATING = {"metadata": {"name": "c", "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["x.io/hold"]}}


@pytest.mark.parametrize(
    ("answer", "gone"),
    [
        ({}, True),  # NotFound: gone before the delete
        ({"kind": "Status", "apiVersion": "v1", "status": "Success", "details": {"name": "c"}}, True),
        ({"kind": "ConfigMap", "metadata": {"name": "c"}}, True),  # removed at once, returned as it was
        ({"kind": "ConfigMap", **TERMINATING}, False),  # a finalizer holds it
        ({"kind": "Pod", "metadata": {"name": "p", "deletionTimestamp": "2026-01-01T00:00:30Z"}}, False),  # grace
    ],
)
def test_deletion_confirmed(answer: dict[str, Any], gone: bool) -> None:
    assert deletion_confirmed(answer) is gone
