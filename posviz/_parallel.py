"""Numpy work side by side on every core: sin, cos, FFTs and random draws release the GIL, so threads suffice."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor


def on_every_core(func, items) -> list:
    """``[func(item) for item in items]``, the calls spread over every core when there are several; the results
    come back in the order of ``items``, so whatever is summed from them is the same on any number of cores."""
    items = list(items)
    if len(items) <= 1:
        return [func(item) for item in items]
    with ThreadPoolExecutor(min(len(items), os.cpu_count() or 1)) as pool:
        return list(pool.map(func, items))
