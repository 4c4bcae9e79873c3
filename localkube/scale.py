"""The ``/scale`` subresource of workloads and of custom resources that declare it."""

from __future__ import annotations

import copy
from typing import Any

from aiohttp import web

from localkube.api import ResourceAPI, WriteOptions
from localkube.decoding import decode_body, read_body
from localkube.errors import MODIFIED, bad_request, conflict
from localkube.kinds import Context
from localkube.patch import json_patch, merge_patch, strategic_merge
from localkube.resources import ResourceType
from localkube.tables import jsonpath

Obj = dict[str, Any]


def _paths(rt: ResourceType) -> tuple[str, str, str]:
    if rt.custom:
        return (
            rt.scale_paths.get("specReplicasPath", ".spec.replicas"),
            rt.scale_paths.get("statusReplicasPath", ".status.replicas"),
            rt.scale_paths.get("labelSelectorPath", ""),
        )
    return ".spec.replicas", ".status.replicas", ""


def _selector_string(obj: Obj, rt: ResourceType, path: str) -> str:
    if rt.custom:
        found = jsonpath(obj, path) if path else []
        return str(found[0]) if found else ""
    selector = (obj.get("spec") or {}).get("selector") or {}
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    return ",".join(parts)


def scale_of(obj: Obj, rt: ResourceType) -> Obj:
    spec_path, status_path, selector_path = _paths(rt)
    meta = obj["metadata"]
    spec_replicas = jsonpath(obj, spec_path)
    status_replicas = jsonpath(obj, status_path)
    status: Obj = {"replicas": status_replicas[0] if status_replicas else 0}
    selector = _selector_string(obj, rt, selector_path)
    if selector:
        status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta
        },
        "spec": {"replicas": spec_replicas[0] if spec_replicas else 0},
        "status": status,
    }


def set_replicas(obj: Obj, rt: ResourceType, replicas: int) -> None:
    """Write ``replicas`` where ``rt``'s Scale reads ``spec.replicas`` from."""
    _set(obj, _paths(rt)[0], replicas)


def _set(obj: Obj, path: str, value: Any) -> None:
    parts = [p for p in path.split(".") if p]
    node = obj
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


async def scale_request(
    api: ResourceAPI,
    request: web.Request,
    rt: ResourceType,
    namespace: str,
    name: str,
    context: Context,
    options: WriteOptions,
) -> Obj:
    """The Scale a GET, PUT or PATCH of ``/scale`` answers with."""
    if request.method == "GET":
        return scale_of(api.get(rt, namespace, name), rt)
    raw = await read_body(request)
    content_type = request.headers.get("Content-Type", "")
    return scale_write(api, request.method, content_type, raw, rt, namespace, name, context, options)


def scale_write(
    api: ResourceAPI,
    method: str,
    content_type: str,
    raw: bytes,
    rt: ResourceType,
    namespace: str,
    name: str,
    context: Context,
    options: WriteOptions,
) -> Obj:
    """A PUT or PATCH of ``/scale`` whose body has been read: synchronous, so it can be admitted
    by webhooks like any other write."""
    current = api.get(rt, namespace, name)
    scale = scale_of(current, rt)
    body = decode_body(raw, content_type, "Scale") or {}
    if method == "PATCH":
        media = content_type.split(";", maxsplit=1)[0].strip()
        if media == "application/json-patch+json":
            body = json_patch(scale, body)
        elif media == "application/strategic-merge-patch+json":
            body = strategic_merge(scale, body)
        else:
            body = merge_patch(scale, body)
    elif method != "PUT":
        raise bad_request("scale supports GET, PUT and PATCH")
    rv = (body.get("metadata") or {}).get("resourceVersion")
    if rv and rv != current["metadata"]["resourceVersion"]:
        raise conflict(rt.plural, rt.group, name, MODIFIED)
    replicas = (body.get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or replicas < 0:
        from localkube.errors import field_invalid, invalid

        raise invalid(
            "Scale",
            "autoscaling",
            name,
            [field_invalid("spec.replicas", replicas, "must be greater than or equal to 0")],
        )
    updated = copy.deepcopy(current)
    _set(updated, _paths(rt)[0], replicas)
    result = api.update(rt, namespace, name, updated, "", context, options)
    return scale_of(result.obj, rt)
