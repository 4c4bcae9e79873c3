"""Object storage: one global resourceVersion, per-resource event history, watchers,
and an optional journal on disk.

Concurrency: everything runs on the server's event loop. A write assigns the
next resourceVersion, stores the object, appends to the resource's history
and hands the event to every watcher's queue without awaiting, so a watch
that snapshots and subscribes in one synchronous step never misses or
repeats an event.

Persistence: with a data directory every write is appended to a JSON-lines
journal and flushed to the OS before the request is answered (a killed
process loses nothing acknowledged); on start the snapshot is loaded, the
journal replayed, and both compacted into a new snapshot.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from localkube.values import clone

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)

DEFAULT_HISTORY = 2000


@dataclass
class Event:
    """A change to one object: ``ADDED``, ``MODIFIED`` or ``DELETED``."""

    rv: int
    type: str
    obj: Obj
    # the object's previous state (for selector transitions), None on ADDED
    old: Obj | None = None


@dataclass(eq=False)
class Watcher:
    """A subscriber to one storage key; the server drains ``queue``."""

    queue: asyncio.Queue[Event] = field(default_factory=asyncio.Queue)
    closed: bool = False


class Journal:
    """Append-only write log plus a snapshot, in one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.snapshot = directory / "snapshot.json"
        self.log = directory / "journal.jsonl"
        self._out: TextIO | None = None

    def load(self) -> tuple[int, dict[str, dict[Key, Obj]]]:
        """The last resourceVersion and every stored object."""
        rv = 0
        data: dict[str, dict[Key, Obj]] = {}
        if self.snapshot.exists():
            state = json.loads(self.snapshot.read_text())
            rv = int(state["rv"])
            for storage, items in state["objects"].items():
                data[storage] = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in items}
        if self.log.exists():
            with self.log.open() as lines:
                for line in lines:
                    if not line.endswith("\n"):
                        break  # a torn last write was never acknowledged
                    entry = json.loads(line)
                    rv = max(rv, int(entry["rv"]))
                    objects = data.setdefault(entry["s"], {})
                    key = (entry["ns"], entry["n"])
                    if entry["op"] == "put":
                        objects[key] = entry["o"]
                    else:
                        objects.pop(key, None)
        return rv, data

    def compact(self, rv: int, data: dict[str, dict[Key, Obj]]) -> None:
        """Write a fresh snapshot and start an empty journal."""
        self.close()
        tmp = self.snapshot.with_suffix(".tmp")
        state = {"rv": rv, "objects": {s: list(objs.values()) for s, objs in data.items()}}
        tmp.write_text(json.dumps(state, separators=(",", ":")))
        os.replace(tmp, self.snapshot)
        self.log.write_text("")

    def append(self, op: str, storage: str, key: Key, rv: int, obj: Obj | None) -> None:
        if self._out is None:
            self._out = self.log.open("a")
        entry: dict[str, Any] = {"op": op, "s": storage, "ns": key[0], "n": key[1], "rv": rv}
        if obj is not None:
            entry["o"] = obj
        self._out.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._out.flush()

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None


class Store:
    """All objects of all kinds, keyed by storage key, namespace and name."""

    def __init__(self, journal: Journal | None = None, history: int = DEFAULT_HISTORY) -> None:
        self._objects: dict[str, dict[Key, Obj]] = {}
        self._history: dict[str, deque[Event]] = {}
        self._watchers: dict[str, set[Watcher]] = {}
        # controllers see every change of every kind, tagged with its storage key
        self._global: list[asyncio.Queue[tuple[str, Event]]] = []
        self._history_size = history
        # per storage key: the newest resourceVersion no longer in the history
        self._forgotten: dict[str, int] = {}
        self.journal = journal
        self.rv = 0
        if journal is not None:
            self.rv, self._objects = journal.load()
            journal.compact(self.rv, self._objects)
        # events before this incarnation are not in any history
        self.base_rv = self.rv

    # -- reads -------------------------------------------------------------
    def get(self, storage: str, namespace: str, name: str) -> Obj | None:
        """The stored object (do not mutate it; copy first)."""
        return self._objects.get(storage, {}).get((namespace, name))

    def items(self, storage: str, namespace: str | None = None) -> list[Obj]:
        """Objects of a storage key, sorted by namespace then name."""
        objects = self._objects.get(storage, {})
        keys = sorted(k for k in objects if namespace is None or k[0] == namespace)
        return [objects[k] for k in keys]

    def count(self, storage: str) -> int:
        return len(self._objects.get(storage, {}))

    def storages(self) -> Iterator[str]:
        return iter(list(self._objects))

    def namespaced_objects(self, namespace: str) -> Iterator[tuple[str, Obj]]:
        """Every object in a namespace, of any kind."""
        for storage, objects in list(self._objects.items()):
            for key, obj in list(objects.items()):
                if key[0] == namespace:
                    yield storage, obj

    # -- writes ------------------------------------------------------------
    def next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def put(self, storage: str, obj: Obj, event_type: str) -> Obj:
        """Store ``obj`` (ADDED or MODIFIED) with a new resourceVersion; returns it."""
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        objects = self._objects.setdefault(storage, {})
        old = objects.get(key)
        rv = self.next_rv()
        meta["resourceVersion"] = str(rv)
        objects[key] = obj
        if self.journal is not None:
            self.journal.append("put", storage, key, rv, obj)
        self._emit(storage, Event(rv, event_type, obj, old))
        return obj

    def delete(self, storage: str, namespace: str, name: str) -> Obj | None:
        """Remove an object; watchers see DELETED with the delete's resourceVersion."""
        objects = self._objects.get(storage, {})
        old = objects.pop((namespace, name), None)
        if old is None:
            return None
        rv = self.next_rv()
        final = clone(old)
        final["metadata"]["resourceVersion"] = str(rv)
        if self.journal is not None:
            self.journal.append("delete", storage, (namespace, name), rv, None)
        self._emit(storage, Event(rv, "DELETED", final, old))
        return final

    # -- watch -------------------------------------------------------------
    def _emit(self, storage: str, event: Event) -> None:
        history = self._history.get(storage)
        if history is None:
            history = self._history[storage] = deque(maxlen=self._history_size)
        if len(history) == history.maxlen:
            self._forgotten[storage] = history[0].rv
        history.append(event)
        for watcher in list(self._watchers.get(storage, ())):
            if not watcher.closed:
                watcher.queue.put_nowait(event)
        for queue in self._global:
            queue.put_nowait((storage, event))

    def subscribe(self, storage: str) -> Watcher:
        watcher = Watcher()
        self._watchers.setdefault(storage, set()).add(watcher)
        return watcher

    def subscribe_all(self) -> asyncio.Queue[tuple[str, Event]]:
        """A queue of every change (for the built-in controllers)."""
        queue: asyncio.Queue[tuple[str, Event]] = asyncio.Queue()
        self._global.append(queue)
        return queue

    def all_objects(self) -> Iterator[tuple[str, Obj]]:
        """Every stored object with its storage key."""
        for storage, objects in list(self._objects.items()):
            for obj in list(objects.values()):
                yield storage, obj

    def unsubscribe(self, storage: str, watcher: Watcher) -> None:
        watcher.closed = True
        self._watchers.get(storage, set()).discard(watcher)

    def history_since(self, storage: str, rv: int) -> list[Event] | None:
        """Events after ``rv``, or None when some of them are no longer retained."""
        if rv < max(self.base_rv, self._forgotten.get(storage, 0)):
            return None
        return [e for e in self._history.get(storage, ()) if e.rv > rv]

    def oldest_retained(self, storage: str) -> int:
        """The oldest resourceVersion a watch may still resume from."""
        return max(self.base_rv, self._forgotten.get(storage, 0))

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()
