"""Kubernetes resource quantities (``100m``, ``1.5Gi``, ``2e3``) as exact numbers."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

_QUANTITY = re.compile(r"([+-]?[0-9.]+)([eE][+-]?[0-9]+|[KMGTPE]i?|[munk]|)")
_SUFFIX = {
    "": Fraction(1),
    "m": Fraction(1, 1000),
    "u": Fraction(1, 10**6),
    "n": Fraction(1, 10**9),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    **{s + "i": Fraction(1024 ** (i + 1)) for i, s in enumerate("KMGTPE")},
}


def parse_quantity(value: Any) -> Fraction | None:
    """A resource.Quantity's value, or None when it does not parse."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Fraction(str(value))
    match = _QUANTITY.fullmatch(str(value).strip())
    if not match:
        return None
    try:
        number = Fraction(match.group(1))
    except ValueError:
        return None
    suffix = match.group(2)
    if suffix[:1] in ("e", "E"):
        return number * Fraction(10) ** int(suffix[1:])
    return number * _SUFFIX[suffix]


def quantity_or_zero(value: Any) -> Fraction:
    """A quantity, with 0 for one that does not parse (for sums where validation is elsewhere)."""
    parsed = parse_quantity(value)
    return parsed if parsed is not None else Fraction(0)
