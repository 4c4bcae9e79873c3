"""localkube's JSON codec reads and writes exactly what the standard library does."""

from __future__ import annotations

import json
from typing import Any

import pytest

from localkube import json_codec
from localkube.decoding import DecodeError, load_json


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a":1,"b":[true,false,null],"c":"\\u00e9\\n","d":-0.0,"e":1e300}',
        b'{"big":18446744073709551616}',  # past 64 bits: orjson would read a float
        b'{"big":-123456789012345678901234567890}',
        b'{"s":"\\ud800"}',  # a lone surrogate: orjson refuses it, the standard library reads it
        b'\xef\xbb\xbf{"bom":1}',  # a byte-order mark
        b'{"a":1,"a":2}',  # the last of a repeated key wins
        b"[]",
        b'"text"',
    ],
)
def test_loads_equals_the_standard_library(raw: bytes) -> None:
    expected = json.loads(raw)
    got = json_codec.loads(raw)
    assert got == expected and type(got) is type(expected)
    if isinstance(expected, dict) and "big" in expected:
        assert type(got["big"]) is int


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"a":1e400}', 'strconv.ParseFloat: parsing "1e400": value out of range'),
        (b'{"a":NaN}', "invalid character 'N' looking for beginning of value"),
        (b'{"a":-Infinity}', "invalid character 'I' in numeric literal"),
        (b'{"a":', "Expecting value"),
    ],
)
def test_refused_input_keeps_its_go_like_error(raw: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_json(raw)


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1, "b": [True, None], "c": "é<&>", "d": 1.5},
        {1: "integer key"},  # not JSON's: the standard library writes it as "1"
        {"big": 2**70},
        [],
    ],
)
def test_dumps_is_compact_json_the_standard_library_reads_back(value: Any) -> None:
    encoded = json_codec.dumps(value)
    assert isinstance(encoded, bytes)
    assert json.loads(encoded) == json.loads(json.dumps(value))
    assert b", " not in encoded and b": " not in encoded
