"""Events, stored in their core/v1 shape (pkg/apis/core/validation/events.go: ValidateEventCreate)."""

from __future__ import annotations

from typing import Any

from localkube.errors import Cause, field_invalid, field_required
from localkube.validation.fields import obj_at

Obj = dict[str, Any]

TYPES = ["Normal", "Warning"]


def validate_event(obj: Obj) -> list[Cause]:
    causes: list[Cause] = []
    involved = obj_at(obj.get("involvedObject"))
    namespace = obj_at(obj.get("metadata")).get("namespace", "")
    if involved.get("namespace") and namespace and involved["namespace"] != namespace:
        causes.append(
            field_invalid("involvedObject.namespace", involved["namespace"], "does not match event.namespace")
        )
    if obj.get("eventTime"):
        # new-style events (events.k8s.io writers) must say who reported what
        if not obj.get("reportingComponent"):
            causes.append(field_required("reportingController"))
        if not obj.get("reportingInstance"):
            causes.append(field_required("reportingInstance"))
        if not obj.get("action"):
            causes.append(field_required("action"))
        if not obj.get("reason"):
            causes.append(field_required("reason"))
        if obj.get("type") not in TYPES:
            causes.append(
                Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{obj.get("type") or ""}": supported values: "Normal", "Warning"',
                    "type",
                )
            )
    for field, limit in (("reason", 128), ("action", 128), ("message", 1024)):
        if obj.get("eventTime") and len(str(obj.get(field) or "")) > limit:
            causes.append(field_invalid(field, "", f"can have at most {limit} characters"))
    return causes
