"""Stand-in jobs for the training queue's tests, where what a run computes is beside the point: they take a known
time, report their progress, stop when asked and fail on demand. They run in the queue's worker processes, so they
live in a module the workers can import by name."""

from __future__ import annotations

import time

from posviz.lab.queue import Task, read_value, write_value

#: Seconds each step of a stand-in run sleeps (no CPU: the tests share a busy machine).
STEP_SECONDS = 0.02


def count(config, progress, should_stop):
    """``config.steps`` steps of STEP_SECONDS each, reporting after each one; the result is the seed."""
    for step in range(1, config.steps + 1):
        if should_stop():
            return None
        time.sleep(STEP_SECONDS)
        progress(step, config.steps, 1.0 / step)
    return config.seed


def refuse(config, progress, should_stop):
    """A run that raises the core's kind of error after one step."""
    progress(1, config.steps, 1.0)
    raise ValueError(f"seed {config.seed} is one this stand-in refuses")


TASKS = {
    "count": Task(count, write_value, read_value, ".json"),
    "refuse": Task(refuse, write_value, read_value, ".json"),
}


def wait_for(condition, timeout: float = 120.0, every: float = 0.02):
    """Poll ``condition()`` until it is true (and return its value) or fail after ``timeout`` seconds."""
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"still not true after {timeout} s: {condition}")
