"""A wall clock that one program sees stepped, as NTP or an operator steps a host's clock:
libfaketime preloaded (``LD_PRELOAD``), reading its offset from a file the caller rewrites.

Only the wall clock moves (``CLOCK_REALTIME``: ``time()``, ``gettimeofday``,
``datetime.now``, OpenSSL's certificate validity checks); the monotonic clock that asyncio's
timers run on does not, as on a real host. The program picks a new offset up within
``CACHE_SECONDS``. Used by the chaos bench and the clock-jump tests, never by the programs.

libfaketime 0.9.10 cannot sleep on a monotonic clock it does not fake: Python's
``time.sleep`` fails there with EINVAL. Our programs sleep only through asyncio.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from karmada.private_files import write_private

LIBRARY = "libfaketimeMT.so.1"  # the thread-safe variant: our programs run threads
SEARCH = ("/usr/lib/*/faketime", "/usr/lib/faketime", "/usr/local/lib/faketime", "/usr/lib64/faketime")
CACHE_SECONDS = 1
INSTALL_HINT = "libfaketime is not installed (Debian/Ubuntu: apt-get install libfaketime)"


def library() -> Path | None:
    """The libfaketime to preload, or None when it is not installed."""
    for pattern in SEARCH:
        for found in sorted(glob.glob(os.path.join(pattern, LIBRARY))):
            return Path(found)
    return None


class SteppedClock:
    """The wall clock of the programs started with :meth:`env`: true time plus an offset,
    changed with :meth:`step`."""

    def __init__(self, offset_file: Path, preload: Path | None = None) -> None:
        found = preload or library()
        if found is None:
            raise RuntimeError(INSTALL_HINT)
        self.preload = found
        self.offset_file = offset_file
        self.offset = 0
        self.step(0)

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The environment variables that put a program on this clock (``base``'s preloads kept)."""
        preload = (base or {}).get("LD_PRELOAD")
        return {
            "LD_PRELOAD": f"{self.preload}{':' + preload if preload else ''}",
            "FAKETIME_TIMESTAMP_FILE": str(self.offset_file),
            "FAKETIME_DONT_FAKE_MONOTONIC": "1",
            "FAKETIME_CACHE_DURATION": str(CACHE_SECONDS),
        }

    def step(self, seconds: int) -> None:
        """From now on the programs' wall clock is true time plus ``seconds`` (negative: behind)."""
        self.offset = int(seconds)
        write_private(self.offset_file, f"{self.offset:+d}s\n".encode())  # atomic: never half a line
