"""Canonical quantity text, as k8s.io/apimachinery/pkg/api/resource prints it.

Mirrors quantity_test.go (TestQuantityParse's canonical forms, TestQuantityString) for the
values admission messages show.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from localkube.quantities import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    Quantity,
    canonical,
    parse,
    parse_value,
    value_of,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", "0"),
        ("0Mi", "0"),
        ("100m", "100m"),
        ("0.5", "500m"),
        ("1000m", "1"),
        ("1.5k", "1500"),
        ("12000", "12k"),
        ("1Gi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("1024", "1024"),
        ("1024Ki", "1Mi"),
        ("1000Ki", "1000Ki"),
        ("0.5Ki", "512"),
        ("100Mi", "100Mi"),
        ("1e3", "1e3"),
        ("12e3", "12e3"),
        ("1.5e3", "1500"),
        ("0.1", "100m"),
        ("1n", "1n"),
        ("0.0000000001", "1n"),  # rounded up to nano units
        ("-1", "-1"),
        ("-100m", "-100m"),
        ("1E", "1E"),
    ],
)
def test_canonical_text(text: str, expected: str) -> None:
    quantity = parse(text)
    assert quantity is not None
    assert canonical(quantity) == expected


@pytest.mark.parametrize("text", ["", "abc", "1e", "1.2.3", "1Ki5", "--1", "1 Gi", True, None])
def test_not_quantities(text: object) -> None:
    assert parse(text) is None


def test_sums_keep_the_first_nonzero_format() -> None:
    zero = Quantity(Fraction(0), DECIMAL_SI)
    mebi = parse("512Mi")
    assert mebi is not None and mebi.format == BINARY_SI
    assert str(zero + mebi + mebi) == "1Gi"
    assert str(Quantity(Fraction(1500), DECIMAL_EXPONENT)) == "1500"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1500m", Fraction(3, 2)),
        ("2Gi", 2 * 2**30),
        ("1k", 1000),
        ("128Mi", 128 * 2**20),
        ("1.5G", 1_500_000_000),
        ("2e3", 2000),
        ("100u", Fraction(1, 10**4)),
        (3, 3),
        ("", None),
        ("nonsense", None),
        ("1Zi", None),
    ],
)
def test_parse_value(text: object, value: Fraction | int | None) -> None:
    assert parse_value(text) == value


def test_unparsable_quantities_count_as_zero_in_sums() -> None:
    assert value_of("nonsense").value == 0
    assert value_of("250m").value == Fraction(1, 4)
