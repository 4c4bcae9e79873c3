"""Watch events encoded once for all the watchers that receive them.

A write reaches every watch that selects it: a Work's update goes to its agent's
watch and to the control plane's, a binding's to each of the control plane's
caches. Each watcher used to copy the stored object into its version's view,
apply the CRD's defaults and encode it as JSON by itself. This keeps the last
encoded lines, keyed by the stored object (identity: stored objects are
replaced on write, never changed in place), the resource type served (its
version and schema; a changed CRD makes new types) and the event type, as
kube-apiserver's watch cache serializes an object once per encoding.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from localkube import json_codec
from localkube.resources import ResourceType

Obj = dict[str, Any]
CACHED_LINES = 256  # recent events: enough for every watcher of a write to find its line


class EncodedEvents:
    """The JSON lines of recent watch events, shared by the watches of one server."""

    def __init__(self, size: int = CACHED_LINES) -> None:
        self.size = size
        self.encoded = 0  # lines encoded (a miss)
        self.shared = 0  # lines reused (a hit)
        # the key's ids are only valid while the objects live: the entry holds them
        self._lines: OrderedDict[tuple[int, int, str], tuple[Obj, ResourceType, bytes]] = OrderedDict()

    def line(self, rt: ResourceType, kind: str, stored: Obj, view: Callable[[], Obj]) -> bytes:
        """``{"type": kind, "object": view()}`` as a JSON line, encoded at most once per
        (``stored``, ``rt``, ``kind``) while it is among the recent ones."""
        key = (id(stored), id(rt), kind)
        hit = self._lines.get(key)
        if hit is not None and hit[0] is stored and hit[1] is rt:
            self._lines.move_to_end(key)
            self.shared += 1
            return hit[2]
        line = json_codec.dumps({"type": kind, "object": view()}) + b"\n"
        self._lines[key] = (stored, rt, line)
        self._lines.move_to_end(key)
        if len(self._lines) > self.size:
            self._lines.popitem(last=False)
        self.encoded += 1
        return line
