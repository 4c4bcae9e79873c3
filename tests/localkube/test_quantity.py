"""Quantities as resource.Quantity parses them (k8s.io/apimachinery pkg/api/resource/quantity_test.go cases)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from localkube.quantity import parse_quantity, quantity_or_zero


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
def test_parse_quantity(text: object, value: Fraction | int | None) -> None:
    assert parse_quantity(text) == value


def test_unparsable_quantities_count_as_zero_in_sums() -> None:
    assert quantity_or_zero("nonsense") == 0
    assert quantity_or_zero("250m") == Fraction(1, 4)
