"""The detector's read-modify-write on conflicts (client-go's RetryOnConflict), with
the writes as plain functions: a 409 re-reads and retries, a 404 ends quietly."""

from __future__ import annotations

from typing import Any

import pytest

from controlplane.detector import CONFLICT_ATTEMPTS, _update_with_retry
from karmada.kube import KubeError

Obj = dict[str, Any]


def _conflict() -> KubeError:
    return KubeError(409, "Conflict", "the object has been modified; please apply your changes to the latest version")


class Server:
    """Holds one object; the first ``conflicts`` writes are refused."""

    def __init__(self, conflicts: int) -> None:
        self.conflicts = conflicts
        self.stored: Obj = {"metadata": {"resourceVersion": "2", "labels": {"a": "1", "mine": "x"}}}
        self.writes: list[Obj] = []

    async def fresh(self) -> Obj | None:
        return self.stored

    async def write(self, obj: Obj) -> Obj:
        self.writes.append(obj)
        if self.conflicts:
            self.conflicts -= 1
            raise _conflict()
        self.stored = obj
        return obj


def drop_mine(obj: Obj) -> Obj | None:
    labels = dict(obj["metadata"]["labels"])
    if "mine" not in labels:
        return None
    del labels["mine"]
    return {**obj, "metadata": {**obj["metadata"], "labels": labels}}


async def test_a_conflict_rereads_and_writes_on_the_latest_version() -> None:
    server = Server(conflicts=1)
    stale: Obj = {"metadata": {"resourceVersion": "1", "labels": {"mine": "x"}}}
    assert await _update_with_retry(stale, server.fresh, drop_mine, server.write)
    assert [w["metadata"]["resourceVersion"] for w in server.writes] == ["1", "2"]
    assert server.stored["metadata"]["labels"] == {"a": "1"}  # the other writer's label survives


async def test_nothing_to_change_writes_nothing() -> None:
    server = Server(conflicts=0)
    assert not await _update_with_retry({"metadata": {"labels": {}}}, server.fresh, drop_mine, server.write)
    assert not await _update_with_retry(None, server.fresh, drop_mine, server.write)
    assert server.writes == []


async def test_gone_ends_quietly() -> None:
    async def write(obj: Obj) -> Obj:
        raise KubeError(404, "NotFound", "gone")

    server = Server(conflicts=0)
    assert not await _update_with_retry(server.stored, server.fresh, drop_mine, write)


async def test_endless_conflicts_give_up_and_raise() -> None:
    server = Server(conflicts=CONFLICT_ATTEMPTS)
    with pytest.raises(KubeError) as caught:
        await _update_with_retry(server.stored, server.fresh, drop_mine, server.write)
    assert caught.value.conflict and len(server.writes) == CONFLICT_ATTEMPTS
