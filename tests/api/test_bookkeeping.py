"""Label/annotation bookkeeping with Karmada's keys."""

from __future__ import annotations

from typing import Any

from karmada.api import bookkeeping


def test_record_managed_keys() -> None:
    obj: dict[str, Any] = {"metadata": {"labels": {"b": "1", "a": "2"}, "annotations": {"z": "1"}}}
    bookkeeping.record_managed_labels(obj)
    bookkeeping.record_managed_annotations(obj)
    annotations = obj["metadata"]["annotations"]
    assert annotations["resourcetemplate.karmada.io/managed-labels"] == "a,b"
    assert annotations["resourcetemplate.karmada.io/managed-annotations"] == (
        "resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,z"
    )


def test_claims_switch_from_cluster_policy_to_policy() -> None:
    obj: dict[str, Any] = {"metadata": {}}
    bookkeeping.claim_by_cluster_propagation_policy(obj, "cpp", "id-c")
    bookkeeping.claim_by_propagation_policy(obj, "default", "pp", "id-p")
    assert obj["metadata"]["labels"] == {"propagationpolicy.karmada.io/permanent-id": "id-p"}
    assert obj["metadata"]["annotations"] == {
        "propagationpolicy.karmada.io/namespace": "default",
        "propagationpolicy.karmada.io/name": "pp",
    }
    bookkeeping.remove_propagation_policy_claim(obj)
    assert obj["metadata"] == {"labels": {}, "annotations": {}}
