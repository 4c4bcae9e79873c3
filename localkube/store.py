"""Object storage: one global resourceVersion, objects per resource in key
order, per-resource event history, watchers, and an optional journal on disk.

Concurrency: everything runs on the server's event loop. A write assigns the
next resourceVersion, stores the object, appends to the resource's history
and hands the event to every watcher's queue without awaiting, so a watch
that snapshots and subscribes in one synchronous step never misses or
repeats an event.

Order and pages: each resource keeps its keys (``namespace/name``, or
``name`` when cluster-scoped, as the tail of kube-apiserver's etcd keys) in a
sorted list maintained with bisect, so a page of a list costs its size plus a
binary search, not a scan of the resource. A page at an older
resourceVersion (a continue token's snapshot) is the current order with the
changes since undone from the event history (each event keeps the object's
previous state), so every page of one list shows the same snapshot; a
snapshot older than the history raises :class:`SnapshotExpired`.

Persistence: with a data directory every write goes to the journal
(:mod:`localkube.journal`); :meth:`Store.durable` waits for its fsync.
"""

from __future__ import annotations

import asyncio
import bisect
import heapq
import itertools
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from localkube.journal import Journal
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
    """A subscriber to one storage key (to the objects of one namespace, of one name, when
    those are given); the server drains ``queue``."""

    queue: asyncio.Queue[Event] = field(default_factory=asyncio.Queue)
    closed: bool = False
    namespace: str = ""
    name: str = ""


class WatcherIndex:
    """The watchers of one storage key by what they narrow to: an event visits only the
    watchers that can match it (those of every object, of its namespace, of its name), never
    all of them. An object's namespace and name never change, so old and new agree."""

    __slots__ = ("by_name", "by_namespace", "everything")

    def __init__(self) -> None:
        self.everything: set[Watcher] = set()
        self.by_namespace: dict[str, set[Watcher]] = {}
        self.by_name: dict[str, set[Watcher]] = {}

    def _bucket(self, watcher: Watcher, create: bool) -> set[Watcher] | None:
        if watcher.name:
            table, key = self.by_name, watcher.name
        elif watcher.namespace:
            table, key = self.by_namespace, watcher.namespace
        else:
            return self.everything
        return table.setdefault(key, set()) if create else table.get(key)

    def add(self, watcher: Watcher) -> None:
        bucket = self._bucket(watcher, True)
        assert bucket is not None
        bucket.add(watcher)

    def discard(self, watcher: Watcher) -> None:
        bucket = self._bucket(watcher, False)
        if bucket is None:
            return
        bucket.discard(watcher)
        if not bucket and bucket is not self.everything:
            table = self.by_name if watcher.name else self.by_namespace
            table.pop(watcher.name or watcher.namespace, None)

    def for_object(self, namespace: str, name: str) -> list[Watcher]:
        found = list(self.everything)
        if namespace:
            found.extend(self.by_namespace.get(namespace, ()))
        for watcher in self.by_name.get(name, ()):
            if not watcher.namespace or watcher.namespace == namespace:
                found.append(watcher)
        return found

    def __len__(self) -> int:
        return len(self.everything) + sum(map(len, self.by_namespace.values())) + sum(map(len, self.by_name.values()))


def flat_key(key: Key) -> str:
    """``namespace/name`` (``name`` when cluster-scoped): the order of kube-apiserver's keys."""
    return f"{key[0]}/{key[1]}" if key[0] else key[1]


def split_key(flat: str) -> Key:
    namespace, _, name = flat.rpartition("/")
    return namespace, name


class SnapshotExpired(Exception):
    """The requested resourceVersion is older than the retained history."""


@dataclass
class Page:
    """One page of a list: its objects, where the next page starts (``None``
    when this is the last) and how many objects follow (``None`` under a filter)."""

    items: list[Obj]
    next_start: str | None
    remaining: int | None


class Store:
    """All objects of all kinds, keyed by storage key, namespace and name."""

    def __init__(self, journal: Journal | None = None, history: int = DEFAULT_HISTORY) -> None:
        self._objects: dict[str, dict[Key, Obj]] = {}
        # per storage key: flat keys of its objects, sorted
        self._order: dict[str, list[str]] = {}
        self._history: dict[str, deque[Event]] = {}
        self._watchers: dict[str, WatcherIndex] = {}
        # controllers see every change of every kind, tagged with its storage key
        self._global: list[asyncio.Queue[tuple[str, Event]]] = []
        self._history_size = history
        # per storage key: the newest resourceVersion no longer in the history
        self._forgotten: dict[str, int] = {}
        # requests waiting for the resourceVersion to reach a value
        self._rv_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self.journal = journal
        self.rv = 0
        if journal is not None:
            self.rv, self._objects = journal.load()
            journal.compact(self.rv, self._objects)
            journal.state = lambda: (self.rv, self._objects)
        self._order = {storage: sorted(map(flat_key, objects)) for storage, objects in self._objects.items()}
        # events before this incarnation are not in any history
        self.base_rv = self.rv

    # -- reads -------------------------------------------------------------
    def get(self, storage: str, namespace: str, name: str) -> Obj | None:
        """The stored object (do not mutate it; copy first)."""
        return self._objects.get(storage, {}).get((namespace, name))

    def items(self, storage: str, namespace: str | None = None) -> list[Obj]:
        """Objects of a storage key in key order (namespace, then name)."""
        objects = self._objects.get(storage, {})
        order = self._order.get(storage, [])
        lo, hi = (
            (bisect.bisect_left(order, f"{namespace}/"), bisect.bisect_left(order, f"{namespace}0"))
            if namespace
            else (0, len(order))
        )
        return [objects[split_key(key)] for key in order[lo:hi]]

    def page(
        self,
        storage: str,
        namespace: str | None,
        *,
        rv: int,
        start: str = "",
        limit: int = 0,
        matches: Callable[[Obj], bool] | None = None,
    ) -> Page:
        """Objects with keys from ``start`` on, as they were at ``rv``, at most ``limit`` (0: all)
        of those ``matches`` accepts (``None``: all, and then ``remaining`` is counted)."""
        order = self._order.get(storage, [])
        objects = self._objects.get(storage, {})
        # "/" + 1 == "0": every "namespace/..." key sorts between the two bounds
        low = max(start, f"{namespace}/") if namespace else start
        high = f"{namespace}0" if namespace else None
        lo = bisect.bisect_left(order, low)
        hi = len(order) if high is None else bisect.bisect_left(order, high)
        then = self._changes_since(storage, rv)
        undone = sorted(k for k in then if k >= low and (high is None or k < high))
        items: list[Obj] = []
        last: str | None = None
        more = False
        previous: str | None = None
        for key in heapq.merge((order[i] for i in range(lo, hi)), undone):
            if key == previous:
                continue  # present now and changed since
            previous = key
            obj = then[key] if key in then else objects[split_key(key)]
            if obj is None:
                continue  # created after rv
            if limit and len(items) == limit:
                more = True
                break
            if matches is None or matches(obj):
                items.append(obj)
                last = key
        if not more or last is None:
            return Page(items, None, None)
        remaining = None
        if matches is None:
            after = bisect.bisect_right(order, last)
            remaining = max(hi - after, 0)
            for key in undone:
                if key > last:
                    remaining += (then[key] is not None) - (split_key(key) in objects)
        return Page(items, last + "\x00", remaining)

    def _changes_since(self, storage: str, rv: int) -> dict[str, Obj | None]:
        """Per flat key changed after ``rv``: its state at ``rv`` (``None``: absent then)."""
        if rv >= self.rv:
            return {}
        if rv < self.oldest_retained(storage):
            raise SnapshotExpired(rv)
        then: dict[str, Obj | None] = {}
        for event in reversed(self._history.get(storage, ())):
            if event.rv <= rv:
                break
            meta = event.obj["metadata"]
            then[flat_key((meta.get("namespace", ""), meta["name"]))] = event.old  # the earliest wins
        return then

    def count(self, storage: str) -> int:
        return len(self._objects.get(storage, {}))

    def storages(self) -> Iterator[str]:
        return iter(list(self._objects))

    def namespaced_objects(self, namespace: str) -> Iterator[tuple[str, Obj]]:
        """Every object in a namespace, of any kind."""
        for storage in list(self._objects):
            yield from ((storage, obj) for obj in self.items(storage, namespace))

    async def durable(self) -> None:
        """Return once every write so far is on disk (at once without a data directory)."""
        if self.journal is not None:
            await self.journal.durable()

    async def wait_for_rv(self, rv: int, timeout: float) -> bool:
        """Whether the resourceVersion reached ``rv`` within ``timeout`` seconds."""
        if rv <= self.rv:
            return True
        future = asyncio.get_running_loop().create_future()
        entry = (rv, future)
        self._rv_waiters.append(entry)
        try:
            async with asyncio.timeout(timeout):
                await future
        except TimeoutError:
            return False
        finally:
            if entry in self._rv_waiters:
                self._rv_waiters.remove(entry)
        return True

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
        if old is None:
            bisect.insort(self._order.setdefault(storage, []), flat_key(key))
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
        order = self._order[storage]
        del order[bisect.bisect_left(order, flat_key((namespace, name)))]
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
        watchers = self._watchers.get(storage)
        if watchers is not None:
            meta = event.obj["metadata"]
            for watcher in watchers.for_object(meta.get("namespace", ""), meta["name"]):
                if not watcher.closed:
                    watcher.queue.put_nowait(event)
        for queue in self._global:
            queue.put_nowait((storage, event))
        if self._rv_waiters:
            for target, future in self._rv_waiters:
                if target <= self.rv and not future.done():
                    future.set_result(None)

    def subscribe(self, storage: str, namespace: str = "", name: str = "") -> Watcher:
        """A watcher of ``storage``'s events (only those of objects in ``namespace``, or named
        ``name``, when given: others are never queued for it)."""
        watcher = Watcher(namespace=namespace, name=name)
        index = self._watchers.get(storage)
        if index is None:
            index = self._watchers[storage] = WatcherIndex()
        index.add(watcher)
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
        index = self._watchers.get(storage)
        if index is not None:
            index.discard(watcher)

    def history_since(self, storage: str, rv: int) -> list[Event] | None:
        """Events after ``rv``, or None when some of them are no longer retained."""
        if rv < max(self.base_rv, self._forgotten.get(storage, 0)):
            return None
        history = self._history.get(storage)
        if not history:
            return []
        # in resourceVersion order: a resumed watch costs a search, not a scan of the history
        first = bisect.bisect_right(history, rv, key=lambda e: e.rv)
        return list(itertools.islice(history, first, None))

    def oldest_retained(self, storage: str) -> int:
        """The oldest resourceVersion a watch may still resume from."""
        return max(self.base_rv, self._forgotten.get(storage, 0))

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()
