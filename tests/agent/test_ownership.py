"""The rule a Work's deletion follows before it deletes a member object (table)."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.members.ownership import deletion_refusal

ID = "work.karmada.io/permanent-id"
MANAGED = {"karmada.io/managed": "true"}
ABORT = "Abort deleting the resource(kind=ConfigMap, default/cm) which exists in the member cluster m1"


def obj(labels: dict[str, str]) -> dict[str, Any]:
    return {"kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default", "labels": labels}}


@pytest.mark.parametrize(
    ("manifest", "observed", "refusal"),
    [
        # Karmada's rule: only an object labelled as managed
        ({**MANAGED}, {}, f"{ABORT} but is not managed by Karmada."),
        ({**MANAGED}, {"karmada.io/managed": "false"}, f"{ABORT} but is not managed by Karmada."),
        ({**MANAGED}, {**MANAGED}, None),  # a manifest without the id: Karmada's rule alone
        ({**MANAGED, ID: "a"}, {**MANAGED, ID: "a"}, None),
        ({**MANAGED, ID: "a"}, {**MANAGED}, f"{ABORT} but is not this Work's: it has no {ID}, this Work's is a."),
        (
            {**MANAGED, ID: "a"},
            {**MANAGED, ID: "b"},
            f"{ABORT} but is not this Work's: it has {ID} b, this Work's is a.",
        ),
        ({**MANAGED, ID: "a"}, {ID: "a"}, f"{ABORT} but is not managed by Karmada."),
    ],
)
def test_deletion_refusal(manifest: dict[str, str], observed: dict[str, str], refusal: str | None) -> None:
    assert deletion_refusal(obj(manifest), obj(observed), "m1") == refusal


def test_a_cluster_scoped_object_is_named_without_a_namespace() -> None:
    observed = {"kind": "Namespace", "metadata": {"name": "team"}}
    refusal = deletion_refusal({"kind": "Namespace", "metadata": {"name": "team"}}, observed, "m1")
    assert refusal == (
        "Abort deleting the resource(kind=Namespace, team) which exists in the member cluster m1 "
        "but is not managed by Karmada."
    )
