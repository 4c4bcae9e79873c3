"""A clock for deadlines and thresholds that a step of the host's wall clock cannot move.

:class:`SteadyClock` gives datetimes that read as the wall clock did when it was made,
advanced by ``time.monotonic()`` since. NTP or an operator stepping the clock would
otherwise bring every deadline forward at once, or hold one back for as long as the step
(Go's ``time.Now()`` carries a monotonic reading for the same reason). Only for
comparing times this process measured; what is written to the API uses the wall clock.
"""

from __future__ import annotations

import datetime
import time

from karmada.timestamps import utcnow


class SteadyClock:
    def __init__(self) -> None:
        self._anchor = utcnow() - datetime.timedelta(seconds=time.monotonic())

    def now(self) -> datetime.datetime:
        return self._anchor + datetime.timedelta(seconds=time.monotonic())
