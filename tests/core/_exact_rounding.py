"""An independent reference for rounding to float16, bfloat16 and float32: exact rational arithmetic.

A number of a binary format with ``bits`` significant bits and smallest normal exponent ``emin`` is a whole multiple
of its unit in the last place, 2^(e - bits + 1) with e = max(floor(log2 |x|), emin). Rounding x divides by that
unit as a Fraction and rounds the quotient half to even (Python's ``round`` of a Fraction does), so the result is
exact: no float arithmetic, no CPU kernel, takes part.
"""

from __future__ import annotations

import math
from fractions import Fraction

#: (significant bits including the hidden one, smallest normal exponent) of each format.
FORMAT_BITS = {"float16": (11, -14), "bfloat16": (8, -126), "float32": (24, -126)}


def round_exact(x: float, fmt: str) -> float:
    """x rounded to the nearest number of ``fmt``, ties to even (subnormals included; no overflow handling)."""
    if x == 0.0 or not math.isfinite(x):
        return x
    bits, emin = FORMAT_BITS[fmt]
    _, e2 = math.frexp(abs(x))  # |x| = m 2^e2 with 0.5 <= m < 1, so floor(log2 |x|) = e2 - 1
    unit = Fraction(2) ** (max(e2 - 1, emin) - bits + 1)
    return float(round(Fraction(x) / unit) * unit)


def midpoint_distance(x: float, fmt: str) -> float:
    """How far x lies from the nearest point halfway between two neighbouring numbers of ``fmt``, in units of x's
    own float64 spacing. Where this is a few units or less, float64's rounding of a sine (which can differ by one
    unit between libraries) may decide which neighbour the format gets: such a result is defined only to one step
    of the format."""
    if x == 0.0 or not math.isfinite(x):
        return math.inf
    bits, emin = FORMAT_BITS[fmt]
    _, e2 = math.frexp(abs(x))
    unit = Fraction(2) ** (max(e2 - 1, emin) - bits + 1)
    quotient = Fraction(x) / unit
    half = Fraction(math.floor(quotient)) + Fraction(1, 2)
    return float(abs(quotient - half) * unit) / math.ulp(x)
