"""A watch resumed from a resourceVersion gets exactly the retained events after it, found by
a search of the history (it is in resourceVersion order), or None once some were dropped."""

from __future__ import annotations

import pytest

from localkube.store import Store


@pytest.fixture
def store() -> Store:
    store = Store(None, history=5)
    for index in range(8):  # resourceVersions 1..8, interleaved over two kinds
        storage = "/configmaps" if index % 2 == 0 else "/secrets"
        store.put(storage, {"metadata": {"namespace": "default", "name": f"o{index}"}}, "ADDED")
    store.delete("/configmaps", "default", "o0")  # resourceVersion 9
    return store


@pytest.mark.parametrize(
    ("since", "expected"),
    [
        (0, [1, 3, 5, 7, 9]),
        (1, [3, 5, 7, 9]),
        (2, [3, 5, 7, 9]),  # a resourceVersion of another kind, between two of this one's
        (7, [9]),
        (9, []),
        (100, []),  # ahead of the server: nothing yet
    ],
)
def test_events_after_a_resource_version(store: Store, since: int, expected: list[int]) -> None:
    history = store.history_since("/configmaps", since)
    assert history is not None and [e.rv for e in history] == expected
    assert [e.type for e in history][-1:] == (["DELETED"] if 9 in expected else [])


def test_a_dropped_event_makes_the_resume_impossible(store: Store) -> None:
    for index in range(8, 12):  # four more configmaps: the history keeps the last five
        store.put("/configmaps", {"metadata": {"namespace": "default", "name": f"o{index}"}}, "ADDED")
    assert store.history_since("/configmaps", 1) is None
    kept = store.history_since("/configmaps", store.oldest_retained("/configmaps"))
    assert kept is not None and [e.rv for e in kept] == [9, 10, 11, 12, 13]
    assert [e.rv for e in store.history_since("/secrets", 4) or []] == [6, 8]
