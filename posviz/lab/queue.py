"""One queue of training runs for everyone who uses the lab: one run per configuration, a few worker processes, and
the finished runs kept on disk.

A class presses Start on the same settings many times over, and a run costs seconds to minutes of a CPU. The
queue trains each configuration once and keeps the server's pages responsive while it does:

- **One run per configuration.** Whoever submits a configuration that is queued, training or finished joins that
  run. A *waiter* is a name a client gives itself (the app uses one per browser session); submitting twice, or a
  hundred times, is the same as once.
- **A line.** Runs start in the order they were submitted, at most ``workers`` at once. A queued run's ``ahead``
  counts the runs that are ahead of it: those training and those before it in the line.
- **Worker processes.** Each run trains in a worker process: a fresh Python interpreter (never a fork of a threaded
  server) started by :func:`subprocess.Popen` and talking to the queue over a socket pair, kept for the next run, so
  torch is imported once per worker. (Not multiprocessing's "spawn": its child imports the parent's ``__main__``
  module again, and in a Streamlit server that is the page script being run.) A worker trains on one thread, at a
  lower CPU priority (``os.nice(WORKER_NICE)``), and holds no lock of the server: the page scripts keep the
  server's Python to themselves and win the CPU when they need it. (POSIX: the socket is handed over with
  ``pass_fds``.)
- **Leaving.** ``cancel`` takes a waiter off a run. A run nobody waits for any more is dropped from the line, or
  stopped after its current step when it is training; nothing of it is kept. A waiter that never comes back (a
  closed browser tab) simply stays: its run finishes and is kept for everyone.
- **Finished runs are files.** The worker writes each finished run to ``directory`` (write to a temporary name,
  then rename, so a reader never sees half a file), named by the task, the encoding and a digest of
  (``VERSION``, the code the run calls, torch's and numpy's versions, the configuration). A queue over the same
  directory, such as the one of a restarted server, serves them without training again, and an edited training
  procedure never meets an old result. Every run started, finished, stopped or failed is a line of ``runs.log``
  there.
- **Failures.** A run that raises fails with the exception's sentence; a worker that dies (killed, out of memory)
  fails its run with its exit code. Either way the failure is the run's status until a waiter submits it again, and
  the line moves on.

Example::

    from posviz import lab
    queue = lab.TrainingQueue()                     # POSVIZ_LAB_DIR and POSVIZ_LAB_WORKERS, see below
    config = lab.TrainConfig(encoding="rope", steps=300)
    queue.submit(config, "ada")                     # Status(state="queued", ahead=0, ...)
    queue.submit(config, "grace")                   # the same run, now with two waiters
    queue.status(config, "ada")                     # Status(state="running", step=120, total=300, loss=1.9, ...)
    queue.statuses([config, other], "ada")          # several at the same moment
    queue.result(config)                            # None until it is done, then the RunResult
    queue.cancel(config, "ada")                     # grace still waits, so the run goes on
    queue.submit(config, "ada", task="isolation")   # the isolation check: its result is the accuracy
    queue.close()

``POSVIZ_LAB_DIR`` names the folder of the finished runs (default ``$XDG_CACHE_HOME/posviz/lab``, or
``~/.cache/posviz/lab``); ``POSVIZ_LAB_WORKERS`` how many runs train at once (default: one fewer than the CPUs this
process may use, at least one, so a core is left for the pages).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection, wait
from pathlib import Path

import numpy as np
import torch

from ..base.store import ByteStore
from .evaluate import position_accuracy
from .train import RunResult, TrainConfig, load_run, save, train, write_atomically

#: The stored runs' format. Bump it when a stored file's layout changes; edits of the code a run calls change the
#: digest of ``procedure()`` by themselves.
VERSION = 1
#: The CPU priority a worker lowers itself by (``os.nice``): the page scripts come first.
WORKER_NICE = 10
#: A worker reports its progress at most this often (seconds), and after the last step.
PROGRESS_SECONDS = 0.2
#: A run asked to stop has this long (seconds) to end its current step before its worker is killed.
STOP_GRACE = 10.0
#: Memory the loaded results kept in the server may hold (their arrays and model weights).
KEEP_BYTES = 64 << 20
LOG = "runs.log"


@dataclasses.dataclass(frozen=True)
class Task:
    """A kind of job: ``run(config, progress, should_stop)`` computes its value in a worker (``progress(step,
    total, loss)`` after steps, ``should_stop()`` before them), ``write(value, path, config)`` keeps it there
    (atomically) and ``read(path, config)`` gives it back in the server. The functions must be importable by name
    (module-level), since they are sent to the worker. ``suffix`` ends the stored file's name."""

    run: Callable
    write: Callable
    read: Callable
    suffix: str


def write_value(value, path, config: TrainConfig) -> None:
    """Keep a JSON value (the isolation check's accuracy) with its configuration, atomically."""
    text = json.dumps({"config": dataclasses.asdict(config), "value": value})
    write_atomically(path, lambda temporary: Path(temporary).write_text(text, encoding="utf-8"))


def read_value(path, config: TrainConfig):
    """The value kept by :func:`write_value`, refused (ValueError) if it was kept for another configuration."""
    stored = json.loads(Path(path).read_text(encoding="utf-8"))
    if stored.get("config") != dataclasses.asdict(config):
        raise ValueError(f"{path} holds the run of another configuration")
    return stored["value"]


def _train(config: TrainConfig, progress, should_stop) -> RunResult:
    return train(config, progress=progress, should_stop=should_stop)


def _write_run(result: RunResult, path, config: TrainConfig) -> None:
    save(result, path, history=True)


def _read_run(path, config: TrainConfig) -> RunResult:
    result = load_run(path)
    if result.config != config:
        raise ValueError(f"{path} holds the run of another configuration")
    return result


def _isolate(config: TrainConfig, progress, should_stop) -> float:
    return position_accuracy(config.encoding, config, progress, should_stop)


#: The queue's jobs: "train" is ``lab.train`` (its result a RunResult), "isolation" the isolation check
#: ``lab.position_accuracy`` (its result the accuracy).
TASKS = {
    "train": Task(_train, _write_run, _read_run, ".safetensors"),
    "isolation": Task(_isolate, write_value, read_value, ".json"),
}


@dataclasses.dataclass(frozen=True)
class Status:
    """Where a configuration's run stands, as seen by one waiter.

    ``state`` is "absent" (nobody asked for it and it is not stored), "queued", "running", "done" or "failed".
    ``ahead`` (queued) counts the runs training now and those before it in the line. ``step`` of ``total`` steps
    are done (``total`` when done) and ``loss`` is the last one reported (NaN before the first). ``seconds_left``
    estimates when the run will be done, from the speed measured on the runs so far (None while there is nothing to
    measure by). ``waiting`` says whether this waiter is one of the run's ``waiters``. A failed run has the reason in
    ``error`` and, when its worker died, the worker's ``exit_code``.
    """

    state: str
    total: int
    ahead: int = 0
    step: int = 0
    loss: float = math.nan
    seconds_left: float | None = None
    waiting: bool = False
    waiters: int = 0
    error: str | None = None
    exit_code: int | None = None

    @property
    def active(self) -> bool:
        """Queued or running: the run is still coming."""
        return self.state in ("queued", "running")


def overall(statuses: Iterable[Status]) -> tuple[float, float | None]:
    """``(share, seconds_left)`` of a set of runs: the share of all their steps that are done (a finished run counts
    all of its steps, a running one those it has done, the others none) and the seconds until the last active one
    is done (None when none is active or the speed is not known yet)."""
    statuses = list(statuses)
    total = sum(s.total for s in statuses)
    done = sum(s.total if s.state == "done" else s.step if s.state == "running" else 0 for s in statuses)
    active = [s for s in statuses if s.active]
    known = [s.seconds_left for s in active if s.seconds_left is not None]
    left = max(known) if active and len(known) == len(active) else None
    return (done / total if total else 0.0), left


def finish_times(running: list[float], line: list[float], workers: int) -> list[float]:
    """When each run of ``line`` (seconds of training each, in order) will be done, if they start in order on
    ``workers`` workers whose runs in progress end after ``running`` seconds (a worker without a run is free now)."""
    free = sorted(running) + [0.0] * max(0, workers - len(running))
    finished = []
    for seconds in line:
        start = min(free)
        free.remove(start)
        free.append(start + seconds)
        finished.append(start + seconds)
    return finished


def default_directory() -> Path:
    """``POSVIZ_LAB_DIR`` if set, otherwise ``posviz/lab`` in the user's cache folder (``XDG_CACHE_HOME`` when it is
    an absolute path, as the XDG specification asks, else ``~/.cache``)."""
    named = os.environ.get("POSVIZ_LAB_DIR", "").strip()
    if named:
        return Path(named).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(cache) if cache and Path(cache).is_absolute() else Path.home() / ".cache"
    return base / "posviz" / "lab"


def default_workers() -> int:
    """``POSVIZ_LAB_WORKERS`` if set, otherwise one fewer than the CPUs this process may run on (at least one):
    the remaining core serves the pages."""
    named = os.environ.get("POSVIZ_LAB_WORKERS", "").strip()
    if named:
        if not named.isdigit() or int(named) < 1:
            raise ValueError(f"POSVIZ_LAB_WORKERS must be a whole number of at least 1; got {named!r}")
        return int(named)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores - 1)


@functools.cache
def procedure() -> str:
    """A digest of what decides a run's numbers beside its configuration: the source of the modules whose code a run
    calls (the lab's model, corpus, training and evaluation; the encodings and the probe they use) and the versions
    of torch and numpy."""
    from ..analysis import position_probe
    from ..encodings.alibi import alibi_bias
    from ..encodings.learned import sin_init
    from ..encodings.rope import rope_cos_sin
    from ..encodings.sinusoidal import sinusoidal
    from .corpus import mlm_batch
    from .model import MicroBert

    called = (MicroBert, mlm_batch, train, position_accuracy, position_probe, alibi_bias, sin_init, rope_cos_sin)
    sources: set[str] = set()
    for f in (*called, sinusoidal):
        source = sys.modules[f.__module__].__file__
        if source is None:
            raise RuntimeError(f"{f.__module__} has no source file to digest")
        sources.add(source)
    files = sorted(sources)
    digest = hashlib.sha256(f"torch {torch.__version__}, numpy {np.__version__}".encode())
    for file in files:
        digest.update(Path(file).read_bytes())
    return digest.hexdigest()


def file_name(task: str, config: TrainConfig, suffix: str) -> str:
    """The stored run's file name: task, encoding and the first 24 hex digits of the sha256 of the format version,
    the training procedure (:func:`procedure`), the task and the configuration."""
    key = json.dumps(
        {"version": VERSION, "procedure": procedure(), "task": task, "config": dataclasses.asdict(config)},
        sort_keys=True,
    )
    return f"{task}-{config.encoding}-{hashlib.sha256(key.encode()).hexdigest()[:24]}{suffix}"


def _reason(exc: BaseException) -> str:
    """A failed run's sentence: a ValueError's own (the core's sentences are written for students), otherwise the
    exception's kind and message."""
    text = str(exc)
    return text if isinstance(exc, ValueError) and text else f"{type(exc).__name__}: {text}"


# ------------------------------------------------------------------------------------------------- the worker


def _log(directory: Path, event: str, job_id: int, task: str, config: TrainConfig, path: str, **extra) -> None:
    line = json.dumps(
        {
            "time": time.time(),
            "event": event,
            "task": task,
            "encoding": config.encoding,
            "steps": config.steps,
            "seed": config.seed,
            "file": Path(path).name,
            "pid": os.getpid(),
            "job": job_id,
            **extra,
        }
    )
    try:
        with open(directory / LOG, "a", encoding="utf-8") as log:
            log.write(line + "\n")
    except OSError:  # the log is a record, not a condition of training
        pass


def serve(fd: int) -> None:
    """The main of a worker process (``python -c "from posviz.lab.queue import serve; serve(FD)"``), talking to the
    queue over the socket ``fd``: it takes the server's import path (so that the tasks' modules import here too), its
    folder, tasks and CPU priority, lowers its priority, trains on one thread, and then runs the jobs it is sent
    until it is sent None or the server goes away."""
    conn = Connection(fd)
    path = conn.recv()
    sys.path.extend(entry for entry in path if entry not in sys.path)
    directory, tasks, nice = conn.recv()
    if nice and hasattr(os, "nice"):
        try:
            os.nice(nice)
        except OSError:
            pass
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # torch allows it only before any parallel work
        pass
    folder = Path(directory)
    while True:
        try:
            message = conn.recv()
            if message is None:
                return
            if message[0] == "stop":  # for a run that has already ended
                continue
            job_id, task_name, config, path = message
            if _run(conn, folder, tasks[task_name], job_id, task_name, config, path):
                return
        except (EOFError, ConnectionError):  # the server is gone
            return


def _run(conn, folder: Path, task: Task, job_id: int, task_name: str, config: TrainConfig, path: str) -> bool:
    """One job in a worker: run it, keep its result at ``path`` and tell the server how it went. The server's
    ("stop", job_id) ends it after the current step. True when the server asked the worker to end, too."""
    began, last = time.perf_counter(), -math.inf
    stopping = ending = False

    def progress(step: int, total: int, loss: float) -> None:
        nonlocal last
        now = time.perf_counter()
        if now - last >= PROGRESS_SECONDS or step == total:
            last = now
            conn.send(("progress", job_id, step, total, float(loss), now - began))

    def should_stop() -> bool:
        nonlocal stopping, ending
        while not stopping and conn.poll():
            message = conn.recv()
            stopping = ending = message is None
            stopping = stopping or message == ("stop", job_id)
        return stopping

    def log(event: str, **extra) -> None:
        _log(folder, event, job_id, task_name, config, path, **extra)

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        conn.send(("failed", job_id, _unwritable(folder, exc)))
        return False
    log("start")
    conn.send(("started", job_id))
    try:
        value = task.run(config, progress, should_stop)
    except (ConnectionError, EOFError):  # the server is gone
        raise
    except Exception as exc:  # the run's own failure is reported, and the worker takes the next job
        log("failed", error=_reason(exc))
        conn.send(("failed", job_id, _reason(exc)))
        return ending
    if should_stop():
        log("stopped")
        conn.send(("stopped", job_id))
        return ending
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        task.write(value, path, config)
    except Exception as exc:
        reason = _unwritable(Path(path).parent, exc) if isinstance(exc, OSError) else _reason(exc)
        log("failed", error=reason)
        conn.send(("failed", job_id, reason))
        return ending
    seconds = time.perf_counter() - began
    log("done", seconds=round(seconds, 3))
    conn.send(("done", job_id, seconds))
    return ending


def _unwritable(folder: Path, exc: OSError) -> str:
    return (
        f"the finished run could not be kept in {folder} ({exc.strerror or exc}); POSVIZ_LAB_DIR names the folder "
        "for the lab's runs, and the server must be able to write there"
    )


# ------------------------------------------------------------------------------------------------- the queue


@dataclasses.dataclass(eq=False)
class _Worker:
    process: subprocess.Popen
    conn: Connection
    job: _Job | None = None

    def send(self, message) -> bool:
        """Send ``message``; False when the worker is gone."""
        try:
            self.conn.send(message)
        except OSError:
            return False
        return True


@dataclasses.dataclass(eq=False)
class _Job:
    id: int
    task: str
    config: TrainConfig
    waiters: set
    state: str = "queued"  # queued, running, stopping (nobody waits any more) or failed
    step: int = 0
    loss: float = math.nan
    elapsed: float = 0.0
    first: tuple[int, float] = (0, 0.0)  # (step, elapsed) of the first report
    error: str | None = None
    exit_code: int | None = None
    worker: _Worker | None = None
    deadline: float = math.inf


class TrainingQueue:
    """The lab's runs, one per configuration, trained by at most ``workers`` worker processes and kept in
    ``directory`` (see the module's documentation). ``tasks`` maps a task's name to its :class:`Task` (default
    :data:`TASKS`). Workers start when the first run does; the queue is safe to use from many threads."""

    def __init__(
        self,
        directory=None,
        workers: int | None = None,
        *,
        tasks: dict | None = None,
        nice: int = WORKER_NICE,
        keep_bytes: int = KEEP_BYTES,
    ) -> None:
        self.directory = Path(directory).expanduser() if directory is not None else default_directory()
        self.workers = default_workers() if workers is None else workers
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"the queue needs at least one worker; got {self.workers!r}")
        self.tasks = dict(TASKS if tasks is None else tasks)
        self.nice = nice
        self.keep_bytes = keep_bytes
        self._lock = threading.RLock()
        self._jobs: dict[tuple[str, TrainConfig], _Job] = {}  # queued, running and failed runs, by key
        self._line: list[_Job] = []
        self._pool: list[_Worker] = []
        self._ids = itertools.count(1)
        self._per_step: dict[tuple[str, str], float] = {}  # (task, encoding) -> seconds per step, last measured
        self._tails: dict[tuple[str, str], float] = {}  # (task, encoding) -> seconds from the last step to done
        self._kept = ByteStore(keep_bytes)  # loaded results (their arrays and weights), up to keep_bytes
        self._wake_r, self._wake_w = multiprocessing.Pipe(duplex=False)  # a pipe that wakes the queue's thread
        self._thread: threading.Thread | None = None
        self._closed = False

    # ------------------------------------------------------------------------------------------ the public API

    def submit(self, config: TrainConfig, waiter: str, task: str = "train") -> Status:
        """Ask for the run of ``config``, as ``waiter``. A run that is queued or training gains a waiter; a stored
        one is done at once; a failed one, or one nobody asked for, joins the end of the line."""
        key = self._key(config, waiter, task)
        with self._lock:
            if self._closed:
                raise RuntimeError("the training queue is closed")
            job = self._jobs.get(key)
            if job is not None and job.state != "failed":
                job.waiters.add(waiter)
            elif not self._stored(key):
                job = _Job(next(self._ids), task, config, {waiter})
                self._jobs[key] = job
                self._line.append(job)
                self._start()
                self._poke()
            return self._status(key, waiter)

    def status(self, config: TrainConfig, waiter: str | None = None, task: str = "train") -> Status:
        """Where the run of ``config`` stands, for ``waiter`` (None: for someone who has not asked for it)."""
        key = self._key(config, waiter, task)
        with self._lock:
            return self._status(key, waiter)

    def statuses(self, configs: Iterable[TrainConfig], waiter: str | None = None, task: str = "train") -> list[Status]:
        """The Status of every configuration of ``configs``, all taken at the same moment."""
        keys = [self._key(config, waiter, task) for config in configs]
        with self._lock:
            schedule = self._schedule()
            return [self._status(key, waiter, schedule) for key in keys]

    def result(self, config: TrainConfig, task: str = "train"):
        """The finished run of ``config`` (a RunResult for "train", the accuracy for "isolation"), or None when it
        is not done. Read from disk once, then kept in memory (up to ``keep_bytes``) for the next call."""
        key = self._key(config, None, task)
        kept = self._kept.get(key)
        if kept is not None:
            return kept
        path = self.path(config, task)
        if not path.is_file():
            return None
        try:
            value = self.tasks[task].read(path, config)
        except Exception:  # unreadable (damaged, or another configuration's): not a result; train it again
            path.unlink(missing_ok=True)
            return None
        return self._kept.put(key, value)

    def cancel(self, config: TrainConfig, waiter: str, task: str = "train") -> Status:
        """Take ``waiter`` off the run of ``config``. When nobody else waits for it, a queued run leaves the line,
        a training one is stopped after its current step (its worker killed if it does not stop within
        STOP_GRACE seconds) and a failed one is forgotten; nothing of them is kept. A finished run stays."""
        key = self._key(config, waiter, task)
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and waiter in job.waiters:
                job.waiters.discard(waiter)
                if not job.waiters:
                    del self._jobs[key]
                    if job.state == "queued":
                        self._line.remove(job)
                    elif job.state == "running":
                        if job.worker is None:  # _run gives a job its worker as it sets it running
                            raise RuntimeError(f"run {job.id} is running without a worker")
                        job.state, job.deadline = "stopping", time.monotonic() + STOP_GRACE
                        job.worker.send(("stop", job.id))
                        self._poke()
            return self._status(key, waiter)

    def path(self, config: TrainConfig, task: str = "train") -> Path:
        """Where the finished run of ``config`` is kept."""
        return self.directory / f"v{VERSION}" / file_name(task, config, self.tasks[task].suffix)

    def close(self, timeout: float = 10.0) -> None:
        """Stop every run, end the workers (killed if they do not end within ``timeout`` seconds) and refuse new
        runs. Finished runs stay on disk."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pool, self._pool = self._pool, []
            for worker in pool:
                if worker.job is not None:
                    worker.send(("stop", worker.job.id))
                worker.send(None)
            self._poke()
        ends = time.monotonic() + timeout
        if self._thread is not None:
            self._thread.join(timeout)  # it ends at its next turn, before the connections below are closed
        for worker in pool:
            try:
                worker.process.wait(max(0.0, ends - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()
            worker.conn.close()
        self._wake_r.close()
        self._wake_w.close()

    def __enter__(self) -> TrainingQueue:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------ inside

    def _key(self, config, waiter, task: str) -> tuple[str, TrainConfig]:
        if not isinstance(config, TrainConfig):
            raise ValueError(f"a run is described by a posviz.lab.TrainConfig; got {type(config).__name__}")
        if task not in self.tasks:
            raise ValueError(f"task must be one of {', '.join(self.tasks)}; got {task!r}")
        if waiter is not None and (not isinstance(waiter, str) or not waiter):
            raise ValueError(f"a waiter is named by a non-empty string; got {waiter!r}")
        return task, config

    def _stored(self, key) -> bool:
        return key in self._kept or self.path(key[1], key[0]).is_file()

    def _measured(self, table: dict, job: _Job) -> float | None:
        """A measurement of ``table`` for ``job``: the one of its task and encoding, else the mean of its task's,
        else the mean of all, else None."""
        exact = table.get((job.task, job.config.encoding))
        if exact is not None:
            return exact
        values = [v for (task, _), v in table.items() if task == job.task] or list(table.values())
        return sum(values) / len(values) if values else None

    def _seconds_left(self, job: _Job) -> float | None:
        """Seconds until ``job`` is done once it runs: its steps left at the speed measured on it (from its first
        report on, which carries the start-up), or on the runs before it, and the time the runs before it took to
        evaluate after their last step. None before any measurement."""
        first_step, first_elapsed = job.first
        per_step: float | None
        if job.step > first_step:
            per_step = (job.elapsed - first_elapsed) / (job.step - first_step)
        else:
            per_step = self._measured(self._per_step, job)
        if per_step is None:
            return None
        return (job.config.steps - job.step) * per_step + (self._measured(self._tails, job) or 0.0)

    def _schedule(self) -> tuple[list[_Job], dict[int, float]]:
        """The runs training now, and when each active run will be done (seconds from now, by job id; empty while
        a run has nothing to be estimated by)."""
        running = [w.job for w in self._pool if w.job is not None and w.job.state == "running"]
        estimates = [self._seconds_left(j) for j in running + self._line]
        known = [e for e in estimates if e is not None]
        if len(known) < len(estimates):
            return running, {}
        now, later = known[: len(running)], known[len(running) :]
        times = {j.id: left for j, left in zip(running, now, strict=True)}
        times.update((j.id, left) for j, left in zip(self._line, finish_times(now, later, self.workers), strict=True))
        return running, times

    def _status(self, key, waiter, schedule=None) -> Status:
        task, config = key
        job = self._jobs.get(key)
        if job is None:
            state = "done" if self._stored(key) else "absent"
            return Status(state, config.steps, step=config.steps if state == "done" else 0)
        waiting, waiters = waiter in job.waiters, len(job.waiters)
        if job.state == "failed":
            return Status(
                "failed", config.steps, error=job.error, exit_code=job.exit_code, waiting=waiting, waiters=waiters
            )
        running, times = schedule or self._schedule()
        seconds_left = times.get(job.id)
        if job.state == "queued":
            ahead = len(running) + self._line.index(job)
            return Status(
                "queued", config.steps, ahead=ahead, seconds_left=seconds_left, waiting=waiting, waiters=waiters
            )
        return Status(
            "running",
            config.steps,
            step=job.step,
            loss=job.loss,
            seconds_left=seconds_left,
            waiting=waiting,
            waiters=waiters,
        )

    def _poke(self) -> None:
        try:
            self._wake_w.send_bytes(b"")
        except (OSError, ValueError):  # closed
            pass

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="posviz-training-queue", daemon=True)
            self._thread.start()

    def _spawn(self) -> _Worker:
        """A new worker: a fresh Python (``serve``) connected by a socket pair. Not multiprocessing's "spawn", which
        would run the parent's ``__main__`` again in the child, and Streamlit makes the page script it is running
        the ``__main__`` module."""
        ours, theirs = socket.socketpair()
        package_root = str(Path(__file__).resolve().parents[2])
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([package_root, *filter(None, [os.environ.get("PYTHONPATH")])]),
            "OMP_NUM_THREADS": "1",  # torch on one thread, from its first import on
            "MKL_NUM_THREADS": "1",
        }
        command = f"from posviz.lab.queue import serve; serve({theirs.fileno()})"
        try:
            process = subprocess.Popen([sys.executable, "-c", command], pass_fds=[theirs.fileno()], env=env)
        finally:
            theirs.close()
        worker = _Worker(process, Connection(ours.detach()))
        worker.send(list(sys.path))
        worker.send((str(self.directory), self.tasks, self.nice))
        self._pool.append(worker)
        return worker

    def _dispatch(self) -> None:
        """Give the first runs of the line to idle workers, starting workers up to ``self.workers``."""
        while self._line:
            worker = next((w for w in self._pool if w.job is None), None)
            if worker is None:
                if len(self._pool) >= self.workers:
                    return
                try:
                    worker = self._spawn()
                except Exception as exc:  # no process could be started: the run fails, the line moves on
                    self._fail(self._line.pop(0), f"no worker process could be started ({_reason(exc)})")
                    continue
            job = self._line.pop(0)
            if not worker.send((job.id, job.task, job.config, str(self.path(job.config, job.task)))):
                self._line.insert(0, job)  # the worker is gone: it is replaced, the run keeps its place
                self._bury(worker)
                continue
            job.state, job.worker, worker.job = "running", worker, job

    def _fail(self, job: _Job, reason: str, exit_code: int | None = None) -> None:
        job.worker = None
        if job.state == "stopping" or self._jobs.get((job.task, job.config)) is not job:
            return  # nobody waits for it
        job.state, job.error, job.exit_code = "failed", reason, exit_code

    def _finish(self, job: _Job) -> None:
        job.worker = None
        if self._jobs.get((job.task, job.config)) is job:
            del self._jobs[job.task, job.config]

    def _bury(self, worker: _Worker) -> None:
        """A worker that died: its run fails (unless nobody waited for it any more) and it leaves the pool."""
        if worker in self._pool:
            self._pool.remove(worker)
        try:
            code = worker.process.wait(5.0)
        except subprocess.TimeoutExpired:  # its socket is closed but it lives on: it is of no use any more
            worker.process.kill()
            code = worker.process.wait()
        job, worker.job = worker.job, None
        if job is not None:
            self._fail(job, f"the worker process training it ended unexpectedly (exit code {code})", code)
        worker.conn.close()

    def _receive(self, worker: _Worker, message) -> None:
        kind, job_id, *rest = message
        job = worker.job
        if job is None or job.id != job_id:
            return
        measure = (job.task, job.config.encoding)
        if kind == "progress":
            job.step, _, job.loss, job.elapsed = rest
            if job.first[0] == 0:
                job.first = (job.step, job.elapsed)
            elif job.step > job.first[0]:
                self._per_step[measure] = (job.elapsed - job.first[1]) / (job.step - job.first[0])
        elif kind == "done" and job.step == job.config.steps:
            self._tails[measure] = max(0.0, rest[0] - job.elapsed)  # the evaluation after the last step
        if kind in ("done", "stopped", "failed"):
            worker.job = None
            if kind == "failed":
                self._fail(job, rest[0])
            else:
                self._finish(job)

    def _loop(self) -> None:
        """The queue's thread: hand out runs, read the workers' messages, notice dead workers, enforce stops."""
        while True:
            with self._lock:
                if self._closed:
                    return
                self._dispatch()
                pool = list(self._pool)
                deadlines = [w.job.deadline for w in pool if w.job is not None and w.job.state == "stopping"]
            timeout = min([1.0, *(max(0.0, d - time.monotonic()) for d in deadlines)])
            wait([self._wake_r, *(w.conn for w in pool)], timeout)
            with self._lock:
                while self._wake_r.poll():
                    self._wake_r.recv_bytes()
                for worker in pool:
                    if worker not in self._pool:
                        continue
                    try:
                        while worker.conn.poll():
                            self._receive(worker, worker.conn.recv())
                    except (EOFError, OSError):  # its end of the socket is closed: the worker is gone
                        self._bury(worker)
                        continue
                    job = worker.job
                    if worker.process.poll() is not None:
                        self._bury(worker)
                    elif job is not None and job.state == "stopping" and time.monotonic() > job.deadline:
                        worker.process.kill()  # it did not stop within STOP_GRACE: nobody waits for it


__all__ = [
    "KEEP_BYTES",
    "STOP_GRACE",
    "TASKS",
    "VERSION",
    "WORKER_NICE",
    "Status",
    "Task",
    "TrainingQueue",
    "default_directory",
    "default_workers",
    "file_name",
    "finish_times",
    "overall",
    "procedure",
    "read_value",
    "serve",
    "write_value",
]
