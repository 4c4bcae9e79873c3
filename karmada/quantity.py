"""Kubernetes resource quantities as exact numbers.

``resource.Quantity`` strings (``100m``, ``1.5Gi``, ``2e3``) parse to
:class:`fractions.Fraction`, so sums and comparisons are exact; :func:`value`
and :func:`milli_value` round up as Go's ``Quantity.Value()`` and
``MilliValue()`` do, which is what capacity estimates use.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

__all__ = [
    "NANO",
    "Fraction",
    "ceil_div",
    "format_quantity",
    "is_binary",
    "milli_value",
    "nano_value",
    "parse",
    "value",
]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([KMGTPE]i|[numkMGTPE])|[eE]([+-]?\d+))?$")


def parse(quantity: int | str) -> Fraction:
    """The exact value of a quantity; raises ``ValueError`` for malformed input."""
    if isinstance(quantity, bool):
        raise ValueError(f"invalid quantity {quantity!r}")
    if isinstance(quantity, int):
        return Fraction(quantity)
    return _parse_text(quantity)


@functools.lru_cache(maxsize=8192)
def _parse_text(quantity: str) -> Fraction:
    # Clusters report the same few quantity strings over and over; Fractions are immutable.
    match = _QUANTITY.match(quantity.strip())
    if not match:
        raise ValueError(f"invalid quantity {quantity!r}")
    number, suffix, exponent = match.groups()
    base = Fraction(number)
    if exponent is not None:
        return base * Fraction(10) ** int(exponent)
    suffix = suffix or ""
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    return base * _DECIMAL[suffix]


NANO = 10**9


def nano_value(quantity: int | str) -> int:
    """Billionths, rounded up: an exact integer for every quantity Kubernetes
    canonicalises (the finest suffix is ``n``), so sums and differences of
    quantities can be done in integers."""
    if isinstance(quantity, int) and not isinstance(quantity, bool):
        return quantity * NANO
    return _nano_text(str(quantity))


@functools.lru_cache(maxsize=8192)
def _nano_text(quantity: str) -> int:
    return math.ceil(parse(quantity) * NANO)


def ceil_div(numerator: int, denominator: int) -> int:
    """Integer division rounding up."""
    return -(-numerator // denominator)


def value(quantity: int | str | Fraction) -> int:
    """Whole units, rounded up (Go's ``Quantity.Value()``)."""
    exact = quantity if isinstance(quantity, Fraction) else parse(quantity)
    return math.ceil(exact)


def milli_value(quantity: int | str | Fraction) -> int:
    """Thousandths, rounded up (Go's ``Quantity.MilliValue()``)."""
    exact = quantity if isinstance(quantity, Fraction) else parse(quantity)
    return math.ceil(exact * 1000)


def format_quantity(amount: Fraction, binary: bool = False) -> str:
    """A canonical string for an exact amount: ``100m``, ``2``, ``128Mi``, ``1500m``.

    Whole amounts use the largest suffix that keeps them whole (binary suffixes
    when ``binary``); fractional amounts are written in milli-units, rounded up.
    """
    if amount.denominator != 1:
        milli = math.ceil(amount * 1000)
        if milli % 1000 == 0:
            return str(milli // 1000)
        return f"{milli}m"
    whole = int(amount)
    if whole == 0:
        return "0"
    if binary and -1024 < whole < 1024:
        binary = False  # Go prints small binary quantities in decimal form
    suffixes = (
        [("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)]
        if binary
        else [("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3)]
    )
    for suffix, unit in suffixes:
        if whole % unit == 0:
            return f"{whole // unit}{suffix}"
    return str(whole)


def is_binary(quantity: int | str) -> bool:
    """Whether a quantity was written with a binary suffix (``Ki`` ... ``Ei``)."""
    return isinstance(quantity, str) and quantity.rstrip()[-2:] in _BINARY
