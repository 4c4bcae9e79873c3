"""The data directory's persistence: a snapshot plus an append-only journal of
the writes since, with group commit and compaction by size.

Durability: each write is encoded as it is stored and kept until the flusher
writes the entries gathered so far to the journal (an ``O_APPEND`` file
descriptor) in one system call, then fsyncs; :meth:`Journal.durable` returns
once that covers every write appended so far. The
server awaits it before any response is sent and before a watch event is
written, so an acknowledged (or observed) write survives a SIGKILL or a power
cut, and one fsync serves every write that arrived while the previous one ran
(group commit). A failed fsync is final (the kernel may have dropped the
pages): no answer is sent from then on (clients see the connection close, not
an acknowledgement) until a restart reloads what is on disk.

Concurrency: appends run on the event loop; each group's write and fsync run
in a worker thread on a duplicate of the descriptor, so the loop keeps serving
(and appending) meanwhile, and replacing the journal never closes a descriptor
the thread still uses; closing waits for the group in flight, so the journal
keeps the order of the writes. One flusher task at a time; when the journal outgrows
``max(compact_bytes, 2 × snapshot size)`` it compacts, so a server renewing
Leases for a week keeps a bounded journal.

Compaction while serving must not stop the loop: encoding a snapshot of tens
of MB takes most of a second, which every request (a leader's Lease renewal
among them) would wait out. So the flusher only rotates on the loop: it takes
the store's state (references to its objects, which are replaced on write,
never changed in place), renames the journal to ``journal.previous.jsonl`` and
appends to a new one from then on. A worker thread then writes the snapshot
of that state, one object at a time (so the loop gets the interpreter between
objects), and removes the previous journal.

Crash safety: no write in the new journal is acknowledged before the previous
one is fsynced and the rename is durable. Loading reads the snapshot, then the
previous journal if one is left, then the journal, skipping entries at or
below the snapshot's resourceVersion: a crash before the new snapshot is in
place loses nothing (old snapshot + both journals), one after it replays only
newer entries. A torn last line of the previous journal was never
acknowledged, and neither was anything after it: loading stops there.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from localkube import json_codec
from localkube.private_files import (
    fsync_directory,
    open_private_append,
    private_directory,
    remove_temporary_files,
    write_all,
    write_private,
    write_private_chunks,
)

log = logging.getLogger("localkube.journal")

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)
State = tuple[int, dict[str, dict[Key, Obj]]]

DEFAULT_COMPACT_BYTES = 8 * 1024 * 1024
SNAPSHOT_CHUNK = 1024 * 1024  # bytes of encoded objects gathered per write while compacting


def _fsync_and_close(fd: int) -> None:
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Group:
    """Entries the flusher writes and syncs in a worker thread, in two system calls."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.done = threading.Event()
        self.error: OSError | None = None

    def write(self, fd: int) -> None:
        try:
            write_all(fd, self.data)
            os.fsync(fd)
        except OSError as error:
            self.error = error
            raise
        finally:
            os.close(fd)
            self.done.set()


def _encode_snapshot(rv: int, items: dict[str, list[Obj]]) -> Iterator[bytes]:
    """The snapshot file's JSON, an object at a time, in chunks of about ``SNAPSHOT_CHUNK``."""
    parts = [f'{{"rv":{rv},"objects":{{']
    size = 0
    for index, (storage, objects) in enumerate(items.items()):
        parts.append(("," if index else "") + json.dumps(storage) + ":[")
        for position, obj in enumerate(objects):
            encoded = json_codec.dumps(obj).decode()
            parts.append("," + encoded if position else encoded)
            size += len(encoded)
            if size >= SNAPSHOT_CHUNK:
                yield "".join(parts).encode()
                parts, size = [], 0
        parts.append("]")
    parts.append("}}")
    yield "".join(parts).encode()


class Journal:
    """Snapshot plus write log in one private directory."""

    def __init__(self, directory: Path, compact_bytes: int = DEFAULT_COMPACT_BYTES) -> None:
        self.directory = private_directory(directory)
        remove_temporary_files(directory)  # a snapshot half-written when the last run was killed
        self.snapshot = directory / "snapshot.json"
        self.log = directory / "journal.jsonl"
        self.previous = directory / "journal.previous.jsonl"  # rotated out, until its snapshot is written
        self.compact_bytes = compact_bytes
        # the store's current (resourceVersion, objects), for compaction while running
        self.state: Callable[[], State] | None = None
        self.compactions = 0
        self._fd: int | None = None
        self._log_size = 0
        self._snapshot_size = 0
        self._written = 0  # entries appended
        # encoded entries not yet written: the flusher writes them as one group, then fsyncs
        self._pending: list[bytes] = []
        self._in_flight: _Group | None = None  # the group the flusher is writing
        self._synced = 0  # entries covered by a finished fsync
        self._flusher: asyncio.Task[None] | None = None
        self._snapshotting: asyncio.Task[None] | None = None
        # held while a snapshot is written in a worker thread; close() waits for it, so a server
        # restarted in the same process never sees an older snapshot land after its own
        self._snapshot_lock = threading.Lock()
        self._closed = False
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        # a failed fsync may have dropped written pages; nothing is acknowledged after it
        self._failure: OSError | None = None

    @property
    def size(self) -> int:
        """Bytes in the journal since the last compaction."""
        return self._log_size

    def load(self) -> State:
        """The last resourceVersion and every stored object."""
        rv = 0
        data: dict[str, dict[Key, Obj]] = {}
        if self.snapshot.exists():
            state = json_codec.loads(self.snapshot.read_bytes())
            rv = int(state["rv"])
            for storage, items in state["objects"].items():
                data[storage] = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in items}
        snapshot_rv = rv
        for path in (self.previous, self.log):
            if not path.exists():
                continue
            rv, whole = _replay(path, snapshot_rv, rv, data)
            if not whole:
                break  # a torn write was never acknowledged, nor anything after it
        return rv, data

    def compact(self, rv: int, data: dict[str, dict[Key, Obj]]) -> None:
        """Write a fresh snapshot (durably) and start an empty journal, at once (at start-up)."""
        self._snapshot_size = self._write_snapshot(rv, _items(data))
        previous = self._fd
        write_private(self.log, b"")
        self._fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
        if previous is not None:
            os.close(previous)
        self.previous.unlink(missing_ok=True)  # its entries are all in the snapshot now
        self._log_size = 0
        self._synced = self._written
        self._wake()

    def _write_snapshot(self, rv: int, items: dict[str, list[Obj]]) -> int:
        """Write the snapshot file durably; its size. Runs in a worker thread while serving."""
        size = 0

        def counted() -> Iterator[bytes]:
            nonlocal size
            for chunk in _encode_snapshot(rv, items):
                size += len(chunk)
                yield chunk

        write_private_chunks(self.snapshot, counted())
        self.compactions += 1
        return size

    def append(self, op: str, storage: str, key: Key, rv: int, obj: Obj | None) -> None:
        """Log one write; it is durable once :meth:`durable` returns."""
        if self._fd is None:
            raise RuntimeError("the journal is closed")
        if self._failure is not None:
            raise self._failure
        entry: dict[str, Any] = {"op": op, "s": storage, "ns": key[0], "n": key[1], "rv": rv}
        if obj is not None:
            entry["o"] = obj
        line = json_codec.dumps(entry) + b"\n"
        self._pending.append(line)
        self._log_size += len(line)
        self._written += 1
        self._start_flusher()

    def _write_pending(self) -> None:
        """Write the entries not yet written, on this thread (no flusher's group is in flight)."""
        if self._pending and self._fd is not None:
            data, self._pending = b"".join(self._pending), []
            try:
                write_all(self._fd, data)
            except OSError as error:  # a full disk: memory now holds more than the journal
                log.error("journal write failed, no write is acknowledged from now on: %s", error)
                self._fail(error)
                raise

    async def durable(self) -> None:
        """Return once every write appended before the call is on disk; OSError once the disk failed."""
        if self._failure is not None:
            raise self._failure
        target = self._written
        if self._synced >= target or self._fd is None:
            return
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((target, future))
        self._start_flusher()
        await future

    def _start_flusher(self) -> None:
        if self._flusher is not None and not self._flusher.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (loading, tools): sync at once
            self._sync_now()
            return
        self._flusher = loop.create_task(self._flush(), name="localkube-journal-flush")

    def _sync_now(self) -> None:
        if self._fd is not None and self._synced < self._written:
            self._write_pending()
            os.fsync(self._fd)
            self._synced = self._written
            self._wake()

    async def _flush(self) -> None:
        while self._fd is not None and self._synced < self._written:
            target = self._written
            group = self._in_flight = _Group(b"".join(self._pending))
            self._pending = []
            try:
                await asyncio.to_thread(group.write, os.dup(self._fd))
            except OSError as error:  # a full disk, or a failed fsync that may have dropped pages
                log.error("journal write or fsync failed, no write is acknowledged from now on: %s", error)
                self._fail(error)
                return
            finally:
                self._in_flight = None
            self._synced = max(self._synced, target)
            self._wake()
            if self._needs_compaction():
                await self._compact_running()

    def _needs_compaction(self) -> bool:
        if self.state is None or (self._snapshotting is not None and not self._snapshotting.done()):
            return False
        return self._log_size > max(self.compact_bytes, 2 * self._snapshot_size)

    async def _compact_running(self) -> None:
        """Rotate the journal on the loop, then write the snapshot in a worker thread."""
        assert self.state is not None and self._fd is not None
        rv, data = self.state()
        items = _items(data)  # the objects as of ``rv``: later writes replace them, never change them
        if not self.previous.exists():  # else a failed snapshot left it: it still holds what the new one covers
            try:
                self._write_pending()  # the retired journal holds every entry up to the boundary
            except OSError:
                return
            retired, boundary = self._fd, self._written
            try:
                os.replace(self.log, self.previous)
                self._fd = open_private_append(self.log)
            except OSError as error:
                log.error("journal rotation failed: %s", error)
                self._fd = retired
                return
            self._log_size = 0
            try:
                # the retired journal's tail and the rename on disk before any write in the new one counts
                await asyncio.to_thread(_sync_rotation, retired, self.directory)
            except OSError as error:
                log.error("journal fsync failed, no write is acknowledged from now on: %s", error)
                self._fail(error)
                return
            self._synced = max(self._synced, boundary)
            self._wake()
        self._snapshotting = asyncio.get_running_loop().create_task(
            self._snapshot_in_background(rv, items), name="localkube-journal-snapshot"
        )

    async def _snapshot_in_background(self, rv: int, items: dict[str, list[Obj]]) -> None:
        try:
            size = await asyncio.to_thread(self._replace_snapshot, rv, items)
        except OSError as error:
            # the old snapshot and both journals are complete on disk: retried at a later flush
            log.error("journal compaction failed: %s", error)
            return
        if size is not None:
            self._snapshot_size = size

    def _replace_snapshot(self, rv: int, items: dict[str, list[Obj]]) -> int | None:
        """In a worker thread: the new snapshot, then the previous journal it covers removed."""
        with self._snapshot_lock:
            if self._closed:
                return None
            size = self._write_snapshot(rv, items)
            self.previous.unlink(missing_ok=True)
            fsync_directory(self.directory)
            return size

    def _wake(self) -> None:
        waiting = []
        for target, future in self._waiters:
            if future.done():
                continue
            if target <= self._synced:
                future.set_result(None)
            else:
                waiting.append((target, future))
        self._waiters = waiting

    def _fail(self, error: OSError) -> None:
        self._failure = error
        for _, future in self._waiters:
            if not future.done():
                future.set_exception(error)
        self._waiters = []

    def close(self) -> None:
        """Sync what is left and close; later appends are refused."""
        if self._fd is None:
            return
        group = self._in_flight
        if group is not None:  # the flusher's group first, so entries stay in order
            group.done.wait(timeout=30)
            if group.error is not None or not group.done.is_set():
                self._failure = self._failure or group.error or OSError("the journal's last write did not finish")
        if self._synced < self._written and self._failure is None:
            with contextlib.suppress(OSError):  # _write_pending logged it; nothing more is acknowledged
                self._write_pending()
            if self._failure is None:
                os.fsync(self._fd)
                self._synced = self._written
        self._wake()
        os.close(self._fd)
        self._fd = None
        if self._flusher is not None and not self._flusher.done():
            self._flusher.cancel()
        self._flusher = None
        with self._snapshot_lock:  # a snapshot being written finishes first; none starts after
            self._closed = True


def _items(data: dict[str, dict[Key, Obj]]) -> dict[str, list[Obj]]:
    return {storage: list(objects.values()) for storage, objects in data.items() if objects}


def _sync_rotation(retired: int, directory: Path) -> None:
    _fsync_and_close(retired)
    fsync_directory(directory)


def _replay(path: Path, snapshot_rv: int, rv: int, data: dict[str, dict[Key, Obj]]) -> tuple[int, bool]:
    """Apply one journal file's entries newer than the snapshot; the last resourceVersion and
    whether the file ended on a whole line."""
    with path.open("rb") as lines:
        for line in lines:
            if not line.endswith(b"\n"):
                return rv, False
            entry = json_codec.loads(line)
            if int(entry["rv"]) <= snapshot_rv:
                continue  # already in the snapshot (a crash between its rename and the journal's reset)
            rv = max(rv, int(entry["rv"]))
            objects = data.setdefault(entry["s"], {})
            key = (entry["ns"], entry["n"])
            if entry["op"] == "put":
                objects[key] = entry["o"]
            else:
                objects.pop(key, None)
    return rv, True
