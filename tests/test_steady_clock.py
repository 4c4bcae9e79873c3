"""The steady clock (:mod:`karmada.steady_clock`) follows the monotonic clock, not the wall clock."""

from __future__ import annotations

import datetime
import time

import pytest

import karmada.steady_clock as steady

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def test_a_step_of_the_wall_clock_does_not_move_it(monkeypatch: pytest.MonkeyPatch) -> None:
    readings: dict[str, float] = {"monotonic": 100.0, "wall_offset": 0.0}
    monkeypatch.setattr(time, "monotonic", lambda: readings["monotonic"])
    monkeypatch.setattr(steady, "utcnow", lambda: T0 + datetime.timedelta(seconds=readings["wall_offset"]))
    clock = steady.SteadyClock()
    assert clock.now() == T0
    readings.update(monotonic=105.0, wall_offset=3605.0)  # NTP stepped the host an hour ahead
    assert clock.now() == T0 + datetime.timedelta(seconds=5)
    readings.update(monotonic=110.0, wall_offset=-3590.0)  # and back past true time
    assert clock.now() == T0 + datetime.timedelta(seconds=10)
