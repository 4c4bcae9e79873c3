"""An index over a watch cache (client-go's ``Indexer``): index value -> keys of the
cached objects whose ``values(obj)`` name it, kept by a handler on the cache.

Runs on the cache's task like every handler, so no locking. A lookup answers with
the cache's current objects (this process's stored writes included), re-checked
against the index function, so a write the watch has not delivered yet is never
answered from its older version. A reader of a later leadership term may find the
handler removed from the cache; the first lookup then attaches it again, and the
cache replays every object to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from weakref import WeakKeyDictionary

from karmada.kube.informer import Informer

Obj = dict[str, Any]
IndexFunc = Callable[[Obj], Iterable[str]]


class Index:
    def __init__(self, informer: Informer, values: IndexFunc) -> None:
        self.informer = informer
        self.values = values
        self._keys: dict[str, set[tuple[str, str]]] = {}
        self._of: dict[tuple[str, str], frozenset[str]] = {}
        self._attach()

    def _attach(self) -> None:
        self._keys.clear()
        self._of.clear()
        self.informer.add_handler(self._on_event)

    def _on_event(self, kind: str, obj: Obj, old: Obj | None) -> None:
        meta = obj.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        new = frozenset() if kind == "DELETED" else frozenset(self.values(obj))
        before = self._of.pop(key, frozenset())
        for value in before - new:
            keys = self._keys.get(value)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._keys[value]
        for value in new:
            self._keys.setdefault(value, set()).add(key)
        if new:
            self._of[key] = new

    def get(self, value: str) -> list[Obj]:
        """The cached objects indexed under ``value``, sorted by (namespace, name)."""
        if self._on_event not in self.informer.handlers:
            self._attach()
        found = []
        for namespace, name in sorted(self._keys.get(value, ())):
            obj = self.informer.get(name, namespace)
            if obj is not None and value in self.values(obj):
                found.append(obj)
        return found

    def __len__(self) -> int:
        return len(self._of)


_shared: WeakKeyDictionary[Informer, dict[str, Index]] = WeakKeyDictionary()


def shared_index(informer: Informer, name: str, values: IndexFunc) -> Index:
    """The one index called ``name`` on ``informer``, made on first use (every reader of a
    shared cache asks by the same name and function, so they share one)."""
    indexes = _shared.setdefault(informer, {})
    found = indexes.get(name)
    if found is None:
        found = indexes[name] = Index(informer, values)
    return found
