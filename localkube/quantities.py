"""resource.Quantity for admission: exact values, the format a value was written in, and
the canonical text ``Quantity.String()`` prints (k8s.io/apimachinery/pkg/api/resource).

A quantity keeps the format of its suffix (DecimalSI for none or k/M/G/m/u/n...,
BinarySI for Ki/Mi/..., DecimalExponent for e3); values are rounded up to
nano units, as ParseQuantity does. The canonical text uses the largest suffix
that keeps an integer mantissa ("1500m", "12k", "1Gi", "1536Mi"), and prints a
BinarySI value below 1024 or with a fraction in DecimalSI.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_GRAMMAR = re.compile(r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))([eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE]|)")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL_SUFFIX = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
_BINARY_SUFFIX = ["", *_BINARY]
# resource.MaxMilliValue: above it kube compares whole units, not thousandths
MAX_MILLI_VALUE = (2**63 - 1) // 1000


@dataclass(frozen=True)
class Quantity:
    """A quantity's exact value and the format its text used."""

    value: Fraction
    format: str = DECIMAL_SI

    def __add__(self, other: Quantity) -> Quantity:
        # Quantity.Add keeps the receiver's format unless the receiver is zero
        return Quantity(self.value + other.value, other.format if self.value == 0 else self.format)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(self.value - other.value, other.format if self.value == 0 else self.format)

    def __str__(self) -> str:
        return canonical(self)

    def milli(self) -> int:
        """MilliValue: thousandths, rounded up."""
        return math.ceil(self.value * 1000)

    def whole(self) -> int:
        """Value: whole units, rounded up."""
        return math.ceil(self.value)


ZERO = Quantity(Fraction(0))


def parse(text: Any) -> Quantity | None:
    """The quantity a JSON value holds, or None when it is not one."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        text = str(text)
    if not isinstance(text, str):
        return None
    match = _GRAMMAR.fullmatch(text.strip())
    if not match:
        return None
    number = Fraction(match.group(1))
    suffix = match.group(2)
    if len(suffix) > 1 and suffix[0] in "eE":
        value, fmt = number * Fraction(10) ** int(suffix[1:]), DECIMAL_EXPONENT
    elif suffix in _BINARY:
        value, fmt = number * 1024 ** _BINARY[suffix], BINARY_SI
    else:
        value, fmt = number * Fraction(10) ** _DECIMAL[suffix], DECIMAL_SI
    return Quantity(Fraction(math.ceil(value * 10**9), 10**9), fmt)


def parse_value(text: Any) -> Fraction | None:
    """A quantity's exact value, or None when the JSON value is not a quantity."""
    parsed = parse(text)
    return None if parsed is None else parsed.value


def value_of(text: Any) -> Quantity:
    """A quantity that validation already accepted (zero for anything else)."""
    return parse(text) or ZERO


def canonical(quantity: Quantity) -> str:
    """What Quantity.String() prints."""
    value = quantity.value
    if value == 0:
        return "0"
    fmt = quantity.format
    if fmt == BINARY_SI and (-1024 < value < 1024 or value.denominator != 1):
        fmt = DECIMAL_SI
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    if fmt == BINARY_SI:
        mantissa, power = int(magnitude), 0
        while power < 6 and mantissa % 1024 == 0:
            mantissa //= 1024
            power += 1
        return f"{sign}{mantissa}{_BINARY_SUFFIX[power]}"
    nanos = math.ceil(magnitude * 10**9)
    exponent = -9
    while exponent < 18 and nanos % 1000 == 0:
        nanos //= 1000
        exponent += 3
    if fmt == DECIMAL_EXPONENT:
        return f"{sign}{nanos}" + (f"e{exponent}" if exponent else "")
    return f"{sign}{nanos}{_DECIMAL_SUFFIX[exponent]}"


ResourceList = dict[str, Quantity]


def resource_list(raw: Any) -> ResourceList:
    """A ResourceList (``requests``, ``hard``...) from its JSON form; unparsable entries are left out."""
    if not isinstance(raw, Mapping):
        return {}
    parsed = {str(name): parse(text) for name, text in raw.items()}
    return {name: q for name, q in parsed.items() if q is not None}


def add(total: ResourceList, more: Mapping[str, Quantity]) -> None:
    """quota.Add / addResourceList, in place."""
    for name, amount in more.items():
        total[name] = total[name] + amount if name in total else amount


def maximum(total: ResourceList, other: Mapping[str, Quantity]) -> None:
    """maxResourceList, in place: the larger of each named amount."""
    for name, amount in other.items():
        if name not in total or amount.value > total[name].value:
            total[name] = amount


def pretty(resources: Mapping[str, Quantity], names: Iterable[str] | None = None) -> str:
    """``name=value`` pairs sorted by name, comma-separated (the quota plugin's prettyPrint)."""
    keys = sorted(resources if names is None else (n for n in names if n in resources))
    return ",".join(f"{name}={resources[name]}" for name in keys)


def to_json(resources: Mapping[str, Quantity]) -> dict[str, str]:
    return {name: str(amount) for name, amount in sorted(resources.items())}


__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "MAX_MILLI_VALUE",
    "ZERO",
    "Quantity",
    "ResourceList",
    "add",
    "canonical",
    "maximum",
    "parse",
    "pretty",
    "resource_list",
    "to_json",
    "value_of",
]
