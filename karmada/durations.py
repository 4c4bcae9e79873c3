"""Go-style durations (``10s``, ``1h30m``, ``300ms``, ``0``) as Karmada's and
kubectl's flags take them, to and from seconds."""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds in ``text``; ValueError with Go's wording for anything else."""
    value = text.strip()
    if value in ("0", "+0", "-0"):
        return 0.0
    sign = -1.0 if value.startswith("-") else 1.0
    body = value.lstrip("+-")
    position, total = 0, 0.0
    while position < len(body):
        match = _PART.match(body, position)
        if not match:
            raise ValueError(f'time: invalid duration "{text}"')
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if not body:
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total


def format_duration(seconds: float) -> str:
    """The shortest Go-style spelling of whole seconds (``90`` -> ``1m30s``)."""
    whole = round(seconds)
    if whole == 0:
        return "0s"
    hours, rest = divmod(abs(whole), 3600)
    minutes, secs = divmod(rest, 60)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "") + (f"{secs}s" if secs else "")
    return ("-" if whole < 0 else "") + text
