"""The Webster dispenser (pkg/util/helper/binding_test.go, Test_dispenser_AllocateByWeight)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from karmada.scheduling import dispense, webster
from karmada.scheduling.dispense import names_descending


@pytest.mark.parametrize(
    ("seats", "votes", "initial", "uid", "expected"),
    [
        # reference 5.7 example 8
        (6, {"A": 1, "B": 2, "C": 3}, {"A": 1, "B": 2, "C": 3}, "", {"A": 2, "B": 4, "C": 6}),
        (3, {"A": 1, "B": 2, "C": 3}, {"A": 1, "B": 2, "C": 3}, "", {"A": 2, "B": 3, "C": 4}),
        (2, {"A": 1, "B": 2, "C": 3}, {"A": 1, "B": 2, "C": 3}, "", {"A": 1, "B": 3, "C": 4}),
        (1, {"A": 2, "B": 1}, {}, "", {"A": 1, "B": 0}),
        (2, {"A": 2, "B": 1}, {}, "", {"A": 1, "B": 1}),
        (3, {"A": 2, "B": 1}, {}, "", {"A": 2, "B": 1}),
        (5, {"A": 170, "B": 110, "C": 60}, {}, "", {"A": 2, "B": 2, "C": 1}),
        (6, {"A": 170, "B": 110, "C": 60}, {}, "", {"A": 3, "B": 2, "C": 1}),
        (5, {"A": 1, "B": 1}, {}, "4858ca61-3ff8-4095-8267-f3d059d8074c", {"A": 3, "B": 2}),
        (5, {"A": 1, "B": 1}, {}, "d43fdeeb-d750-4e2b-bee3-64eb94534f4c", {"A": 2, "B": 3}),
        # a party only in the initial assignment keeps its seats and gets no more
        (2, {"A": 1}, {"Z": 4}, "", {"A": 2, "Z": 4}),
    ],
)
def test_webster(
    seats: int, votes: dict[str, int], initial: dict[str, int], uid: str, expected: dict[str, int]
) -> None:
    assert webster(seats, votes, initial, uid) == expected


def test_uid_parity_selects_tie_break() -> None:
    assert names_descending("d43fdeeb-d750-4e2b-bee3-64eb94534f4c")
    assert not names_descending("4858ca61-3ff8-4095-8267-f3d059d8074c")
    assert not names_descending("")


def test_dispense_with_zero_weights_moves_nothing() -> None:
    assert dispense(3, {"A": 0, "B": 0}, {"A": 1}) == {"A": 1}
    assert dispense(0, {"A": 1}, {"B": 2}) == {"B": 2}


weights = st.dictionaries(st.sampled_from("ABCDEFG"), st.integers(min_value=1, max_value=1000), min_size=1)


@given(weights, st.integers(min_value=0, max_value=500), st.text(max_size=8))
def test_webster_sums_and_is_never_negative(votes: dict[str, int], seats: int, uid: str) -> None:
    result = webster(seats, votes, None, uid)
    assert sum(result.values()) == seats
    assert all(v >= 0 for v in result.values())
    assert list(result) == sorted(result)


@given(weights, st.integers(min_value=0, max_value=300), st.text(max_size=8))
def test_webster_is_house_monotone(votes: dict[str, int], seats: int, uid: str) -> None:
    smaller, larger = webster(seats, votes, None, uid), webster(seats + 1, votes, None, uid)
    assert all(larger[name] >= smaller[name] for name in votes)
