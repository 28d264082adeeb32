"""The Learned page: random init, sinusoidal init and trained tables side by side. Every chart's data is checked
against the core (and, where one exists, an independent derivation), the new controls round-trip through the URL,
both languages show their own catalog, and tables left in the session by other pages become options."""

from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz import analysis
from posviz.encodings import learned
from posviz.ui import SESSION_TABLES

from ._support import (
    Chart,
    as_array,
    assert_clean,
    assert_matrix,
    charts,
    charts_by_key,
    heatmap_z,
    open_page,
    title,
    tr,
    visit_tabs,
)
from ._support import chart as find_chart
from ._support import figures as figure_list

TABS = ["table", "projection", "spectrum", "probe", "past"]


#: The charts of the page by the names the tests give them -> the catalog key of their title.
TITLES = {
    "table": "learned.table",
    "similarity": "figure.similarity",
    "projection": "learned.projection.title",
    "dominant": "learned.spectrum.dominant",
    "power": "learned.spectrum.mean",
    "probe": "learned.probe.title",
    "trained": "learned.probe.title.trained",
    "clip": "learned.past.clip",
    "interpolate": "learned.past.interpolate",
}
#: The charts each tab draws for a table the controls describe; for a trained or session table the probe tab draws
#: "trained" only (the table beside the two starts of its shape).
LAYOUT = {
    "table": ("table", "similarity"),
    "projection": ("projection",),
    "spectrum": ("dominant", "power"),
    "probe": ("probe", "trained"),
    "past": ("clip", "interpolate"),
}


#: The caption under each chart of the default view (a random table, the trained example on the probe tab).
NOTICES = {
    "table": "learned.table.notice.random",
    "similarity": "learned.similarity.notice.random",
    "projection": "learned.projection.notice.random",
    "dominant": "learned.spectrum.notice.random",
    "power": "learned.spectrum.mean.notice",
    "probe": "learned.probe.notice.init",
    "trained": "learned.probe.notice.example",
    "clip": "learned.past.clip.notice",
    "interpolate": "learned.past.interpolate.notice",
}


def check_layout(view, lang: str, values: dict, *, trained_only: bool = False) -> dict[str, Chart]:
    """Each tab of ``view`` draws its charts of ``LAYOUT`` and no other (on the probe tab only "trained" if
    ``trained_only``), titled in ``lang`` with ``values[name]`` filled in, where given; the charts by name."""
    found = {}
    for tab, names in LAYOUT.items():
        names = ("trained",) if trained_only and tab == "probe" else names
        drawn = charts_by_key(view.charts[tab], lang, [(TITLES[name], values.get(name, {})) for name in names])
        found |= {name: drawn[TITLES[name]] for name in names}
    return found


def visit(query: dict | None = None, lang: str = "en", session: dict | None = None):
    """The page opened with ``query`` (and ``session`` tables), every tab visited in turn: ``(at, view)``."""
    at = open_page("learned", query=query, lang=lang)
    if session is not None:
        at.session_state[SESSION_TABLES] = session
        at.run()
    return at, visit_tabs(at, "learned", TABS, lang)


def assert_view_clean(view) -> None:
    assert not view.exceptions, view.exceptions
    assert not view.errors, view.errors


def chart(view, name: str, lang: str = "en") -> dict:
    """The figure of ``view`` (over all its tabs) named ``name`` in ``TITLES``, found by its title in ``lang``."""
    return find_chart(view.all_charts(), lang, TITLES[name]).fig


def probe_bars(fig: dict) -> np.ndarray:
    return as_array(fig["data"][0]["y"])


@pytest.fixture(scope="module")
def default_view():
    """``default_view(lang)``: the default view with every tab visited, shared by the tests of this module."""
    views = {}

    def get(lang: str = "en"):
        if lang not in views:
            views[lang] = visit(lang=lang)[1]
        return views[lang]

    return get


# ------------------------------------------------------------------------------------------------ default view


def test_default_view_layout_and_notices(default_view):
    """Every tab of the default view (a random 128 x 128 table) draws its charts, each with its own "what to notice"
    caption under it, and the table is the seeded table the core builds."""
    view = default_view()
    assert_view_clean(view)
    found = check_layout(view, "en", default_values("en"))
    for name, key in NOTICES.items():
        assert found[name].notice == tr("en", key), name
    assert found["table"].axes() == (tr("en", "axis.dimension"), tr("en", "axis.position"))
    assert_matrix(heatmap_z(found["table"].fig), posviz.learned_init(128, 128, std=0.02, seed=0), what="table")


def default_values(lang: str) -> dict:
    """The titles' values of the default view: 128 x 128, PCA, twice as long past the table."""
    return {
        "projection": {"method": tr(lang, "learned.projection.pca")},
        "probe": {"n": 128, "d": 128},
        "trained": {"n": 64, "d": 64},
        "clip": {"n": 128, "last": 255},
        "interpolate": {"n": 128, "longer": 256},
    }


def test_projection_is_the_cores_pca_of_every_position(default_view):
    fig = chart(default_view(), "projection")
    table = posviz.learned_init(128, 128)
    positions, coords = analysis.sampled_projection(table, 1024)
    np.testing.assert_array_equal(positions, np.arange(128))
    markers = fig["data"][1]
    np.testing.assert_allclose(as_array(markers["x"]), coords[:, 0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(as_array(markers["y"]), coords[:, 1], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(as_array(markers["marker"]["color"]), np.arange(128))
    # independent: the first two principal components carry the largest variance of the centred rows
    centred = table - table.mean(axis=0)
    top = np.linalg.svd(centred, compute_uv=False)[:2] ** 2
    np.testing.assert_allclose((coords**2).sum(axis=0), top, rtol=1e-9)


def test_spectrum_charts_are_the_cores_and_the_sinusoidal_ladder(default_view):
    view = default_view()
    spectrum = analysis.position_spectrum(posviz.learned_init(128, 128))
    dominant = chart(view, "dominant")
    ladder, dots = dominant["data"][0], dominant["data"][1]
    np.testing.assert_allclose(as_array(ladder["y"]), 10000.0 ** (-(np.arange(128) // 2 * 2) / 128), rtol=1e-12)
    np.testing.assert_array_equal(as_array(dots["x"]), spectrum.dims)
    np.testing.assert_allclose(as_array(dots["y"]), spectrum.dominant, rtol=1e-12)
    power = chart(view, "power")
    np.testing.assert_allclose(as_array(power["data"][0]["x"]), spectrum.frequencies)
    np.testing.assert_allclose(as_array(power["data"][0]["y"]), spectrum.mean_power, rtol=1e-9)
    sin_power = analysis.position_spectrum(posviz.sin_init(128, 128)).mean_power
    np.testing.assert_allclose(as_array(power["data"][1]["y"]), sin_power, rtol=1e-9, atol=1e-15)  # DC: rounding
    # white noise spreads its power; the sinusoids pile it into the lowest eighth of the frequencies
    low = spectrum.frequencies < np.pi / 8
    assert spectrum.mean_power[low].sum() < 0.3 < sin_power[low].sum()
    assert dominant["layout"]["shapes"][0]["y0"] == pytest.approx(2 * np.pi / 128)


def test_the_resolution_label_sits_on_its_line(default_view):
    """The dotted line is at 2 pi / n = 0.049 for n = 128; its label must be drawn there too. On a log axis plotly
    reads a shape's y as a value but an annotation's y as log10 of the value, so the label's y is log10(2 pi / 128)
    (it was 0.049 read as 10^0.049, about 1.1: a decade and a half above its line)."""
    dominant = chart(default_view(), "dominant")
    assert dominant["layout"]["yaxis"]["type"] == "log"
    (line,) = dominant["layout"]["shapes"]
    (label,) = [a for a in dominant["layout"]["annotations"] if a["text"] == tr("en", "learned.spectrum.floor")]
    assert label.get("yref", "y") == "y" and line["yref"] == "y"
    assert 10 ** label["y"] == pytest.approx(line["y0"], rel=1e-12)
    assert 10 ** label["y"] == pytest.approx(2 * np.pi / 128, rel=1e-12)


def test_probe_reads_the_tables_the_controls_describe(default_view):
    """The controls say 128 x 128: the first probe chart and its metrics are the random and sinusoidal tables of that
    size (the random one reads like always guessing the middle, mean |p - 63.5| = 32, within 6%); the second is the
    64 x 64 trained example beside the two starts of its own shape."""
    view = default_view()
    first = [
        analysis.position_probe(posviz.learned_init(128, 128, seed=0)),
        analysis.position_probe(posviz.sin_init(128, 128)),
    ]
    guess = np.mean(np.abs(np.arange(128) - 63.5))
    np.testing.assert_allclose(probe_bars(chart(view, "probe")), [*first, guess], rtol=1e-6)
    assert first[0] == pytest.approx(guess, rel=0.06) and first[1] < 0.05
    assert list(chart(view, "probe")["data"][0]["x"]) == [
        tr("en", "option.random"),
        tr("en", "option.sinusoidal"),
        tr("en", "learned.probe.guess"),
    ]
    assert [m.value for m in view.metrics] == [tr("en", "learned.probe.value", value=v) for v in first]
    trained = [
        analysis.position_probe(posviz.learned_init(64, 64, seed=0)),
        analysis.position_probe(posviz.sin_init(64, 64)),
        analysis.position_probe(learned.example_table()),
        16.0,  # mean |p - median| over p = 0 .. 63
    ]
    np.testing.assert_allclose(probe_bars(chart(view, "trained")), trained, rtol=1e-6)
    assert list(chart(view, "trained")["data"][0]["x"])[2] == tr("en", "learned.option.example")


@pytest.mark.parametrize("init", ["random", "sinusoidal"])
def test_probe_of_a_long_table_reads_evenly_spaced_rows_and_says_so(init):
    """Past 1,024 rows the probe reads 1,024 evenly spaced rows of the table the controls describe, each against its
    true position, and the notice says so; the random one still reads like guessing the middle of all 3,000."""
    at = open_page("learned", query={"init": init, "n": "3000", "d": "48", "seed": "3", "tab": "probe"})
    assert_clean(at)
    probe, trained = figure_list(at)
    assert title(probe) == tr("en", "learned.probe.title", n=3000, d=48)
    positions = analysis.evenly_spaced(3000, 1024)
    assert positions.size == 1024 and positions[0] == 0 and positions[-1] == 2999
    expected = [
        analysis.sampled_position_probe(posviz.learned_init(3000, 48, seed=3), 1024),
        analysis.sampled_position_probe(posviz.sin_init(3000, 48), 1024),
        analysis.constant_guess_error(3000),
    ]
    np.testing.assert_allclose(probe_bars(probe), expected, rtol=1e-6)
    assert expected[0] == pytest.approx(750, rel=0.06)
    captions = [c.value for c in at.caption]
    assert any(tr("en", "learned.probe.sampled", shown=1024, n=3000) in c for c in captions)
    assert title(trained) == tr("en", "learned.probe.title.trained", n=64, d=64)


def test_truncation_and_interpolation_similarities(default_view):
    view = default_view()
    table = posviz.learned_init(128, 128)
    clip = heatmap_z(chart(view, "clip"))
    full = np.concatenate([table, np.repeat(table[-1:], 128, axis=0)])
    unit = full / np.linalg.norm(full, axis=1, keepdims=True)
    assert_matrix(clip, unit @ unit.T, atol=1e-6, what="clip")
    np.testing.assert_allclose(clip[127:, 127:], 1.0, atol=1e-6)
    stretched = learned.interpolate_table(table, 256)
    np.testing.assert_allclose(stretched[::255], table[::127], atol=1e-12)  # the ends are kept
    assert_matrix(heatmap_z(chart(view, "interpolate")), analysis.cosine_similarity_matrix(stretched), what="interp")
    assert view.codes == [learned.torch_lookup_error(128, 128), learned.lookup_error(128, 128)]


# --------------------------------------------------------------------------------------------- trained example


def test_example_from_the_url():
    at, view = visit({"init": "example", "stretch": "4"})
    assert_view_clean(view)
    assert view.widgets["init"] == "example" and view.widgets["stretch"] == 4
    assert at.slider(key="n").disabled and at.number_input(key="std").disabled
    table = learned.example_table()
    values = {"trained": {"n": 64, "d": 64}, "clip": {"n": 64, "last": 255}, "interpolate": {"n": 64, "longer": 256}}
    check_layout(view, "en", values, trained_only=True)  # stretched 4 times past the 64 rows
    assert_matrix(heatmap_z(chart(view, "table")), table, atol=1e-6, what="table")
    sim = heatmap_z(chart(view, "similarity"))
    assert_matrix(sim, analysis.cosine_similarity_matrix(table), what="similarity")
    assert np.mean(np.diagonal(sim, 1)) > np.mean([np.diagonal(sim, k).mean() for k in range(16, 48)]) + 0.4
    clip = heatmap_z(chart(view, "clip"))
    assert_matrix(clip, learned.extended_similarity(table, 256, "clip")[1], what="clip")
    assert tr("en", "learned.probe.notice.example") in view.captions
    assert view.codes[0] == learned.torch_lookup_error(64, 64) == _torch_message(64, 64)
    provenance = learned.example_provenance()
    assert tr("en", "learned.example.provenance", **provenance) in view.captions


def _torch_message(n: int, position: int) -> str:
    import torch

    with pytest.raises(IndexError) as real:
        torch.nn.Embedding(n, 2)(torch.tensor([position]))
    return str(real.value)


def test_url_round_trip_sinusoidal_tsne():
    at, view = visit({"init": "sinusoidal", "n": "40", "d": "16", "proj": "tsne", "stretch": "3"})
    assert_view_clean(view)
    shown = {key: view.widgets[key] for key in ("init", "n", "d", "proj", "stretch")}
    assert shown == {"init": "sinusoidal", "n": 40, "d": 16, "proj": "tsne", "stretch": 3}
    table = posviz.sin_init(40, 16)
    assert_matrix(heatmap_z(chart(view, "table")), table, what="table")
    coords = posviz.project(table, method="tsne")
    markers = chart(view, "projection")["data"][1]
    np.testing.assert_allclose(as_array(markers["x"]), coords[:, 0], atol=1e-6)
    assert title(chart(view, "projection")) == tr("en", "learned.projection.title", method="t-SNE")
    interp = heatmap_z(chart(view, "interpolate"))
    assert interp.shape == (120, 120)
    assert_matrix(interp, analysis.cosine_similarity_matrix(learned.interpolate_table(table, 120)), what="interp")
    at.session_state["tab"] = tr("en", "learned.tab.projection")
    at.run()
    at.radio(key="proj").set_value("pca").run()
    assert "proj" not in at.query_params and at.query_params["init"] == "sinusoidal"
    assert at.query_params["tab"] == "projection"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_random_table_shows_real_entries_on_a_grid(lang):
    """Past 1,024 rows the random table's heatmap shows 1,024 evenly spaced rows (real entries, placed at their
    positions), not block means that would shrink the noise, and says so."""
    at = open_page("learned", query={"n": "3000", "d": "16", "seed": "4"}, lang=lang)
    assert_clean(at)
    fig = figure_list(at)[0]
    positions = analysis.evenly_spaced(3000, 1024)
    assert_matrix(heatmap_z(fig), posviz.learned_init(3000, 16, seed=4)[positions], what="grid")
    assert fig["data"][0]["dy"] == pytest.approx(2999 / 1023)
    captions = [c.value for c in at.caption]
    assert any(tr(lang, "learned.table.grid", rows=1024, n=3000, cols=16, d=16) in c for c in captions)


def test_tsne_of_a_long_table_places_512_evenly_spaced_positions():
    at = open_page("learned", query={"n": "3000", "d": "16", "tab": "projection", "proj": "tsne"})
    assert_clean(at)
    markers = figure_list(at)[0]["data"][1]
    positions = analysis.evenly_spaced(3000, 512)
    np.testing.assert_array_equal(as_array(markers["customdata"]), positions)
    coords = posviz.project(posviz.learned_init(3000, 16)[positions], method="tsne")
    np.testing.assert_allclose(np.c_[as_array(markers["x"]), as_array(markers["y"])], coords, atol=1e-6)
    assert any(tr("en", "learned.sampled", shown=512, n=3000) in c.value for c in at.caption)


def test_nonsense_in_the_url_falls_back():
    _, view = visit({"init": "session:nope", "proj": "umap", "stretch": "9", "tab": "nope"})
    assert_view_clean(view)
    assert {key: view.widgets[key] for key in ("init", "proj", "stretch")} == {
        "init": "random",
        "proj": "pca",
        "stretch": 2,
    }
    assert_matrix(heatmap_z(chart(view, "table")), posviz.learned_init(128, 128), what="table")


# ------------------------------------------------------------------------------------------- languages, session


def test_chinese_view(default_view):
    view = default_view("zh")
    assert_view_clean(view)
    found = check_layout(view, "zh", default_values("zh"))
    assert_matrix(heatmap_z(found["table"].fig), posviz.learned_init(128, 128), what="table")
    assert found["table"].axes() == (tr("zh", "axis.dimension"), tr("zh", "axis.position"))
    for name, key in NOTICES.items():
        assert found[name].notice == tr("zh", key), name
    assert [m.label for m in view.metrics] == [tr("zh", "option.random"), tr("zh", "option.sinusoidal")]
    assert found["trained"].fig["data"][0]["x"][2] == tr("zh", "learned.option.example")
    assert view.subheaders[0] == tr("zh", "learned.section.table")


def test_a_session_table_becomes_an_option():
    table = np.random.default_rng(5).normal(size=(48, 24)) + np.linspace(0, 3, 48)[:, None]
    at = open_page("learned")
    at.session_state[SESSION_TABLES] = {"my checkpoint": table}
    at.run()
    assert tr("en", "learned.option.session", name="my checkpoint") in at.radio(key="init").options
    at.radio(key="init").set_value("session:my checkpoint").run()
    assert_clean(at)
    view = visit_tabs(at, "learned", TABS)
    assert_view_clean(view)
    assert_matrix(heatmap_z(chart(view, "table")), table, what="table")
    probe = chart(view, "trained")
    assert title(probe) == tr("en", "learned.probe.title.trained", n=48, d=24)
    assert probe["data"][0]["x"][2] == tr("en", "learned.option.session", name="my checkpoint")
    expected = [
        analysis.position_probe(posviz.learned_init(48, 24, seed=0)),
        analysis.position_probe(posviz.sin_init(48, 24)),
        analysis.position_probe(table),
        analysis.constant_guess_error(48),
    ]
    np.testing.assert_allclose(probe_bars(probe), expected, rtol=1e-6)
    assert [m.value for m in view.metrics] == [tr("en", "learned.probe.value", value=v) for v in expected[:3]]
    assert tr("en", "learned.probe.notice.session") in view.captions
    assert at.slider(key="n").disabled
    assert_matrix(
        heatmap_z(chart(view, "interpolate")),
        analysis.cosine_similarity_matrix(learned.interpolate_table(table, 96)),
        what="interp",
    )


def test_a_one_element_change_in_a_session_table_is_never_stale():
    """Tables without parameters are cached by a digest of every byte, not by Streamlit's sampled array hash."""
    table = np.random.default_rng(11).normal(size=(200, 40))
    at = open_page("learned")
    at.session_state[SESSION_TABLES] = {"t": table}
    at.run()
    at.radio(key="init").set_value("session:t").run()
    before = heatmap_z(chart(visit_tabs(at, "learned", ["table"]), "similarity"))
    changed = table.copy()
    changed[123, 7] += 5.0  # one element of 8,000
    at.session_state[SESSION_TABLES] = {"t": changed}
    at.run()
    after = heatmap_z(chart(visit_tabs(at, "learned", ["table"]), "similarity"))
    assert_matrix(after, analysis.cosine_similarity_matrix(changed), what="after the change")
    assert not np.allclose(before[123], after[123])


def test_a_random_table_is_built_whole_only_when_its_heatmap_shows_every_entry():
    """Every tab of a random table longer than a heatmap's side draws only the rows or columns it reads; a table
    that fits is built once, for its exact heatmap."""
    from posviz.ui import cache

    def built(n: int) -> bool:
        return any(params["n_positions"] == n for params in cache.held_tables("learned"))

    view = visit_tabs(open_page("learned", query={"n": "3001", "d": "33"}), "learned", TABS)
    assert_view_clean(view)
    check_layout(view, "en", {"probe": {"n": 3001, "d": 33}})  # every tab drew its charts ...
    assert not built(3001), "a tab built the whole 3001 x 33 table"  # ... from the rows it reads
    at = open_page("learned", query={"n": "301", "d": "33", "tab": "probe"})
    assert_clean(at)
    probe_titles = [("learned.probe.title", {"n": 301, "d": 33}), ("learned.probe.title.trained", {"n": 64, "d": 64})]
    charts_by_key(charts(at), "en", probe_titles)
    assert not built(301), "the probe tab built the 301 x 33 table (it reads its rows only)"
    view = visit_tabs(open_page("learned", query={"n": "301", "d": "33"}), "learned", ["table"])
    assert_view_clean(view)
    assert built(301)


def test_a_large_sin_init_table_is_summarised_in_closed_form_without_building_it():
    from posviz.figures import heatmap as heatmap_figure
    from posviz.ui import cache

    from ._support import image_rgba

    n, d = 2101, 2000  # more cells than a CSV holds one by one: shown and exported as block means
    at = open_page("learned", query={"init": "sinusoidal", "n": str(n), "d": str(d)})
    view = visit_tabs(at, "learned", ["table", "spectrum"])
    assert_view_clean(view)
    table_fig, similarity_fig, dominant, power = view.figures
    table = posviz.sin_init(n, d)
    expected = heatmap_figure(table, title="", x_title="", y_title="")
    assert table_fig["layout"]["meta"] == expected.layout.meta
    assert (image_rgba(table_fig) == image_rgba(expected.to_dict())).all(axis=2).mean() > 0.999
    similarity = posviz.cosine_similarity_matrix(table[posviz.evenly_spaced(n, 1024)])
    assert (
        similarity_fig["data"][0]["source"]
        == heatmap_figure(similarity, title="", x_title="", y_title="", zmin=-1.0, zmax=1.0).data[0].source
    )
    spectrum = analysis.position_spectrum(table)
    np.testing.assert_allclose(as_array(power["data"][0]["y"]), spectrum.mean_power, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(as_array(dominant["data"][1]["y"]), spectrum.dominant)
    assert not [params for params in cache.held_tables("learned") if params["n_positions"] == n]
