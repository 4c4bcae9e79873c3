"""CRD validation ratcheting (kube-apiserver, on by default since 1.30): an update is not refused
for values it leaves unchanged, even when a tightened schema would refuse them now."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from localkube.crd import validate_custom_resource
from tests.factories import crd
from tests.servers import Raw

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer", "maximum": 10},
                "mode": {"type": "string", "enum": ["Fast", "Slow"]},
                "byName": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
                "items": {"type": "array", "items": {"type": "integer", "maximum": 3}},
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}


def _fields(obj: dict[str, Any], old: dict[str, Any] | None) -> list[str]:
    return [cause.field for cause in validate_custom_resource(obj, SCHEMA, old)]


@pytest.mark.parametrize(
    ("old", "new", "fields"),
    [
        # a create validates everything
        (None, {"spec": {"size": 50, "mode": "Odd"}}, ["spec.size", "spec.mode"]),
        # unchanged invalid values pass; the changed one is checked
        ({"spec": {"size": 50, "mode": "Odd"}}, {"spec": {"size": 50, "mode": "Odd"}, "status": {"phase": "x"}}, []),
        ({"spec": {"size": 50, "mode": "Odd"}}, {"spec": {"size": 60, "mode": "Odd"}}, ["spec.size"]),
        ({"spec": {"size": 50, "mode": "Odd"}}, {"spec": {"size": 5, "mode": "Odd"}}, []),
        # map keys correlate: an unchanged entry passes, a new or changed one is checked
        ({"spec": {"byName": {"a": -1}}}, {"spec": {"byName": {"a": -1, "b": 2}}}, []),
        ({"spec": {"byName": {"a": -1}}}, {"spec": {"byName": {"a": -1, "b": -2}}}, ["spec.byName[b]"]),
        # list items do not: a changed list is validated whole
        ({"spec": {"items": [9]}}, {"spec": {"items": [9]}}, []),
        ({"spec": {"items": [9]}}, {"spec": {"items": [9, 1]}}, ["spec.items[0]"]),
        # a type that is wrong stays refusable once changed
        ({"spec": {"size": "big"}}, {"spec": {"size": "huge"}}, ["spec.size"]),
        # equal to Python, not to JSON: true is not 1, and it is validated
        ({"spec": {"size": 1}}, {"spec": {"size": True}}, ["spec.size"]),
        ({"spec": {"items": [1]}}, {"spec": {"items": [True]}}, ["spec.items[0]"]),
    ],
)
def test_unchanged_values_are_not_validated_again(
    old: dict[str, Any] | None, new: dict[str, Any], fields: list[str]
) -> None:
    assert _fields(new, old) == fields


GADGETS = "/apis/ratchet.example.com/v1/namespaces/default/gadgets"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MERGE = "application/merge-patch+json"


async def test_a_tightened_schema_blocks_only_what_changes(raw: Raw) -> None:
    loose = copy.deepcopy(SCHEMA)
    del loose["properties"]["spec"]["properties"]["size"]["maximum"]
    definition = crd("ratchet.example.com", "Gadget", loose, subresources={"status": {}})
    assert (await raw.request("POST", CRDS, definition))[0] == 201
    for _ in range(100):
        if (await raw.request("GET", GADGETS))[0] == 200:
            break
        await asyncio.sleep(0.05)
    gadget = {"apiVersion": "ratchet.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"size": 50}}
    assert (await raw.request("POST", GADGETS, gadget))[0] == 201
    # the schema now allows at most 10
    _, stored, _ = await raw.request("GET", f"{CRDS}/gadgets.ratchet.example.com")
    stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = SCHEMA
    assert (await raw.request("PUT", f"{CRDS}/gadgets.ratchet.example.com", stored))[0] == 200
    # a new object is held to it at once
    fresh = {**gadget, "metadata": {"name": "h"}}
    status, body, _ = await raw.request("POST", GADGETS, fresh)
    assert status == 422 and "spec.size" in body["message"], body
    # writes that leave spec.size alone pass: labels, the status
    labelled = {"metadata": {"labels": {"team": "a"}}}
    assert (await raw.request("PATCH", f"{GADGETS}/g", labelled, content_type=MERGE))[0] == 200
    phase = {"status": {"phase": "Running"}}
    assert (await raw.request("PATCH", f"{GADGETS}/g/status", phase, content_type=MERGE))[0] == 200
    # changing it to another value the schema refuses is refused, with the field named
    status, body, _ = await raw.request("PATCH", f"{GADGETS}/g", {"spec": {"size": 60}}, content_type=MERGE)
    assert status == 422, body
    assert body["message"] == (
        'Gadget.ratchet.example.com "g" is invalid: spec.size: Invalid value: 60: '
        "spec.size in body should be less than or equal to 10"
    )
    assert (await raw.request("PATCH", f"{GADGETS}/g", {"spec": {"size": 5}}, content_type=MERGE))[0] == 200
