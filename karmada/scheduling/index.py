"""Which bindings a changed Cluster concerns, without looking at every binding.

Karmada lists every binding on each cluster event and matches its affinity.
With many bindings most of them name their clusters (``clusterNames``), so the
index keeps three groups: bindings any cluster concerns (no affinity, or a
``clusterAffinities`` result not yet observed), bindings whose affinity names
clusters (found by cluster name, then checked against the whole affinity), and
bindings selecting by labels or fields only (checked one by one with an
affinity compiled once). A cluster event then costs the bindings it can
concern, not all of them.

Not thread-safe; the scheduler controller updates it from informer handlers,
which run on one task.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from karmada.api.cluster import Cluster
from karmada.api.policy import ClusterAffinity
from karmada.scheduling.triggers import AnyCluster
from karmada.selectors.clusters import ClusterMatcher, compile_cluster_affinity

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class _Entry:
    names: frozenset[str]  # empty: not indexed by name
    matches: ClusterMatcher | None  # None: any cluster


class BindingIndex(Generic[K]):
    """Binding keys by the clusters whose changes concern them."""

    def __init__(self) -> None:
        self._entries: dict[K, _Entry] = {}
        self._any: set[K] = set()
        self._by_name: dict[str, set[K]] = {}
        self._selective: set[K] = set()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def put(self, key: K, affinity: ClusterAffinity | AnyCluster) -> None:
        """Index ``key`` under ``affinity`` (replacing what it had)."""
        self.remove(key)
        if isinstance(affinity, AnyCluster):
            entry = _Entry(frozenset(), None)
            self._any.add(key)
        else:
            entry = _Entry(frozenset(affinity.cluster_names or ()), compile_cluster_affinity(affinity))
            if entry.names:
                for name in entry.names:
                    self._by_name.setdefault(name, set()).add(key)
            else:
                self._selective.add(key)
        self._entries[key] = entry

    def remove(self, key: K) -> None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        self._any.discard(key)
        self._selective.discard(key)
        for name in entry.names:
            keys = self._by_name.get(name)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_name[name]

    def affected(self, cluster: Cluster) -> set[K]:
        """Keys of the bindings whose affinity the cluster matches (or that have none)."""
        found = set(self._any)
        name = cluster.metadata.name or ""
        for group in (self._by_name.get(name, ()), self._selective):
            for key in group:
                matches = self._entries[key].matches
                if matches is None or matches(cluster):
                    found.add(key)
        return found
