"""RFC 7386 JSON merge patch: the RFC's own examples, and a result that shares nothing with its inputs."""

from __future__ import annotations

from typing import Any

import pytest

from localkube.patch import merge_patch


@pytest.mark.parametrize(
    ("doc", "patch", "result"),
    [
        # RFC 7386, appendix A
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"a": "foo"}, "bar", "bar"),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
        # a map replacing a scalar, and integers past 64 bits
        ({"a": 1}, {"a": {"b": 2**70}}, {"a": {"b": 2**70}}),
    ],
)
def test_rfc_7386_examples(doc: Any, patch: Any, result: Any) -> None:
    assert merge_patch(doc, patch) == result


def test_the_result_shares_nothing() -> None:
    doc = {"spec": {"template": {"labels": {"app": "a"}}, "ports": [{"port": 80}]}}
    patch = {"spec": {"template": {"labels": {"tier": "web"}}, "extra": [{"x": 1}]}}
    result = merge_patch(doc, patch)
    result["spec"]["template"]["labels"]["app"] = "changed"
    result["spec"]["ports"][0]["port"] = 1
    result["spec"]["extra"][0]["x"] = 2
    assert doc == {"spec": {"template": {"labels": {"app": "a"}}, "ports": [{"port": 80}]}}
    assert patch == {"spec": {"template": {"labels": {"tier": "web"}}, "extra": [{"x": 1}]}}
