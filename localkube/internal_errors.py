"""Unexpected exceptions while serving a request: the client gets a generic
``InternalError`` Status carrying a request id, never the exception's text;
the log gets one line per failed request with that id and the exception's
summary, and the traceback only the first time a distinct error (type and
raising line) is seen, so a client repeating a failing request cannot flood
the log. Called from the server's request handler on the event loop.
"""

from __future__ import annotations

import logging
import traceback
import uuid
from collections import OrderedDict

from localkube.errors import APIError

SEEN_LIMIT = 256  # distinct errors remembered (the oldest is forgotten first)
TRACEBACK_FRAMES = 30

_seen: OrderedDict[tuple[str, str, int], None] = OrderedDict()


def new_request_id() -> str:
    return str(uuid.uuid4())


def _where(exc: BaseException) -> tuple[str, str, int]:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return type(exc).__name__, "", 0
    return type(exc).__name__, frames[-1].filename, frames[-1].lineno or 0


def internal_error(exc: BaseException, request_id: str, method: str, path: str, log: logging.Logger) -> APIError:
    """Log ``exc`` (once in full per distinct error) and the Status to answer with."""
    key = _where(exc)
    first = key not in _seen
    _seen[key] = None
    _seen.move_to_end(key)
    while len(_seen) > SEEN_LIMIT:
        _seen.popitem(last=False)
    summary = f"{type(exc).__name__}: {str(exc)[:200]}"
    line = f"internal error, request {request_id}: {method} {path}: {summary} at {key[1]}:{key[2]}"
    if first:
        log.error("%s\n%s", line, _innermost_frames(exc))
    else:
        log.error("%s", line)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("request %s:\n%s", request_id, _innermost_frames(exc))
    return _status(request_id)


def _innermost_frames(exc: BaseException) -> str:
    # the innermost frames say where; a RecursionError's full traceback is a thousand frames
    return "".join(traceback.format_exception(exc, limit=-TRACEBACK_FRAMES)).rstrip()


def _status(request_id: str) -> APIError:
    return APIError(
        500,
        "InternalError",
        f"Internal error occurred: the server failed to handle request {request_id}; its log has the details",
    )


__all__ = ["internal_error", "new_request_id"]
