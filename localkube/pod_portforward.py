"""``pods/portforward`` (placeholder)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from localkube.errors import bad_request
from localkube.pod_connect import get_pod, require_host

Obj = dict[str, Any]


def check(store: Any, namespace: str, name: str) -> Obj:
    pod = get_pod(store, namespace, name)
    require_host(pod)
    return pod


async def serve(store: Any, request: web.Request, pod: Obj) -> web.StreamResponse:
    raise bad_request("not yet")
