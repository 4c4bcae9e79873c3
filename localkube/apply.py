"""Server-side apply (``application/apply-patch+yaml``): the request's shell around
``localkube.managedfields.apply`` (checks, create-or-update, storage)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from localkube.errors import Cause, bad_request, invalid
from localkube.kinds import Context
from localkube.managedfields import apply

if TYPE_CHECKING:
    from localkube.api import ResourceAPI, Result, WriteOptions
    from localkube.resources import ResourceType

Obj = dict[str, Any]


def server_side_apply(
    api: ResourceAPI,
    rt: ResourceType,
    namespace: str,
    name: str,
    body: Any,
    old: Obj | None,
    subresource: str,
    context: Context,
    options: WriteOptions,
) -> Result:
    """Apply ``body`` as ``options.field_manager``."""
    if not options.field_manager:
        raise invalid(
            "PatchOptions",
            "meta.k8s.io",
            "",
            [Cause("FieldValueRequired", "Required value: is required for apply patch", "fieldManager")],
        )
    if not isinstance(body, dict):
        raise bad_request("apply patch body must be an object")
    config = api._check_body_identity(rt, copy.deepcopy(body), namespace, name)
    if config["metadata"].get("managedFields"):
        raise bad_request("metadata.managedFields must be nil")
    write = api.field_write(rt, options, subresource)
    identity = (name, rt.group, rt.plural)
    if old is None:
        if subresource:
            raise api._not_found(rt, name)
        created = apply(None, config, write, options.force, identity)
        result = api.create(rt, namespace, created, context, options, managed=True)
        result.code = 201
        return result
    merged = apply(api._view(rt, old), config, write, options.force, identity)
    merged["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion")
    obj = api._to_storage(rt, merged)
    return api._update_existing(rt, obj, old, subresource, context, options, managed=True)
