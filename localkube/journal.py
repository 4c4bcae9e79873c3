"""The data directory's persistence: a snapshot plus an append-only journal of
the writes since, with group commit and compaction by size.

Durability: each write is appended to the journal (an ``O_APPEND`` file
descriptor, no user-space buffer) as it is stored; :meth:`Journal.durable`
returns once an fsync covering every write appended so far has finished. The
server awaits it before any response is sent and before a watch event is
written, so an acknowledged (or observed) write survives a SIGKILL or a power
cut, and one fsync serves every write that arrived while the previous one ran
(group commit). A failed fsync is final (the kernel may have dropped the
pages): no answer is sent from then on (clients see the connection close, not
an acknowledgement) until a restart reloads what is on disk.

Concurrency: everything but the fsync itself runs on the event loop. The fsync
runs in a worker thread on a duplicate of the descriptor, so the loop keeps
serving (and appending) meanwhile, and replacing the journal never closes a
descriptor the thread still uses. One flusher task at a time; it compacts
(between fsyncs, on the loop) when the journal outgrows
``max(compact_bytes, 2 × snapshot size)``: a server renewing Leases for a week
keeps a bounded journal.

Crash safety of compaction: the snapshot is written to a temporary file,
fsynced and renamed (then the directory fsynced) before the journal is
replaced by an empty one; a crash in between leaves the new snapshot and the
old journal, whose entries are all at or below the snapshot's resourceVersion
and are skipped on load.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localkube.private_files import private_directory, remove_temporary_files, write_all, write_private

log = logging.getLogger("localkube.journal")

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)
State = tuple[int, dict[str, dict[Key, Obj]]]

DEFAULT_COMPACT_BYTES = 8 * 1024 * 1024


def _fsync_and_close(fd: int) -> None:
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    """Snapshot plus write log in one private directory."""

    def __init__(self, directory: Path, compact_bytes: int = DEFAULT_COMPACT_BYTES) -> None:
        self.directory = private_directory(directory)
        remove_temporary_files(directory)  # a snapshot half-written when the last run was killed
        self.snapshot = directory / "snapshot.json"
        self.log = directory / "journal.jsonl"
        self.compact_bytes = compact_bytes
        # the store's current (resourceVersion, objects), for compaction while running
        self.state: Callable[[], State] | None = None
        self.compactions = 0
        self._fd: int | None = None
        self._log_size = 0
        self._snapshot_size = 0
        self._written = 0  # entries appended
        self._synced = 0  # entries covered by a finished fsync
        self._flusher: asyncio.Task[None] | None = None
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
            state = json.loads(self.snapshot.read_bytes())
            rv = int(state["rv"])
            for storage, items in state["objects"].items():
                data[storage] = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in items}
        snapshot_rv = rv
        if self.log.exists():
            with self.log.open("rb") as lines:
                for line in lines:
                    if not line.endswith(b"\n"):
                        break  # a torn last write was never acknowledged
                    entry = json.loads(line)
                    if int(entry["rv"]) <= snapshot_rv:
                        continue  # already in the snapshot (a crash between its rename and the journal's reset)
                    rv = max(rv, int(entry["rv"]))
                    objects = data.setdefault(entry["s"], {})
                    key = (entry["ns"], entry["n"])
                    if entry["op"] == "put":
                        objects[key] = entry["o"]
                    else:
                        objects.pop(key, None)
        return rv, data

    def compact(self, rv: int, data: dict[str, dict[Key, Obj]]) -> None:
        """Write a fresh snapshot (durably) and start an empty journal."""
        state = {"rv": rv, "objects": {s: list(objs.values()) for s, objs in data.items() if objs}}
        payload = json.dumps(state, separators=(",", ":")).encode()
        write_private(self.snapshot, payload)
        self._snapshot_size = len(payload)
        previous = self._fd
        write_private(self.log, b"")
        self._fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
        if previous is not None:
            os.close(previous)
        self._log_size = 0
        self._synced = self._written
        self.compactions += 1
        self._wake()

    def append(self, op: str, storage: str, key: Key, rv: int, obj: Obj | None) -> None:
        """Log one write; it is durable once :meth:`durable` returns."""
        if self._fd is None:
            raise RuntimeError("the journal is closed")
        entry: dict[str, Any] = {"op": op, "s": storage, "ns": key[0], "n": key[1], "rv": rv}
        if obj is not None:
            entry["o"] = obj
        line = (json.dumps(entry, separators=(",", ":")) + "\n").encode()
        try:
            write_all(self._fd, line)
        except OSError as error:  # a full disk: memory now holds more than the journal
            log.error("journal write failed, no write is acknowledged from now on: %s", error)
            self._fail(error)
            raise
        self._log_size += len(line)
        self._written += 1
        self._start_flusher()

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
            os.fsync(self._fd)
            self._synced = self._written
            self._wake()

    async def _flush(self) -> None:
        while self._fd is not None and self._synced < self._written:
            target = self._written
            try:
                await asyncio.to_thread(_fsync_and_close, os.dup(self._fd))
            except OSError as error:
                log.error("journal fsync failed, no write is acknowledged from now on: %s", error)
                self._fail(error)
                return
            self._synced = max(self._synced, target)
            self._wake()
            if self._needs_compaction():
                self._compact_running()

    def _needs_compaction(self) -> bool:
        return self.state is not None and self._log_size > max(self.compact_bytes, 2 * self._snapshot_size)

    def _compact_running(self) -> None:
        assert self.state is not None
        rv, data = self.state()
        try:
            self.compact(rv, data)
        except OSError as error:
            # the journal stays as it was (complete and synced): retry at the next flush
            log.error("journal compaction failed: %s", error)

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
        if self._synced < self._written and self._failure is None:
            os.fsync(self._fd)
            self._synced = self._written
        self._wake()
        os.close(self._fd)
        self._fd = None
        if self._flusher is not None and not self._flusher.done():
            self._flusher.cancel()
        self._flusher = None
