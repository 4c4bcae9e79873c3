"""kubectl's resource-type words (``deploy``, ``deployments.apps``, ``Deployment``) to a
served resource, from discovery documents (``APIResourceList``s) the caller fetched."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ResourceType:
    """A served resource (the same fields as ``karmada.kube.Resource``, kept free of I/O)."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool


class UnknownType(LookupError):
    """The server serves no resource by that name."""


def _names(entry: Mapping[str, Any]) -> set[str]:
    names = {str(entry.get("name", "")), str(entry.get("singularName") or ""), str(entry.get("kind", "")).lower()}
    names.update(str(s) for s in entry.get("shortNames") or [])
    return {n.lower() for n in names if n}


def resolve_type(word: str, documents: Sequence[Mapping[str, Any]]) -> ResourceType:
    """The resource ``word`` names; ``documents`` in preference order (the first match wins,
    as kubectl prefers the core group, then each group's preferred version)."""
    lowered = word.lower()
    for document in documents:
        group, _, version = str(document.get("groupVersion", "")).rpartition("/")
        for entry in document.get("resources") or []:
            if "/" in str(entry.get("name", "")):
                continue  # subresources
            names = _names(entry)
            if lowered in names or (group and any(lowered == f"{n}.{group}" for n in names)):
                return ResourceType(group, version, entry["name"], entry["kind"], bool(entry.get("namespaced")))
    raise UnknownType(f'the server doesn\'t have a resource type "{word}"')
