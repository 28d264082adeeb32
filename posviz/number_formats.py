"""Arithmetic in float16, bfloat16 and float32 that gives the same bits on every CPU.

What the app shows of a low-precision format must not depend on the machine it runs on. numpy's own float16
``sin`` does not qualify: it computes in float32 and rounds again, with SIMD kernels that differ by CPU and by memory
layout (a contiguous array, a strided view and a scalar can disagree). sin(300) is the classic case: float32 rounds
it to -0.999755859375, exactly halfway between two float16 numbers, and the second rounding (ties to even) gives
-1.0, while the correctly rounded float16 sine is -0.99951171875. Here every quantity goes through one path:

    round_to(x, fmt)          x rounded once to the nearest number of ``fmt`` (ties to even), held in float64
    multiply(a, b, fmt)       a and b rounded to ``fmt``, their product rounded to ``fmt``: the product of two
                              numbers with at most 24 significant bits is exact in float64, so this is IEEE 754
                              multiplication in ``fmt``
    sin_cos(angles, fmt)      sine and cosine of angles that ``fmt`` holds, each rounded once to ``fmt``

For the 16-bit formats ``sin_cos`` reads a table of all 65,536 bit patterns, each computed in float64 and rounded
once; float32 angles are computed in float64 and rounded once. The result is the correctly rounded sine, up to
float64's own rounding: only a sine within about 1e-16 of a point halfway between two numbers of the format could
round the other way, and then only by one step of the format. A model's own kernel (float32 arithmetic rounded
again, as PyTorch does for half precision) can differ from it by one step of the format; the lesson, which angles a
format can still hold, does not change.
"""

from __future__ import annotations

import functools

import numpy as np

FORMATS = ("float16", "bfloat16", "float32")
#: Explicitly stored mantissa bits of each format (IEEE 754 binary16 / binary32; bfloat16 keeps float32's
#: exponent and 7 mantissa bits).
MANTISSA_BITS = {"float16": 10, "bfloat16": 7, "float32": 23}


def _format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"the number format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    return fmt


_BFLOAT16_TINY = 2.0**-126
_BFLOAT16_MAX = float(np.finfo(np.float32).max)


def _round_bfloat16(x: np.ndarray) -> np.ndarray:
    """Round float64 values to 8 significant bits (bfloat16's precision; its exponent range is float32's), ties to
    even, from the float64 bit pattern directly: rounding through float32 first would round twice."""
    bits = x.view(np.uint64)
    drop = 52 - MANTISSA_BITS["bfloat16"]  # the float64 mantissa bits bfloat16 does not keep
    keep_odd = (bits >> np.uint64(drop)) & np.uint64(1)
    half = np.uint64((1 << (drop - 1)) - 1)
    rounded = (bits + half + keep_odd) & ~np.uint64((1 << drop) - 1)
    out = rounded.view(np.float64)
    # below float32's smallest normal number bfloat16 is subnormal: whole multiples of 2^-133 (rint: ties to even)
    tiny = np.abs(x) < _BFLOAT16_TINY
    if np.any(tiny):
        out = np.where(tiny, np.rint(x * 2.0**133) * 2.0**-133, out)
    # past bfloat16's largest finite number (float32's exponent range) the result is infinite, as in the format
    return np.where(np.abs(out) > _BFLOAT16_MAX, np.copysign(np.inf, x), out)


def round_to(values, fmt: str) -> np.ndarray:
    """``values`` rounded to the nearest number of ``fmt`` (ties to even), as a float64 array.

    float16 and float32: numpy's conversion from float64, which rounds once (IEEE 754). bfloat16: the float64 bit
    pattern cut to 7 stored mantissa bits with round-to-nearest-even (subnormals and infinities as in the format).
    """
    x = np.array(values, dtype=np.float64)  # a copy, so a view or a read-only input is never written
    if _format(fmt) == "bfloat16":
        return _round_bfloat16(x)
    with np.errstate(over="ignore"):
        return x.astype(fmt).astype(np.float64)


def multiply(a, b, fmt: str) -> np.ndarray:
    """a * b in ``fmt``: both factors rounded to the format, the product rounded to it (broadcasting a against b).

    The product of two numbers with at most 24 significant bits has at most 48, so it is exact in float64, and one
    rounding of it is what IEEE 754 multiplication in ``fmt`` returns.
    """
    return round_to(round_to(a, fmt) * round_to(b, fmt), fmt)


@functools.cache
def _all_16_bit(fmt: str) -> tuple[np.ndarray, np.ndarray]:
    """The correctly rounded sin and cos of every one of the 65,536 numbers of a 16-bit format, by bit pattern
    (NaN for the patterns that are infinite or not a number). Read-only."""
    patterns = np.arange(1 << 16, dtype=np.uint32)
    with np.errstate(invalid="ignore"):  # the signalling NaN patterns
        if fmt == "float16":
            values = patterns.astype(np.uint16).view(np.float16).astype(np.float64)
        else:
            values = (patterns << np.uint32(16)).view(np.float32).astype(np.float64)
    finite = np.isfinite(values)
    sin, cos = np.full(values.shape, np.nan), np.full(values.shape, np.nan)
    sin[finite], cos[finite] = round_to(np.sin(values[finite]), fmt), round_to(np.cos(values[finite]), fmt)
    sin.flags.writeable = cos.flags.writeable = False
    return sin, cos


def _bit_patterns(values: np.ndarray, fmt: str) -> np.ndarray:
    """The 16-bit pattern of each value (each one a number of ``fmt``)."""
    if fmt == "float16":
        return values.astype(np.float16).view(np.uint16)
    return (values.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def sin_cos(angles, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos of ``angles`` computed in ``fmt``: the angles are rounded to the format (a no-op for angles that
    come from :func:`multiply`), and each sine and cosine is the float64 value rounded once to the format. The same
    bits for a contiguous array, a strided view or a scalar, on any CPU. Returns float64 arrays of the input's
    shape."""
    fmt = _format(fmt)
    held = round_to(angles, fmt)
    if fmt == "float32":
        return round_to(np.sin(held), fmt), round_to(np.cos(held), fmt)
    sin, cos = _all_16_bit(fmt)
    patterns = _bit_patterns(held, fmt)
    return sin[patterns], cos[patterns]
