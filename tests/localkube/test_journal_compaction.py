"""Compaction while serving: the journal rotates on the loop and the snapshot is written by a
worker thread, so writes keep being acknowledged meanwhile; whatever the moment a process
dies, loading gives back every acknowledged write."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from localkube.journal import Journal

Obj = dict[str, Any]


class State:
    """A store's state as the journal sees it: objects by storage and key, and the last rv."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.rv = 0
        self.objects: dict[str, dict[tuple[str, str], Obj]] = {}
        journal.state = lambda: (self.rv, self.objects)

    def put(self, name: str, value: str) -> None:
        self.rv += 1
        obj = {"metadata": {"name": name, "namespace": "default", "resourceVersion": str(self.rv)}, "data": value}
        self.objects.setdefault("/configmaps", {})[("default", name)] = obj  # replaced, never changed
        self.journal.append("put", "/configmaps", ("default", name), self.rv, obj)


async def _filled(directory: Path, value: str = "x" * 100) -> tuple[Journal, State]:
    """A journal with 100 writes, past its compaction threshold, all acknowledged."""
    journal = Journal(directory, compact_bytes=4096)
    journal.compact(0, {})
    state = State(journal)
    for index in range(100):
        state.put(f"c{index}", value)
    await journal.durable()
    return journal, state


async def _until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(5):
        while not condition():
            await asyncio.sleep(0.01)


def _values(journal: Journal) -> dict[str, str]:
    _, data = journal.load()
    return {key[1]: obj["data"] for key, obj in data.get("/configmaps", {}).items()}


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Snapshots written while serving wait for this event (set it to let them finish)."""
    release = threading.Event()
    write = Journal._write_snapshot

    def waiting(self: Journal, rv: int, items: dict[str, list[Obj]]) -> int:
        if threading.current_thread() is not threading.main_thread():
            assert release.wait(10), "the test never released the snapshot"
        return write(self, rv, items)

    monkeypatch.setattr(Journal, "_write_snapshot", waiting)
    return release


def test_writes_are_acknowledged_while_the_snapshot_is_being_written(tmp_path: Path, held: threading.Event) -> None:
    async def scenario() -> None:
        journal, state = await _filled(tmp_path)
        await _until(journal.previous.exists)
        # the snapshot is held in its thread: the loop still appends and acknowledges
        for index in range(20):
            state.put(f"during{index}", "y")
            async with asyncio.timeout(5):
                await journal.durable()
        assert journal.compactions == 1, "only the start-up snapshot is written so far"
        held.set()
        await _until(lambda: not journal.previous.exists())
        assert journal.compactions == 2
        journal.close()

    asyncio.run(scenario())
    values = _values(Journal(tmp_path))
    assert len(values) == 120 and values["during19"] == "y"
    snapshot = json.loads((tmp_path / "snapshot.json").read_bytes())
    assert {o["metadata"]["name"] for o in snapshot["objects"]["/configmaps"]} == {f"c{i}" for i in range(100)}


def test_a_process_killed_before_the_snapshot_is_in_place_loses_nothing(tmp_path: Path, held: threading.Event) -> None:
    async def scenario() -> None:
        journal, state = await _filled(tmp_path, "before")
        await _until(journal.previous.exists)
        state.put("c0", "after")  # an update in the new journal of an object in the previous one
        await journal.durable()
        # "killed" here: a second reader loads what is on disk, the snapshot still unwritten
        values = _values(Journal(tmp_path))
        assert len(values) == 100 and values["c0"] == "after" and values["c99"] == "before"
        held.set()

    asyncio.run(scenario())


def test_a_torn_end_of_the_previous_journal_stops_loading_there(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.compact(0, {})
    journal.close()
    line = {"op": "put", "s": "/configmaps", "ns": "default", "rv": 1, "n": "a", "o": {"metadata": {"name": "a"}}}
    # the previous journal's last write was cut (never acknowledged), so nothing after it was either
    journal.previous.write_bytes(json.dumps(line).encode() + b"\n" + b'{"op":"put","s":"/conf')
    later = dict(line, rv=3, n="b", o={"metadata": {"name": "b"}})
    journal.log.write_bytes(json.dumps(later).encode() + b"\n")
    rv, data = Journal(tmp_path).load()
    assert rv == 1 and list(data["/configmaps"]) == [("default", "a")]


def test_a_failed_snapshot_keeps_both_journals_and_a_later_one_replaces_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = [True]
    write = Journal._write_snapshot

    def flaky(self: Journal, rv: int, items: dict[str, list[Obj]]) -> int:
        if threading.current_thread() is not threading.main_thread() and failing[0]:
            failing[0] = False
            raise OSError(28, "No space left on device")
        return write(self, rv, items)

    monkeypatch.setattr(Journal, "_write_snapshot", flaky)

    async def scenario() -> None:
        journal, state = await _filled(tmp_path)
        await _until(lambda: not failing[0])
        await asyncio.sleep(0.05)
        assert journal.previous.exists(), "the failed snapshot left the previous journal in place"
        assert len(_values(Journal(tmp_path))) == 100
        for index in range(100):  # the journal grows again: the next compaction succeeds
            state.put(f"d{index}", "x" * 100)
            await journal.durable()
        await _until(lambda: not journal.previous.exists())
        journal.close()

    asyncio.run(scenario())
    assert len(_values(Journal(tmp_path))) == 200


def test_close_waits_for_a_snapshot_being_written(tmp_path: Path, held: threading.Event) -> None:
    async def scenario() -> None:
        journal, _ = await _filled(tmp_path)
        await _until(journal.previous.exists)
        await asyncio.sleep(0.05)  # the worker thread is waiting inside the snapshot write
        threading.Timer(0.2, held.set).start()
        journal.close()  # returns once the snapshot is in place, not while it is half-written
        assert journal.compactions == 2 and not journal.previous.exists()

    asyncio.run(scenario())
    assert len(_values(Journal(tmp_path))) == 100


def test_close_while_a_group_is_being_synced_keeps_the_writes_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flusher's group (an older value) is on disk before close writes what came after it."""
    in_fsync = threading.Event()
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        if threading.current_thread() is not threading.main_thread():
            in_fsync.set()
            time.sleep(0.3)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)

    async def scenario() -> None:
        journal = Journal(tmp_path)
        journal.compact(0, {})
        state = State(journal)
        state.put("c", "first")
        await _until(in_fsync.is_set)  # the group holding "first" is in the worker thread
        state.put("c", "second")
        journal.close()

    asyncio.run(scenario())
    assert _values(Journal(tmp_path)) == {"c": "second"}
    lines = (tmp_path / "journal.jsonl").read_bytes().splitlines()
    assert [json.loads(line)["o"]["data"] for line in lines] == ["first", "second"]


def test_a_group_that_cannot_be_written_fails_every_write_waiting_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk while the flusher writes a group: no write of it is acknowledged, nor any later."""
    import localkube.journal as journal_module

    def full(_fd: int, _data: bytes) -> None:
        raise OSError(28, "No space left on device")

    async def scenario() -> None:
        journal = Journal(tmp_path)
        journal.compact(0, {})
        state = State(journal)
        monkeypatch.setattr(journal_module, "write_all", full)
        state.put("a", "x")
        state.put("b", "y")
        waiters = [asyncio.create_task(journal.durable()) for _ in range(2)]
        for waiter in waiters:
            with pytest.raises(OSError, match="No space left"):
                await waiter
        with pytest.raises(OSError, match="No space left"):
            state.put("c", "z")  # nothing more is taken once the disk failed
        journal.close()

    asyncio.run(scenario())
    assert _values(Journal(tmp_path)) == {}
