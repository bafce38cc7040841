"""Quantity grammar (apimachinery resource.ParseQuantity) and the scheduler's integer readings."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kubectl_wap.quantity import (
    QuantityError,
    format_amount,
    milli_value,
    parse_quantity,
    resource_amount,
    value,
)

F = Fraction


@pytest.mark.parametrize(
    "text, exact",
    [
        ("100m", F(1, 10)),
        ("1.5", F(3, 2)),
        ("2Gi", 2 * 2**30),
        ("1e3", 1000),
        ("500M", 500 * 10**6),
        ("1Ki", 1024),
        ("12n", F(12, 10**9)),
        ("3u", F(3, 10**6)),
        (".5", F(1, 2)),
        ("1.", 1),
        ("+2k", 2000),
        ("1E-3", F(1, 1000)),
        ("1e+3", 1000),
        ("1.5e3", 1500),
        ("0.1m", F(1, 10000)),
        ("0", 0),
        ("-0", 0),
        ("-1", -1),
        ("7", 7),
        ("1T", 10**12),
        ("1P", 10**15),
        ("1E", 10**18),
        ("1Ti", 2**40),
        ("1Pi", 2**50),
        ("1Ei", 2**60),
        ("1.5Gi", 3 * 2**29),
        ("123456789012345678901234567890", 123456789012345678901234567890),
        (" 2Gi ", 2 * 2**30),  # Quantity.UnmarshalJSON trims spaces
        # JSON numbers (a manifest may say `cpu: 2` or `cpu: 0.5`)
        (2, 2),
        (0.5, F(1, 2)),
        (0.1, F(1, 10)),  # exact decimal, not the binary float
        (10**30, 10**30),
    ],
)
def test_parse_exact(text: object, exact: Fraction) -> None:
    got = parse_quantity(text)
    assert isinstance(got, Fraction)
    assert got == exact


def test_exact_integers_stay_exact() -> None:
    # Large integers must not go through float (2**53 + 1 is not a float).
    assert value(str(2**53 + 1)) == 2**53 + 1
    assert value(2**53 + 1) == 2**53 + 1
    assert milli_value("9007199254740993") == 9007199254740993000


@pytest.mark.parametrize(
    "text, milli, val",
    [
        ("100m", 100, 1),  # Value() rounds up: 0.1 -> 1
        ("1.5", 1500, 2),
        ("12n", 1, 1),  # MilliValue rounds up
        ("0.1m", 1, 1),  # MilliValue of 0.0001 is 1, not 0
        ("1E-3", 1, 1),
        ("1001m", 1001, 2),
        ("0", 0, 0),
        ("2Gi", 2 * 2**30 * 1000, 2 * 2**30),
        ("-1500m", -1500, -1),  # ceil toward +inf
        ("-0.5m", 0, 0),
    ],
)
def test_readings_round_up(text: str, milli: int, val: int) -> None:
    assert milli_value(text) == milli
    assert value(text) == val


@pytest.mark.parametrize(
    "name, text, amount",
    [
        ("cpu", "100m", 100),
        ("cpu", "2", 2000),
        ("cpu", "0.1m", 1),
        ("cpu", 1, 1000),
        ("memory", "1Gi", 2**30),
        ("memory", "1.5k", 1500),
        ("memory", "100m", 1),  # Value() of 0.1 bytes rounds up to 1
        ("nvidia.com/gpu", "2", 2),
        ("pods", "110", 110),
        ("ephemeral-storage", "1e3", 1000),
    ],
)
def test_resource_amount(name: str, text: object, amount: int) -> None:
    assert resource_amount(name, text) == amount


@pytest.mark.parametrize(
    "bad",
    [
        "1.2.3", "abc", "1Kb", "--1", "1e", "", "1 Gi", "1K", "1ki", "Gi", ".", "+", "-", "1e3Gi", "1Gi3",
        "0x10", "1e1.5", "1_000", "१", "1,5", "Infinity", "NaN", "1ee3", "1.5.Gi", "++1", "1m1",
        "1e1001",  # exponent cap keeps Fraction arithmetic bounded
        True, False, None, [], {}, ["1"], {"cpu": 1},
        float("inf"), float("-inf"), float("nan"),
    ],
)
def test_invalid_raises_quantity_error(bad: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)
    with pytest.raises(QuantityError):
        resource_amount("cpu", bad)


def test_quantity_error_is_value_error_with_input_in_message() -> None:
    with pytest.raises(ValueError, match="1Kb"):
        parse_quantity("1Kb")


@pytest.mark.parametrize(
    "name, amount, text",
    [
        ("cpu", 2000, "2"),
        ("cpu", 1500, "1500m"),
        ("cpu", 0, "0"),
        ("memory", 2**30, "1Gi"),
        ("memory", 3 * 2**20, "3Mi"),
        ("memory", 1000, "1000"),
        ("memory", 0, "0"),
        ("hugepages-2Mi", 2**21, "2Mi"),
        ("nvidia.com/gpu", 4, "4"),
    ],
)
def test_format_amount(name: str, amount: int, text: str) -> None:
    assert format_amount(name, amount) == text
