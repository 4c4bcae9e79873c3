"""JSON of the API client's requests, answers and watch events.

orjson is several times faster than the standard library; it is used where it gives the
standard library's result, and everything else goes the standard way. (localkube has its
own copy of these few lines: neither package may import the other.)
"""

from __future__ import annotations

import json
from typing import Any

import orjson

# orjson reads integers past 64 bits as floats; the standard library keeps them exact. Any run
# of 20 digits (a regular expression would cost more than the parse: translate is one C pass)
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_NUMBER = b"0" * 20


def _long_number(data: bytes) -> bool:
    return _LONG_NUMBER in data.translate(_DIGITS)


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON."""
    try:
        return orjson.dumps(obj)
    except TypeError:  # a key that is not a string, an integer past 64 bits
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def loads(data: bytes) -> Any:
    """What ``json.loads(data)`` returns (and raises), orjson's way where that is the same."""
    if not _long_number(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # the standard library reads a few things orjson refuses, or raises its own error
    return json.loads(data)
