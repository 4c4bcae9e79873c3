"""JSON on localkube's hot paths: request bodies, answers, watch events and the journal.

orjson encodes and decodes several times faster than the standard library. It is used where
its result is the standard library's: anything it refuses or would read differently goes the
standard way, so no input decodes or encodes differently than before.
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
    """Compact JSON (``separators=(",", ":")``), UTF-8."""
    try:
        return orjson.dumps(obj)
    except TypeError:  # a key that is not a string, an integer past 64 bits
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def fast_loads(data: bytes) -> tuple[bool, Any]:
    """``(True, value)`` when orjson reads ``data`` exactly as ``json.loads`` would, else
    ``(False, None)``: the caller decodes it the standard way (and reports its errors)."""
    if _long_number(data):
        return False, None
    try:
        return True, orjson.loads(data)
    except orjson.JSONDecodeError:  # lone surrogates, a byte-order mark, invalid JSON
        return False, None


def loads(data: bytes) -> Any:
    """What ``json.loads(data)`` returns, orjson's way where that is the same."""
    decoded, value = fast_loads(data)
    return value if decoded else json.loads(data)
