"""``metav1.Status`` errors with the codes, reasons and messages kube-apiserver uses.

Handlers raise :class:`APIError`; the server turns it into a JSON Status body
(always JSON, whatever the client accepted) and keeps serving.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Cause:
    """One ``details.causes`` entry (the JSON key is ``reason``)."""

    reason: str
    message: str
    field: str = ""

    def to_dict(self) -> dict[str, str]:
        data = {"reason": self.reason, "message": self.message}
        if self.field:
            data["field"] = self.field
        return data


@dataclass
class APIError(Exception):
    """A failed request, rendered as a Status object."""

    code: int
    reason: str
    message: str
    name: str = ""
    group: str = ""
    kind: str = ""
    uid: str = ""
    causes: list[Cause] = field(default_factory=list)
    retry_after: int | None = None

    def __str__(self) -> str:
        return self.message

    def status(self) -> dict[str, Any]:
        """The Status body."""
        details: dict[str, Any] = {}
        if self.name:
            details["name"] = self.name
        if self.group:
            details["group"] = self.group
        if self.kind:
            details["kind"] = self.kind
        if self.uid:
            details["uid"] = self.uid
        if self.causes:
            details["causes"] = [c.to_dict() for c in self.causes]
        if self.retry_after is not None:
            details["retryAfterSeconds"] = self.retry_after
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "details": details,
            "code": self.code,
        }
        return body


def qualified(resource: str, group: str) -> str:
    """``configmaps`` or ``deployments.apps``."""
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, group: str, name: str) -> APIError:
    return APIError(404, "NotFound", f'{qualified(resource, group)} "{name}" not found', name, group, resource)


def resource_not_found() -> APIError:
    return APIError(404, "NotFound", "the server could not find the requested resource")


def already_exists(resource: str, group: str, name: str) -> APIError:
    return APIError(
        409, "AlreadyExists", f'{qualified(resource, group)} "{name}" already exists', name, group, resource
    )


def conflict(resource: str, group: str, name: str, detail: str) -> APIError:
    return APIError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {detail}',
        name,
        group,
        resource,
    )


MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"


def bad_request(message: str) -> APIError:
    return APIError(400, "BadRequest", message)


def method_not_allowed() -> APIError:
    return APIError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")


def forbidden(
    message: str, *, resource: str = "", group: str = "", name: str = "", causes: list[Cause] | None = None
) -> APIError:
    return APIError(403, "Forbidden", message, name, group, resource, causes=causes or [])


def unauthorized() -> APIError:
    return APIError(401, "Unauthorized", "Unauthorized")


def unsupported_media_type(accepted: list[str]) -> APIError:
    return APIError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: " + ", ".join(accepted),
    )


def not_acceptable(accepted: list[str]) -> APIError:
    return APIError(406, "NotAcceptable", "only the following media types are accepted: " + ", ".join(accepted))


def too_large(message: str = "Request entity too large: limit is 3145728") -> APIError:
    return APIError(413, "RequestEntityTooLarge", message)


def expired(message: str) -> APIError:
    return APIError(410, "Expired", message)


def invalid(kind: str, group: str, name: str, causes: list[Cause]) -> APIError:
    """422 with one cause per field error; the message aggregates them like the real server."""
    texts = [f"{c.field}: {c.message}" if c.field else c.message for c in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    what = f"{kind}.{group}" if group else kind
    return APIError(422, "Invalid", f'{what} "{name}" is invalid: {joined}', name, group, kind, causes=causes)


def field_invalid(path: str, value: Any, detail: str) -> Cause:
    """``Invalid value: <value>: <detail>`` as Go formats it (strings quoted)."""
    return Cause("FieldValueInvalid", f"Invalid value: {go_value(value)}: {detail}", path)


def field_required(path: str, detail: str = "") -> Cause:
    return Cause("FieldValueRequired", "Required value" + (f": {detail}" if detail else ""), path)


def field_unsupported(path: str, value: Any, supported: list[str]) -> Cause:
    choices = ", ".join(f'"{s}"' for s in supported)
    return Cause("FieldValueNotSupported", f"Unsupported value: {go_value(value)}: supported values: {choices}", path)


def field_forbidden(path: str, detail: str) -> Cause:
    return Cause("FieldValueForbidden", f"Forbidden: {detail}", path)


def field_too_long(path: str, limit: int) -> Cause:
    return Cause("FieldValueTooLong", f"Too long: may not be more than {limit} bytes", path)


def field_duplicate(path: str, value: Any) -> Cause:
    return Cause("FieldValueDuplicate", f"Duplicate value: {go_value(value)}", path)


class GoLiteral(str):
    """A value Go prints unquoted, such as the uint64 ``0x0`` of a missing resourceVersion."""


def go_value(value: Any) -> str:
    """A value as Go's %#v-ish error formatting shows it: strings quoted, others plain."""
    if isinstance(value, GoLiteral):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    return f'"{type(value).__name__}"'
