"""The training lab page through AppTest, with a small budget: every chart holds the numbers of the same runs made
independently with posviz.lab (training is deterministic per configuration), the controls round-trip through the
URL, both languages, and the trained files open in the checkpoint inspector's loader."""

from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz import analysis, lab
from posviz.ui import SESSION_TABLES

from ._support import as_array, assert_clean, assert_matrix, figures, heatmap_z, open_page, title, tr, visit_tabs

TABS = ["training", "tables", "lengths", "isolation", "files"]
STEPS = 20
ENCODINGS = ["sinusoidal", "learned", "nope"]
QUERY = {"steps": str(STEPS), "enc": ENCODINGS}


def config(encoding: str) -> lab.TrainConfig:
    return lab.TrainConfig(encoding=encoding, steps=STEPS)


@pytest.fixture(scope="module")
def runs():
    """The same runs as the page's, made here with posviz.lab directly."""
    return {e: lab.train(config(e)) for e in ENCODINGS}


@pytest.fixture(scope="module")
def trained():
    """The page after a click on Start, with every tab visited."""
    at = open_page("lab", query=QUERY)
    at.button(key="start").click().run()
    return at, visit_tabs(at, "lab", TABS)


def test_before_training_the_page_says_what_is_missing():
    at = open_page("lab", query={**QUERY, "seed": "7"})
    assert_clean(at)
    assert tr("en", "lab.missing", missing=", ".join(ENCODINGS), steps=STEPS) in [i.value for i in at.info]
    assert not figures(at) and [b.label for b in at.button] == [tr("en", "lab.start")]


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
    assert_clean(at)
    (fig,) = figures(at)
    budget = lab.TrainConfig(steps=STEPS)
    expected = [lab.position_accuracy(e, budget) for e in ENCODINGS]
    np.testing.assert_allclose(as_array(fig["data"][0]["y"]), expected, rtol=1e-12)
    assert fig["layout"]["shapes"][0]["y0"] == pytest.approx(1 / 32)


def test_files_open_in_the_inspector_and_tables_reach_the_learned_page(trained, runs):
    at, _ = trained
    at.session_state["tab"] = tr("en", "lab.tab.files")
    at.run()
    assert_clean(at)
    files = {b.proto.label: b for b in at.get("download_button")}
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
    assert tr("zh", "lab.missing", missing="rope", steps=30) in [i.value for i in at.info]


@pytest.mark.parametrize("query", [{"steps": "abc", "seed": "-4"}, {"enc": ["bogus"], "steps": "999999"}])
def test_nonsense_in_the_url_falls_back(query):
    at = open_page("lab", query=query)
    assert_clean(at)
    assert at.number_input(key="steps").value == lab.TrainConfig().steps
    assert at.number_input(key="seed").value == 0
    assert at.multiselect(key="enc").value == list(lab.ENCODINGS)
