"""The Learned page's lesson in numbers: spectra along positions, linear position probes, the trained example,
what a real embedding lookup says past its end, and the truncation / interpolation workarounds."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posviz
from posviz import analysis
from posviz.encodings import learned
from posviz.lessons import sinusoidal as sinlesson

from ._oracles import bert_init_blocks

# ------------------------------------------------------------------------------------------------ spectrum


@settings(max_examples=40, deadline=None)
@given(n=st.integers(16, 512), data=st.data(), phase=st.floats(0.0, 2 * np.pi))
def test_spectrum_of_a_bin_frequency_sinusoid_peaks_at_it(n, data, phase):
    """sin(omega p + phase) with omega = 2 pi k / n completes k whole periods: its spectrum peaks at omega, to a
    fraction of the zero-padded grid (well inside half a bin, pi / n)."""
    k = data.draw(st.integers(1, n // 2 - 1))
    omega = 2 * np.pi * k / n
    column = np.sin(omega * np.arange(n) + phase)[:, None]
    got = analysis.position_spectrum(column).dominant[0]
    assert abs(got - omega) <= np.pi / (2 * n)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(64, 512), fraction=st.floats(0.02, 0.98), phase=st.floats(0.0, 2 * np.pi))
def test_spectrum_of_any_resolvable_sinusoid_peaks_within_half_a_bin(n, fraction, phase):
    """Off the grid too: for omega between 4 pi / n (two periods) and pi - 4 pi / n the peak lies within pi / n."""
    omega = 4 * np.pi / n + fraction * (np.pi - 8 * np.pi / n)
    column = np.cos(omega * np.arange(n) + phase)[:, None]
    assert abs(analysis.position_spectrum(column).dominant[0] - omega) <= np.pi / n


def test_sinusoidal_table_columns_peak_at_omega_k():
    """Column 2k and 2k + 1 of the sinusoidal table turn at omega_k = base^(-2k/d); every column with at least two
    periods in the table (omega_k >= 4 pi / n) must peak there."""
    n, d = 512, 64
    spectrum = analysis.position_spectrum(posviz.sin_init(n, d))
    omega = 10000.0 ** (-(np.arange(d) // 2 * 2) / d)
    np.testing.assert_allclose(learned.sinusoidal_column_frequencies(d), omega, rtol=1e-12)
    resolvable = omega >= 4 * np.pi / n
    assert resolvable.sum() >= 16
    assert np.all(np.abs(spectrum.dominant[resolvable] - omega[resolvable]) <= np.pi / n)
    assert spectrum.resolution == pytest.approx(2 * np.pi / n)


def test_mean_power_is_the_normalised_dft_averaged_over_columns():
    """Against an explicit DFT sum on the same zero-padded grid."""
    table = np.random.default_rng(1).normal(size=(20, 3))
    spectrum = analysis.position_spectrum(table)
    size = 2 * (spectrum.frequencies.size - 1)
    omega = 2 * np.pi * np.arange(size // 2 + 1) / size
    centred = table - table.mean(axis=0)
    dft = np.exp(-1j * omega[:, None] * np.arange(20)[None, :]) @ centred
    power = np.abs(dft) ** 2
    np.testing.assert_allclose(spectrum.frequencies, omega)
    np.testing.assert_allclose(spectrum.mean_power, (power / power.sum(axis=0)).mean(axis=1), rtol=1e-9, atol=1e-15)


def test_spectrum_analyses_at_most_max_dims_evenly_spaced_columns():
    spectrum = analysis.position_spectrum(np.random.default_rng(0).normal(size=(40, 1000)), max_dims=100)
    np.testing.assert_array_equal(spectrum.dims, analysis.evenly_spaced(1000, 100))
    assert spectrum.dominant.shape == (spectrum.dims.size,)


# ------------------------------------------------------------------------------------------------- probe


@pytest.mark.parametrize(("n", "d"), [(64, 64), (128, 32), (256, 128)])
def test_probe_reads_sin_init_but_not_random_init(n, d):
    """Random init: a held-out row is independent of the rows the probe was fitted on, so its prediction carries no
    information about the held-out position; the error cannot beat the best constant guess, floor(n^2/4)/n ~ n/4
    (allow 20% for the slightly shifted fold means). Sin init: the slowest pair turns by at most
    n * 10000^(-(d-2)/d) < 0.2 rad over the table, where sin x = x to 0.7%, so one coordinate is nearly linear
    in p and a linear probe reads p to well under one position."""
    guess = analysis.constant_guess_error(n)
    random = analysis.position_probe(posviz.learned_init(n, d, seed=0))
    sinusoidal = analysis.position_probe(posviz.sin_init(n, d))
    assert random >= 0.8 * guess
    assert sinusoidal < 1.0
    assert sinusoidal < random / 20


@pytest.mark.parametrize("n", [1, 2, 7, 64, 101])
def test_constant_guess_error_is_mean_distance_to_the_median(n):
    p = np.arange(n)
    assert analysis.constant_guess_error(n) == pytest.approx(np.mean(np.abs(p - np.median(p))))


def test_sampled_probe_equals_the_probe_when_small_and_keeps_position_units():
    table = posviz.sin_init(100, 16)
    assert analysis.sampled_position_probe(table, 1024) == analysis.position_probe(table)
    ramp = np.arange(5000, dtype=np.float64)[:, None] * np.array([[1.0, -2.0]])
    assert analysis.sampled_position_probe(ramp, 200) < 1e-3  # target is p itself, not the row's sample index


@pytest.mark.parametrize(("n", "d", "limit"), [(100, 16, 1024), (3000, 48, 1024), (5000, 7, 300)])
def test_sinusoidal_probe_is_the_sampled_probe_of_the_sinusoidal_table(n, d, limit):
    """Built from the sampled rows alone, the sinusoidal table's probe is the probe of those rows of sin_init."""
    expected = analysis.sampled_position_probe(posviz.sin_init(n, d), limit)
    assert sinlesson.sinusoidal_position_probe(n, d, limit) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_sampled_projection_and_similarity_use_evenly_spaced_positions():
    table = posviz.learned_init(3000, 8)
    positions, coords = analysis.sampled_projection(table, 500)
    np.testing.assert_array_equal(positions, analysis.evenly_spaced(3000, 500))
    np.testing.assert_allclose(coords, analysis.project(table[positions]))
    positions, sim = analysis.sampled_similarity(table, 300)
    np.testing.assert_allclose(sim, analysis.cosine_similarity_matrix(table[analysis.evenly_spaced(3000, 300)]))


def test_table_digest_follows_content_shape_and_dtype():
    table = posviz.learned_init(10, 4)
    assert analysis.table_digest(table) == analysis.table_digest(table.copy())
    assert analysis.table_digest(table) != analysis.table_digest(table.reshape(4, 10))
    assert analysis.table_digest(table) != analysis.table_digest(table.astype(np.float32))
    changed = table.copy()
    changed[3, 2] += 1e-12
    assert analysis.table_digest(table) != analysis.table_digest(changed)


# ------------------------------------------------------------------------------------------- trained example


def mean_cosine_at(table: np.ndarray, offset: int) -> float:
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    return float(np.mean(np.sum(unit[: len(unit) - offset] * unit[offset:], axis=1)))


def test_example_table_loads_as_a_plain_array():
    table = learned.example_table()
    assert table.shape == (64, 64) and table.dtype == np.float64 and np.isfinite(table).all()
    raw = np.load(learned.EXAMPLE_TABLE, allow_pickle=False)
    assert raw.dtype == np.float32
    np.testing.assert_array_equal(table, raw.astype(np.float64))
    provenance = learned.example_provenance()
    assert provenance == json.loads(learned.EXAMPLE_TABLE.with_suffix(".json").read_text(encoding="utf-8"))
    assert provenance["shape"] == [64, 64] and provenance["steps"] > 0
    assert provenance["final_loss"] < provenance["first_loss"] / 2


def test_training_made_neighbouring_positions_alike():
    """The learning signal: in the trained table adjacent positions point the same way (mean cosine at offset 1)
    much more than distant ones (offsets >= 16). A random init of the same shape has no such gap: independent
    Gaussian rows in 64 dimensions have cosines of order 1/sqrt(64) = 0.125 at every offset."""
    trained = learned.example_table()
    far = np.mean([mean_cosine_at(trained, k) for k in range(16, 48)])
    assert mean_cosine_at(trained, 1) > 0.5
    assert mean_cosine_at(trained, 1) - far > 0.4
    random = posviz.learned_init(64, 64, seed=0)
    random_far = np.mean([mean_cosine_at(random, k) for k in range(16, 48)])
    assert abs(mean_cosine_at(random, 1) - random_far) < 0.1
    np.testing.assert_allclose(posviz.offset_profile(trained).mean_cosine[1], mean_cosine_at(trained, 1), atol=1e-6)


def test_trained_example_is_linearly_decodable_unlike_its_initialisation():
    trained = analysis.position_probe(learned.example_table())
    assert trained < analysis.position_probe(posviz.learned_init(64, 64)) / 2
    assert trained < analysis.constant_guess_error(64) / 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_probe_puts_the_trained_example_between_the_sinusoidal_table_and_noise(seed):
    """The three tables of the probe tab, 64 x 64: the random initialisation reads like always guessing the middle
    (mean |p - 31.5| = 16, within 6%), not worse; the sinusoidal start to a few hundredths of a position; the trained
    table in between, clearly away from both."""
    guess = np.mean(np.abs(np.arange(64) - 31.5))
    assert analysis.position_probe(posviz.learned_init(64, 64, seed=seed)) == pytest.approx(guess, rel=0.06)
    sinusoidal = analysis.position_probe(posviz.sin_init(64, 64))
    trained = analysis.position_probe(learned.example_table())
    assert sinusoidal < 0.05 and 20 * sinusoidal < trained < guess / 2


def test_the_gpt2_initialisations_the_texts_quote():
    """Hugging Face's GPT-2 draws its position table from N(0, initializer_range^2) = N(0, 0.02^2), like BERT;
    OpenAI's original code (openai/gpt-2 src/model.py) drew ``wpe`` with stddev 0.01 and ``wte`` with 0.02. The
    teaching texts quote both in both languages, next to BERT's 0.02."""
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    config = GPT2Config(n_positions=4096, n_embd=64, n_layer=1, n_head=2, vocab_size=4096)
    model = GPT2Model(config)
    assert config.initializer_range == 0.02
    assert float(model.wpe.weight.std()) == pytest.approx(0.02, rel=0.02)
    assert float(model.wte.weight.std()) == pytest.approx(0.02, rel=0.02)
    root = learned.EXAMPLE_TABLE.parents[1] / "texts"
    for lang in ("en", "zh"):
        text = (root / f"learned.{lang}.md").read_text(encoding="utf-8")
        assert "0.01" in text and "`initializer_range` = 0.02" in text and "0.02^2" in text, lang


def test_the_texts_say_unreached_rows_keep_their_initial_values():
    """A row of a learned table gets a gradient only from tokens at its position: train a table on sequences shorter
    than it and the rows past them stay exactly at their initial values. The teaching text must say so (it said
    the table had as many rows as positions seen in training)."""
    torch.manual_seed(0)
    table = torch.nn.Embedding(16, 4)
    before = table.weight.detach().clone()
    optimizer = torch.optim.SGD(table.parameters(), lr=0.1)
    for _ in range(5):
        optimizer.zero_grad()
        table(torch.arange(10)).pow(2).sum().backward()
        optimizer.step()
    after = table.weight.detach()
    assert not torch.equal(after[:10], before[:10]) and torch.equal(after[10:], before[10:])
    root = learned.EXAMPLE_TABLE.parents[1] / "texts"
    english = (root / "learned.en.md").read_text(encoding="utf-8")
    assert "as many rows as positions seen in training" not in english
    assert "keep their\ninitial values" in english or "keep their initial values" in english
    assert "一直保持初始值" in (root / "learned.zh.md").read_text(encoding="utf-8")


# ----------------------------------------------------------------------------------------- past the table


@pytest.mark.parametrize(("n", "position"), [(64, 64), (64, 1000), (1, 1), (512, 512)])
def test_torch_lookup_error_is_torchs_own_text(n, position):
    with pytest.raises(IndexError) as real:
        torch.nn.Embedding(n, 3)(torch.tensor([position]))
    assert learned.torch_lookup_error(n, position) == str(real.value)
    assert "index out of range" in learned.torch_lookup_error(n, position)


def test_lookup_errors_need_a_position_past_the_end():
    with pytest.raises(ValueError, match="inside a table of 64 rows"):
        learned.torch_lookup_error(64, 63)
    with pytest.raises(ValueError, match="position must be a whole number"):
        learned.torch_lookup_error(64, -1)
    with pytest.raises(ValueError, match="inside a table of 64 rows"):
        learned.lookup_error(64, 10)
    message = learned.lookup_error(64, 64)
    assert "position 64" in message and "0..63" in message and "max_position_embeddings = 64" in message


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 40), d=st.integers(1, 6), factor=st.integers(1, 5), seed=st.integers(0, 10))
def test_interpolation_keeps_rows_and_is_linear_between_them(n, d, factor, seed):
    """With N = (n - 1) * factor + 1 new row i sits at old position i / factor: every factor-th row is an old row
    exactly (the endpoints among them), and the rows between lie on the straight segment joining two old rows."""
    table = np.random.default_rng(seed).normal(size=(n, d))
    longer = (n - 1) * factor + 1
    out = learned.interpolate_table(table, longer)
    assert out.shape == (longer, d)
    np.testing.assert_allclose(out[0], table[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[-1], table[-1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[::factor], table, rtol=0, atol=1e-12)
    i = np.arange(longer)
    lower, frac = np.minimum(i // factor, n - 2), (i - np.minimum(i // factor, n - 2) * factor) / factor
    expected = table[lower] + frac[:, None] * (table[lower + 1] - table[lower])
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 30), longer=st.integers(2, 200), seed=st.integers(0, 10))
def test_interpolation_matches_torch_interpolate(n, longer, seed):
    """Oracle: torch.nn.functional.interpolate(mode="linear", align_corners=True), as used to resize ViT tables."""
    table = np.random.default_rng(seed).normal(size=(n, 4))
    oracle = torch.nn.functional.interpolate(
        torch.tensor(table.T[None]), size=longer, mode="linear", align_corners=True
    )[0].T.numpy()
    np.testing.assert_allclose(learned.interpolate_table(table, longer), oracle, rtol=0, atol=1e-12)


def test_truncation_reuses_the_last_row():
    table = posviz.learned_init(10, 5)
    out = learned.truncate_table(table, 25)
    np.testing.assert_array_equal(out[:10], table)
    np.testing.assert_array_equal(out[10:], np.broadcast_to(table[-1], (15, 5)))


@pytest.mark.parametrize("method", learned.EXTENSIONS)
def test_extended_similarity_is_the_similarity_of_the_extended_table(method):
    table = posviz.learned_init(50, 6, seed=2)
    full = (learned.truncate_table if method == "clip" else learned.interpolate_table)(table, 700)
    positions, sim = learned.extended_similarity(table, 700, method, 128)
    np.testing.assert_array_equal(positions, analysis.evenly_spaced(700, 128))
    np.testing.assert_allclose(sim, analysis.cosine_similarity_matrix(full[positions]), atol=1e-12)
    if method == "clip":
        past = positions >= 49
        np.testing.assert_allclose(sim[np.ix_(past, past)], 1.0, atol=1e-12)


def test_bad_extension_inputs_raise_readable_errors():
    with pytest.raises(ValueError, match="method must be one of"):
        learned.rows_at(np.ones((3, 2)), [0.5], "cubic")
    with pytest.raises(ValueError, match="n_positions must be at least 1"):
        learned.interpolate_table(np.ones((3, 2)), 0)


@pytest.mark.slow
def test_a_large_sample_is_projected_exactly():
    """1,024 rows of 1,100 dimensions (past 2^20 entries, the Gram-matrix route of :func:`posviz.project`): the
    sampled projection equals the top two principal components of numpy's full SVD, signs included."""
    rng = np.random.default_rng(3)
    p = np.linspace(0.0, 1.0, 3000)[:, None]
    table = 5 * p * rng.normal(size=1100) + np.sin(6 * p) * rng.normal(size=1100) + 0.1 * rng.normal(size=(3000, 1100))
    positions, coords = analysis.sampled_projection(table, 1024)
    np.testing.assert_array_equal(positions, analysis.evenly_spaced(3000, 1024))
    centred = table[positions] - table[positions].mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    signs = np.sign(vt[np.arange(2), np.argmax(np.abs(vt[:2]), axis=1)])
    np.testing.assert_allclose(coords, u[:, :2] * s[:2] * signs, rtol=0, atol=1e-9 * np.abs(coords).max())


def test_training_chose_slow_waves():
    """The spectrum page's claim: white noise spreads a column's power evenly over 0 .. pi, so about a quarter of it
    lies below pi / 4; the trained example keeps most of its power there and its median column peaks well below
    pi / 4, where a random table's median column peaks near pi / 2."""
    trained = analysis.position_spectrum(learned.example_table())
    random = analysis.position_spectrum(posviz.learned_init(64, 64))
    low = trained.frequencies < np.pi / 4
    assert trained.mean_power[low].sum() > 0.6 > 0.4 > random.mean_power[low].sum()
    assert np.median(trained.dominant) < np.pi / 8 < np.pi / 4 < np.median(random.dominant)


@pytest.mark.parametrize(("n", "d", "max_dims"), [(64, 64, 512), (100, 37, 512), (50, 1000, 100)])
def test_sinusoidal_reference_spectrum_equals_the_spectrum_of_the_table(n, d, max_dims):
    fast = sinlesson.sinusoidal_spectrum(n, d, max_dims=max_dims)
    full = analysis.position_spectrum(posviz.sin_init(n, d), max_dims=max_dims)
    np.testing.assert_array_equal(fast.dims, full.dims)
    np.testing.assert_allclose(fast.mean_power, full.mean_power, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(fast.dominant, full.dominant)


@pytest.mark.parametrize("scale", [1.0, 0.5, 3.0])
def test_sin_init_is_the_scaled_sinusoidal_table_bit_for_bit(scale):
    np.testing.assert_array_equal(posviz.sin_init(50, 9, scale=scale), scale * posviz.sinusoidal(50, 9))


def test_random_init_is_torchs_normal_init_of_float32_blocks(monkeypatch):
    """Block b of INIT_BLOCK_ROWS rows is what ``torch.nn.init.normal_`` puts in a float32 parameter with a generator
    seeded (key + b) mod 2^32, key the first word of SeedSequence(seed): rebuilt here block by block, and equal
    whether one thread or several drew it."""
    from posviz import _parallel

    n, d, seed, std = 5 * learned.INIT_BLOCK_ROWS + 3, 6, 11, 0.05
    table = posviz.learned_init(n, d, std=std, seed=seed)
    expected = bert_init_blocks(n, d, std=std, seed=seed, block_rows=learned.INIT_BLOCK_ROWS)
    np.testing.assert_array_equal(table, expected)
    monkeypatch.setattr(_parallel.os, "cpu_count", lambda: 1)
    np.testing.assert_array_equal(posviz.learned_init(n, d, std=std, seed=seed), table)
    assert not np.array_equal(posviz.learned_init(n, d, std=std, seed=seed + 1), table)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 700),
    d=st.integers(1, 40),
    seed=st.integers(0, 2**40),
    std=st.floats(0.001, 1.0),
    data=st.data(),
)
def test_a_random_table_draws_any_rows_columns_and_grid_of_the_whole_table(n, d, seed, std, data):
    """``RandomTable`` is ``learned_init`` without holding it: any rows (repeated, unordered), any columns and the
    grid of evenly spaced rows and columns equal those of the full table; a longer table starts with the same
    rows."""
    drawn = learned.RandomTable(n, d, std=std, seed=seed)
    table = posviz.learned_init(n, d, std=std, seed=seed)
    np.testing.assert_array_equal(np.asarray(drawn), table)
    positions = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=60))
    np.testing.assert_array_equal(drawn.rows(positions), table[positions])
    dims = data.draw(st.lists(st.integers(0, d - 1), min_size=1, max_size=10))
    np.testing.assert_array_equal(drawn.columns(dims), table[:, dims])
    side = data.draw(st.integers(1, 50))
    positions, dims, values = drawn.grid(side)
    np.testing.assert_array_equal(positions, analysis.evenly_spaced(n, side))
    np.testing.assert_array_equal(dims, analysis.evenly_spaced(d, side))
    np.testing.assert_array_equal(values, table[np.ix_(positions, dims)])
    longer = learned.RandomTable(n + data.draw(st.integers(1, 30)), d, std=std, seed=seed)
    np.testing.assert_array_equal(longer.rows(np.arange(n)), table)


def test_a_random_table_never_builds_itself_for_sampled_analyses(monkeypatch):
    """Similarity, projection, spectrum and the extended tables of a RandomTable read only the rows or columns
    they use, and equal the same analyses of the full table."""
    drawn = learned.RandomTable(600, 24, std=0.3, seed=5)
    table = np.asarray(drawn)

    def refuse(*args, **kwargs):
        raise AssertionError("the whole table was built")

    monkeypatch.setattr(learned.RandomTable, "__array__", refuse)
    for got, expected in (
        (analysis.sampled_similarity(drawn, 100), analysis.sampled_similarity(table, 100)),
        (analysis.sampled_projection(drawn, 100), analysis.sampled_projection(table, 100)),
        (
            learned.extended_similarity(drawn, 1800, "interpolate", 90),
            learned.extended_similarity(table, 1800, "interpolate", 90),
        ),
        (learned.extended_similarity(drawn, 1200, "clip", 90), learned.extended_similarity(table, 1200, "clip", 90)),
    ):
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(a, b)
    spectrum, reference = analysis.position_spectrum(drawn, max_dims=10), analysis.position_spectrum(table, max_dims=10)
    np.testing.assert_array_equal(spectrum.dims, reference.dims)
    np.testing.assert_allclose(spectrum.mean_power, reference.mean_power, rtol=1e-12)
    assert analysis.sampled_position_probe(drawn, 100) == analysis.sampled_position_probe(table, 100)


def test_a_random_table_refuses_bad_parameters_and_rows():
    for kwargs in ({"std": 0.0}, {"std": float("nan")}, {"seed": -1}, {"seed": 1.5}, {"seed": True}):
        with pytest.raises(ValueError):
            learned.RandomTable(10, 4, **kwargs)
    with pytest.raises(ValueError, match="n_positions"):
        learned.RandomTable(posviz.MAX_POSITIONS + 1, 4)
    drawn = learned.RandomTable(10, 4)
    for bad in ([10], [-1], [0, 11]):
        with pytest.raises(IndexError, match="0 .. 9"):
            drawn.rows(bad)
    assert drawn == learned.RandomTable(10, 4, std=0.02, seed=0) and hash(drawn) == hash(learned.RandomTable(10, 4))
