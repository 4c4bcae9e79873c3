"""JSON on localkube's hot paths: request bodies, answers, watch events and the journal.

orjson encodes and decodes several times faster than the standard library. It is used where
its result is the standard library's: anything it refuses or would read differently goes the
standard way, so no input decodes or encodes differently than before.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

# orjson reads integers past 64 bits as floats; the standard library keeps them exact
_LONG_NUMBER = re.compile(rb"[0-9]{20}")


def dumps(obj: Any) -> bytes:
    """Compact JSON (``separators=(",", ":")``), UTF-8."""
    try:
        return orjson.dumps(obj)
    except TypeError:  # a key that is not a string, an integer past 64 bits
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def fast_loads(data: bytes) -> tuple[bool, Any]:
    """``(True, value)`` when orjson reads ``data`` exactly as ``json.loads`` would, else
    ``(False, None)``: the caller decodes it the standard way (and reports its errors)."""
    if _LONG_NUMBER.search(data):
        return False, None
    try:
        return True, orjson.loads(data)
    except orjson.JSONDecodeError:  # lone surrogates, a byte-order mark, invalid JSON
        return False, None


def loads(data: bytes) -> Any:
    """What ``json.loads(data)`` returns, orjson's way where that is the same."""
    decoded, value = fast_loads(data)
    return value if decoded else json.loads(data)
