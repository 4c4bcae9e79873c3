"""Leases (pkg/apis/coordination/validation: ValidateLeaseSpec)."""

from __future__ import annotations

from typing import Any

from localkube.errors import Cause, field_invalid
from localkube.validation.fields import non_negative, obj_at

Obj = dict[str, Any]


def validate_lease(obj: Obj) -> list[Cause]:
    spec = obj_at(obj.get("spec"))
    causes: list[Cause] = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and (not isinstance(duration, int) or duration <= 0):
        causes.append(field_invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    causes += non_negative("spec.leaseTransitions", spec.get("leaseTransitions"))
    return causes
