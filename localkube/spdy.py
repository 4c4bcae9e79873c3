"""The few SPDY/3.1 frames kubectl's port-forward sends inside a WebSocket.

kubectl 1.32 port-forwards over a WebSocket whose subprotocol is
``SPDY/3.1+portforward.k8s.io``: its binary messages carry, as one byte
stream, the SPDY/3.1 session it would otherwise speak over an upgraded
connection (client-go's tunneling connection). This module reads and writes
that session's frames as the server end needs them: SYN_STREAM in, SYN_REPLY
out, DATA both ways (FIN flags half-close), PING answered, RST_STREAM,
SETTINGS, WINDOW_UPDATE, HEADERS and GOAWAY read. Header blocks are zlib
streams (one per direction, for the whole session) with SPDY/3's dictionary.

Not a general SPDY implementation: no flow control of our own sends (kube's
streams never fill the 64 KiB window the way an echo answers), no server push,
no priorities.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

VERSION = 3
DATA, SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS = 0, 1, 2, 3, 4
PING, GOAWAY, HEADERS, WINDOW_UPDATE = 6, 7, 8, 9
FLAG_FIN = 0x01
CANCEL = 5  # RST_STREAM status
MAX_FRAME = 1 << 24  # the length field's limit

# SPDY/3's zlib dictionary (draft 3, 2.6.10.1): these names, each with its 4-byte length,
# then the fixed text below
_NAMES = (
    "options head post put delete trace accept accept-charset accept-encoding accept-language accept-ranges age"
    " allow authorization cache-control connection content-base content-encoding content-language content-length"
    " content-location content-md5 content-range content-type date etag expect expires from host if-match"
    " if-modified-since if-none-match if-range if-unmodified-since last-modified location max-forwards pragma"
    " proxy-authenticate proxy-authorization range referer retry-after server te trailer transfer-encoding upgrade"
    " user-agent vary via warning www-authenticate method get status"
)
_WORDS = [*_NAMES.split(" "), "200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie", "keep-alive", "origin"]
_TEXT = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
    "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
    "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)
HEADER_DICTIONARY = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _WORDS) + _TEXT.encode()


class ProtocolError(Exception):
    """The peer sent what SPDY/3.1 does not allow."""


@dataclass
class Frame:
    kind: int  # DATA (0) or a control frame's type
    flags: int
    stream_id: int = 0
    data: bytes = b""  # a DATA frame's payload; a control frame's after its fixed fields
    headers: dict[str, list[str]] = field(default_factory=dict)
    raw: bytes = b""  # the whole frame as received

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


def encode_headers(headers: dict[str, list[str]]) -> bytes:
    out = [struct.pack(">I", len(headers))]
    for name, values in headers.items():
        value = "\0".join(values).encode()
        out += [struct.pack(">I", len(name)), name.lower().encode(), struct.pack(">I", len(value)), value]
    return b"".join(out)


def decode_headers(block: bytes) -> dict[str, list[str]]:
    try:
        (count,) = struct.unpack_from(">I", block, 0)
        offset, headers = 4, {}
        for _ in range(count):
            (size,) = struct.unpack_from(">I", block, offset)
            name = block[offset + 4 : offset + 4 + size].decode()
            offset += 4 + size
            (size,) = struct.unpack_from(">I", block, offset)
            value = block[offset + 4 : offset + 4 + size].decode()
            offset += 4 + size
            headers[name] = value.split("\0")
    except (struct.error, UnicodeDecodeError) as exc:
        raise ProtocolError(f"malformed header block: {exc}") from None
    return headers


class Session:
    """One end of a SPDY/3.1 session: bytes in, frames out, and frames to send encoded."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._inflate = zlib.decompressobj(zdict=HEADER_DICTIONARY)
        self._deflate = zlib.compressobj(
            9, zlib.DEFLATED, zlib.MAX_WBITS, 9, zlib.Z_DEFAULT_STRATEGY, HEADER_DICTIONARY
        )

    def feed(self, data: bytes) -> list[Frame]:
        """The frames completed by ``data`` (a frame may span several messages)."""
        self._buffer += data
        frames = []
        while len(self._buffer) >= 8:
            length = int.from_bytes(self._buffer[5:8], "big")
            if len(self._buffer) < 8 + length:
                break
            raw = bytes(self._buffer[: 8 + length])
            del self._buffer[: 8 + length]
            frames.append(self._parse(raw))
        return frames

    def _parse(self, raw: bytes) -> Frame:
        flags, body = raw[4], raw[8:]
        if not raw[0] & 0x80:
            return Frame(DATA, flags, int.from_bytes(raw[0:4], "big") & 0x7FFFFFFF, body, raw=raw)
        version = int.from_bytes(raw[0:2], "big") & 0x7FFF
        kind = int.from_bytes(raw[2:4], "big")
        if version != VERSION:
            raise ProtocolError(f"unsupported SPDY version {version}")
        frame = Frame(kind, flags, raw=raw)
        if kind in (SYN_STREAM, SYN_REPLY, RST_STREAM, HEADERS, WINDOW_UPDATE) and len(body) >= 4:
            frame.stream_id = int.from_bytes(body[0:4], "big") & 0x7FFFFFFF
        if kind == SYN_STREAM:
            frame.headers = self._inflated(body[10:])
        elif kind in (SYN_REPLY, HEADERS):
            frame.headers = self._inflated(body[4:])
        else:
            frame.data = body
        return frame

    def _inflated(self, block: bytes) -> dict[str, list[str]]:
        try:
            return decode_headers(self._inflate.decompress(block))
        except zlib.error as exc:
            raise ProtocolError(f"header block: {exc}") from None

    def _deflated(self, headers: dict[str, list[str]]) -> bytes:
        return self._deflate.compress(encode_headers(headers)) + self._deflate.flush(zlib.Z_SYNC_FLUSH)

    @staticmethod
    def _control(kind: int, flags: int, body: bytes) -> bytes:
        return struct.pack(">HHI", 0x8000 | VERSION, kind, (flags << 24) | len(body)) + body

    def syn_stream(self, stream_id: int, headers: dict[str, list[str]], fin: bool = False) -> bytes:
        """A client's new stream (localkube only answers them; its tests open them)."""
        body = struct.pack(">IIH", stream_id, 0, 0) + self._deflated(headers)
        return self._control(SYN_STREAM, FLAG_FIN if fin else 0, body)

    def ping(self, ping_id: int) -> bytes:
        return self._control(PING, 0, struct.pack(">I", ping_id))

    def syn_reply(self, stream_id: int, headers: dict[str, list[str]] | None = None, fin: bool = False) -> bytes:
        body = struct.pack(">I", stream_id) + self._deflated(headers or {})
        return self._control(SYN_REPLY, FLAG_FIN if fin else 0, body)

    @staticmethod
    def data(stream_id: int, payload: bytes, fin: bool = False) -> bytes:
        return struct.pack(">II", stream_id, ((FLAG_FIN if fin else 0) << 24) | len(payload)) + payload

    def rst_stream(self, stream_id: int, status: int = CANCEL) -> bytes:
        return self._control(RST_STREAM, 0, struct.pack(">II", stream_id, status))

    def goaway(self, last_stream_id: int) -> bytes:
        return self._control(GOAWAY, 0, struct.pack(">II", last_stream_id, 0))
