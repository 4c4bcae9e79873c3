"""The options a request carries besides its object, read as kube-apiserver reads
them: the write options (``dryRun``, ``fieldValidation``, ``fieldManager``,
``force`` and the User-Agent's product), the delete options (a DeleteOptions body
or the query's ``propagationPolicy``, ``orphanDependents`` and
``gracePeriodSeconds``) and ListOptions' rules for ``resourceVersionMatch``.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from localkube import protobuf
from localkube.api import WriteOptions
from localkube.decoding import decode_body, read_body
from localkube.errors import Cause, bad_request, invalid
from localkube.query import int_param

Obj = dict[str, Any]


def truthy(value: str | None) -> bool:
    """A boolean query parameter as the server reads it."""
    return value in ("true", "1", "True")


def list_options_problem(match: str, resource_version: str, continue_token: str) -> Cause | None:
    """What the server's ListOptions validation says about resourceVersionMatch."""
    if match and continue_token:
        message = "Forbidden: resourceVersionMatch is forbidden when continue is provided"
        return Cause("FieldValueForbidden", message, "resourceVersionMatch")
    if match and match not in ("NotOlderThan", "Exact"):
        message = f'Unsupported value: "{match}": supported values: "Exact", "NotOlderThan"'
        return Cause("FieldValueNotSupported", message, "resourceVersionMatch")
    if match and not resource_version:
        message = "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        return Cause("FieldValueForbidden", message, "resourceVersionMatch")
    return None


def write_options(request: web.Request) -> WriteOptions:
    """The options of a create, update, patch or delete (400 or 422 for a bad one)."""
    dry = request.query.getall("dryRun", [])
    for value in dry:
        if value != "All":
            raise invalid(
                "",
                "",
                "",
                [
                    Cause(
                        "FieldValueNotSupported",
                        f'Unsupported value: "{value}": supported values: "All"',
                        "dryRun",
                    )
                ],
            )
    validation = request.query.get("fieldValidation", "Warn") or "Warn"
    if validation not in ("Strict", "Warn", "Ignore"):
        raise bad_request(f"fieldValidation must be one of Ignore, Warn, or Strict, got {validation}")
    manager = request.query.get("fieldManager", "")
    if len(manager) > 128:
        raise bad_request("fieldManager: Too long: may not be more than 128 bytes")
    force = request.query.get("force")
    agent = request.headers.get("User-Agent", "").split("/", 1)[0][:128]
    return WriteOptions(bool(dry), validation, manager, force is not None and truthy(force), agent, answer_only=True)


async def read_delete_options(request: web.Request) -> Obj:
    """The DeleteOptions of a delete: its body when it has one, else from the query."""
    raw = await read_body(request)
    if raw.startswith(protobuf.MAGIC):
        try:
            decoded: Obj = protobuf.decode_object(raw)
        except (ValueError, IndexError, KeyError) as exc:
            raise bad_request(f"DeleteOptions cannot be decoded: {exc}") from None
        return decoded
    if raw.strip():
        body = decode_body(raw, request.headers.get("Content-Type", "application/json"), "DeleteOptions")
        if not isinstance(body, dict):
            raise bad_request("DeleteOptions must be an object")
        return body
    options: Obj = {}
    if "propagationPolicy" in request.query:
        options["propagationPolicy"] = request.query["propagationPolicy"]
    if "orphanDependents" in request.query:
        options["orphanDependents"] = truthy(request.query["orphanDependents"])
    if "gracePeriodSeconds" in request.query:
        options["gracePeriodSeconds"] = int_param(request.query, "gracePeriodSeconds")
    return options
