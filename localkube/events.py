"""core/v1 Events and events.k8s.io/v1 Events: one storage (core shape), two views."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

# events.k8s.io/v1 field -> core/v1 field
_RENAMES = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}


def from_view(obj: Obj, group: str) -> Obj:
    """Convert a written event to the stored (core/v1) shape."""
    if group != "events.k8s.io":
        return obj
    stored = {_RENAMES.get(k, k): v for k, v in obj.items()}
    stored["apiVersion"] = "v1"
    stored["kind"] = "Event"
    return stored


def to_view(obj: Obj, group: str) -> Obj:
    """The stored event as seen through ``group``'s API."""
    if group != "events.k8s.io":
        return obj
    back = {v: k for k, v in _RENAMES.items()}
    view = {back.get(k, k): v for k, v in obj.items()}
    view["apiVersion"] = "events.k8s.io/v1"
    view["kind"] = "Event"
    return view
