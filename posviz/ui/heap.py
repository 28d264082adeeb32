"""The server's heap between runs.

A full garbage collection of CPython walks every object the process tracks: the modules, classes and functions of
numpy, torch, plotly, pandas and Streamlit (about 300,000 objects once every page has run) as much as the few a run
left behind. With a class on one server that walk stalled every session at once, 0.1-0.2 s several times a minute,
and made the second wave of 40 students the slowest (p95 above 1 s). What modules hold lives as long as the process,
so after a run that imported anything new the objects alive are moved out of the collector's reach (``gc.freeze``);
later collections walk only what came after, 15-25 ms. A run that imports nothing changes nothing. What is frozen is
still freed by reference counting; only cycles made before a freeze wait for the process's end, and freezes stop
once every page has run (a few, at a server's start).
"""

from __future__ import annotations

import gc
import sys

_modules = 0  # how many modules were imported at the last freeze


def settle() -> bool:
    """After a run: freeze the objects alive if the run imported a module; True when it did."""
    global _modules
    if len(sys.modules) == _modules:
        return False
    _modules = len(sys.modules)
    gc.freeze()
    return True
