"""The protobuf wire format's primitives (varints, field keys, length-delimited fields),
shared by the API's protobuf encoding and the gnostic OpenAPI v2 document."""

from __future__ import annotations

import functools

_MASK64 = (1 << 64) - 1
_SMALL = [bytes((n,)) for n in range(128)]


def varint(value: int) -> bytes:
    """A base-128 varint; negative numbers as their 64-bit two's complement, as Go writes them."""
    if 0 <= value < 128:
        return _SMALL[value]
    value &= _MASK64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


@functools.cache
def key(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def delimited(number: int, payload: bytes) -> bytes:
    return key(number, 2) + varint(len(payload)) + payload
