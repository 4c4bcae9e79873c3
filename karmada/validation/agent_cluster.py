"""What a pull agent may change on a Cluster: only what it reports itself.

An agent's credentials (user ``system:karmada:agent:<cluster>`` in group
``system:karmada:agents``) can update its own Cluster. Without this rule they
could turn it into a Push cluster pointing at an endpoint of their choice with
another member's ``secretRef`` (the control plane would then send that token
there), or relabel and untaint it to draw in workloads meant for other clusters.

The agent writes its Cluster's spec once, on its first start after the control
plane created the object (``agent/cluster_spec.py``): ``id``, and the
``apiEndpoint``, ``proxyURL``, ``provider``, ``region`` and ``zones`` given to
``register``. Those may be set only in that first write, while ``spec.id`` is
still empty, and never changed afterwards; the fields below never; status goes
through the ``status`` subresource, which the webhook does not see. Pure: the
webhook passes the request's userInfo groups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karmada.validation.errors import FieldError, forbidden

Obj = Mapping[str, Any]
# the group of every agent's certificate (karmada.registration.identity.AGENTS_GROUP)
AGENTS_GROUP = "system:karmada:agents"
# never written by an agent: who reaches the member and with which credentials, and placement
AGENT_FORBIDDEN_SPEC = (
    "syncMode",
    "secretRef",
    "impersonatorSecretRef",
    "insecureSkipTLSVerification",
    "proxyHeader",
    "taints",
)
# what the agent reports itself: only in its first write (spec.id still empty), never afterwards
AGENT_SET_ONCE_SPEC = ("id", "apiEndpoint", "proxyURL", "provider", "region", "zone", "zones")
_MESSAGE = "may not be changed by a cluster agent (group system:karmada:agents)"


def is_agent(groups: Sequence[str]) -> bool:
    return AGENTS_GROUP in groups


def _empty(value: Any) -> bool:
    return value is None or value in ("", [], {})


def agent_cluster_errors(new: Obj, old: Obj | None) -> list[FieldError]:
    """The fields an agent's CREATE (``old`` None) or UPDATE of a Cluster changes but may not."""
    errors: list[FieldError] = []
    new_spec: Obj = new.get("spec") or {}
    old_spec: Obj = (old or {}).get("spec") or {}
    for name in AGENT_FORBIDDEN_SPEC:
        before = old_spec.get(name) if old is not None else None
        after = new_spec.get(name)
        if old is None and name == "syncMode" and after in (None, "Pull"):
            continue  # a Cluster an agent creates is a Pull one
        if after != before and not (_empty(after) and _empty(before)):
            errors.append(forbidden(f"spec.{name}", _MESSAGE))
    reported = not _empty(old_spec.get("id"))
    for name in AGENT_SET_ONCE_SPEC:
        before, after = old_spec.get(name), new_spec.get(name)
        if after != before and (reported or not _empty(before)):
            errors.append(forbidden(f"spec.{name}", f"{_MESSAGE} after its first report (spec.id set)"))
    new_meta: Obj = new.get("metadata") or {}
    old_meta: Obj = (old or {}).get("metadata") or {}
    for part in ("labels", "annotations"):
        before_map: Obj = old_meta.get(part) or {}
        after_map: Obj = new_meta.get(part) or {}
        for key in sorted(set(before_map) | set(after_map)):
            if before_map.get(key) != after_map.get(key):
                errors.append(forbidden(f"metadata.{part}[{key}]", _MESSAGE))
    return errors
