"""Resource types as kubectl names them (``deploy``, ``deployments``,
``deployment.apps``, ``deployments.v1.apps``), resolved against the server's
aggregated discovery documents (``/api`` and ``/apis`` as
``APIGroupDiscoveryList``), preferred versions first, as kubectl's RESTMapper
resolves them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]


class TypeError_(LookupError):
    """No served resource has this name; the message is kubectl's."""


@dataclass(frozen=True)
class ResourceType:
    """One served resource of one group version."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = field(default_factory=tuple)
    preferred: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``deployments.apps`` (``pods`` for the core group), as kubectl names it in messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def discovered_types(*documents: Obj) -> list[ResourceType]:
    """Every top-level resource of ``APIGroupDiscoveryList`` documents, in their order
    (each group's preferred version first)."""
    found: list[ResourceType] = []
    for document in documents:
        for group in document.get("items") or []:
            name = (group.get("metadata") or {}).get("name", "")
            for index, version in enumerate(group.get("versions") or []):
                for entry in version.get("resources") or []:
                    kind = (entry.get("responseKind") or {}).get("kind", "")
                    if not kind or not entry.get("resource"):
                        continue
                    found.append(
                        ResourceType(
                            group=name,
                            version=str(version.get("version", "")),
                            plural=str(entry["resource"]),
                            kind=str(kind),
                            namespaced=entry.get("scope") == "Namespaced",
                            singular=str(entry.get("singularResource") or kind.lower()),
                            short_names=tuple(entry.get("shortNames") or ()),
                            preferred=index == 0,
                        )
                    )
    return found


def _names(resource: ResourceType) -> set[str]:
    return {resource.plural, resource.singular, resource.kind.lower(), *resource.short_names}


def resolve_type(argument: str, types: Iterable[ResourceType]) -> ResourceType:
    """The resource ``argument`` names: ``NAME``, ``NAME.GROUP`` or ``NAME.VERSION.GROUP``."""
    wanted = argument.strip().lower()
    if not wanted:
        raise TypeError_("a resource type is required")
    candidates = list(types)
    name, _, rest = wanted.partition(".")
    matches = [r for r in candidates if not rest and wanted in _names(r)]
    if not matches and rest:
        version, _, group = rest.partition(".")
        matches = [r for r in candidates if name in _names(r) and r.group == rest]
        if not matches and group:
            matches = [r for r in candidates if name in _names(r) and r.version == version and r.group == group]
        if not matches:
            # a dotted name with no such group: a CRD's plural may contain the group (``clusters.cluster.karmada.io``)
            matches = [r for r in candidates if wanted == r.qualified]
    if not matches:
        raise TypeError_(f'the server doesn\'t have a resource type "{argument}"')
    preferred = [r for r in matches if r.preferred] or matches
    # kubectl prefers the core group, then the first group discovery lists
    return preferred[0]
