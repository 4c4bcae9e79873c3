"""The applied-overrides annotations as Go's encoding/json writes them."""

from __future__ import annotations

from typing import Any

import pytest

from karmada.api.override import Overriders
from karmada.works import go_json, overriders_shadow


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"b": 1, "a": [1, "x"]}, '{"b":1,"a":[1,"x"]}'),  # dict order is the caller's (struct order)
        ("<a&b>", '"\\u003ca\\u0026b\\u003e"'),
        ("grüß", '"grüß"'),  # UTF-8, not \\u escapes
        ("line\u2028sep", '"line\\u2028sep"'),
        (None, "null"),
    ],
)
def test_go_json(value: Any, expected: str) -> None:
    assert go_json(value) == expected


@pytest.mark.parametrize(
    ("overriders", "expected"),
    [
        # declaration order whatever the input order; maps sorted; omitempty rules
        (
            {
                "argsOverrider": [{"operator": "add", "containerName": "c", "value": ["-v"]}],
                "plaintext": [{"operator": "remove", "path": "/spec/x"}],
            },
            '{"plaintext":[{"path":"/spec/x","operator":"remove","value":null}],'
            '"argsOverrider":[{"containerName":"c","operator":"add","value":["-v"]}]}',
        ),
        (
            {"labelsOverrider": [{"operator": "add", "value": {"z": "1", "a": "2"}}]},
            '{"labelsOverrider":[{"operator":"add","value":{"a":"2","z":"1"}}]}',
        ),
        (
            {"imageOverrider": [{"component": "Tag", "operator": "remove"}]},
            '{"imageOverrider":[{"component":"Tag","operator":"remove"}]}',
        ),
        (
            {
                "imageOverrider": [
                    {
                        "predicate": {"path": "/spec/template/spec/containers/0/image"},
                        "component": "Registry",
                        "operator": "replace",
                        "value": "mirror.example",
                    }
                ]
            },
            '{"imageOverrider":[{"predicate":{"path":"/spec/template/spec/containers/0/image"},'
            '"component":"Registry","operator":"replace","value":"mirror.example"}]}',
        ),
        (
            {"commandOverrider": [{"containerName": "c", "operator": "remove", "value": []}]},
            '{"commandOverrider":[{"containerName":"c","operator":"remove"}]}',
        ),
        (
            {
                "fieldOverrider": [
                    {
                        "fieldPath": "/data/cfg",
                        "yaml": [{"subPath": "/a", "operator": "add", "value": {"y": 1, "x": 2}}],
                    }
                ]
            },
            '{"fieldOverrider":[{"fieldPath":"/data/cfg","yaml":[{"subPath":"/a","operator":"add","value":{"x":2,"y":1}}]}]}',
        ),
        (
            {"plaintext": [{"path": "/metadata/annotations/n", "operator": "add", "value": "a<b"}]},
            '{"plaintext":[{"path":"/metadata/annotations/n","operator":"add","value":"a\\u003cb"}]}',
        ),
    ],
)
def test_overriders_as_go_marshals_them(overriders: dict[str, Any], expected: str) -> None:
    assert go_json(overriders_shadow(Overriders.from_dict(overriders))) == expected
