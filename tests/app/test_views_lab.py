"""The training lab's views (posviz/ui/views/lab.py): each reads finished runs from the app's training queue by their
configurations, and its numbers are those of the same runs trained here directly, against the corpus's held-out
batches, the cosine of two rows and the middle guess written out; each is cached by its configurations (and
lengths) and the language, and a refused setting is never cached."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
import torch

from posviz import lab
from posviz.ui import cache, training
from posviz.ui.views import lab as lab_views

from ._support import as_array, assert_matrix, heatmap_z, title, tr

STEPS = 20
ENCODINGS = ("learned", "sin-init", "nope")
#: The isolation check's accuracy the queue holds for each encoding (what the view must show, as it is).
ISOLATION = {"learned": 0.875, "sin-init": 0.96875, "nope": 0.03125}


def config(encoding: str, steps: int = STEPS, seed: int = 0) -> lab.TrainConfig:
    return lab.TrainConfig(encoding=encoding, steps=steps, seed=seed)


CONFIGS = tuple(config(e) for e in ENCODINGS)
LEARNED = CONFIGS[:2]


@functools.cache
def runs() -> dict[str, lab.RunResult]:
    """The runs of ``CONFIGS``, trained here with posviz.lab directly (once per test process)."""
    return {c.encoding: lab.train(c) for c in CONFIGS}


@functools.cache
def stored_queue() -> lab.TrainingQueue:
    """A training queue over a folder of this test session holding the runs of :func:`runs` and their isolation
    checks as finished files, the way its workers leave them: it serves them without training."""
    queue = lab.TrainingQueue(Path(os.environ["POSVIZ_LAB_DIR"]) / "views", workers=1)
    for c in CONFIGS:
        for task, value in (("train", runs()[c.encoding]), ("isolation", ISOLATION[c.encoding])):
            path = queue.path(c, task)
            path.parent.mkdir(parents=True, exist_ok=True)
            queue.tasks[task].write(value, path, c)
    return queue


pytestmark = pytest.mark.usefixtures("views_in_english")


@pytest.fixture(autouse=True)
def stored(monkeypatch):
    """The app's queue is :func:`stored_queue` in every test."""
    monkeypatch.setattr(training, "queue", stored_queue)


def views_held() -> list:
    return [key for key in cache.TABLES.keys() if key[0] == "view"]


def unit_cosines(rows: np.ndarray) -> np.ndarray:
    """S[i, j] = r_i . r_j / (||r_i|| ||r_j||)."""
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit @ unit.T


def held_out_accuracy(run: lab.RunResult, length: int, sequences: int) -> float:
    """The share of masked tokens the model names right on held-out counting sequences of ``length`` tokens, the
    corpus written out: x_p = (s + p) mod V from the stream seeded [seed, 1], a token replaced by a random one with
    probability ``noise``, masked (id V) with probability ``mask_rate``; NaN where the model has no row for a
    position."""
    c = run.config
    rng = np.random.default_rng([c.seed, 1])
    clean = (rng.integers(0, c.max_start, sequences)[:, None] + np.arange(length)[None, :]) % c.vocab
    noisy = np.where(rng.random(clean.shape) < c.noise, rng.integers(0, c.vocab, clean.shape), clean)
    masked = rng.random(clean.shape) < c.mask_rate
    inputs = np.where(masked, c.vocab, noisy)
    run.model.eval()
    try:
        with torch.no_grad():
            predicted = run.model(torch.from_numpy(inputs)).argmax(dim=-1).numpy()
    except IndexError:
        return float("nan")
    return float((predicted[masked] == clean[masked]).mean())


def same_figures(view, *args) -> None:
    cached = view(*args)
    fresh = view.uncached(*args)
    assert [type(item) for item in cached.items] == [type(item) for item in fresh]
    for got, built in zip(cached.items, fresh, strict=True):
        if hasattr(got, "fig"):
            assert got.key == built.key and got.options == built.options
            assert got.fig.to_dict() == built.fig.to_dict()
        else:
            assert got == built


# ----------------------------------------------------------------------------------------------------- training


def test_loss_and_accuracy_are_the_runs_trained_here():
    out = lab_views.loss_and_accuracy(CONFIGS)
    assert lab_views.loss_and_accuracy(CONFIGS) is out
    assert lab_views.loss_and_accuracy(CONFIGS[1:]) is not out
    loss = out.figure("loss").fig.to_dict()
    assert title(loss) == tr("en", "lab.loss")
    assert [trace["name"] for trace in loss["data"]] == list(ENCODINGS)
    for trace, encoding in zip(loss["data"], ENCODINGS, strict=True):
        np.testing.assert_array_equal(as_array(trace["x"]), np.arange(1, STEPS + 1))
        np.testing.assert_allclose(as_array(trace["y"]), runs()[encoding].losses, rtol=1e-12)
    assert list(out.figure("loss").data) == ["step", *ENCODINGS]
    accuracy = out.figure("accuracy").fig.to_dict()
    assert list(accuracy["data"][0]["x"]) == list(ENCODINGS)
    expected = [held_out_accuracy(runs()[e], 32, 512) for e in ENCODINGS]
    np.testing.assert_allclose(as_array(accuracy["data"][0]["y"]), expected, rtol=1e-12)
    assert out.figure("accuracy").data == {"encoding": list(ENCODINGS), "mlm_accuracy": expected}
    same_figures(lab_views.loss_and_accuracy, CONFIGS)


def test_the_language_is_part_of_the_key():
    english = lab_views.loss_and_accuracy(CONFIGS)
    st.session_state["lang"] = "zh"
    chinese = lab_views.loss_and_accuracy(CONFIGS)
    assert chinese is not english
    assert title(chinese.figure("loss").fig.to_dict()) == tr("zh", "lab.loss") != tr("en", "lab.loss")


def test_a_run_that_is_not_done_is_not_drawn_nor_cached():
    absent = config("rope", steps=STEPS, seed=99)  # never trained
    with pytest.raises(LookupError):
        lab_views.loss_and_accuracy((absent,))
    with pytest.raises(LookupError):
        lab_views.isolation((absent,))
    assert not views_held()


# ------------------------------------------------------------------------------------------------------- tables


@pytest.mark.parametrize("encoding", ["learned", "sin-init"])
def test_similarity_before_after_and_along_training_is_the_cosine_of_each_snapshot(encoding):
    c = config(encoding)
    out = lab_views.similarity(c)
    assert lab_views.similarity(c) is out
    assert lab_views.similarity(config("sin-init" if encoding == "learned" else "learned")) is not out
    run = runs()[encoding]
    start, end = out.figure("similarity.init"), out.figure("similarity.trained")
    assert_matrix(heatmap_z(start.fig.to_dict()), unit_cosines(run.snapshots[0]), what="at initialisation")
    assert_matrix(heatmap_z(end.fig.to_dict()), unit_cosines(run.snapshots[-1]), what="after training")
    assert_matrix(end.data, unit_cosines(run.snapshots[-1]), atol=1e-12, what="trained data")
    assert title(start.fig.to_dict()) == tr("en", "lab.similarity.init", step=0)
    assert title(end.fig.to_dict()) == tr("en", "lab.similarity.trained", step=STEPS)
    assert start.options == end.options == {"each": encoding, "captioned": False}
    assert out.texts == [tr("en", f"lab.similarity.notice.{encoding}")]
    animation = out.figure("animation")
    assert animation.options == {"each": encoding}
    frames = animation.fig.to_dict()["frames"]
    assert [f["name"] for f in frames] == [str(s) for s in range(0, STEPS + 1, 2)]
    for frame, table in zip(frames, run.snapshots, strict=True):
        assert_matrix(as_array(frame["data"][0]["z"]), unit_cosines(table), atol=1e-6)
    same_figures(lab_views.similarity, c)


def test_a_run_without_a_table_has_no_similarity_and_is_not_cached():
    for _ in range(2):
        with pytest.raises(ValueError, match="stack of tables"):
            lab_views.similarity(config("nope"))
    assert not views_held()


def test_the_probe_is_each_tables_error_before_and_after_beside_the_middle_guess():
    out = lab_views.probe(LEARNED)
    assert lab_views.probe(LEARNED) is out
    assert lab_views.probe(LEARNED[:1]) is not out
    fig = out.figure("probe").fig.to_dict()
    before, after = (
        [runs()[c.encoding].probe_before for c in LEARNED],
        [runs()[c.encoding].probe_after for c in LEARNED],
    )
    assert [trace["name"] for trace in fig["data"]] == [tr("en", "lab.probe.before"), tr("en", "lab.probe.after")]
    np.testing.assert_allclose(as_array(fig["data"][0]["y"]), before)
    np.testing.assert_allclose(as_array(fig["data"][1]["y"]), after)
    (guess,) = fig["layout"]["shapes"]
    assert guess["y0"] == guess["y1"] == np.mean(np.abs(np.arange(32) - 15.5))  # always guess the middle of 32
    assert out.figure("probe").data == {"encoding": list(ENCODINGS[:2]), "probe_before": before, "probe_after": after}
    same_figures(lab_views.probe, LEARNED)


# ------------------------------------------------------------------------------------------------------ lengths


def test_the_lengths_are_multiples_of_the_training_length():
    assert lab_views.lengths_around(32) == (8, 16, 24, 32, 40, 48, 64, 96, 128)
    assert lab_views.lengths_around(10) == (2, 5, 7, 10, 12, 15, 20, 30, 40)


def test_accuracy_against_length_is_the_held_out_accuracy_at_each_length():
    lengths = (8, 32, 40)
    out = lab_views.by_length(CONFIGS, lengths)
    assert lab_views.by_length(CONFIGS, lengths) is out
    assert lab_views.by_length(CONFIGS, (8, 32)) is not out
    assert lab_views.by_length(CONFIGS[2:], lengths) is not out
    figure = out.figure("lengths")
    fig = figure.fig.to_dict()
    for trace, encoding in zip(fig["data"], ENCODINGS, strict=True):
        assert trace["name"] == encoding
        np.testing.assert_array_equal(as_array(trace["x"]), lengths)
        expected = [held_out_accuracy(runs()[encoding], n, 256) for n in lengths]
        np.testing.assert_allclose(as_array(trace["y"]), expected, rtol=1e-12)
    learned = as_array(fig["data"][0]["y"])
    assert np.isfinite(learned[:2]).all() and np.isnan(learned[2])  # no row for position 32 and on
    assert np.isfinite(as_array(fig["data"][2]["y"])).all()  # NoPE has no table to run past
    band, line = fig["layout"]["shapes"]
    assert (band["x0"], band["x1"]) == (8, 32) and line["x0"] == line["x1"] == 32
    assert figure.options == {"low": 8, "n": 32}
    assert list(figure.data) == ["length", *ENCODINGS]
    same_figures(lab_views.by_length, CONFIGS, lengths)


def test_a_table_read_past_its_end_says_so_with_torchs_error():
    try:
        torch.nn.Embedding(32, 4)(torch.tensor([40]))
    except IndexError as exc:
        torch_says = f"IndexError: {exc}"
    out = lab_views.by_length(CONFIGS, (8, 40, 48))
    assert out.texts == [
        text
        for e in ("learned", "sin-init")
        for text in (tr("en", "lab.lengths.error", encoding=e, length=40, n=32), torch_says)
    ]
    assert [item.kind for item in out.items[1:]] == ["markdown", "code"] * 2
    assert lab_views.by_length(CONFIGS, (8, 16)).texts == []


@pytest.mark.parametrize("lengths", [(), (0, 8), (-4,)])
def test_refused_lengths_raise_and_are_not_cached(lengths):
    for _ in range(2):
        with pytest.raises(ValueError, match="lengths must be"):
            lab_views.by_length(CONFIGS, lengths)
    assert not views_held()


# ---------------------------------------------------------------------------------------------------- isolation


def test_the_isolation_check_is_the_queues_accuracy_against_chance():
    out = lab_views.isolation(CONFIGS)
    assert lab_views.isolation(CONFIGS) is out
    assert lab_views.isolation(CONFIGS[:1]) is not out
    fig = out.figure("isolation").fig.to_dict()
    assert list(fig["data"][0]["x"]) == list(ENCODINGS)
    np.testing.assert_array_equal(as_array(fig["data"][0]["y"]), [ISOLATION[e] for e in ENCODINGS])
    (chance,) = fig["layout"]["shapes"]
    assert chance["y0"] == chance["y1"] == 1 / 32
    assert [a["text"] for a in fig["layout"]["annotations"]] == [tr("en", "lab.isolation.chance", chance="0.031")]
    same_figures(lab_views.isolation, CONFIGS)
