"""The checkpoint inspector's views (posviz/ui/views/inspect_tables.py, inspect_findings.py, inspect_usage.py): each is
kept by its settings and the language (a loaded table by the name its content digest gives it, a RoPE model by its
fingerprint, never by the array or the weights), its numbers are those of the formulas derived here by hand (row
norms, cosines, the sinusoids, a DFT, a ridge probe, an SVD, second differences, a RoPE head's pairs and its
rotation), a refused setting raises ValueError and is never cached, and the cached output is the one built afresh."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from safetensors.numpy import save_file

from posviz import checkpoint as ckpt
from posviz.ui import cache
from posviz.ui.views import inspect_findings as findings_views
from posviz.ui.views import inspect_tables as table_views
from posviz.ui.views import inspect_usage as usage_views
from tests.core._oracles import bert_init_blocks

from ._support import as_array, assert_matrix, assert_same_items, heatmap_z, title, tr

pytestmark = pytest.mark.usefixtures("views_in_english")


def view_keys() -> list[tuple]:
    return [key for key in cache.TABLES.keys() if key[0] == "view"]


def fig_of(out, key: str) -> dict:
    return out.figure(key).fig.to_dict()


def trace(fig: dict, name: str) -> dict:
    (found,) = [t for t in fig["data"] if t.get("name") == name]
    return found


# ------------------------------------------------------------------------------------ the formulas, by hand


def walk(n: int = 40, d: int = 6, seed: int = 1) -> np.ndarray:
    """A random walk: each row a small step from the one before, so its rows are ordered."""
    return np.cumsum(np.random.default_rng(seed).normal(size=(n, d)), axis=0)


def noise(n: int = 40, d: int = 6, seed: int = 2) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 0.02, size=(n, d))


def ref(table: np.ndarray, name: str = "t") -> cache.Table:
    return cache.Table.content(table, digest=name)


def cosines(table: np.ndarray) -> np.ndarray:
    """cos(PE(i), PE(j)) for every pair of rows."""
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    return unit @ unit.T


def offset_means(table: np.ndarray) -> np.ndarray:
    """The mean of cos(PE(p), PE(p + k)) over p, for k = 0 .. n - 1, one pair at a time."""
    n = len(table)
    cos = lambda a, b: a @ b / np.linalg.norm(a) / np.linalg.norm(b)  # noqa: E731
    return np.array([np.mean([cos(table[p], table[p + k]) for p in range(n - k)]) for k in range(n)])


def sinusoid(n: int, d: int, base: float = 10_000.0) -> np.ndarray:
    """PE[p, 2k] = sin(p base^(-2k/d)), PE[p, 2k + 1] = cos(p base^(-2k/d)) (Vaswani et al., 2017)."""
    table = np.empty((n, d))
    for p in range(n):
        for i in range(d):
            angle = p * base ** (-2 * (i // 2) / d)
            table[p, i] = np.sin(angle) if i % 2 == 0 else np.cos(angle)
    return table


def power(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P_i(omega_j) = |sum_p (PE[p, i] - mean_i) e^(-i omega_j p)|^2 / sum_j P_i(omega_j), omega_j = 2 pi j / N,
    j = 0 .. N/2, N = max(4096, 2^ceil(log2 n)), written as a DFT: (frequencies, (d, N/2 + 1) powers)."""
    n = len(table)
    size = max(4096, 1 << (n - 1).bit_length())
    omega = 2 * np.pi * np.arange(size // 2 + 1) / size
    centred = table - table.mean(axis=0)
    spectrum = np.exp(-1j * np.outer(omega, np.arange(n))) @ centred  # (frequencies, d)
    powers = np.abs(spectrum.T) ** 2
    return omega, powers / powers.sum(axis=1, keepdims=True)


def ridge_predict(x: np.ndarray, y: np.ndarray, at: np.ndarray, alpha: float) -> np.ndarray:
    """Ridge regression of y on the rows x with a free intercept, w = (Xc^T Xc + alpha I)^-1 Xc^T yc on the centred
    rows, evaluated at the rows ``at``; for alpha = inf, the training mean of y."""
    if np.isinf(alpha):
        return np.full(len(at), y.mean())
    xc = x - x.mean(axis=0)
    w = np.linalg.solve(xc.T @ xc + alpha * np.eye(x.shape[1]), xc.T @ (y - y.mean()))
    return y.mean() + (at - x.mean(axis=0)) @ w


def probe(table: np.ndarray) -> float:
    """Wang & Chen's position probe (2020): mean |p_hat - p| over 5 shuffled folds (KFold, seed 0); each fold's
    penalty the largest of 10^-8 .. 10^4 in half decades and inf, times ||Xc||_F^2 / min(m, d), whose leave-one-out
    squared error (refitted without each training row in turn) is within 1e-6 of the lowest."""
    from sklearn.model_selection import KFold

    n = len(table)
    target = np.arange(n, dtype=np.float64)
    penalties = np.append(10.0 ** np.arange(-8.0, 4.25, 0.5), np.inf)
    predicted = np.empty(n)
    for train, test in KFold(n_splits=5, shuffle=True, random_state=0).split(table):
        x, y = table[train], target[train]
        scale = ((x - x.mean(axis=0)) ** 2).sum() / min(x.shape)
        loo = [
            np.mean(
                [
                    (ridge_predict(np.delete(x, i, 0), np.delete(y, i), x[i : i + 1], alpha)[0] - y[i]) ** 2
                    for i in range(len(y))
                ]
            )
            for alpha in penalties * scale
        ]
        best = np.flatnonzero(np.array(loo) <= min(loo) * (1 + 1e-6))[-1]
        predicted[test] = ridge_predict(x, y, table[test], penalties[best] * scale)
    return float(np.mean(np.abs(predicted - target)))


def guess(n: int) -> float:
    """mean |p - median| over p = 0 .. n - 1: always guessing the middle."""
    return float(np.mean(np.abs(np.arange(n) - np.median(np.arange(n)))))


def random_start(n: int, d: int, std: float = 0.02, seed: int = 0) -> np.ndarray:
    """BERT's start as ``learned.RandomTable`` documents it: rows in blocks of 4, each block what
    ``torch.nn.init.normal_`` puts in a float32 parameter from its own seeded generator (``bert_init_blocks``)."""
    return bert_init_blocks(n, d, std=std, seed=seed, block_rows=4)


# --------------------------------------------------------------------------------------- caching and keys


def test_same_settings_give_the_same_output_and_a_changed_one_a_new_output():
    table = walk()
    first = table_views.similarity(ref(table), "a.npy", None)
    assert table_views.similarity(ref(table), "a.npy", None) is first
    # the key is the table's name, never its array: another array under the same name is the held output
    assert table_views.similarity(ref(noise(), "t"), "a.npy", None) is first
    assert table_views.similarity(ref(table, "other digest"), "a.npy", None) is not first
    assert table_views.similarity(ref(table), "b.npy", None) is not first
    assert table_views.similarity(ref(table), "a.npy", "random") is not first


def test_the_language_is_part_of_the_key():
    english = table_views.similarity(ref(walk()), "a.npy", None)
    st.session_state["lang"] = "zh"
    chinese = table_views.similarity(ref(walk()), "a.npy", None)
    assert chinese is not english
    assert title(fig_of(chinese, "offset")) == tr("zh", "inspect.profile") != tr("en", "inspect.profile")
    assert_matrix(heatmap_z(fig_of(chinese, "similarity")), heatmap_z(fig_of(english, "similarity")))


# ------------------------------------------------------------------------------------- the table's tabs


def test_the_stored_table_with_its_offset_rows_and_the_norms_of_its_positions():
    stored = walk(42, 6)
    out = table_views.table(ref(stored, "s"), "embed_positions.weight", 2, "opt.bin", "random")
    fig = fig_of(out, "table")
    assert title(fig) == tr("en", "inspect.table", tensor="embed_positions.weight")
    assert_matrix(heatmap_z(fig), stored, what="every stored row")
    (box,) = fig["layout"]["shapes"]
    assert (box["y0"], box["y1"]) == (-0.5, 1.5)  # the two offset rows outlined
    assert out.figure("table").options == {"variant": "random", "n": 40}
    norms = fig_of(out, "norms")
    by_hand = [np.sqrt(sum(x * x for x in row)) for row in stored[2:]]
    np.testing.assert_allclose(as_array(trace(norms, "opt.bin")["y"]), by_hand, rtol=1e-12)
    np.testing.assert_allclose(as_array(trace(norms, tr("en", "inspect.sinusoidal"))["y"]), np.sqrt(3.0), rtol=1e-12)
    np.testing.assert_allclose(out.figure("norms").data["row_norm"], by_hand, rtol=1e-12)
    # no offset: nothing outlined
    plain = table_views.table(ref(stored, "s"), "wpe.weight", 0, "gpt2.bin", None)
    assert not fig_of(plain, "table")["layout"].get("shapes")
    assert plain.figure("norms").options == {"variant": None, "n": 42}


def test_similarity_and_its_mean_by_offset_beside_the_sinusoidal_table():
    table = walk(40, 6)
    out = table_views.similarity(ref(table), "a.npy", "tiny")
    assert_matrix(heatmap_z(fig_of(out, "similarity")), cosines(table), what="cosine similarity")
    profile = fig_of(out, "offset")
    mine = trace(profile, "a.npy")
    np.testing.assert_array_equal(as_array(mine["x"]), np.arange(40))
    np.testing.assert_allclose(as_array(mine["y"]), offset_means(table), rtol=1e-9)
    reference = trace(profile, tr("en", "inspect.sinusoidal"))
    np.testing.assert_allclose(as_array(reference["y"]), offset_means(sinusoid(40, 6)), rtol=1e-9)
    assert [item.options for item in out.items] == [{"variant": "tiny", "n": 40}] * 2


def test_the_projection_is_the_first_two_principal_components():
    table = walk(40, 6)
    out = table_views.projection(ref(table), "pca", "random")
    u, s, vt = np.linalg.svd(table - table.mean(axis=0), full_matrices=False)
    signs = np.sign(vt[np.arange(2), np.argmax(np.abs(vt[:2]), axis=1)])  # each axis: its largest loading positive
    data = out.figure("projection").data
    np.testing.assert_array_equal(data["position"], np.arange(40))
    np.testing.assert_allclose(np.c_[data["x"], data["y"]], u[:, :2] * s[:2] * signs, atol=1e-9)
    assert out.figure("projection").options == {"variant": "random", "extra": "", "n": 40}
    assert title(fig_of(out, "projection")) == tr(
        "en", "learned.projection.title", method=tr("en", "learned.projection.pca")
    )
    # more rows than are projected: evenly spaced ones, and the caption says so
    long = walk(1500, 4)
    sampled = table_views.projection(ref(long, "long"), "pca", None)
    where = sampled.figure("projection").data["position"]
    assert len(where) == 1024 and (where[0], where[-1]) == (0, 1499)
    extra = sampled.figure("projection").options["extra"]
    assert extra == tr("en", "learned.sampled", shown=1024, n=1500)


def test_spectrum_is_the_dft_of_each_centred_column():
    table = walk(40, 6)
    out = table_views.spectrum(ref(table), "a.npy", None)
    omega, powers = power(table)
    dominant = fig_of(out, "spectrum")
    np.testing.assert_allclose(as_array(trace(dominant, "a.npy")["y"]), omega[np.argmax(powers, axis=1)])
    ladder = [10_000.0 ** (-2 * (i // 2) / 6) for i in range(6)]
    np.testing.assert_allclose(
        as_array(trace(dominant, tr("en", "learned.spectrum.reference"))["y"]), ladder, rtol=1e-12
    )
    assert out.figure("spectrum").options == {"variant": None, "extra": "", "chart": "dominant", "n": 40}
    mean = fig_of(out, "spectrum.mean")
    np.testing.assert_allclose(as_array(trace(mean, "a.npy")["y"]), powers.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(
        as_array(trace(mean, tr("en", "learned.spectrum.reference"))["y"]),
        power(sinusoid(40, 6))[1].mean(axis=0),
        atol=1e-12,
    )
    np.testing.assert_allclose(out.figure("spectrum.mean").data["frequency"], omega)
    assert out.figure("spectrum.mean").options["chart"] == "power"


def test_probe_bars_and_the_reading_probe_the_table_once(monkeypatch):
    from posviz import analysis

    table = walk(30, 4)
    probed = []
    real = analysis.sampled_position_probe
    monkeypatch.setattr(
        analysis, "sampled_position_probe", lambda rows, *a, **k: probed.append(rows) or real(rows, *a, **k)
    )
    reading = table_views.read(ref(table))
    out = table_views.probe(ref(table), "walk.npy", None)
    assert sum(rows is table for rows in probed) == 1  # the reading's probe is the bar's
    bars = fig_of(out, "probe")["data"][0]
    names = ["walk.npy", tr("en", "inspect.sinusoidal"), tr("en", "option.random"), tr("en", "learned.probe.guess")]
    assert bars["x"] == names
    expected = [probe(table), probe(sinusoid(30, 4)), probe(random_start(30, 4)), guess(30)]
    np.testing.assert_allclose(as_array(bars["y"]), expected, rtol=1e-6)
    assert reading.probe == pytest.approx(expected[0], rel=1e-6)
    assert title(fig_of(out, "probe")) == tr("en", "learned.probe.title", n=30, d=4)
    assert out.figure("probe").options == {"variant": None, "n": 30}


@pytest.mark.parametrize(
    ("table", "kind"), [(walk(40, 6), "ordered"), (noise(40, 6), "random"), (walk(12, 6), "tiny")], ids=str
)
def test_the_reading_is_the_probe_against_the_constant_guess(table, kind):
    """Fewer than 16 rows are too few to tell; else noise scores at least 0.75 of always guessing the middle."""
    reading = table_views.read(ref(table))
    n = len(table)
    assert (reading.n_positions, reading.guess) == (n, pytest.approx(guess(n)))
    if n < 16:
        assert reading.kind == "tiny" == kind
        return
    error = probe(table)
    assert reading.probe == pytest.approx(error, rel=1e-6)
    assert reading.kind == ("random" if error >= 0.75 * guess(n) else "ordered") == kind


def test_the_table_beside_the_sinusoidal_table():
    table = walk(24, 6)
    out = table_views.beside_sinusoidal(ref(table), "a.npy")
    keys = ["side.table", "side.table.similarity", "side.sinusoidal", "side.sinusoidal.similarity"]
    assert [item.key for item in out.items[:4]] == keys
    assert all(item.options == {"captioned": False} for item in out.items[:4])
    assert title(fig_of(out, "side.table")) == "a.npy"
    assert_matrix(heatmap_z(fig_of(out, "side.table")), table)
    assert_matrix(heatmap_z(fig_of(out, "side.sinusoidal")), sinusoid(24, 6))
    assert_matrix(heatmap_z(fig_of(out, "side.table.similarity")), cosines(table))
    assert_matrix(heatmap_z(fig_of(out, "side.sinusoidal.similarity")), cosines(sinusoid(24, 6)))
    assert out.texts == [tr("en", "inspect.side.notice", n=24, d=6)]


def test_two_checkpoints_each_over_its_own_offsets():
    a, b = walk(24, 6), noise(30, 4)
    out = table_views.compare(ref(a, "a"), "a.npy · array", ref(b, "b"), "b.npy · array")
    assert [item.key for item in out.items] == ["compare.a", "compare.b", "compare", "probe"]
    assert title(fig_of(out, "compare.a")) == "a.npy · array"
    assert_matrix(heatmap_z(fig_of(out, "compare.a")), cosines(a))
    assert_matrix(heatmap_z(fig_of(out, "compare.b")), cosines(b))
    profile = fig_of(out, "compare")
    for name, table in (("a.npy · array", a), ("b.npy · array", b)):
        line = trace(profile, name)
        np.testing.assert_array_equal(as_array(line["x"]), np.arange(len(table)))
        np.testing.assert_allclose(as_array(line["y"]), offset_means(table), rtol=1e-9)
    bars = fig_of(out, "probe")["data"][0]
    np.testing.assert_allclose(as_array(bars["y"]), [probe(a), probe(b)], rtol=1e-6)
    assert out.figure("probe").options == {"suffix": "compare"}
    assert isinstance(out.figure("compare").data["a.npy · array offset"], pd.Series)


def test_a_t5_bias_is_drawn_as_it_is_stored():
    bias = np.random.default_rng(3).normal(size=(32, 3))
    out = table_views.t5(ref(bias, "t5"))
    fig = fig_of(out, "t5")
    assert title(fig) == tr("en", "inspect.t5", buckets=32, heads=3)
    assert_matrix(heatmap_z(fig), bias)
    assert out.figure("t5").data is bias


# --------------------------------------------------------------------------------------- the classic findings


def test_findings_pca_decay_order_and_roughness():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    n, d, noisy_from = 60, 4, 40
    p = np.arange(n, dtype=np.float64)
    table = np.c_[p / 10, np.cos(p / 8), np.sin(p / 8), 0.3 * np.sin(p / 20)]
    table[noisy_from:] += np.random.default_rng(0).normal(0, 0.5, (n - noisy_from, d))
    out = findings_views.findings(ref(table), "h.npy")
    assert out.texts[0] == tr("en", "findings.intro")

    centred = table - table.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    signs = np.sign(vt[np.arange(3), np.argmax(np.abs(vt[:3]), axis=1)])
    coords = u[:, :3] * s[:3] * signs
    (path,) = fig_of(out, "pca")["data"]
    np.testing.assert_allclose(np.c_[as_array(path["x"]), as_array(path["y"]), as_array(path["z"])], coords, atol=1e-9)
    shares = s[:3] ** 2 / (s**2).sum()
    turns = np.unwrap(np.arctan2(coords[:, 2], coords[:, 1]))
    assert out.figure("pca").options == {
        "shares": " · ".join(f"{x:.0%}" for x in shares),
        "turns": f"{abs(turns[-1] - turns[0]) / (2 * np.pi):.1f}",
    }

    mean = offset_means(table)
    half = int(np.flatnonzero(mean <= 0.5)[0])
    decay = fig_of(out, "decay")
    np.testing.assert_allclose(as_array(decay["data"][0]["y"]), mean, rtol=1e-9)
    assert [shape["x0"] for shape in decay["layout"]["shapes"]] == [half]
    assert out.figure("decay").options == {"variant": None, "k": half}

    rng = np.random.default_rng(0)
    first, second = rng.integers(0, n, size=(2, n))
    keep = first != second
    inputs = np.hstack([table[first[keep]], table[second[keep]]]) / np.abs(table).max()
    accuracy = cross_val_score(LogisticRegression(max_iter=1000), inputs, second[keep] > first[keep], cv=5)
    assert out.texts[1] == tr("en", "findings.order", pairs=n, error=f"{1 - accuracy.mean():.0%}")

    scale = np.median(np.linalg.norm(table, axis=1))
    value = np.array([np.linalg.norm(table[q + 1] - 2 * table[q] + table[q - 1]) for q in range(1, n - 1)]) / scale
    rough = fig_of(out, "rough")
    np.testing.assert_allclose(as_array(rough["data"][0]["y"]), value, rtol=1e-9)
    assert [shape["x0"] for shape in rough["layout"]["shapes"]] == [noisy_from]  # the first noisy row
    options = out.figure("rough").options
    assert options["variant"] is None and options["row"] == noisy_from
    split = noisy_from - 2  # value(q) reads rows q - 1 .. q + 1: the noisy rows start at q = noisy_from - 1
    assert options["ratio"] == f"{np.median(value[split:]) / np.median(value[:split]):.1f}"


# -------------------------------------------------------------------------------------- a RoPE model's usage


HIDDEN, HEADS, KV_HEADS, LAYERS, HEAD_DIM, CONTEXT = 16, 2, 1, 2, 8, 128
PAIRS = HEAD_DIM // 2


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """A tiny Llama folder written by hand: its config.json, and the token embedding and the q/k projections of
    every layer (the only tensors frequency usage reads), as float32."""
    folder = tmp_path_factory.mktemp("llama")
    config = {
        "model_type": "llama",
        "hidden_size": HIDDEN,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "num_hidden_layers": LAYERS,
        "intermediate_size": 8,
        "vocab_size": 10,
        "max_position_embeddings": CONTEXT,
        "rope_theta": 10_000.0,
    }
    (folder / "config.json").write_text(json.dumps(config))
    rng = np.random.default_rng(0)
    state = {"model.embed_tokens.weight": rng.normal(size=(10, HIDDEN)).astype(np.float32)}
    for n in range(LAYERS):
        state[f"model.layers.{n}.self_attn.q_proj.weight"] = rng.normal(size=(HEADS * HEAD_DIM, HIDDEN))
        state[f"model.layers.{n}.self_attn.k_proj.weight"] = rng.normal(size=(KV_HEADS * HEAD_DIM, HIDDEN))
    state = {key: value.astype(np.float32) for key, value in state.items()}
    save_file(state, str(folder / "model.safetensors"))
    weights = {key: value.astype(np.float64) for key, value in state.items()}
    return usage_views.Model(ckpt.fingerprint(folder), folder), weights


def heads_of(weights, layer: int, which: str) -> np.ndarray:
    """(heads, head_dim, hidden): the rows of each head of the query (key) projection."""
    name = "q_proj" if which == "query" else "k_proj"
    return weights[f"model.layers.{layer}.self_attn.{name}.weight"].reshape(-1, HEAD_DIM, HIDDEN)


def usage_by_hand(weights, layer: int, which: str) -> np.ndarray:
    """(heads, pairs): pair i of a half-split head is dims i and i + head_dim / 2 (Llama's rotate_half); its usage
    the Frobenius norm of those two rows, sqrt(sum_c w[i, c]^2 + w[i + head_dim/2, c]^2)."""
    w = heads_of(weights, layer, which)
    return np.array(
        [[np.sqrt(sum(w[h, i, c] ** 2 + w[h, i + PAIRS, c] ** 2 for c in range(HIDDEN))) for i in range(PAIRS)]
         for h in range(len(w))]
    )  # fmt: skip


THETA = 10_000.0 ** (-np.arange(PAIRS) * 2 / HEAD_DIM)


def test_usage_is_kept_by_the_models_digest_never_its_weights(llama):
    model, _ = llama
    first = usage_views.by_layer(model, 0, "query")
    assert usage_views.by_layer(usage_views.Model(model.digest, None), 0, "query") is first  # nothing read again
    assert usage_views.by_layer(model, 0, "key") is not first
    assert usage_views.by_layer(usage_views.Model("another digest", model.source), 0, "query") is not first
    # the first group is read once, whether it is asked for by its index or as the default
    assert usage_views.frequency_usage(model, 0) is usage_views.frequency_usage(model)


@pytest.mark.parametrize("which", ["query", "key"])
def test_usage_by_layer_and_by_head_are_the_weights_row_norms(llama, which):
    model, weights = llama
    expected = [usage_by_hand(weights, n, which) for n in range(LAYERS)]
    out = usage_views.by_layer(model, 0, which)
    fig = fig_of(out, "by_layer")
    assert title(fig) == tr("en", "usage.by_layer", which=tr("en", f"usage.{which}"))
    np.testing.assert_allclose(heatmap_z(fig), np.stack([e.mean(axis=0) for e in expected]), rtol=1e-6)
    frame = out.figure("by_layer").data
    assert frame.index.name == "layer" and list(frame.columns) == [f"pair {i}" for i in range(PAIRS)]
    heads = usage_views.by_head(model, 0, which, 1)
    np.testing.assert_allclose(heatmap_z(fig_of(heads, f"by_head.{which}")), expected[1], rtol=1e-6)
    assert heads.figure(f"by_head.{which}").options == {"suffix": "layer1"}


def test_usage_against_the_wavelength_and_p_rope(llama):
    model, weights = llama
    means = {
        w: np.stack([usage_by_hand(weights, n, w) for n in range(LAYERS)]).mean(axis=(0, 1)) for w in ("query", "key")
    }
    out = usage_views.wavelength(model, 0)
    data = out.figure("wavelength").data
    np.testing.assert_allclose(data["wavelength"], 2 * np.pi / THETA, rtol=1e-12)
    for which, mean in means.items():
        np.testing.assert_allclose(data[f"mean_{which}_usage"], mean, rtol=1e-6)
    assert [shape["x0"] for shape in fig_of(out, "wavelength")["layout"]["shapes"]] == [CONTEXT]
    assert out.figure("wavelength").options == {"variant": None, "n": CONTEXT}

    prope = usage_views.prope(model, 0, "key", 0.75)
    kept = round(0.75 * PAIRS)  # the highest frequencies keep turning: theta falls with i
    dropped = np.arange(PAIRS) >= kept
    np.testing.assert_array_equal(prope.figure("prope").data["dropped"], dropped)
    share = (means["key"][dropped] ** 2).sum() / (means["key"] ** 2).sum()
    text = tr("en", "usage.prope.share", share=f"{share:.1%}", dropped=int(dropped.sum()), pairs=PAIRS)
    assert [a["text"] for a in fig_of(prope, "prope")["layout"]["annotations"]] == [text]
    assert title(fig_of(prope, "prope")) == tr("en", "usage.prope", p="0.75", which=tr("en", "usage.key"))


def rotated(x: np.ndarray, m: int) -> np.ndarray:
    """Llama's RoPE of a head at position m: x cos(m theta) + rotate_half(x) sin(m theta), theta repeated over the
    two halves, rotate_half(x) = (-x2, x1)."""
    angle = np.concatenate([m * THETA, m * THETA])
    half = np.concatenate([-x[PAIRS:], x[:PAIRS]])
    return x * np.cos(angle) + half * np.sin(angle)


def test_score_pattern_is_the_rotated_dot_product_of_the_mean_embedding(llama):
    model, weights = llama
    out = usage_views.pattern(model, 0, 1)
    x = weights["model.embed_tokens.weight"].mean(axis=0)
    q = heads_of(weights, 1, "query") @ x
    k = heads_of(weights, 1, "key") @ x
    distances = range(-64, 65)
    score = np.array([[rotated(q[h], max(d, 0)) @ rotated(k[h // (HEADS // KV_HEADS)], max(-d, 0)) for d in distances]
                      for h in range(HEADS)])  # fmt: skip
    frame = out.figure("pattern").data
    np.testing.assert_allclose(frame.to_numpy().T, score, rtol=1e-6, atol=1e-9)
    swing = score.max(axis=1) - score.min(axis=1)
    lines = fig_of(out, "pattern")["data"]
    assert [line["name"] for line in lines] == [tr("en", "usage.head", h=int(h)) for h in np.argsort(-swing)]
    assert out.figure("pattern").options == {"suffix": "layer1"}


def test_the_summary_says_what_was_measured(llama):
    model, _ = llama
    out = usage_views.summary(model, 0)
    layout = tr("en", "usage.layout.half")
    summary = tr("en", "usage.summary", layers=2, heads=2, kv_heads=1, head_dim=8, pairs=4, layout=layout)
    assert out.texts == [summary]
    assert [item.kind for item in out.items] == ["caption"]
    st.session_state["lang"] = "zh"
    assert usage_views.ranges([0, 1, 2, 5]) == "0–2、5"


def test_a_configs_wavelengths_plain_and_scaled():
    config = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 500.0,
              "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "linear", "factor": 4.0}}  # fmt: skip
    out = usage_views.config(json.dumps(config, sort_keys=True))
    fig = fig_of(out, "cfg")
    plain = 2 * np.pi * 500.0 ** (np.arange(8) * 2 / 16)
    np.testing.assert_allclose(as_array(trace(fig, tr("en", "rope.cfg.plain"))["y"]), plain, rtol=1e-12)
    np.testing.assert_allclose(as_array(trace(fig, tr("en", "rope.cfg.scaled"))["y"]), 4 * plain, rtol=1e-12)
    assert out.page == "rope" and out.figure("cfg").options == {}


# ------------------------------------------------------------------------------ refused settings, uncached


def with_nan(table: np.ndarray) -> np.ndarray:
    table = table.copy()
    table[3, 2] = np.nan
    return table


REFUSED = {
    "table": lambda: table_views.table(ref(with_nan(walk())), "w", 0, "a", None),
    "similarity": lambda: table_views.similarity(ref(with_nan(walk())), "a", None),
    "spectrum": lambda: table_views.spectrum(ref(with_nan(walk())), "a", None),
    "projection": lambda: table_views.projection(ref(walk()), "umap", None),  # no such method
    "probe": lambda: table_views.probe(ref(with_nan(walk())), "a", None),
    "beside": lambda: table_views.beside_sinusoidal(ref(with_nan(walk())), "a"),
    "compare": lambda: table_views.compare(ref(walk(), "a"), "a", ref(with_nan(walk()), "b"), "b"),
    "t5": lambda: table_views.t5(ref(np.zeros((2, 2, 2)))),  # a heatmap draws a matrix
    "findings": lambda: findings_views.findings(ref(walk(3, 4)), "a"),
    "config": lambda: usage_views.config("{not json"),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refused_settings_raise_and_are_not_cached(name):
    for _ in range(2):
        with pytest.raises(ValueError):
            REFUSED[name]()
    assert not view_keys()


@pytest.mark.parametrize(
    "call",
    [
        lambda model: usage_views.by_layer(model, 0, "value"),
        lambda model: usage_views.by_head(model, 0, "value", 0),
        lambda model: usage_views.by_head(model, 0, "query", 7),  # no such layer
        lambda model: usage_views.prope(model, 0, "query", 1.5),
        lambda model: usage_views.wavelength(model, 3),  # the model has one rotary group
    ],
    ids=["which", "head-which", "layer", "p", "group"],
)
def test_refused_usage_settings_raise_and_are_not_cached(llama, call):
    model, _ = llama
    for _ in range(2):
        with pytest.raises(ValueError):
            call(model)
    assert not view_keys()


CASES = {
    "t5": (table_views.t5, lambda: (ref(noise(8, 3)),)),
    "table": (table_views.table, lambda: (ref(walk(20, 4)), "wpe", 2, "a", "random")),
    "similarity": (table_views.similarity, lambda: (ref(walk(20, 4)), "a", None)),
    "spectrum": (table_views.spectrum, lambda: (ref(walk(20, 4)), "a", None)),
    "projection": (table_views.projection, lambda: (ref(walk(20, 4)), "pca", None)),
    "probe": (table_views.probe, lambda: (ref(walk(20, 4)), "a", "tiny")),
    "beside": (table_views.beside_sinusoidal, lambda: (ref(walk(20, 4)), "a")),
    "compare": (table_views.compare, lambda: (ref(walk(20, 4), "a"), "a", ref(noise(16, 4), "b"), "b")),
    "findings": (findings_views.findings, lambda: (ref(walk(20, 4)), "a")),
    "config": (usage_views.config, lambda: (json.dumps({"model_type": "llama", "head_dim": 8, "rope_theta": 1e4}),)),
}
USAGE_CASES = {
    "summary": (usage_views.summary, (0,)),
    "by_layer": (usage_views.by_layer, (0, "key")),
    "by_head": (usage_views.by_head, (0, "query", 1)),
    "wavelength": (usage_views.wavelength, (0,)),
    "prope": (usage_views.prope, (0, "query", 0.5)),
    "pattern": (usage_views.pattern, (0, 0)),
}


@pytest.mark.parametrize("name", CASES)
def test_a_view_equals_its_uncached_build(name):
    func, settings = CASES[name]
    assert_same_items(func(*settings()), func.uncached(*settings()))


@pytest.mark.parametrize("name", USAGE_CASES)
def test_a_usage_view_equals_its_uncached_build(llama, name):
    model, _ = llama
    func, settings = USAGE_CASES[name]
    assert_same_items(func(model, *settings), func.uncached(model, *settings))
