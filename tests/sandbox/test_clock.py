"""The stepped wall clock (:mod:`karmada.sandbox.clock`): a running program sees each step
within the cache period, its monotonic clock and asyncio timers do not move, and the
environment keeps a preload already there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from karmada.sandbox.clock import CACHE_SECONDS, INSTALL_HINT, SteppedClock, library

# prints, every half second, its wall clock and how long asyncio's half-second sleep took
PROBE = """\
import asyncio, json, sys, time
async def main():
    for _ in range(int(sys.argv[1])):
        wall, mono = time.time(), time.monotonic()
        await asyncio.sleep(0.5)
        print(json.dumps({"wall": wall, "slept": time.monotonic() - mono}), flush=True)
asyncio.run(main())
"""


@pytest.fixture
def clock(tmp_path: Path) -> SteppedClock:
    if library() is None:
        pytest.skip(INSTALL_HINT)
    return SteppedClock(tmp_path / "clock")


def test_the_offset_file_says_the_step(clock: SteppedClock) -> None:
    clock.step(3600)
    assert clock.offset_file.read_text() == "+3600s\n"
    clock.step(-180)
    assert clock.offset_file.read_text() == "-180s\n"


def test_the_environment_keeps_an_existing_preload(clock: SteppedClock) -> None:
    env = clock.env({"LD_PRELOAD": "/opt/other.so"})
    assert env["LD_PRELOAD"] == f"{clock.preload}:/opt/other.so"
    assert env["FAKETIME_DONT_FAKE_MONOTONIC"] == "1"  # asyncio's timers keep true time


@pytest.mark.parametrize("step", [3600, -180])
def test_a_running_program_sees_the_step(clock: SteppedClock, step: int) -> None:
    rounds = 40  # 20 s at most; it ends as soon as the step shows (within the cache period)
    with subprocess.Popen(
        [sys.executable, "-c", PROBE, str(rounds)],
        env={**os.environ, **clock.env(dict(os.environ))},
        stdout=subprocess.PIPE,
        text=True,
    ) as probe:
        assert probe.stdout is not None
        first = json.loads(probe.stdout.readline())
        assert abs(first["wall"] - time.time()) < 5  # no step yet
        clock.step(step)
        stepped_at, lines = time.monotonic(), []
        for line in probe.stdout:
            lines.append(json.loads(line))
            if abs(lines[-1]["wall"] - time.time() - step) < 5:
                break
        seen_after = time.monotonic() - stepped_at
        probe.kill()
    assert abs(lines[-1]["wall"] - time.time() - step) < 5, lines
    assert seen_after < CACHE_SECONDS + 5
    assert all(0.4 < line["slept"] < 60 for line in lines)  # the monotonic clock did not jump (by an hour)
