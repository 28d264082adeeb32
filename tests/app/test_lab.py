"""The training lab page through AppTest, with a small budget: every chart holds the numbers of the same runs made
independently with posviz.lab (training is deterministic per configuration), the controls round-trip through the
URL, both languages, and the trained files open in the checkpoint inspector's loader. Runs go through the app's
training queue, one worker here: the page shows each run's place and progress truthfully, a second session joins a
run instead of training it again, Stop in one session leaves another's run going, a session that leaves does not
stop its run, and a worker that dies is a sentence on the page."""

from __future__ import annotations

import functools
import json
import os
import re
import signal

import numpy as np
import pytest

import posviz
from posviz import analysis, lab
from posviz.ui import SESSION_TABLES, training
from tests.core._lab_jobs import wait_for as poll_until

from ._support import as_array, assert_clean, assert_matrix, figures, heatmap_z, open_page, title, tr, visit_tabs

TABS = ["training", "tables", "lengths", "isolation", "files"]
STEPS = 20
ENCODINGS = ["sinusoidal", "learned", "nope"]
QUERY = {"steps": str(STEPS), "enc": ENCODINGS}
TIMEOUT = 180


def lab_buttons(at) -> list[str]:
    """The labels of the lab's own buttons (not the frame's: share, the whole lesson's handout)."""
    frame = {"posviz-share", "posviz-handout-prepare"}
    return [b.label for b in at.button if b.key not in frame]


def config(encoding: str, steps: int = STEPS, seed: int = 0) -> lab.TrainConfig:
    return lab.TrainConfig(encoding=encoding, steps=steps, seed=seed)


@pytest.fixture(scope="module", autouse=True)
def one_worker():
    """The app's queue with one worker (the default on a 2-core machine), in the test session's folder."""
    before = os.environ.get("POSVIZ_LAB_WORKERS")
    os.environ["POSVIZ_LAB_WORKERS"] = "1"
    training.queue.clear()
    yield
    training.queue.clear()  # closes the queue and its worker
    if before is None:
        del os.environ["POSVIZ_LAB_WORKERS"]
    else:
        os.environ["POSVIZ_LAB_WORKERS"] = before


#: Polls the lab's state: longer than the queue's own tests, since a page run is part of each poll.
wait_for = functools.partial(poll_until, timeout=TIMEOUT, every=0.05)


def poll(at, done, timeout: float = TIMEOUT):
    """Rerun the session ``at``, as its open page does every second, until ``done(at)``."""

    def check():
        at.run()
        return done(at)

    return wait_for(check, timeout=timeout, every=0.3)


def runs_log() -> list[dict]:
    path = training.queue().directory / "runs.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def events(train_config: lab.TrainConfig, task: str = "train") -> list[str]:
    """What the workers did with the run of ``train_config``: "start", then "done", "stopped" or "failed"."""
    name = training.queue().path(train_config, task).name
    return [e["event"] for e in runs_log() if e["file"] == name]


def bars(at) -> dict[str, int]:
    """Text -> value (0 to 100) of every progress bar on the page."""
    return {p.text: p.value for p in at.get("progress")}


@pytest.fixture(scope="module")
def runs():
    """The same runs as the page's, made here with posviz.lab directly."""
    return {e: lab.train(config(e)) for e in ENCODINGS}


@pytest.fixture(scope="module")
def trained():
    """The page after a click on Start and the runs it asked for, with every tab visited."""
    at = open_page("lab", query=QUERY)
    at.button(key="start").click().run()
    poll(at, lambda at: figures(at) and not at.get("progress"))  # every run done
    return at, visit_tabs(at, "lab", TABS)


def named(lang: str, encodings) -> str:
    """The encodings as the lab's status names them: each code with its label, in the language's list."""
    labels = [tr(lang, "lab.encoding", code=e, name=tr(lang, f"lab.name.{e}")) for e in encodings]
    return tr(lang, "list.sep").join(labels)


def test_before_training_the_page_says_what_is_missing():
    at = open_page("lab", query={**QUERY, "seed": "7"})
    assert_clean(at)
    assert tr("en", "lab.missing", missing=named("en", ENCODINGS), steps=STEPS) in [i.value for i in at.info]
    assert not figures(at) and lab_buttons(at) == [tr("en", "lab.start")]


def test_loss_and_accuracy_are_the_runs(trained, runs):
    _, view = trained
    assert not view.exceptions and not view.errors, view.exceptions + view.errors
    loss, accuracy = view.by_tab["training"]
    for trace, encoding in zip(loss["data"], ENCODINGS, strict=True):
        assert trace["name"] == encoding
        np.testing.assert_allclose(as_array(trace["y"]), runs[encoding].losses, rtol=1e-12)
    np.testing.assert_allclose(as_array(accuracy["data"][0]["y"]), [runs[e].mlm_accuracy for e in ENCODINGS])
    assert runs["learned"].losses[-1] < runs["learned"].losses[0]  # the chart shows learning, not a flat line


def test_learned_table_similarity_before_after_and_along_training(trained, runs):
    _, view = trained
    start, end, animation, probe = view.by_tab["tables"]
    snapshots = runs["learned"].snapshots
    assert_matrix(heatmap_z(start), analysis.cosine_similarity_matrix(snapshots[0]), what="at initialisation")
    assert_matrix(heatmap_z(end), analysis.cosine_similarity_matrix(snapshots[-1]), what="after training")
    assert title(end) == tr("en", "lab.similarity.trained", step=STEPS)
    frames = animation["frames"]
    assert [f["name"] for f in frames] == [str(s) for s in runs["learned"].snapshot_steps]
    for frame, table in zip(frames, snapshots, strict=True):
        np.testing.assert_allclose(as_array(frame["data"][0]["z"]), analysis.cosine_similarity_matrix(table), atol=1e-6)
    np.testing.assert_allclose(as_array(probe["data"][0]["y"]), [runs["learned"].probe_before])
    np.testing.assert_allclose(as_array(probe["data"][1]["y"]), [runs["learned"].probe_after])
    (guess,) = probe["layout"]["shapes"]
    assert guess["y0"] == guess["y1"] == np.mean(np.abs(np.arange(32) - 15.5))  # always guess the middle of 32


def test_accuracy_against_length_and_the_learned_tables_hard_limit(trained, runs):
    """The curve is the computed accuracy at 8 .. 128 tokens (a quarter to four times the training length), the band
    of training lengths 8 .. 32 is shaded and the training length marked; the learned table has no accuracy past
    its 32 rows, only torch's error."""
    _, view = trained
    (fig,) = view.by_tab["lengths"]
    lengths = [8, 16, 24, 32, 40, 48, 64, 96, 128]
    for trace, encoding in zip(fig["data"], ENCODINGS, strict=True):
        np.testing.assert_array_equal(as_array(trace["x"]), lengths)
        expected = lab.evaluate_lengths(runs[encoding], lengths).accuracy
        np.testing.assert_allclose(as_array(trace["y"]), expected, rtol=1e-12)
    learned = as_array(fig["data"][1]["y"])
    assert np.isfinite(learned[:4]).all() and np.isnan(learned[4:]).all()  # no row past position 31
    band, line = fig["layout"]["shapes"]
    assert (band["x0"], band["x1"]) == (8, 32) and line["x0"] == line["x1"] == 32
    texts = [a["text"] for a in fig["layout"]["annotations"]]
    assert texts == [tr("en", "lab.lengths.trained", low=8, n=32), tr("en", "lab.lengths.train", n=32)]
    assert tr("en", "lab.lengths.notice", low=8, n=32) in view.captions
    assert view.codes == [lab.evaluate_lengths(runs["learned"], [40]).errors[0]]
    assert "index out of range" in view.codes[0]


def test_isolation_check_runs_on_request(trained):
    at, _ = trained
    at.session_state["tab"] = tr("en", "lab.tab.isolation")
    at.run()
    assert not figures(at)
    at.button(key="isolation").click().run()
    (fig,) = poll(at, figures)
    assert_clean(at)
    budget = lab.TrainConfig(steps=STEPS)
    expected = [lab.position_accuracy(e, budget) for e in ENCODINGS]
    np.testing.assert_allclose(as_array(fig["data"][0]["y"]), expected, rtol=1e-12)
    assert fig["layout"]["shapes"][0]["y0"] == pytest.approx(1 / 32)


def test_files_open_in_the_inspector_and_tables_reach_the_learned_page(trained, runs):
    at, _ = trained
    at.session_state["tab"] = tr("en", "lab.tab.files")
    at.run()
    assert_clean(at)
    files = {b.proto.label: b for b in at.get("download_button") if b.key != "posviz-handout"}  # not the lesson
    assert set(files) == {tr("en", "lab.download", encoding=e) for e in ENCODINGS}
    np.testing.assert_array_equal(at.session_state[SESSION_TABLES]["lab · learned"], runs["learned"].snapshots[-1])
    links = [p.proto for p in at.get("page_link")]
    assert [link.label for link in links] == [tr("en", "lab.open.learned", encoding="learned")]


def test_saved_file_is_what_the_inspector_loads(tmp_path, runs):
    path = lab.save(runs["learned"], tmp_path / "learned.safetensors")
    found = posviz.load_position_embeddings(path)
    assert found.key == lab.TABLE_KEY and found.offset == 0
    np.testing.assert_array_equal(found.matrix, runs["learned"].model.position_table())


def test_chinese_and_the_url():
    at = open_page("lab", query={"steps": "30", "seed": "3", "enc": ["rope"], "lang": "zh"}, lang="zh")
    assert_clean(at)
    assert at.number_input(key="steps").value == 30 and at.number_input(key="seed").value == 3
    assert at.multiselect(key="enc").value == ["rope"]
    assert [t.value for t in at.title] == [tr("zh", "page.lab")]
    # every encoding by its code name and its Chinese label, in a sentence that reads as Chinese
    assert "以下编码还没有用 30 步训练过：`rope`（旋转位置编码）。" in [i.value for i in at.info]


@pytest.mark.parametrize("query", [{"steps": "abc", "seed": "-4"}, {"enc": ["bogus"], "steps": "999999"}])
def test_nonsense_in_the_url_falls_back(query):
    at = open_page("lab", query=query)
    assert_clean(at)
    assert at.number_input(key="steps").value == lab.TrainConfig().steps
    assert at.number_input(key="seed").value == 0
    assert at.multiselect(key="enc").value == list(lab.ENCODINGS)


# ------------------------------------------------------------------------------------------ the shared queue


def test_start_shows_each_runs_place_and_progress_and_stop_ends_them():
    """Three encodings on one worker: the first starts, the others wait with 1 and 2 runs ahead; a bar's text and
    its length agree (step x of y fills x / y of it); Stop takes them all off the queue, since nobody else waits."""
    steps, encodings = 2000, ["sinusoidal", "rope", "nope"]
    at = open_page("lab", query={"steps": str(steps), "seed": "11", "enc": encodings})
    at.button(key="start").click().run()
    assert_clean(at)
    shown = bars(at)
    assert shown[tr("en", "lab.state.queued.one", encoding="rope")] == 0
    assert shown[tr("en", "lab.state.queued", encoding="nope", ahead=2)] == 0
    pattern = re.escape(tr("en", "lab.state.running", encoding="sinusoidal", step="@", steps=steps, loss="#"))
    pattern = pattern.replace("@", r"(\d+)").replace("\\#", r"(\d+\.\d{3})").replace("#", r"(\d+\.\d{3})")
    overall = tr("en", "lab.overall", done=0, total=3, share="0%") + " · "
    (whole,) = [text for text in shown if text.startswith(overall)]
    assert len(shown) == 4 and shown.pop(whole) == 0
    (first,) = set(shown) - {
        tr("en", "lab.state.queued.one", encoding="rope"),
        tr("en", "lab.state.queued", encoding="nope", ahead=2),
    }
    starting = {tr("en", key, encoding="sinusoidal") for key in ("lab.state.next", "lab.state.starting")}
    assert first in starting or re.fullmatch(pattern, first), first
    assert "Not trained yet" not in " ".join(i.value for i in at.info)  # they are queued, not missing
    assert lab_buttons(at) == [tr("en", "lab.stop")]

    prefix = tr("en", "lab.overall", done=0, total=3, share="@").split("@")[0]

    def timed_step(at):
        """The running bar and the overall one, once the speed is measured (two reports of the run: until then
        the overall bar says it is measuring)."""
        shown = bars(at)
        running = next(((text, value) for text, value in shown.items() if re.fullmatch(pattern, text)), None)
        overall = [text for text in shown if text.startswith(prefix)]
        return (running, overall[0]) if running and len(overall) == 1 and overall[0].endswith(" s left") else None

    (text, value), overall_text = poll(at, timed_step)  # later runs of the session, as after a reconnect
    step = int(re.fullmatch(pattern, text).group(1))
    assert 0 < step < steps and value == int(step / steps * 100)
    assert lab_buttons(at) == [tr("en", "lab.stop")]
    share = re.search(r"(\d+)% of all steps", overall_text).group(1)
    assert int(share) == round(step / (3 * steps) * 100)  # one run's steps out of all three runs'
    assert re.search(r"about (\d+ min )?\d+ s left$", overall_text)

    at.button(key="start-stop").click().run()
    assert_clean(at)
    assert not bars(at) and lab_buttons(at) == [tr("en", "lab.start")]
    assert tr("en", "lab.missing", missing=named("en", encodings), steps=steps) in [i.value for i in at.info]
    wait_for(lambda: events(config("sinusoidal", steps, 11)) == ["start", "stopped"])
    assert events(config("rope", steps, 11)) == events(config("nope", steps, 11)) == []  # dropped from the queue


def test_a_second_session_joins_the_run_and_stop_in_one_leaves_the_other_going():
    steps, query = 1500, {"steps": "1500", "seed": "12", "enc": ["rope"]}
    rope = config("rope", steps, 12)
    one = open_page("lab", query=query)
    one.button(key="start").click().run()
    two = open_page("lab", query=query)  # another student, same settings
    assert_clean(two)
    assert not two.info  # nothing is missing: it is being trained
    assert tr("en", "lab.joinable", button=tr("en", "lab.start")) in [c.value for c in two.caption]
    two.button(key="start").click().run()
    assert training.queue().status(rope).waiters == 2
    assert lab_buttons(two) == [tr("en", "lab.stop")]

    one.button(key="start-stop").click().run()
    assert_clean(one)
    status = training.queue().status(rope)
    assert status.active and status.waiters == 1  # still training, for the second session
    assert lab_buttons(one) == [tr("en", "lab.start")]  # the first may join again
    poll(two, figures)
    (loss, _) = figures(two)
    np.testing.assert_array_equal(as_array(loss["data"][0]["y"]), training.queue().result(rope).losses)
    assert events(rope) == ["start", "done"]  # trained once, never stopped
    one.run()
    assert figures(one)  # the finished run is everyone's


def test_a_session_that_leaves_mid_run_leaves_the_run_going_and_kept():
    query, nope = {"steps": "200", "seed": "13", "enc": ["nope"]}, config("nope", 200, 13)
    at = open_page("lab", query=query)
    at.button(key="start").click().run()
    del at  # the browser tab is closed: nobody polls any more
    wait_for(lambda: training.queue().status(nope).state == "done")
    assert training.queue().path(nope).is_file()
    again = open_page("lab", query=query)  # the same student comes back
    assert_clean(again)
    assert figures(again) and not again.get("progress")
    assert events(nope) == ["start", "done"]


def test_a_worker_that_dies_is_a_sentence_on_the_page_and_the_queue_goes_on():
    query = {"steps": "300", "seed": "14", "enc": ["rope", "nope"]}
    at = open_page("lab", query=query)
    at.button(key="start").click().run()
    name = training.queue().path(config("rope", 300, 14)).name
    (started,) = wait_for(lambda: [e for e in runs_log() if e["file"] == name and e["event"] == "start"])
    os.kill(started["pid"], signal.SIGKILL)
    poll(at, lambda at: figures(at) and at.error)
    assert [e.value for e in at.error] == [
        tr("en", "lab.state.crashed", encoding="rope", code=-signal.SIGKILL, button=tr("en", "lab.start"))
    ]
    assert not at.exception
    (loss, _) = figures(at)
    assert [trace["name"] for trace in loss["data"]] == ["nope"]  # the next run was trained
    assert events(config("nope", 300, 14)) == ["start", "done"]
    assert lab_buttons(at) == [tr("en", "lab.start")]  # to try rope again


def test_a_bad_worker_setting_is_a_sentence_on_the_page(monkeypatch):
    monkeypatch.setenv("POSVIZ_LAB_WORKERS", "many")
    training.queue.clear()
    try:
        at = open_page("lab", query=QUERY)
    finally:
        monkeypatch.setenv("POSVIZ_LAB_WORKERS", "1")
        training.queue.clear()
    assert not at.exception
    message = "POSVIZ_LAB_WORKERS must be a whole number of at least 1; got 'many'"
    assert [e.value for e in at.error] == [tr("en", "error.input.lab", message=message)]
