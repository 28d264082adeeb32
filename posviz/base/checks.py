"""Validation shared by every package of posviz.

Every public function of the core checks its arguments here and raises :class:`ValueError` with a sentence a
student understands, naming the value that was wrong.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

#: Largest table the core builds: 32,768 positions x 4,096 dimensions (1 GiB in float64).
MAX_POSITIONS = 32_768
MAX_DIM = 4_096
MAX_ELEMENTS = MAX_POSITIONS * MAX_DIM


def whole(name: str, value, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int if it is a whole number >= ``minimum`` (and <= ``maximum``), else raise
    ValueError naming ``name``."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, numbers.Integral):
        value = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        value = int(float(value))
    else:
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum:,}, got {value:,}")
    return value


def positive_int(name: str, value, *, maximum: int | None = None) -> int:
    """Return ``value`` as an int if it is a whole number >= 1 (and <= ``maximum``), else raise ValueError."""
    return whole(name, value, minimum=1, maximum=maximum)


def positive_float(name: str, value, *, minimum_exclusive: float = 0.0) -> float:
    """Return ``value`` as a finite float greater than ``minimum_exclusive``, else raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite number greater than {minimum_exclusive:g}, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value <= minimum_exclusive:
        raise ValueError(f"{name} must be a finite number greater than {minimum_exclusive:g}, got {value!r}")
    return value


def number(name: str, value, *, positive: bool = True) -> float:
    """``value`` as a finite float (> 0 when ``positive``), else a ValueError naming ``name``."""
    if positive:
        return positive_float(name, value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def flag(name: str, value) -> bool:
    """``value`` if it is true or false, else a ValueError naming ``name``."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return value


def mapping(name: str, value) -> dict:
    """``value`` if it is a JSON object (a dict), else a ValueError naming ``name``."""
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be a JSON object {{...}}, got {value!r}")
    return value


def table_size(n_positions, d_model) -> tuple[int, int]:
    """Validate the shape of a position table: both sides >= 1 and at most MAX_POSITIONS x MAX_DIM."""
    n = positive_int("n_positions", n_positions, maximum=MAX_POSITIONS)
    d = positive_int("d_model", d_model, maximum=MAX_DIM)
    return n, d


def choice(name: str, value, options: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``options``, else raise ValueError listing them."""
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(repr(o) for o in options)}; got {value!r}")
    return value


def drawn_on_demand(table) -> bool:
    """Whether ``table`` computes its rows when asked instead of holding them: it has ``shape``, ``rows(positions)``
    and ``columns(dims)`` (``learned.RandomTable``), is finite by construction and is never converted whole."""
    return not isinstance(table, np.ndarray) and all(hasattr(table, a) for a in ("shape", "rows", "columns"))


def finite_table(table, *, name: str = "table", min_rows: int = 1) -> np.ndarray:
    """Return ``table`` as a 2-D float64 array (positions, dims) with finite values, else raise ValueError."""
    try:
        arr = np.asarray(table, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric matrix (positions x dimensions): {exc}") from None
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (positions x dimensions); got an array with {arr.ndim} dimension(s), shape {arr.shape}"
        )
    if arr.shape[0] < min_rows or arr.shape[1] < 1:
        raise ValueError(f"{name} needs at least {min_rows} position(s) and 1 dimension; got shape {arr.shape}")
    # one streaming sum instead of a boolean copy: a NaN or an infinity makes it non-finite, and only then (or
    # when finite values overflow the sum) is the table scanned cell by cell
    with np.errstate(over="ignore", invalid="ignore"):
        suspect = not np.isfinite(arr.sum())
    if suspect and not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} contains {bad} NaN or infinite value(s); a position table must be finite")
    return arr
