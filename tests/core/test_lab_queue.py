"""The training queue: one run per configuration whoever asks, a line with places, at most N runs at once, waiters
that leave, runs kept on disk across a restart, workers that die, and a hundred clicks.

Most tests run the stand-in jobs of ``_lab_jobs`` (sleeping steps: what a run computes is beside the point there);
the first runs the real ``lab.train`` in a real worker process and checks what comes back against the same run made
here. Runs are counted in the store's log, which the worker writes as it starts each run."""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import threading
import time
import types

import numpy as np
import pytest
import torch

from posviz import lab
from posviz.lab.queue import finish_times, overall
from posviz.lab.train import held_out

from . import _lab_jobs
from ._lab_jobs import wait_for


def log(queue) -> list[dict]:
    """The runs log the workers wrote: one line per run started, finished, stopped or failed."""
    path = queue.directory / "runs.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def starts(queue, config=None, task: str = "count") -> list[dict]:
    events = [e for e in log(queue) if e["event"] == "start" and e["task"] == task]
    return [e for e in events if config is None or e["file"] == queue.path(config, task).name]


def job(seed: int, steps: int = 50) -> lab.TrainConfig:
    return lab.TrainConfig(encoding="nope", steps=steps, seed=seed)


@pytest.fixture
def stand_in(tmp_path):
    """``stand_in(workers)``: a queue of the stand-in jobs over a fresh folder, closed after the test."""
    made = []

    def make(workers: int = 1, directory=None):
        queue = lab.TrainingQueue(directory or tmp_path / "lab", workers, tasks=_lab_jobs.TASKS)
        made.append(queue)
        return queue

    yield make
    for queue in made:
        queue.close()


# ---------------------------------------------------------------------------------------- the real training


def test_two_waiters_share_one_real_run_and_a_restarted_queue_serves_it_from_disk(tmp_path):
    """Two students on the same settings: trained once, in a worker process, and both get the run; it is the run
    lab.train makes here (same losses, snapshots, accuracy, probe and model). A new queue over the same folder — a
    restarted server — serves it without training."""
    config = lab.TrainConfig(encoding="learned", steps=12, seed=5)
    with lab.TrainingQueue(tmp_path, workers=1) as queue:
        first, second = queue.submit(config, "ada"), queue.submit(config, "grace")
        assert first.state in ("queued", "running") and second.waiters == 2
        wait_for(lambda: queue.status(config, "ada").state == "done")
        assert queue.status(config, "grace").state == "done"
        served = queue.result(config)
        assert queue.result(config) is served  # kept in memory after the first read
    expected = lab.train(config)
    assert [e["event"] for e in log(queue) if e["task"] == "train"] == ["start", "done"]
    assert log(queue)[0]["pid"] != os.getpid()  # trained in a worker, not here

    with lab.TrainingQueue(tmp_path, workers=1) as restarted:
        assert restarted.status(config, "linus").state == "done"
        again = restarted.result(config)
        assert restarted.submit(config, "linus").state == "done"
    assert len(starts(restarted, task="train")) == 1  # nothing trained again
    for run in (served, again):
        assert run.config == config and not run.stopped
        np.testing.assert_array_equal(run.losses, expected.losses)
        np.testing.assert_array_equal(run.snapshot_steps, expected.snapshot_steps)
        np.testing.assert_array_equal(run.snapshots, expected.snapshots)
        assert run.mlm_accuracy == expected.mlm_accuracy
        assert (run.probe_before, run.probe_after) == (expected.probe_before, expected.probe_after)
        ids = torch.from_numpy(held_out(config, sequences=4)[0])
        with torch.no_grad():
            torch.testing.assert_close(run.model(ids), expected.model(ids), rtol=0, atol=0)
        # what the lengths tab shows, learned table's IndexError included
        got, want = lab.evaluate_lengths(run, [16, 32, 48]), lab.evaluate_lengths(expected, [16, 32, 48])
        np.testing.assert_array_equal(got.accuracy, want.accuracy)
        assert got.errors == want.errors


def test_the_isolation_check_goes_through_the_queue(tmp_path):
    config = lab.TrainConfig(encoding="sinusoidal", steps=15, seed=2)
    with lab.TrainingQueue(tmp_path, workers=1) as queue:
        queue.submit(config, "ada", task="isolation")
        assert queue.status(config, "ada").state == "absent"  # a training run of the same settings is another job
        wait_for(lambda: queue.status(config, "ada", task="isolation").state == "done")
        assert queue.result(config, task="isolation") == lab.position_accuracy("sinusoidal", config)
        assert queue.result(config) is None


# ---------------------------------------------------------------------------------------- the line


def test_three_runs_on_one_worker_report_their_places_and_run_in_order(stand_in):
    queue = stand_in(workers=1)
    configs = [job(seed, steps=60) for seed in (1, 2, 3)]
    for config in configs:
        queue.submit(config, "ada", task="count")
    places = [s.ahead for s in queue.statuses(configs, "ada", task="count")]
    assert places == [0, 1, 2]
    running = wait_for(lambda: (s := queue.status(configs[0], "ada", task="count")).state == "running" and s)
    assert running.ahead == 0
    assert [s.ahead for s in queue.statuses(configs[1:], "ada", task="count")] == [1, 2]  # the one training is ahead
    wait_for(lambda: all(s.state == "done" for s in queue.statuses(configs, task="count")))
    assert [queue.result(c, task="count") for c in configs] == [1, 2, 3]
    events = [(e["event"], e["seed"]) for e in log(queue)]
    assert events == [("start", 1), ("done", 1), ("start", 2), ("done", 2), ("start", 3), ("done", 3)]


def test_the_time_left_follows_the_measured_speed_and_the_line(stand_in):
    """While A trains, its time left is its steps left at its measured speed, and B (queued behind it on the one
    worker) is done that much later plus its own steps at the same speed."""
    queue = stand_in(workers=1)
    a, b = job(1, steps=150), job(2, steps=40)
    queue.submit(a, "ada", task="count")
    queue.submit(b, "ada", task="count")
    assert [s.seconds_left for s in queue.statuses([a, b], task="count")] == [None, None]  # nothing measured yet
    wait_for(lambda: queue.status(a, task="count").step >= 20)
    now_a, now_b = queue.statuses([a, b], task="count")
    assert now_a.state == "running" and now_b.state == "queued"
    per_step = now_a.seconds_left / (now_a.total - now_a.step)
    assert _lab_jobs.STEP_SECONDS <= per_step < 20 * _lab_jobs.STEP_SECONDS  # a sleep of 20 ms per step, measured
    assert now_b.seconds_left == pytest.approx(now_a.seconds_left + b.steps * per_step, rel=1e-9)
    share, left = overall([now_a, now_b])
    assert share == pytest.approx(now_a.step / (a.steps + b.steps)) and left == now_b.seconds_left
    queue.cancel(a, "ada", task="count")
    queue.cancel(b, "ada", task="count")


def test_finish_times_are_those_of_runs_started_in_order_on_the_first_free_worker():
    """Against a step-by-step simulation of the workers (tenths of a second)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        workers = int(rng.integers(1, 4))
        running = rng.integers(1, 30, int(rng.integers(0, workers + 1))).tolist()
        line = rng.integers(1, 30, int(rng.integers(0, 6))).tolist()
        busy = running + [0] * (workers - len(running))  # tenths left on each worker
        waiting, done, clock = list(enumerate(line)), {}, 0
        while waiting or any(busy):
            for w in range(workers):  # every free worker takes the next run in line
                if busy[w] == 0 and waiting:
                    index, tenths = waiting.pop(0)
                    busy[w], done[index] = tenths, clock + tenths
            clock += 1
            busy = [max(0, b - 1) for b in busy]
        got = finish_times([float(r) for r in running], [float(s) for s in line], workers)
        assert got == [float(done[i]) for i in range(len(line))], (workers, running, line)


def test_overall_counts_steps_not_runs():
    done = lab.Status("done", 100, step=100)
    half = lab.Status("running", 300, step=150, seconds_left=5.0)
    queued = lab.Status("queued", 100, ahead=1, seconds_left=9.0)
    assert overall([done, half, queued]) == (pytest.approx((100 + 150) / 500), 9.0)
    assert overall([done, lab.Status("absent", 100)]) == (0.5, None)  # nothing coming: no time left to tell
    assert overall([half, lab.Status("queued", 100, ahead=1)])[1] is None  # one run not estimated yet


# ---------------------------------------------------------------------------------------- leaving


def test_a_waiter_leaving_does_not_stop_the_run_for_the_other(stand_in):
    queue = stand_in(workers=1)
    config = job(7, steps=80)
    queue.submit(config, "ada", task="count")
    queue.submit(config, "grace", task="count")
    wait_for(lambda: queue.status(config, task="count").step > 0)
    left = queue.cancel(config, "ada", task="count")
    assert left.state == "running" and not left.waiting and left.waiters == 1
    assert queue.status(config, "grace", task="count").waiting
    wait_for(lambda: queue.status(config, task="count").state == "done")
    assert queue.result(config, task="count") == 7
    assert [e["event"] for e in log(queue)] == ["start", "done"]


def test_the_last_waiter_leaving_drops_a_queued_run_and_stops_a_running_one(stand_in):
    queue = stand_in(workers=1)
    running, queued, after = job(1, steps=2000), job(2), job(3, steps=5)
    queue.submit(running, "ada", task="count")
    queue.submit(queued, "ada", task="count")
    wait_for(lambda: queue.status(running, task="count").step > 0)

    assert queue.cancel(queued, "ada", task="count").state == "absent"
    assert queue.cancel(running, "ada", task="count").state == "absent"  # stopping: nobody's run any more
    stopped = wait_for(lambda: [e for e in log(queue) if e["event"] == "stopped"])
    assert [e["seed"] for e in stopped] == [1]
    assert stopped[0]["time"] - starts(queue, running)[0]["time"] < 2000 * _lab_jobs.STEP_SECONDS  # stopped early
    assert not starts(queue, queued)  # the queued run never started
    assert not queue.path(running, "count").exists() and not queue.path(queued, "count").exists()
    assert queue.result(running, task="count") is None

    queue.submit(after, "ada", task="count")  # the worker that stopped takes the next run
    wait_for(lambda: queue.status(after, task="count").state == "done")
    assert starts(queue, after)[0]["pid"] == starts(queue, running)[0]["pid"]


# ---------------------------------------------------------------------------------------- failures


def test_a_killed_worker_fails_its_run_with_a_sentence_and_the_next_run_goes_on(stand_in):
    queue = stand_in(workers=1)
    doomed, next_one = job(1, steps=3000), job(2, steps=5)
    queue.submit(doomed, "ada", task="count")
    queue.submit(next_one, "grace", task="count")
    wait_for(lambda: queue.status(doomed, task="count").step > 0)
    (started,) = starts(queue, doomed)
    os.kill(started["pid"], signal.SIGKILL)

    failed = wait_for(lambda: (s := queue.status(doomed, "ada", task="count")).state == "failed" and s)
    assert failed.exit_code == -signal.SIGKILL and failed.waiting
    assert failed.error == f"the worker process training it ended unexpectedly (exit code {-signal.SIGKILL})"
    wait_for(lambda: queue.status(next_one, task="count").state == "done")
    assert starts(queue, next_one)[0]["pid"] != started["pid"]  # a new worker
    assert queue.submit(doomed, "ada", task="count").state in ("queued", "running")  # Start again: tried again
    queue.cancel(doomed, "ada", task="count")


def test_a_run_that_raises_fails_with_its_sentence_and_the_worker_goes_on(stand_in):
    queue = stand_in(workers=1)
    bad, good = job(4), job(5, steps=5)
    queue.submit(bad, "ada", task="refuse")
    queue.submit(good, "ada", task="count")
    failed = wait_for(lambda: (s := queue.status(bad, "ada", task="refuse")).state == "failed" and s)
    assert failed.error == "seed 4 is one this stand-in refuses" and failed.exit_code is None
    wait_for(lambda: queue.status(good, task="count").state == "done")
    pids = {e["pid"] for e in log(queue)}
    assert len(pids) == 1  # the same worker
    assert queue.cancel(bad, "ada", task="refuse").state == "absent"  # forgotten once its last waiter leaves


def test_what_the_queue_refuses_is_a_sentence(tmp_path, monkeypatch):
    queue = lab.TrainingQueue(tmp_path, workers=1)
    with pytest.raises(ValueError, match="a run is described by a posviz.lab.TrainConfig; got dict"):
        queue.submit({"encoding": "rope"}, "ada")
    with pytest.raises(ValueError, match="task must be one of train, isolation; got 'dance'"):
        queue.submit(lab.TrainConfig(), "ada", task="dance")
    with pytest.raises(ValueError, match="a waiter is named by a non-empty string"):
        queue.submit(lab.TrainConfig(), "")
    with pytest.raises(ValueError, match="steps must be a whole number from 1 to 100,000; got 0"):
        lab.TrainConfig(steps=0)
    with pytest.raises(ValueError, match="at least one worker; got 0"):
        lab.TrainingQueue(tmp_path, workers=0)
    queue.close()
    assert not log(queue)  # nothing was trained


def test_a_run_the_server_cannot_keep_fails_with_a_sentence(tmp_path, stand_in):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    queue = stand_in(workers=1, directory=blocked / "lab")
    config = job(1, steps=2)
    queue.submit(config, "ada", task="count")
    failed = wait_for(lambda: (s := queue.status(config, "ada", task="count")).state == "failed" and s)
    assert failed.error.startswith(f"the finished run could not be kept in {blocked / 'lab'} (")
    assert "POSVIZ_LAB_DIR" in failed.error


def test_a_worker_does_not_run_the_servers_main_script_again(stand_in, tmp_path, monkeypatch):
    """Streamlit runs each page script as the ``__main__`` module: a worker started while it does must not run that
    script itself (multiprocessing's "spawn" would, in every worker it starts)."""
    marker = tmp_path / "the page ran in a worker"
    page = tmp_path / "page.py"
    page.write_text(f"open({str(marker)!r}, 'w').close()\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", main)
    queue = stand_in(workers=1)
    config = job(1, steps=2)
    queue.submit(config, "ada", task="count")
    wait_for(lambda: queue.status(config, task="count").state == "done")
    assert not marker.exists()


# ---------------------------------------------------------------------------------------- many clicks, many workers


def test_a_hundred_submits_in_a_second_are_one_waiter_and_one_run(stand_in):
    queue = stand_in(workers=1)
    config = job(9, steps=10)

    def click():
        for _ in range(25):
            queue.submit(config, "ada", task="count")

    threads = [threading.Thread(target=click) for _ in range(4)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert time.monotonic() - began < 1.0
    assert queue.status(config, "ada", task="count").waiters == 1
    wait_for(lambda: queue.status(config, task="count").state == "done")
    assert len(starts(queue, config)) == 1 and len(starts(queue)) == 1


def test_posviz_lab_workers_sets_how_many_runs_train_at_once(stand_in, monkeypatch, tmp_path):
    monkeypatch.setenv("POSVIZ_LAB_WORKERS", "2")
    queue = lab.TrainingQueue(tmp_path / "two", tasks=_lab_jobs.TASKS)
    assert queue.workers == 2
    configs = [job(seed, steps=100) for seed in (1, 2, 3)]
    try:
        for config in configs:
            queue.submit(config, "ada", task="count")
        wait_for(lambda: [s.state for s in queue.statuses(configs, task="count")] == ["running", "running", "queued"])
        assert queue.status(configs[2], task="count").ahead == 2
        wait_for(lambda: all(s.state == "done" for s in queue.statuses(configs, task="count")))
    finally:
        queue.close()
    events = log(queue)
    assert len({e["pid"] for e in events}) == 2
    open_runs = peak = 0
    for event in sorted(events, key=lambda e: e["time"]):  # never more than two runs at once
        open_runs += 1 if event["event"] == "start" else -1
        peak = max(peak, open_runs)
    assert peak == 2

    cores = len(os.sched_getaffinity(0))
    monkeypatch.delenv("POSVIZ_LAB_WORKERS")
    assert lab.TrainingQueue(tmp_path).workers == max(1, cores - 1)
    for bad in ("0", "two", "-1", "1.5"):
        monkeypatch.setenv("POSVIZ_LAB_WORKERS", bad)
        with pytest.raises(ValueError, match=f"POSVIZ_LAB_WORKERS must be a whole number of at least 1; got '{bad}'"):
            lab.TrainingQueue(tmp_path)


def test_the_folder_is_posviz_lab_dir_or_the_users_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("POSVIZ_LAB_DIR", str(tmp_path / "runs"))
    assert lab.TrainingQueue().directory == tmp_path / "runs"
    monkeypatch.delenv("POSVIZ_LAB_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert lab.TrainingQueue().directory == tmp_path / "cache" / "posviz" / "lab"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # the XDG specification says to ignore a relative path
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert lab.TrainingQueue().directory == tmp_path / "home" / ".cache" / "posviz" / "lab"


def test_a_stored_run_is_keyed_by_its_configuration_task_and_version(tmp_path, monkeypatch):
    queue = lab.TrainingQueue(tmp_path)
    base = lab.TrainConfig(encoding="rope")
    names = {
        queue.path(base).name,
        queue.path(lab.TrainConfig(encoding="rope", seed=1)).name,
        queue.path(lab.TrainConfig(encoding="rope", lr=0.005)).name,
        queue.path(base, task="isolation").name,
    }
    assert len(names) == 4
    assert queue.path(base).parent == tmp_path / f"v{lab.queue.VERSION}"
    assert queue.path(base).name.startswith("train-rope-") and queue.path(base).suffix == ".safetensors"
    before = queue.path(base)
    monkeypatch.setattr(lab.queue, "VERSION", lab.queue.VERSION + 1)
    assert queue.path(base).name != before.name  # a new format never reads an old file
    monkeypatch.undo()
    lab.queue.procedure.cache_clear()
    monkeypatch.setattr(torch, "__version__", "0.0.0")  # another torch trains other numbers
    try:
        assert queue.path(base).name != before.name
    finally:
        monkeypatch.undo()
        lab.queue.procedure.cache_clear()
    assert queue.path(base) == before


def test_a_damaged_stored_run_is_not_a_result(tmp_path):
    queue = lab.TrainingQueue(tmp_path)
    config = lab.TrainConfig(encoding="nope", steps=3)
    path = queue.path(config)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x00" * 40)
    assert queue.status(config).state == "done"  # the file is there ...
    assert queue.result(config) is None  # ... but holds no run: it is removed, and the run can be trained again
    assert queue.status(config).state == "absent"
    assert math.isnan(queue.status(config).loss)


@pytest.mark.parametrize(("keep_bytes", "reads"), [(1 << 20, 1), (0, 3)])
def test_a_finished_run_is_read_from_disk_once_and_kept_within_its_budget(tmp_path, keep_bytes, reads):
    """The queue keeps the runs it has read in the one store bounded by bytes (``posviz.base.store``): within
    ``keep_bytes`` a run is read from disk once, and with no room it is read again on every call."""
    import dataclasses as dc

    read = []

    def counting(path, config):
        read.append(path)
        return lab.queue.read_value(path, config)

    queue = lab.TrainingQueue(tmp_path / "lab", 1, tasks=_lab_jobs.TASKS, keep_bytes=keep_bytes)
    try:
        config = job(7, steps=5)
        queue.submit(config, "ada", task="count")
        wait_for(lambda: queue.status(config, task="count").state == "done")
        # the server reads the stored run (the worker only writes it): count the reads from here on
        queue.tasks["count"] = dc.replace(queue.tasks["count"], read=counting)
        assert [queue.result(config, task="count") for _ in range(3)] == [7, 7, 7]
        assert len(read) == reads
    finally:
        queue.close()
