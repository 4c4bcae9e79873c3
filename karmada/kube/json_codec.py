"""JSON of the API client's requests, answers and watch events.

orjson is several times faster than the standard library; it is used where it gives the
standard library's result, and everything else goes the standard way. (localkube has its
own copy of these few lines: neither package may import the other.)
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

# orjson reads integers past 64 bits as floats; the standard library keeps them exact
_LONG_NUMBER = re.compile(rb"[0-9]{20}")


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON."""
    try:
        return orjson.dumps(obj)
    except TypeError:  # a key that is not a string, an integer past 64 bits
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def loads(data: bytes) -> Any:
    """What ``json.loads(data)`` returns (and raises), orjson's way where that is the same."""
    if not _LONG_NUMBER.search(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # the standard library reads a few things orjson refuses, or raises its own error
    return json.loads(data)
