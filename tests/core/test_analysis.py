"""posviz.analysis: cosine similarity, offset profiles, 2-D projections and the linear position probe.

Oracles: scikit-learn (cosine_similarity, PCA), explicit loops over pairs, and closed forms derived from the
sinusoidal formula.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.decomposition import PCA
from sklearn.metrics.pairwise import cosine_similarity

import posviz

FAST = settings(max_examples=50, deadline=None)


def random_table(n, d, seed=0, scale=1.0):
    return np.random.default_rng(seed).normal(scale=scale, size=(n, d))


# ------------------------------------------------------------------------------------------------ cosine


@pytest.mark.parametrize("n,d", [(1, 1), (2, 3), (40, 8), (128, 64), (10, 300)])
def test_cosine_matches_sklearn(n, d):
    table = random_table(n, d, seed=n * d)
    got = posviz.cosine_similarity_matrix(table)
    assert got.shape == (n, n)
    np.testing.assert_allclose(got, cosine_similarity(table), rtol=0, atol=1e-12)


def test_cosine_zero_row_like_sklearn():
    table = random_table(6, 4)
    table[2] = 0.0
    got = posviz.cosine_similarity_matrix(table)
    np.testing.assert_allclose(got, cosine_similarity(table), atol=1e-12)
    assert np.all(got[2] == 0) and np.all(got[:, 2] == 0)


def test_cosine_sinusoidal_table_matches_sklearn():
    table = posviz.sinusoidal(200, 32)
    np.testing.assert_allclose(posviz.cosine_similarity_matrix(table), cosine_similarity(table), atol=1e-12)


@FAST
@given(n=st.integers(1, 30), d=st.integers(1, 30), seed=st.integers(0, 2**32 - 1), log_scale=st.floats(-3, 3))
def test_cosine_properties(n, d, seed, log_scale):
    table = random_table(n, d, seed=seed)
    s = posviz.cosine_similarity_matrix(table)
    np.testing.assert_allclose(s, s.T, atol=1e-15)
    np.testing.assert_allclose(np.diag(s), 1.0, atol=1e-12)
    assert np.all(np.abs(s) <= 1.0)
    # invariant to positive rescaling of each row
    scales = 10.0 ** (log_scale + np.random.default_rng(seed).uniform(-1, 1, size=(n, 1)))
    np.testing.assert_allclose(posviz.cosine_similarity_matrix(table * scales), s, atol=1e-12)


# ------------------------------------------------------------------------------------------------ offset profile


def profile_loop(table):
    n = table.shape[0]
    cos_mean, dot_mean = np.zeros(n), np.zeros(n)
    for k in range(n):
        cos_vals, dot_vals = [], []
        for i in range(n - k):
            a, b = table[i], table[i + k]
            dot = float(np.dot(a, b))
            na, nb = np.linalg.norm(a), np.linalg.norm(b)
            cos_vals.append(dot / (na * nb) if na > 0 and nb > 0 else 0.0)
            dot_vals.append(dot)
        cos_mean[k], dot_mean[k] = np.mean(cos_vals), np.mean(dot_vals)
    return cos_mean, dot_mean


@pytest.mark.parametrize(
    "maker",
    [
        lambda: random_table(1, 5),
        lambda: random_table(2, 1),
        lambda: random_table(37, 6, seed=3),
        lambda: random_table(64, 300, seed=4, scale=0.02),
        lambda: posviz.sinusoidal(50, 16),
        lambda: posviz.sinusoidal(33, 7, layout="halves"),
        lambda: random_table(20, 3, seed=5) + 100.0,  # large common offset: dot products ~ 3e4
    ],
)
def test_offset_profile_matches_loop(maker):
    table = maker()
    n = table.shape[0]
    prof = posviz.offset_profile(table)
    cos_mean, dot_mean = profile_loop(table)
    np.testing.assert_array_equal(prof.offsets, np.arange(n))
    np.testing.assert_array_equal(prof.pairs, n - np.arange(n))
    np.testing.assert_allclose(prof.mean_cosine, cos_mean, rtol=0, atol=1e-9)
    scale = max(1.0, float(np.max(np.abs(dot_mean))))
    np.testing.assert_allclose(prof.mean_dot, dot_mean, rtol=0, atol=1e-9 * scale)
    assert prof.mean_cosine[0] == pytest.approx(1.0, abs=1e-9)


def test_offset_profile_zero_row():
    table = random_table(10, 4)
    table[3] = 0.0
    cos_mean, dot_mean = profile_loop(table)
    prof = posviz.offset_profile(table)
    np.testing.assert_allclose(prof.mean_cosine, cos_mean, atol=1e-9)
    np.testing.assert_allclose(prof.mean_dot, dot_mean, atol=1e-9)


@pytest.mark.parametrize("n,half_d,base", [(64, 8, 10000.0), (200, 32, 10000.0), (128, 16, 100.0)])
def test_sinusoidal_similarity_depends_only_on_offset(n, half_d, base):
    d = 2 * half_d
    table = posviz.sinusoidal(n, d, base=base)
    sim = posviz.cosine_similarity_matrix(table)
    prof = posviz.offset_profile(table)
    omega = base ** (-2 * np.arange(half_d) / d)
    for k in range(n):
        diagonal = np.diagonal(sim, offset=k)
        # PE(i) . PE(i+k) = sum_w sin(iw)sin((i+k)w) + cos(iw)cos((i+k)w) = sum_w cos(kw); norms^2 = d/2
        closed_form = np.sum(np.cos(k * omega)) / half_d
        np.testing.assert_allclose(diagonal, closed_form, atol=1e-10)
        np.testing.assert_allclose(np.diagonal(sim, offset=-k), closed_form, atol=1e-10)
        assert prof.mean_cosine[k] == pytest.approx(closed_form, abs=1e-9)
        assert prof.mean_dot[k] == pytest.approx(np.sum(np.cos(k * omega)), abs=1e-9 * d)


# ------------------------------------------------------------------------------------------------ projection


def _check_pca_against_sklearn(table):
    got = posviz.project(table, method="pca")
    ref = PCA(n_components=2, svd_solver="full").fit(table)
    want = ref.transform(table)
    assert got.shape == (table.shape[0], 2)
    scale = max(1.0, float(np.max(np.abs(want))))
    for c in range(2):
        sign = 1.0 if np.dot(got[:, c], want[:, c]) >= 0 else -1.0
        np.testing.assert_allclose(got[:, c], sign * want[:, c], rtol=0, atol=1e-8 * scale)
    return got, ref


@pytest.mark.parametrize(
    "maker",
    [
        lambda: random_table(30, 5, seed=1) * np.array([5.0, 3.0, 1.0, 0.5, 0.1]),  # well separated variances
        lambda: posviz.sinusoidal(100, 16),
        lambda: random_table(50, 200, seed=2) * np.linspace(3, 0.1, 200),
    ],
)
def test_pca_matches_sklearn_up_to_sign(maker):
    table = maker()
    got, ref = _check_pca_against_sklearn(table)
    # documented sign convention: each axis signed so that its largest-magnitude loading is positive
    centred = table - table.mean(axis=0)
    for c in range(2):
        v = ref.components_[c]
        v = v * np.sign(v[np.argmax(np.abs(v))])
        np.testing.assert_allclose(got[:, c], centred @ v, atol=1e-8 * max(1.0, float(np.max(np.abs(got)))))


def test_pca_first_axis_variance_is_largest_and_coordinates_centred():
    table = random_table(80, 6, seed=9) * np.array([4.0, 2.0, 1.0, 1.0, 0.5, 0.1])
    got = posviz.project(table)
    np.testing.assert_allclose(got.mean(axis=0), 0.0, atol=1e-10)
    assert got[:, 0].var() >= got[:, 1].var()
    # PCA of the full table keeps the squared distances' top-2 share: sum of coords^2 = top two eigenvalues
    eig = np.sort(np.linalg.eigvalsh(np.cov((table - table.mean(0)).T, bias=True)))[::-1]
    np.testing.assert_allclose(np.sum(got**2, axis=0) / len(table), eig[:2], rtol=1e-9)


def test_pca_of_one_dimensional_table():
    table = np.arange(10, dtype=float)[:, None] * 2.0 - 3.0
    got = posviz.project(table)
    np.testing.assert_allclose(got[:, 0], table[:, 0] - table[:, 0].mean(), atol=1e-12)
    np.testing.assert_array_equal(got[:, 1], 0.0)


def test_default_method_is_pca():
    table = random_table(20, 4, seed=3)
    np.testing.assert_array_equal(posviz.project(table), posviz.project(table, method="pca"))


def test_tsne_shape_finite_and_reproducible():
    # 40 positions: sklearn's Barnes-Hut t-SNE converges in well under a second here (some sizes take 10 s+)
    n = 40
    table = posviz.sinusoidal(n, 16)
    a = posviz.project(table, method="tsne", seed=1)
    b = posviz.project(table, method="tsne", seed=1)
    assert a.shape == (n, 2)
    assert np.all(np.isfinite(a))
    np.testing.assert_array_equal(a, b)
    # t-SNE keeps neighbours: for a sinusoidal table, each position's nearest 2-D neighbour is within a few steps
    dist = np.linalg.norm(a[:, None, :] - a[None, :, :], axis=-1)
    np.fill_diagonal(dist, np.inf)
    nearest = np.argmin(dist, axis=1)
    assert np.median(np.abs(nearest - np.arange(n))) <= 2


def _tsne_quality(table, coords, k=10):
    """Trustworthiness (Venna & Kaski, 2001) of the layout, and the largest gap in positions between a position
    and its nearest neighbour in the layout."""
    from sklearn.manifold import trustworthiness

    dist = np.linalg.norm(coords[:, None, :] - coords[None, :, :], axis=-1)
    np.fill_diagonal(dist, np.inf)
    gap = np.abs(np.argmin(dist, axis=1) - np.arange(len(coords)))
    return trustworthiness(table, coords, n_neighbors=k), int(gap.max())


@pytest.mark.parametrize(
    "table",
    [
        posviz.sinusoidal(200, 96),
        # a random walk in 128 dimensions plus noise: neighbours in position are neighbours in space, less cleanly
        np.cumsum(random_table(200, 128, seed=5), axis=0) * 0.2 + random_table(200, 128, seed=6),
    ],
    ids=["sinusoidal", "random-walk"],
)
def test_tsne_keeps_neighbours_as_well_as_scikit_learn(table):
    """The 50-component reduction and the shorter schedule must not cost layout quality: trustworthiness is
    measured against the full table, and scikit-learn's exact-input t-SNE (1,000 iterations) is the yardstick."""
    from sklearn.manifold import TSNE
    from threadpoolctl import threadpool_limits

    n = table.shape[0]
    with threadpool_limits(1):  # OpenMP threads spinning on a busy machine slow scikit-learn's t-SNE tenfold
        reference = TSNE(perplexity=min(30.0, (n - 1) / 3), init="pca", random_state=0).fit_transform(table)
    ours = posviz.project(table, method="tsne", seed=0)
    trust, gap = _tsne_quality(table, ours)
    trust_ref, gap_ref = _tsne_quality(table, reference)
    assert ours.dtype == np.float64 and ours.shape == (n, 2)
    assert trust >= trust_ref - 0.005
    assert gap <= gap_ref + 1  # each position's nearest neighbour in the layout is as near in position


def test_tsne_layout_is_the_same_on_any_number_of_threads(monkeypatch):
    table = posviz.sinusoidal(150, 48)
    one = posviz.project(table, method="tsne")
    for cores in (2, 5):
        monkeypatch.setattr(posviz.analysis.os, "cpu_count", lambda cores=cores: cores)
        np.testing.assert_array_equal(posviz.project(table, method="tsne"), one)


def test_tsne_seed_decides_the_layout():
    table = posviz.sinusoidal(120, 32)
    a = posviz.project(table, method="tsne", seed=3)
    np.testing.assert_array_equal(a, posviz.project(table, method="tsne", seed=3))
    assert not np.allclose(a, posviz.project(table, method="tsne", seed=4))


@pytest.mark.slow
@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_pca_scales_with_the_table_at_the_ends_of_float64(scale):
    """PCA is linear: project(c * X) = c * project(X), also where X^T X of the raw table would under- or overflow
    (a 2,048 x 768 table takes the Gram-matrix route)."""
    table = random_table(2048, 768, seed=9)
    np.testing.assert_allclose(posviz.project(table * scale) / scale, posviz.project(table), atol=1e-9)


@pytest.mark.parametrize("scale", [1e-150, 1e-30, 1e30, 1e150])
def test_tsne_ignores_a_common_scale(scale):
    """Perplexity calibrates each point's Gaussian to its own distances, so t-SNE of c * X is t-SNE of X; huge
    values (a damaged upload) once overflowed into a layout of NaN."""
    table = random_table(24, 6, seed=8)
    np.testing.assert_allclose(posviz.project(table * scale, "tsne"), posviz.project(table, "tsne"), atol=1e-8)


def test_tsne_of_one_column_table():
    """Fewer than two dimensions still gives two coordinates, ordered like the one feature they come from."""
    table = np.arange(30, dtype=float)[:, None] ** 1.5
    coords = posviz.project(table, method="tsne")
    assert coords.shape == (30, 2) and np.all(np.isfinite(coords))
    assert _tsne_quality(table, coords, k=3)[1] <= 2


# ------------------------------------------------------------------------------------------------ probe


@pytest.mark.parametrize("n,d", [(100, 1), (200, 8), (400, 32)])
def test_probe_near_zero_when_position_is_a_linear_feature(n, d):
    rng = np.random.default_rng(n + d)
    table = rng.normal(size=(n, d))
    table[:, 0] = np.arange(n)
    # exact fit exists (weight 1 on column 0), so only the small ridge penalty can leave an error; with
    # alpha << sum (p - mean)^2 ~ n^3 / 12 that error is a tiny fraction of a position
    assert posviz.position_probe(table) < 0.01


def test_probe_near_zero_when_position_is_spread_over_rotated_features():
    n, d = 300, 10
    rng = np.random.default_rng(0)
    raw = rng.normal(size=(n, d))
    raw[:, 0] = np.arange(n) / 10.0
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))  # a random rotation mixes position into every column
    assert posviz.position_probe(raw @ q) < 0.01


@pytest.mark.parametrize(
    "n,d,seed", [(400, 4, 0), (600, 6, 2), (128, 128, 0), (256, 32, 1), (1024, 768, 0), (2048, 96, 3)]
)
def test_probe_on_noise_is_the_blind_guess_error(n, d, seed):
    """A row of pure noise carries no information on its position, so out of sample the regression can do no
    better than a constant. The best constant for positions 0..n-1 is the median, whose mean absolute error is
    floor(n^2/4)/n ~ n/4; a probe that overfits the noise scores above it (a fixed ridge penalty of 1e-3 gave 993 on
    1024 x 768 against 256), one that picks its penalty honestly falls back to about the constant. The 6% leaves
    room for folds whose training mean differs from the held-out mean and for an inner choice a little off."""
    guess = np.mean(np.abs(np.arange(n) - np.median(np.arange(n))))
    assert posviz.position_probe(random_table(n, d, seed=seed)) == pytest.approx(guess, rel=0.06)


@pytest.mark.parametrize("n,d", [(60, 120), (64, 256), (100, 400), (300, 1000)])
def test_probe_is_cross_validated_on_wide_noise(n, d):
    """With more noise dimensions than positions a regression can fit the training rows exactly, so an in-sample
    score would be ~0; held-out rows are still unpredictable, so the cross-validated probe lands on ~n/4 (within
    6%), neither below (fitted rows scored) nor far above (noise fitted)."""
    guess = np.mean(np.abs(np.arange(n) - np.median(np.arange(n))))
    assert posviz.position_probe(random_table(n, d, seed=7)) == pytest.approx(guess, rel=0.06)


@pytest.mark.parametrize("n,d", [(64, 64), (128, 128), (512, 64), (1024, 768)])
def test_probe_reads_the_sinusoidal_table_almost_exactly(n, d):
    """The slowest pair of a sinusoidal table turns by n * 10000^(-(d-2)/d) < 0.4 rad over these tables, so one
    coordinate is sin of a nearly linear function of p and a penalty chosen small enough reads p to a few hundredths
    of a position."""
    assert posviz.position_probe(posviz.sinusoidal(n, d)) < 0.05


def reference_probe(table, target, folds=5, seed=0):
    """The probe derived independently: for each outer fold, each penalty alpha = c * ||X_c||_F^2 / min(m, d) of the
    grid (c = 10^-8 .. 10^4 in half decades, and infinity: the training mean) is scored by refitting a ridge with a
    free intercept m times, once without each training row (explicit leave-one-out), on the normal equations; the
    alpha of lowest mean squared leave-one-out error is refitted on the whole training part and predicts the fold."""
    from sklearn.model_selection import KFold

    grid = [10.0**k for k in np.arange(-8.0, 4.25, 0.5)] + [math.inf]

    def fit_predict(x, y, alpha, new):
        mean_x, mean_y = x.mean(axis=0), y.mean()
        if math.isinf(alpha):
            return np.full(len(new), mean_y)
        xc = x - mean_x
        if xc.shape[0] <= xc.shape[1]:  # w = X_c^T (X_c X_c^T + alpha I)^-1 y_c
            w = xc.T @ np.linalg.solve(xc @ xc.T + alpha * np.eye(len(xc)), y - mean_y)
        else:  # w = (X_c^T X_c + alpha I)^-1 X_c^T y_c
            w = np.linalg.solve(xc.T @ xc + alpha * np.eye(xc.shape[1]), xc.T @ (y - mean_y))
        return mean_y + (new - mean_x) @ w

    table = np.asarray(table, dtype=np.float64)
    predicted = np.empty(len(target))
    for train, test in KFold(folds, shuffle=True, random_state=seed).split(table):
        x, y = table[train], target[train]
        xc = x - x.mean(axis=0)
        unit = np.sum(xc * xc) / min(xc.shape)
        errors = []
        for c in grid:
            loo = [
                fit_predict(np.delete(x, i, 0), np.delete(y, i), c * unit, x[i : i + 1])[0] - y[i]
                for i in range(len(y))
            ]
            errors.append(np.mean(np.square(loo)))
        predicted[test] = fit_predict(x, y, grid[int(np.argmin(errors))] * unit, table[test])
    return float(np.mean(np.abs(predicted - target)))


def signal_and_noise(n, d, strength, seed):
    """Noise with the position mixed weakly into every column: the best penalty is neither tiny nor infinite."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) + strength * np.outer(np.arange(n) / n, rng.normal(size=d))


@pytest.mark.parametrize(
    "make",
    [
        lambda: random_table(48, 24, seed=1),
        lambda: random_table(30, 80, seed=2),
        lambda: posviz.sinusoidal(40, 16),
        lambda: signal_and_noise(50, 20, 1.0, 3),
        lambda: signal_and_noise(40, 60, 2.0, 4),
        lambda: 1e4 + 3e-3 * signal_and_noise(45, 10, 3.0, 5),
    ],
    ids=["noise", "wide-noise", "sinusoidal", "weak-signal", "wide-weak-signal", "offset-and-tiny"],
)
def test_probe_equals_an_explicit_nested_cross_validation(make):
    table = make()
    n = len(table)
    expected = reference_probe(table, np.arange(n, dtype=np.float64))
    assert posviz.position_probe(table) == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_sampled_probe_equals_an_explicit_nested_cross_validation_on_the_sampled_rows():
    from posviz import analysis

    table = signal_and_noise(500, 12, 1.5, 6)
    positions = analysis.evenly_spaced(500, 60)
    expected = reference_probe(table[positions], positions.astype(np.float64))
    assert analysis.sampled_position_probe(table, 60) == pytest.approx(expected, rel=1e-6)


@FAST
@given(
    n=st.integers(12, 60),
    d=st.integers(1, 40),
    seed=st.integers(0, 2**16),
    scale=st.floats(1e-3, 1e3),
    shift=st.floats(-100, 100),
)
@example(n=16, d=38, seed=2810, scale=1.0, shift=3.0)  # more dimensions than rows: a rounding of 2e-6
def test_probe_ignores_the_scale_and_offset_of_the_table(n, d, seed, scale, shift):
    """The penalties scale with the rows and the intercept is free, so multiplying the table by a positive number
    or adding a vector to every row leaves the probe unchanged; so does reordering the columns. Unchanged up to
    rounding, which a nearly interpolating penalty (more dimensions than training rows) amplifies by the condition
    of the rows: a few parts in a million."""
    table = signal_and_noise(n, d, 1.0, seed)
    base = posviz.position_probe(table)
    offset = np.random.default_rng(seed + 1).normal(size=d) * shift
    assert posviz.position_probe(scale * table + offset) == pytest.approx(base, rel=1e-4, abs=1e-6)
    assert posviz.position_probe(table[:, ::-1]) == pytest.approx(base, rel=1e-4, abs=1e-6)


@FAST
@given(n=st.integers(10, 80), d=st.integers(1, 30), seed=st.integers(0, 2**16))
def test_probe_of_a_table_whose_rows_are_all_equal_is_the_mean_guess(n, d, seed):
    """Equal rows carry nothing: each fold predicts its training mean (checked here fold by fold)."""
    from sklearn.model_selection import KFold

    table = np.tile(np.random.default_rng(seed).normal(size=d), (n, 1))
    p = np.arange(n, dtype=np.float64)
    predicted = np.empty(n)
    for train, test in KFold(5, shuffle=True, random_state=0).split(table):
        predicted[test] = p[train].mean()
    assert posviz.position_probe(table) == pytest.approx(np.mean(np.abs(predicted - p)), rel=1e-12)


def test_probe_orders_tables_by_how_linear_their_position_is():
    n = 256
    linear = posviz.sinusoidal(n, 64, base=10000.0)
    noise = random_table(n, 64, seed=0)
    assert posviz.position_probe(linear) < 0.1 * posviz.position_probe(noise)


# ------------------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "func",
    [
        posviz.cosine_similarity_matrix,
        posviz.offset_profile,
        posviz.project,
        posviz.position_probe,
        posviz.row_norms,
    ],
)
@pytest.mark.parametrize(
    "bad,needle",
    [
        (np.array([[1.0, np.nan], [0.0, 1.0]]), "NaN"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), "infinite"),
        (np.arange(5.0), "2-D"),
        (np.zeros((2, 3, 4)), "2-D"),
        (np.zeros((0, 3)), "(0, 3)"),
        ([["a", "b"]], "numeric"),
    ],
)
def test_bad_tables_raise_value_error(func, bad, needle):
    with pytest.raises(ValueError) as info:
        func(bad)
    assert needle in str(info.value)


def test_project_unknown_method_names_it():
    with pytest.raises(ValueError) as info:
        posviz.project(random_table(10, 3), method="umap")
    assert "umap" in str(info.value)
    assert "pca" in str(info.value) and "tsne" in str(info.value)


def test_tsne_too_few_positions():
    with pytest.raises(ValueError) as info:
        posviz.project(random_table(3, 3), method="tsne")
    assert "3" in str(info.value)


def test_tsne_too_many_positions():
    n = posviz.analysis.MAX_TSNE_POSITIONS + 1
    with pytest.raises(ValueError) as info:
        posviz.project(np.zeros((n, 1)), method="tsne")
    assert f"{n:,}" in str(info.value)


def test_tsne_of_identical_rows():
    with pytest.raises(ValueError) as info:
        posviz.project(np.ones((12, 4)), method="tsne")
    assert "12" in str(info.value)


def test_probe_too_few_positions():
    with pytest.raises(ValueError):
        posviz.position_probe(random_table(5, 3))


def test_row_norms_sinusoidal():
    for d in (2, 16, 64):
        np.testing.assert_allclose(posviz.row_norms(posviz.sinusoidal(50, d)), math.sqrt(d / 2), rtol=1e-12)


@FAST
@given(
    n=st.integers(1, 40),
    d=st.integers(1, 12),
    seed=st.integers(0, 2**32 - 1),
    spread=st.floats(0, 3),
    shift=st.floats(-5, 5),
)
def test_offset_profile_matches_loop_random(n, d, seed, spread, shift):
    """Rows of very different norms (10^-spread .. 10^spread) and a common offset: the profile must still equal the
    pairwise loop, to a tolerance relative to the largest dot product (any summation method errs on that scale)."""
    rng = np.random.default_rng(seed)
    table = rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-spread, spread, size=(n, 1)) + shift
    prof = posviz.offset_profile(table)
    cos_mean, dot_mean = profile_loop(table)
    energy = float(np.max(np.sum(table**2, axis=1)))
    np.testing.assert_allclose(prof.mean_dot, dot_mean, rtol=0, atol=1e-9 * max(1.0, energy))
    np.testing.assert_allclose(prof.mean_cosine, cos_mean, rtol=0, atol=1e-9)


def test_similarity_size_limit_names_the_size():
    limit = posviz.MAX_SIMILARITY_POSITIONS
    with pytest.raises(ValueError) as info:
        posviz.cosine_similarity_matrix(np.ones((limit + 1, 1)))
    assert f"{limit + 1:,}" in str(info.value)


@FAST
@given(n=st.integers(1, 5000), limit=st.integers(2, 600))
def test_evenly_spaced(n, limit):
    idx = posviz.evenly_spaced(n, limit)
    if n <= limit:
        np.testing.assert_array_equal(idx, np.arange(n))
        return
    assert len(idx) == limit  # spacing (n-1)/(limit-1) > 1, so rounding never merges two indices
    assert idx[0] == 0 and idx[-1] == n - 1
    gaps = np.diff(idx)
    step = (n - 1) / (limit - 1)
    assert np.all(gaps >= math.floor(step)) and np.all(gaps <= math.ceil(step))


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(600, 2500), (2500, 600)])
def test_large_pca_through_the_gram_matrix_equals_the_svd(shape):
    """Tables past 2^20 entries take the Gram-matrix route; the coordinates equal a full SVD's (up to sign)."""
    rng = np.random.default_rng(7)
    table = rng.normal(size=shape) + np.outer(np.linspace(-3, 3, shape[0]), rng.normal(size=shape[1]))
    got = posviz.project(table, method="pca")
    centred = table - table.mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    want = u[:, :2] * s[:2]
    for axis in range(2):
        sign = np.sign(got[:, axis] @ want[:, axis])
        np.testing.assert_allclose(got[:, axis], sign * want[:, axis], rtol=1e-7, atol=1e-7 * s[0])


def test_similarity_stack_is_each_tables_similarity():
    tables = np.random.default_rng(9).normal(size=(4, 7, 5))
    tables[2, 3] = 0.0  # a zero row: similarity 0 to everything, as in cosine_similarity_matrix
    stack = posviz.analysis.similarity_stack(tables)
    assert stack.shape == (4, 7, 7)
    for k in range(4):
        np.testing.assert_allclose(stack[k], posviz.cosine_similarity_matrix(tables[k]), atol=1e-14)
    with pytest.raises(ValueError, match="snapshots, positions, dims"):
        posviz.analysis.similarity_stack(tables[0])


def test_offset_profile_of_many_columns_is_the_same_on_any_number_of_threads(monkeypatch):
    """Column chunks are transformed side by side and their power spectra added in column order: one thread or
    several give the same bits, and both equal the pairwise loop."""
    from posviz import _parallel

    table = random_table(40, 700, seed=12)  # three chunks of columns
    parallel = posviz.offset_profile(table)
    monkeypatch.setattr(_parallel.os, "cpu_count", lambda: 1)
    serial = posviz.offset_profile(table)
    np.testing.assert_array_equal(parallel.mean_dot, serial.mean_dot)
    np.testing.assert_array_equal(parallel.mean_cosine, serial.mean_cosine)
    loop = [np.mean([table[i] @ table[i + k] for i in range(40 - k)]) for k in range(40)]
    np.testing.assert_allclose(parallel.mean_dot, loop, rtol=1e-10, atol=1e-12)


def test_a_near_tie_between_penalties_does_not_hang_on_rounding():
    """With more dimensions than rows the leave-one-out error is flat over the smallest penalties, and reversing the
    columns (rounding-level changes) used to pick another of them (probe 2.303540 against 2.303584 for this table):
    ties within ``TIE_TOLERANCE`` go to the largest penalty, so both orders agree to rounding."""
    table = signal_and_noise(18, 35, 1.0, 131)
    assert posviz.position_probe(table[:, ::-1]) == pytest.approx(posviz.position_probe(table), rel=1e-12)
