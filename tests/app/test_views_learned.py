"""The Learned page's views (posviz/ui/views/learned.py): each is kept by its settings and the language (a session
table by its content's digest, never its array), its numbers are those of the formulas derived here by hand (BERT's
seeded N(0, std^2) blocks, the sinusoids, cosines, a DFT, a ridge probe, truncation and interpolation), a refused
setting raises ValueError and is never cached, and the cached output is the one built afresh."""

from __future__ import annotations

import numpy as np
import pytest
import streamlit as st

from posviz.ui import cache
from posviz.ui.views import learned as learned_views
from posviz.ui.views.learned import Source
from tests.core._oracles import bert_init_blocks

from ._support import as_array, assert_matrix, cosines, heatmap_z, image_rgba, sinusoid_omega, sinusoid_rows, spaced, tr

pytestmark = pytest.mark.usefixtures("views_in_english")


# ------------------------------------------------------------------------------------ the formulas, by hand


def random_table(n: int, d: int, std: float, seed: int) -> np.ndarray:
    """BERT's start as ``learned.RandomTable`` documents it: rows in blocks of 4, each block what
    ``torch.nn.init.normal_`` puts in a float32 parameter from its own seeded generator (``bert_init_blocks``)."""
    return bert_init_blocks(n, d, std=std, seed=seed, block_rows=4)


def pe(positions, d: int) -> np.ndarray:
    """PE[p, 2k] = sin(p w_k), PE[p, 2k + 1] = cos(p w_k): the sinusoidal start of a learned table."""
    return sinusoid_rows(positions, d)


def block_means(table: np.ndarray, side: int = 1024) -> np.ndarray:
    """The means of the near-equal blocks cut at floor(linspace(0, n, side + 1)) along each axis."""
    rows, cols = (np.linspace(0, n, side + 1).astype(int) if n > side else np.arange(n + 1) for n in table.shape)
    sums = np.add.reduceat(np.add.reduceat(table, rows[:-1], axis=0), cols[:-1], axis=1)
    return sums / np.outer(np.diff(rows), np.diff(cols))


def periodogram(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P_i(w_j) = |sum_p (PE[p, i] - mean_i) e^(-i w_j p)|^2 / sum_j P_i(w_j) on w_j = 2 pi j / N, j = 0 .. N / 2,
    N = max(4096, 2^ceil(log2 n)) (the columns zero-padded), as a plain sum over positions: ``(w, P)``, P of shape
    (len(w), d)."""
    n = table.shape[0]
    size = max(4096, 1 << (n - 1).bit_length())
    w = 2 * np.pi * np.arange(size // 2 + 1) / size
    sums = np.exp(-1j * np.outer(w, np.arange(n))) @ (table - table.mean(axis=0))
    power = np.abs(sums) ** 2
    return w, power / power.sum(axis=0)


def ridge_predict(x: np.ndarray, y: np.ndarray, at: np.ndarray, alpha: float) -> np.ndarray:
    """A ridge regression of y on the rows x with a free intercept: w = (Xc^T Xc + alpha I)^-1 Xc^T yc on the
    centred rows, evaluated at the rows ``at`` (the training mean of y for alpha = inf)."""
    if np.isinf(alpha):
        return np.full(len(at), y.mean())
    xc = x - x.mean(axis=0)
    w = np.linalg.solve(xc.T @ xc + alpha * np.eye(x.shape[1]), xc.T @ (y - y.mean()))
    return y.mean() + (at - x.mean(axis=0)) @ w


def probe(table: np.ndarray, folds: int = 5, seed: int = 0) -> float:
    """Wang & Chen's probe (2020) as the core describes it: mean |p_hat - p| over 5 shuffled folds (scikit-learn's
    KFold, seed 0); each fold's penalty the largest of 10^-8 .. 10^4 by half decades and inf, times
    ||Xc||_F^2 / min(m, d), whose leave-one-out squared error (refitted without each training row in turn) is
    within 1e-6 of the lowest."""
    from sklearn.model_selection import KFold

    n = table.shape[0]
    target = np.arange(n, dtype=np.float64)
    penalties = np.append(10.0 ** np.arange(-8.0, 4.25, 0.5), np.inf)
    predicted = np.empty(n)
    for train, test in KFold(n_splits=folds, shuffle=True, random_state=seed).split(table):
        x, y = table[train], target[train]
        scale = ((x - x.mean(axis=0)) ** 2).sum() / min(x.shape)
        loo = np.empty(penalties.size)
        for a, alpha in enumerate(penalties * scale):
            left_out = [
                ridge_predict(np.delete(x, i, 0), np.delete(y, i), x[i : i + 1], alpha)[0] for i in range(len(y))
            ]
            loo[a] = np.mean((np.array(left_out) - y) ** 2)
        best = np.flatnonzero(loo <= loo.min() * (1 + 1e-6))[-1]
        predicted[test] = ridge_predict(x, y, table[test], penalties[best] * scale)
    return float(np.mean(np.abs(predicted - target)))


def guess(n: int) -> float:
    """mean |p - median| over p = 0 .. n - 1: always guessing the middle."""
    return float(np.mean(np.abs(np.arange(n) - np.median(np.arange(n)))))


def pca(table: np.ndarray) -> np.ndarray:
    """U_k S_k, k = 1, 2, of the centred table, each axis signed so that its largest loading is positive."""
    u, s, vt = np.linalg.svd(table - table.mean(axis=0), full_matrices=False)
    signs = np.sign(vt[np.arange(2), np.argmax(np.abs(vt[:2]), axis=1)])
    return u[:, :2] * s[:2] * signs


def fig_of(out, key: str) -> dict:
    return out.figure(key).fig.to_dict()


def probe_bars(out) -> tuple[list[str], np.ndarray]:
    bars = fig_of(out, "probe")["data"][0]
    return list(bars["x"]), as_array(bars["y"])


#: A table trained in this session, as the page would find it in ``ui.session_tables()``: smooth, so it orders its
#: positions.
SESSION_TABLE = np.cos(np.arange(30)[:, None] * np.linspace(0.05, 0.6, 6)[None, :]) + 0.01 * np.arange(6)
SESSION_CODE = learned_views.SESSION + "my run"


def session(table: np.ndarray = SESSION_TABLE) -> Source:
    return learned_views.session_source(SESSION_CODE, table)


# ------------------------------------------------------------------------------------------- every view alike

RANDOM = Source("random", 40, 8, 0.05, 3)
SINUSOIDAL = Source("sinusoidal", 40, 8)

#: Each view with settings it draws and the same settings with one changed.
CASES = {
    "table": (learned_views.table, (RANDOM,), (RANDOM._replace(seed=4),)),
    "projection": (learned_views.projection, (RANDOM, "pca"), (RANDOM._replace(std=0.06), "pca")),
    "spectrum": (learned_views.spectrum, (SINUSOIDAL,), (SINUSOIDAL._replace(d=10),)),
    "initial_probes": (learned_views.initial_probes, (40, 8, 0.05, 3), (40, 8, 0.06, 3)),
    "trained_probes": (
        learned_views.trained_probes,
        (learned_views.example_source(), 0.02, 0),
        (learned_views.example_source(), 0.02, 1),
    ),
    "past": (learned_views.past, (RANDOM, 2), (RANDOM, 3)),
}


@pytest.mark.parametrize("name", CASES)
def test_same_settings_give_the_same_output_and_a_changed_one_a_new_output(name):
    func, settings, changed = CASES[name]
    first = func(*settings)
    assert func(*settings) is first
    assert func(*changed) is not first
    assert func(*settings) is first


@pytest.mark.parametrize("name", CASES)
def test_a_view_equals_its_uncached_build(name):
    func, settings, _ = CASES[name]
    cached = func(*settings)
    fresh = list(func.uncached(*settings))
    assert [(item.key, item.options) for item in cached.items] == [(item.key, item.options) for item in fresh]
    for got, built in zip(cached.items, fresh, strict=True):
        assert got.fig.to_dict() == built.fig.to_dict()


def test_the_language_is_part_of_the_key():
    english = learned_views.spectrum(SINUSOIDAL)
    st.session_state["lang"] = "zh"
    chinese = learned_views.spectrum(SINUSOIDAL)
    assert chinese is not english
    assert fig_of(chinese, "spectrum")["layout"]["title"]["text"] == tr("zh", "learned.spectrum.dominant")
    assert fig_of(english, "spectrum")["layout"]["title"]["text"] == tr("en", "learned.spectrum.dominant")
    assert learned_views.label(SESSION_CODE) == tr("zh", "learned.option.session", name="my run")


# ------------------------------------------------------------------------------------------------ the table tab


def test_a_random_table_is_the_seeded_blocks_and_its_similarity_their_cosines():
    out = learned_views.table(RANDOM)
    expected = random_table(40, 8, 0.05, 3)
    assert_matrix(heatmap_z(fig_of(out, "table")), expected, what="table")
    assert_matrix(heatmap_z(fig_of(out, "similarity")), cosines(expected), what="similarity")
    assert out.figure("table").options == {"variant": "random", "extra": ""}
    assert out.figure("similarity").options == {"variant": "random"}
    # the figure's data is the family's table itself, built once and held for every page that draws it
    assert out.figure("table").data is cache.family_table("learned", learned_views._params(RANDOM))


def test_a_long_random_table_shows_its_real_entries_on_a_grid_without_building_it():
    source = Source("random", 1100, 8, 0.02, 5)
    out = learned_views.table(source)
    rows = spaced(1100, 1024)
    expected = random_table(1100, 8, 0.02, 5)[rows]
    fig = fig_of(out, "table")
    assert_matrix(heatmap_z(fig), expected, what="grid")
    assert fig["data"][0]["dy"] == pytest.approx(1099 / 1023)
    assert out.figure("table").options["extra"] == tr("en", "learned.table.grid", rows=1024, n=1100, cols=8, d=8)
    assert_matrix(out.figure("similarity").data, cosines(expected), atol=1e-12, what="similarity")
    assert not [p for p in cache.held_tables("learned") if p["n_positions"] == 1100]


def test_a_sinusoidal_table_is_the_sinusoids():
    out = learned_views.table(SINUSOIDAL)
    assert_matrix(heatmap_z(fig_of(out, "table")), pe(np.arange(40), 8), what="table")
    assert_matrix(heatmap_z(fig_of(out, "similarity")), cosines(pe(np.arange(40), 8)), what="similarity")
    assert out.figure("table").options["variant"] == "sinusoidal"


def test_a_large_sinusoidal_table_is_its_block_means_and_cosines_in_closed_form():
    n, d = 2049, 2048  # more cells than a CSV holds one by one
    out = learned_views.table(Source("sinusoidal", n, d))
    full = pe(np.arange(n), d)
    np.testing.assert_allclose(out.figure("table").data, block_means(full), rtol=0, atol=1e-9)
    fig = fig_of(out, "table")
    assert fig["layout"]["meta"] == {"source_shape": [n, d], "downsampled": True, "shape": [1024, 1024]}
    assert image_rgba(fig).shape[:2] == (1024, 1024)
    rows = spaced(n, 1024)
    np.testing.assert_allclose(out.figure("similarity").data, cosines(full[rows]), rtol=0, atol=1e-9)
    assert not [p for p in cache.held_tables("learned") if p["n_positions"] == n]


def test_a_session_table_is_drawn_as_it_is_and_keyed_by_its_digest():
    table = SESSION_TABLE.copy()
    source = session(table)
    with learned_views.offering({source.digest: table}):
        out = learned_views.table(source)
    assert_matrix(heatmap_z(fig_of(out, "table")), SESSION_TABLE, what="table")
    assert_matrix(heatmap_z(fig_of(out, "similarity")), cosines(SESSION_TABLE), what="similarity")
    assert out.figure("table").options == {"variant": "trained", "extra": ""}
    assert table.flags.writeable and out.figure("table").data is not table  # the session's array is left alone
    # the key is the digest: the same content is found without its array, a changed one is a new output
    assert learned_views.table(session(SESSION_TABLE.copy())) is out
    changed = table.copy()
    changed[7, 2] += 1e-3
    assert session(changed).digest != source.digest
    with pytest.raises(LookupError):
        learned_views.table(session(changed))  # not offered, and not cached
    with learned_views.offering({session(changed).digest: changed}):
        assert learned_views.table(session(changed)) is not out
    assert not [key for key in cache.TABLES.keys() if key[0] == "view" and holds_an_array(key)]


def holds_an_array(value) -> bool:
    if isinstance(value, tuple):
        return any(holds_an_array(part) for part in value)
    return isinstance(value, np.ndarray)


def test_the_example_is_the_shipped_table():
    from posviz.encodings import learned

    out = learned_views.table(learned_views.example_source())
    shipped = np.load(learned.EXAMPLE_TABLE, allow_pickle=False).astype(np.float64)
    assert learned_views.example_source() == Source("example", 64, 64)
    assert_matrix(heatmap_z(fig_of(out, "table")), shipped, what="example")
    assert_matrix(out.figure("similarity").data, cosines(shipped), atol=1e-12, what="similarity")


# ----------------------------------------------------------------------------------- projection and spectrum


def test_the_projection_is_the_first_two_principal_components():
    out = learned_views.projection(RANDOM, "pca")
    markers = fig_of(out, "projection")["data"][1]
    coords = pca(random_table(40, 8, 0.05, 3))
    np.testing.assert_allclose(np.c_[as_array(markers["x"]), as_array(markers["y"])], coords, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(as_array(markers["marker"]["color"]), np.arange(40))
    assert out.figure("projection").options == {"variant": "random", "extra": ""}


def test_a_long_projection_reads_evenly_spaced_positions_and_says_so():
    out = learned_views.projection(Source("random", 1500, 6, 0.02, 0), "pca")
    data = out.figure("projection").data
    np.testing.assert_array_equal(data["position"], spaced(1500, 1024))
    coords = pca(random_table(1500, 6, 0.02, 0)[spaced(1500, 1024)])
    np.testing.assert_allclose(np.c_[data["x"], data["y"]], coords, rtol=0, atol=1e-9)
    assert out.figure("projection").options["extra"] == tr("en", "learned.sampled", shown=1024, n=1500)


def test_the_spectrum_of_a_random_table_is_its_periodogram_beside_the_sinusoids():
    out = learned_views.spectrum(RANDOM)
    w, power = periodogram(random_table(40, 8, 0.05, 3))
    _, sin_power = periodogram(pe(np.arange(40), 8))
    dominant = fig_of(out, "spectrum")
    ladder, dots = dominant["data"][0], dominant["data"][1]
    np.testing.assert_allclose(as_array(ladder["y"]), sinusoid_omega(8)[np.arange(8) // 2], rtol=1e-12)
    np.testing.assert_array_equal(as_array(dots["x"]), np.arange(8))
    np.testing.assert_allclose(as_array(dots["y"]), w[np.argmax(power, axis=0)], rtol=1e-12)
    mean = fig_of(out, "spectrum.mean")
    assert [trace["name"] for trace in mean["data"]] == [
        tr("en", "option.random"),
        tr("en", "learned.spectrum.reference"),
    ]
    np.testing.assert_allclose(as_array(mean["data"][0]["x"]), w, rtol=1e-12)
    np.testing.assert_allclose(as_array(mean["data"][0]["y"]), power.mean(axis=1), rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(as_array(mean["data"][1]["y"]), sin_power.mean(axis=1), rtol=1e-6, atol=1e-12)
    assert out.figure("spectrum").options == {"variant": "random", "extra": "", "chart": "dominant"}
    assert out.figure("spectrum.mean").options == {"chart": "power"}


def test_the_spectrum_of_a_sinusoidal_table_has_no_second_curve():
    out = learned_views.spectrum(SINUSOIDAL)
    w, power = periodogram(pe(np.arange(40), 8))
    mean = fig_of(out, "spectrum.mean")
    assert [trace["name"] for trace in mean["data"]] == [tr("en", "option.sinusoidal")]
    np.testing.assert_allclose(as_array(mean["data"][0]["y"]), power.mean(axis=1), rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(out.figure("spectrum").data["dominant_frequency"], w[np.argmax(power, axis=0)])


# ------------------------------------------------------------------------------------------------- the probes


def test_the_initial_probes_are_the_ridge_probe_of_each_start_beside_the_guess():
    out = learned_views.initial_probes(30, 6, 0.05, 3)
    names, values = probe_bars(out)
    assert names == [tr("en", "option.random"), tr("en", "option.sinusoidal"), tr("en", "learned.probe.guess")]
    expected = [probe(random_table(30, 6, 0.05, 3)), probe(pe(np.arange(30), 6)), guess(30)]
    np.testing.assert_allclose(values, expected, rtol=1e-6)
    assert expected[1] < 0.1 * expected[0]  # the sinusoids give the position away; noise does not
    assert learned_views.probed(out) == dict(zip(names[:2], values[:2], strict=True))
    options = out.figure("probe").options
    assert options == {"variant": "init", "suffix": "init", "extra": "", "chart": "probe"}
    assert fig_of(out, "probe")["layout"]["title"]["text"] == tr("en", "learned.probe.title", n=30, d=6)


def test_a_session_table_is_probed_beside_the_starts_of_its_shape():
    source = session()
    with learned_views.offering({source.digest: SESSION_TABLE}):
        out = learned_views.trained_probes(source, 0.05, 3)
    names, values = probe_bars(out)
    assert names[2] == tr("en", "learned.option.session", name="my run")
    expected = [probe(random_table(30, 6, 0.05, 3)), probe(pe(np.arange(30), 6)), probe(SESSION_TABLE), guess(30)]
    np.testing.assert_allclose(values, expected, rtol=1e-6)
    assert list(learned_views.probed(out)) == names[:3]
    options = out.figure("probe").options
    assert options == {"variant": "session", "suffix": "session", "extra": "", "chart": "probe-trained"}


def test_a_long_table_is_probed_on_evenly_spaced_rows_and_says_so():
    out = learned_views.initial_probes(1500, 16, 0.02, 0)
    _, values = probe_bars(out)
    assert values[-1] == guess(1500) == 375.0
    assert out.figure("probe").options["extra"] == tr("en", "learned.probe.sampled", shown=1024, n=1500)
    assert values[0] == pytest.approx(375.0, rel=0.08) and values[1] < 1.0


# ------------------------------------------------------------------------------------------ past the last row


def test_past_the_end_truncation_repeats_the_last_row_and_interpolation_stretches():
    source = Source("sinusoidal", 24, 8)
    out = learned_views.past(source, 3)
    table = pe(np.arange(24), 8)
    clipped = table[np.minimum(np.arange(72), 23)]
    assert_matrix(heatmap_z(fig_of(out, "past.clip")), cosines(clipped), what="clip")
    where = np.arange(72) * 23 / 71
    stretched = np.stack([np.interp(where, np.arange(24), column) for column in table.T], axis=1)
    assert_matrix(heatmap_z(fig_of(out, "past.interpolate")), cosines(stretched), what="interpolate")
    titles = [fig_of(out, key)["layout"]["title"]["text"] for key in ("past.clip", "past.interpolate")]
    assert titles == [
        tr("en", "learned.past.clip", n=24, last=71),
        tr("en", "learned.past.interpolate", n=24, longer=72),
    ]


# ---------------------------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("func", "settings"),
    [
        (learned_views.table, (Source("random", 0, 8),)),
        (learned_views.table, (Source("random", 16, 8, -1.0, 0),)),
        (learned_views.spectrum, (Source("sinusoidal", 16, 0),)),
        (learned_views.projection, (RANDOM, "umap")),
        (learned_views.initial_probes, (5, 8, 0.02, 0)),  # too few positions for five folds
        (learned_views.past, (RANDOM, 0)),
    ],
)
def test_refused_settings_raise_and_are_not_cached(func, settings):
    for _ in range(2):
        with pytest.raises(ValueError):
            func(*settings)
    assert not [key for key in cache.TABLES.keys() if key[0] == "view"]


def test_a_refused_random_table_is_refused_before_any_tab():
    with pytest.raises(ValueError, match="std"):
        learned_views.registry_source("random", 16, 8, -1.0, 0)
    assert learned_views.registry_source("random", 16, 8, 0.1, 2) == Source("random", 16, 8, 0.1, 2)
    # a sinusoidal table reads neither the spread nor the seed: its views do not change with them
    assert learned_views.registry_source("sinusoidal", 16, 8, 0.1, 2) == learned_views.registry_source(
        "sinusoidal", 16, 8, 0.3, 7
    )


def test_past_the_last_row_torch_and_posviz_say_why():
    import torch

    try:
        torch.nn.Embedding(64, 1)(torch.tensor([64]))
    except IndexError as exc:
        said = str(exc)
    torch_out = learned_views.lookup_error(64, "torch")
    assert torch_out.texts == [tr("en", "learned.past.torch", n=64, position=64), said]
    assert [item.kind for item in torch_out.items] == ["markdown", "code"]
    posviz_out = learned_views.lookup_error(64, "posviz")
    assert posviz_out.texts[0] == tr("en", "learned.past.posviz") and "64" in posviz_out.texts[1]
    with pytest.raises(ValueError):
        learned_views.lookup_error(64, "numpy")


def test_the_example_s_provenance_is_its_training_record():
    from posviz.encodings import learned

    made = learned.example_provenance()
    caption = learned_views.provenance().items[0]
    assert caption.kind == "caption"
    assert caption.text == tr(
        "en",
        "learned.example.provenance",
        steps=made["steps"],
        seed=made["seed"],
        first_loss=made["first_loss"],
        final_loss=made["final_loss"],
    )
