"""Which snapshot a list reads, and its continue tokens, as kube-apiserver decides.

Continue tokens are kube-apiserver's: base64url (no padding) of
``{"v":"meta.k8s.io/v1","rv":N,"start":"<key after the last item>"}``, the key
relative to the list's prefix (``name\\x00`` in a namespace, ``ns/name\\x00``
across namespaces). A token pins every page to the first page's
resourceVersion ``N``; ``rv`` -1 (handed out with a 410) continues at the
latest state instead.

resourceVersion rules (kube-apiserver with its watch cache): ``""`` and ``"0"``
read the latest state; ``N`` with ``resourceVersionMatch=Exact``, or with a
``limit`` and no match (the legacy exact case), or in a continue token reads
exactly the snapshot ``N`` (410 once it is older than the retained history);
otherwise ``N`` means not older than ``N``. Any ``N`` above the server's
resourceVersion waits up to 3 s for it (the cache's block timeout), then
answers 504 ``Too large resource version`` with ``retryAfterSeconds`` 1.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from localkube.decoding import load_json
from localkube.errors import APIError, Cause, bad_request
from localkube.query import int_param, parse_resource_version
from localkube.store import SnapshotExpired, Store

Obj = dict[str, Any]

TOO_LARGE_WAIT = 3.0
TOO_LARGE_RETRY_SECONDS = 1
LIST_TOO_OLD = "The resourceVersion for the provided list is too old."
CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list"
    " without the continue parameter, or use the continue token in this response to retrieve the remainder of the"
    " results. Continuing with the provided token results in an inconsistent list - objects that were created,"
    " modified, or deleted between the time the first chunk was returned and now may show up in the list."
)


def encode_continue(start: str, rv: int) -> str:
    """A continue token resuming at key ``start`` (relative to the list) of snapshot ``rv``."""
    token = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[str, int]:
    """``(start key, resourceVersion)`` of a token; 400 as kube-apiserver words it when invalid."""
    invalid = "invalid continue token: continue key is not valid"
    try:
        state = load_json(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (ValueError, binascii.Error):
        raise bad_request(invalid) from None
    if not isinstance(state, dict):
        raise bad_request(invalid)
    if state.get("v") != "meta.k8s.io/v1":
        raise bad_request(f"{invalid}: server does not recognize this encoded version {state.get('v')}")
    rv, start = state.get("rv"), state.get("start")
    if not isinstance(rv, int) or isinstance(rv, bool) or rv == 0:
        raise bad_request(f"{invalid}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if not isinstance(start, str) or not start:
        raise bad_request(f"{invalid}: encoded start key empty (version meta.k8s.io/v1)")
    # no path tricks: the key must stay below the list's prefix (as path.Clean checks upstream)
    if any(part in ("", ".", "..") for part in start.removeprefix("/").split("/")):
        raise bad_request(f"{invalid}: {start}")
    return start.removeprefix("/"), rv


def too_large(requested: int, current: int) -> APIError:
    """kube-apiserver's 504 for a resourceVersion the server has not reached."""
    return APIError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {requested}, current: {current}",
        causes=[Cause("ResourceVersionTooLarge", "Too large resource version")],
        retry_after=TOO_LARGE_RETRY_SECONDS,
    )


@dataclass
class ExpiredContinue(APIError):
    """410 for a continue token whose snapshot is gone, with a token continuing at the latest state."""

    continue_token: str = ""

    def status(self) -> dict[str, Any]:
        body = super().status()
        body["metadata"] = {"continue": self.continue_token}
        return body


def parse_limit(query: Any) -> int:
    """The ``limit`` parameter (0 or negative: no limit)."""
    return max(int_param(query, "limit") or 0, 0)


async def wait_until_fresh(store: Store, rv: int) -> None:
    """Wait up to 3 s for the store to reach ``rv``; 504 Too large resource version otherwise."""
    if not await store.wait_for_rv(rv, TOO_LARGE_WAIT):
        raise too_large(rv, store.rv)


@dataclass
class ListRead:
    """Where a list reads: the snapshot's resourceVersion and the first key."""

    rv: int
    start: str = ""
    # a continue token's key, relative to the list (for a 410's fresh token)
    relative_start: str = ""
    from_token: bool = False


async def list_read(store: Store, namespace: str, query: Any, limit: int) -> ListRead:
    """The snapshot and start key a list request asks for (after its option validation)."""
    token = query.get("continue", "")
    if token:
        relative, rv = decode_continue(token)
        start = f"{namespace}/{relative}" if namespace else relative
        if rv < 0:
            return ListRead(store.rv, start, relative, True)
        await wait_until_fresh(store, rv)
        return ListRead(rv, start, relative, True)
    requested = parse_resource_version(query.get("resourceVersion", ""))
    if requested == 0:
        return ListRead(store.rv)
    await wait_until_fresh(store, requested)
    match = query.get("resourceVersionMatch", "")
    if match == "Exact" or (not match and limit > 0):
        return ListRead(requested)
    return ListRead(store.rv)


def _expired(read: ListRead) -> APIError:
    """The 410 for a snapshot older than the retained history."""
    if read.from_token:
        fresh = encode_continue(read.relative_start, -1)
        return ExpiredContinue(410, "Expired", CONTINUE_TOO_OLD, continue_token=fresh)
    return APIError(410, "Expired", LIST_TOO_OLD)


@dataclass
class ListResult:
    """A page with the list metadata it carries."""

    items: list[Obj]
    rv: int
    continue_token: str = ""
    remaining: int | None = None


async def list_page(
    store: Store, storage: str, namespace: str, query: Any, matches: Callable[[Obj], bool] | None
) -> ListResult:
    """One page of a list request (``matches`` None: no selector, so the remaining count is known)."""
    limit = parse_limit(query)
    read = await list_read(store, namespace, query, limit)
    try:
        page = store.page(storage, namespace or None, rv=read.rv, start=read.start, limit=limit, matches=matches)
    except SnapshotExpired:
        raise _expired(read) from None
    if page.next_start is None:
        return ListResult(page.items, read.rv)
    relative = page.next_start[len(namespace) + 1 :] if namespace else page.next_start
    return ListResult(page.items, read.rv, encode_continue(relative, read.rv), page.remaining)
