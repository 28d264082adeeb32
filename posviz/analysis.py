"""What a position table has learned: any (positions, dims) matrix in, arrays out.

Used on sinusoidal tables, BERT-style random tables, trained tables from checkpoints and the training lab
alike, so every function takes a plain matrix and validates it with the same rules.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ._parallel import on_every_core
from .base import checks
from .base.sampling import evenly_spaced

#: Largest table whose full (positions x positions) similarity matrix is built at once (512 MiB in float64).
MAX_SIMILARITY_POSITIONS = 8_192
#: Largest table t-SNE is run on.
MAX_TSNE_POSITIONS = 8_192
PROJECTIONS = ("pca", "tsne")


def _unit_rows(table: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    return table / np.where(norms > 0, norms, 1.0)


def row_norms(table) -> np.ndarray:
    """Euclidean norm of every row, ||PE(p)||_2. For an even-width sinusoidal table it is sqrt(d/2) exactly,
    since each sin/cos pair contributes sin^2 + cos^2 = 1."""
    table = checks.finite_table(table)
    return np.sqrt(np.einsum("ij,ij->i", table, table))  # no squared copy of the table


def cosine_similarity_matrix(table) -> np.ndarray:
    """S[i, j] = PE(i) . PE(j) / (||PE(i)|| ||PE(j)||), shape (n, n). A zero row has similarity 0 to every row
    (as in scikit-learn). Sinusoidal tables give a band that depends on |i - j| only (Vaswani et al., 2017);
    learned tables show what training made of their rows."""
    table = checks.finite_table(table)
    if table.shape[0] > MAX_SIMILARITY_POSITIONS:
        raise ValueError(
            f"a similarity matrix of {table.shape[0]:,} positions has {table.shape[0] ** 2:,} entries; posviz builds "
            f"it for at most {MAX_SIMILARITY_POSITIONS:,} positions, so take a slice or a stride of the table first"
        )
    unit = _unit_rows(table)
    return np.clip(unit @ unit.T, -1.0, 1.0)


def similarity_stack(tables) -> np.ndarray:
    """``cosine_similarity_matrix`` of each table in a stack (k, n, d) at once: (k, n, n). Used for snapshots of
    one table taken along training."""
    stack = np.asarray(tables, dtype=np.float64)
    if stack.ndim != 3 or 0 in stack.shape:
        raise ValueError(f"a stack of tables must have shape (snapshots, positions, dims); got {stack.shape}")
    if not np.isfinite(stack).all():
        raise ValueError("the tables contain NaN or infinite values")
    norms = np.linalg.norm(stack, axis=2, keepdims=True)
    unit = stack / np.where(norms > 0, norms, 1.0)
    return np.einsum("kid,kjd->kij", unit, unit)


@dataclass(frozen=True)
class OffsetProfile:
    """Mean similarity of all pairs of positions at each distance.

    ``offsets[k] = k``; ``mean_cosine[k]`` and ``mean_dot[k]`` average cos(PE(i), PE(i + k)) and
    PE(i) . PE(i + k) over the n - k pairs at distance k; ``pairs[k] = n - k``.
    """

    offsets: np.ndarray
    mean_cosine: np.ndarray
    mean_dot: np.ndarray
    pairs: np.ndarray


def _lines(columns: np.ndarray) -> np.ndarray:
    """The columns as contiguous rows: numpy's FFT along contiguous rows is about ten times faster than along
    strided columns, with the same result."""
    return np.ascontiguousarray(columns.T)


def _lag_sums(table: np.ndarray, chunk: int = 256) -> np.ndarray:
    """sum_i table[i] . table[i + k] for k = 0 .. n - 1, via the Wiener-Khinchin theorem (zero-padded FFT)."""
    n = table.shape[0]
    size = 1 << (2 * n - 1).bit_length()

    def power(start: int) -> np.ndarray:  # chunks of columns bound the memory, not a per-dim loop
        spectrum = np.fft.rfft(_lines(table[:, start : start + chunk]), n=size, axis=1)
        return (spectrum.real**2 + spectrum.imag**2).sum(axis=0)

    total = np.zeros(size // 2 + 1)
    for part in on_every_core(power, range(0, table.shape[1], chunk)):  # added in column order
        total += part
    return np.fft.irfft(total, n=size)[:n]


def offset_profile(table) -> OffsetProfile:
    """Mean cosine similarity and mean dot product as a function of the offset k = |i - j|.

    mean_dot[k] = (1 / (n - k)) * sum_{i=0}^{n-k-1} PE(i) . PE(i + k), and likewise for the cosine on
    unit-normalised rows. Computed for all k at once with FFT autocorrelation, O(n d log n) time, no n x n
    matrix, so it works at the largest table sizes. For a sinusoidal table mean_dot[k] = sum_i cos(k omega_i).
    """
    table = checks.finite_table(table)
    n = table.shape[0]
    pairs = np.arange(n, 0, -1)
    return OffsetProfile(
        offsets=np.arange(n),
        mean_cosine=np.clip(_lag_sums(_unit_rows(table)) / pairs, -1.0, 1.0),
        mean_dot=_lag_sums(table) / pairs,
        pairs=pairs,
    )


def _top_singular(centred: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The k leading singular triplets (u, s, vt) of ``centred``.

    Small matrices take a full SVD. Large ones diagonalise the smaller Gram matrix instead (X X^T when there are
    fewer rows than columns, X^T X otherwise): its eigenvalues are s^2 and its eigenvectors u (or v), and the
    other side follows from X v = s u. That is one matrix product and the k largest eigenpairs of the small side
    (LAPACK's ``syevr`` computes only those), a small fraction of the SVD's time for a 2,048 x 4,096 table.
    """
    from scipy.linalg import eigh

    n, d = centred.shape
    if n * d <= 1 << 20:
        u, s, vt = np.linalg.svd(centred, full_matrices=False)
        return u[:, :k], s[:k], vt[:k]
    small_rows = n <= d
    gram = centred @ centred.T if small_rows else centred.T @ centred
    side = gram.shape[0]
    values, vectors = eigh(gram, subset_by_index=[max(side - k, 0), side - 1])
    top = np.argsort(values)[::-1][:k]
    s = np.sqrt(np.clip(values[top], 0.0, None))
    safe = np.where(s > 0, s, 1.0)
    if small_rows:
        u = vectors[:, top]
        vt = (u.T @ centred) / safe[:, None]
    else:
        vt = vectors[:, top].T
        u = (centred @ vt.T) / safe[None, :]
    return u, s, vt


def project(table, method: str = "pca", seed: int = 0) -> np.ndarray:
    """Two-dimensional coordinates of every position, shape (n, 2).

    ``"pca"``: the first two principal components, U_k S_k of the SVD of the centred table (Pearson, 1901),
    each axis signed so that its largest loading is positive, making the result deterministic.
    ``"tsne"``: t-SNE (van der Maaten & Hinton, 2008) by openTSNE (Policar et al., 2024), perplexity
    min(30, (n - 1) / 3), reproducible from ``seed``. The centred table, divided by its largest absolute entry
    (t-SNE does not see a common scale), is first reduced to its top 50 principal components (the usual
    preprocessing, which keeps the neighbours of a position table), whose first two are the initial layout;
    neighbours are found exactly and the gradient of the Kullback-Leibler divergence is approximated by
    Barnes-Hut with theta 0.8 (as trustworthy as 0.5 on position tables, and half the time on
    noise). 125 iterations of early exaggeration 12 at learning rate n / 12, then 200 at learning rate n
    (Belkina et al., 2019), on every core (OpenMP threads; the app makes them wait passively, so a busy
    machine does not slow them down).
    """
    checks.choice("method", method, PROJECTIONS)
    table = checks.finite_table(table)
    n = table.shape[0]
    centred = table - table.mean(axis=0)
    scale = max(centred.max(), -centred.min())  # the largest |entry|, without an |x| copy
    centred /= scale or 1.0  # unit scale: no overflow in the Gram matrix, and t-SNE does not see a common scale
    if method == "pca":
        u, s, vt = _top_singular(centred, 2)
        k = min(2, s.size)
        signs = np.sign(vt[np.arange(k), np.argmax(np.abs(vt[:k]), axis=1)])
        signs[signs == 0] = 1.0
        coords = np.zeros((n, 2))
        coords[:, :k] = u[:, :k] * s[:k] * signs * scale
        return coords
    if n < 4:
        raise ValueError(f"t-SNE needs at least 4 positions to place; got {n}")
    if n > MAX_TSNE_POSITIONS:
        raise ValueError(f"t-SNE of {n:,} positions is too slow to be useful; use at most {MAX_TSNE_POSITIONS:,}")
    if scale == 0:
        raise ValueError(f"t-SNE needs positions that differ; all {n} rows of this table are the same")
    from openTSNE import TSNE
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):  # BLAS threads spin: on a busy machine one is faster
        u, s, _ = _top_singular(centred, min(50, *centred.shape))
    scores = np.zeros((n, max(s.size, 2)))
    scores[:, : s.size] = u * s
    tsne = TSNE(
        perplexity=min(30.0, (n - 1) / 3),
        early_exaggeration_iter=125,
        n_iter=200,
        theta=0.8,
        initialization="pca",
        neighbors="exact",
        negative_gradient_method="bh",
        n_jobs=os.cpu_count() or 1,  # the same layout, bit for bit, on any number of threads
        random_state=int(seed),
    )
    return np.asarray(tsne.fit(scores), dtype=np.float64)


#: The ridge penalties the probe chooses from, as multiples of the mean squared singular value of the centred
#: training rows (so the choice does not depend on the table's scale): 10^-8 .. 10^4 in half decades, and infinity,
#: the constant guess of the training mean.
PROBE_PENALTIES = np.append(10.0 ** np.arange(-8.0, 4.25, 0.5), np.inf)
#: Leave-one-out errors this close (relative) to the lowest count as a tie, which the largest penalty wins.
TIE_TOLERANCE = 1e-6


def position_probe(table, *, folds: int = 5, seed: int = 0) -> float:
    """Mean absolute error, in positions, of a ``folds``-fold cross-validated ridge regression from PE(p) to p: the
    probe of Wang & Chen (2020), "What Do Position Embeddings Learn?", EMNLP 2020 (arXiv:2010.04903). 0: positions
    are perfectly linearly decodable; a table of pure noise scores about n / 4, the error of always guessing the
    middle position (:func:`constant_guess_error`).

    Each outer fold chooses its penalty among ``PROBE_PENALTIES`` x ||X_c||_F^2 / min(m, d) (X_c the m centred
    training rows, intercept unpenalised) by the lowest leave-one-out squared error, in closed form: e_i / (1 - H_ii)
    with H = 11^T / m + X_c (X_c^T X_c + alpha I)^-1 X_c^T (Allen, 1974; Golub, Heath & Wahba, 1979). Errors within
    ``TIE_TOLERANCE`` of the lowest tie, won by the largest penalty, so the choice never hangs on rounding. A fixed
    small penalty would let noise fit its training rows and score worse than a blind guess; the chosen one lets it
    fall back to (nearly) that guess. The held-out rows are only ever predicted."""
    table = checks.finite_table(table)
    return nested_ridge_probe(table, np.arange(table.shape[0], dtype=np.float64), folds, seed)


def nested_ridge_probe(rows: np.ndarray, target: np.ndarray, folds, seed) -> float:
    """Mean absolute error of the outer-fold predictions of ``target`` from ``rows`` (see :func:`position_probe`).

    The Gram matrix of the centred rows (n x n, or d x d when there are fewer dimensions than rows) is built once;
    each fold takes its part of it, so the work is one matrix product and one small eigendecomposition per fold."""
    folds = checks.positive_int("folds", folds)
    n, d = rows.shape
    if folds < 2 or n < 2 * folds:
        raise ValueError(f"a {folds}-fold probe needs folds >= 2 and at least {2 * folds} positions; got {n}")
    from sklearn.model_selection import KFold

    centred = rows - rows.mean(axis=0)  # a common shift changes nothing when the intercept is free
    peak = np.abs(centred).max()
    if peak <= 64 * np.finfo(np.float64).eps * np.abs(rows).max():  # all rows equal up to rounding: each fold
        predicted = np.empty(n)  # can only predict its training mean
        for train, test in KFold(n_splits=folds, shuffle=True, random_state=int(seed)).split(rows):
            predicted[test] = target[train].mean()
        return float(np.mean(np.abs(predicted - target)))
    centred /= peak  # and so does a common scale, since the penalties scale with the rows
    from threadpoolctl import threadpool_limits

    dual = n <= d
    side = centred if dual else centred.T  # the Gram matrix is side @ side.T
    splits = list(KFold(n_splits=folds, shuffle=True, random_state=int(seed)).split(rows))
    predicted = np.empty(n)
    # BLAS threads spin (on a busy machine one is several times faster), so each core runs one-threaded BLAS on its
    # own share: a band of the Gram matrix, then whole folds
    with threadpool_limits(1, user_api="blas"):
        bands = np.array_split(np.arange(side.shape[0]), min(side.shape[0], os.cpu_count() or 1))
        gram = np.vstack(on_every_core(lambda band: side[band] @ side.T, bands))
        fitted = on_every_core(lambda fold: _ridge_fold(centred, gram, dual, fold[0], fold[1], target[fold[0]]), splits)
    for (_, test), values in zip(splits, fitted, strict=True):
        predicted[test] = values
    return float(np.mean(np.abs(predicted - target)))


def _ridge_fold(centred, gram, dual: bool, train, test, y) -> np.ndarray:
    """Predictions for the rows ``test`` of a ridge fitted on the rows ``train`` with the penalty of lowest
    leave-one-out error.

    With X_c = U S V^T the centred training rows (thin SVD, from the eigendecomposition of the
    smaller Gram matrix, s^2 its eigenvalues) and g = alpha / (s^2 + alpha): the leave-one-out residual is
    r_i / (1 - H_ii) with r = P y_c + U diag(g) U^T y_c and 1 - H_ii = P_ii + sum_k U_ik^2 g_k, P the projection
    onto what neither the intercept nor X_c spans; a held-out row x is predicted as
    y_mean + ((x - x_mean) V / s) . ((1 - g) U^T y_c)."""
    m = train.size
    if dual:  # the centred training Gram X_c X_c^T, taken from the table's Gram
        inner = gram[np.ix_(train, train)]
        row_means = inner.mean(axis=1)
        middle = row_means.mean()
        evals, u = np.linalg.eigh(inner - row_means[:, None] - row_means[None, :] + middle)
    else:  # X_c^T X_c = X^T X - X_test^T X_test - m mean mean^T
        mean_row = centred[train].mean(axis=0)
        held = centred[test]
        evals, v = np.linalg.eigh(gram - held.T @ held - m * np.outer(mean_row, mean_row))
    keep = evals > evals[-1] * max(centred.shape) * np.finfo(np.float64).eps  # numerically nonzero directions
    if not keep.any():  # the training rows are all equal: the training mean is the only prediction
        return np.full(test.size, y.mean())
    evals = evals[keep]
    if dual:
        u = u[:, keep]
        cross = gram[np.ix_(test, train)]  # (X_test - mean) X_c^T, centred like the training Gram
        cross = cross - cross.mean(axis=1, keepdims=True) - row_means[None, :] + middle
        coords = cross @ u / evals  # (x - mean) V / s, since X_c^T U = V S
    else:
        v = v[:, keep]
        s = np.sqrt(evals)
        u = (centred[train] - mean_row) @ v / s
        coords = (centred[test] - mean_row) @ v / s
    y_mean = y.mean()
    yc = y - y_mean
    uty = u.T @ yc
    alphas = PROBE_PENALTIES * (evals.sum() / min(m, centred.shape[1]))  # mean squared singular value of X_c
    finite = np.isfinite(alphas)[:, None]
    g = np.where(finite, alphas[:, None] / (evals[None, :] + np.where(finite, alphas[:, None], 0.0)), 1.0)  # (A, r)
    squared = u * u
    outside = np.maximum(1.0 - 1.0 / m - squared.sum(axis=1), 0.0)  # P_ii
    residual = (yc - u @ uty)[:, None] + u @ (g * uty).T  # (m, A)
    leverage = outside[:, None] + squared @ g.T  # 1 - H_ii, (m, A)
    loo = np.where(np.isfinite(loo := np.mean((residual / leverage) ** 2, axis=0)), loo, np.inf)
    # the largest penalty within TIE_TOLERANCE of the lowest error: with more dimensions than rows the error is flat
    # over the smallest penalties, and which of them wins by a few ulps must not decide the prediction
    best = int(np.flatnonzero(loo <= loo.min() * (1.0 + TIE_TOLERANCE))[-1])
    return y_mean + coords @ ((1.0 - g[best]) * uty)


#: Smallest FFT length of :func:`position_spectrum`: short tables are zero-padded to it for a finer frequency grid.
MIN_FFT = 4_096
#: Most cells (analysed columns x FFT length) one :func:`position_spectrum` transforms: 512 columns up to
#: n = 16,384, 256 at n = 32,768.
SPECTRUM_CELLS = 1 << 23


def spectrum_dims(n_positions: int, d_model: int, max_dims: int = 512) -> np.ndarray:
    """The columns :func:`position_spectrum` analyses in an (n, d) table: at most ``max_dims`` evenly spaced
    ones, and at most ``SPECTRUM_CELLS / n_fft`` (at least 1), so the largest tables cost no more than 8 M cells."""
    n = checks.positive_int("n_positions", n_positions)
    budget = max(1, SPECTRUM_CELLS // fft_length(n))
    return evenly_spaced(d_model, min(checks.positive_int("max_dims", max_dims), budget))


def fft_length(n_positions: int) -> int:
    """The zero-padded length of a column of n positions in :func:`position_spectrum`: max(MIN_FFT, 2^ceil(log2 n))."""
    return max(MIN_FFT, 1 << max(n_positions - 1, 1).bit_length())


@dataclass(frozen=True)
class PositionSpectrum:
    """What frequencies along the position axis a table's columns are made of.

    ``frequencies[j] = 2 pi j / n_fft`` in radians per position (0 .. pi); ``mean_power[j]`` is the share of a
    column's variance at that frequency, averaged over the analysed columns ``dims``; ``dominant[i]`` is the
    frequency where column ``dims[i]`` has most power; ``resolution = 2 pi / n`` is the slowest frequency that
    completes one period within the table.
    """

    frequencies: np.ndarray
    mean_power: np.ndarray
    dims: np.ndarray
    dominant: np.ndarray
    resolution: float


def position_spectrum(table, *, max_dims: int = 512) -> PositionSpectrum:
    """P_i(omega_j) = |sum_p (PE[p, i] - mean_i) e^{-i omega_j p}|^2, omega_j = 2 pi j / n_fft, for each analysed
    column i, normalised to total power 1 (a tiny random table and a unit sinusoid compare). For a sinusoidal table
    columns 2k and 2k + 1 peak at omega_k = base^(-2k / d) (Vaswani et al., 2017) whenever omega_k > 2 pi / n.

    Columns are zero-padded to n_fft = max(MIN_FFT, 2^ceil(log2 n)), a finer grid at a resolution of about
    2 pi / n (a column with less than one period in n positions shows as the slowest resolvable frequency). The
    columns of :func:`spectrum_dims` are analysed (at most ``max_dims``, fewer past n = 16,384); a table drawn on
    demand (``learned.RandomTable``) draws only those."""
    if checks.drawn_on_demand(table):  # the analysed columns of every row, the table never held whole
        n, d = table.shape
        dims = spectrum_dims(n, d, max_dims)
        chosen = table.columns(dims)
        return spectrum_of_columns(lambda start, stop: chosen[:, start:stop], n, dims)
    array = np.asarray(table)
    if array.ndim != 2 or 0 in array.shape:
        checks.finite_table(array)
    n, d = array.shape  # 2-D: finite_table has refused anything else
    dims = spectrum_dims(n, d, max_dims)

    def columns(start: int, stop: int) -> np.ndarray:
        try:
            return checks.finite_table(array[:, dims[start:stop]])
        except ValueError:  # say how many values are bad in all analysed columns, not in this chunk
            checks.finite_table(array[:, dims])
            raise

    return spectrum_of_columns(columns, array.shape[0], dims)


def spectrum_of_columns(columns, n: int, dims: np.ndarray) -> PositionSpectrum:
    """:func:`position_spectrum` of the columns ``dims`` of an n-row table, given as ``columns(start, stop)``: the
    (n, stop - start) array of the analysed columns start .. stop - 1, asked for a chunk at a time so that only
    a few chunks are ever held (a table's columns, or columns computed on demand). The chunks are transformed on
    every core, so ``columns`` must be safe to call from several threads."""
    size = fft_length(n)
    chunk = max(1, (1 << 21) // size)
    power = np.empty((dims.size, size // 2 + 1))  # a row per analysed dimension
    frequencies = 2.0 * np.pi * np.arange(power.shape[1]) / size
    dominant = np.empty(dims.size)

    def transform(start: int) -> None:  # column chunks bound the memory, not a per-dim loop
        stop = min(start + chunk, dims.size)
        cols = columns(start, stop)
        centred = np.subtract(cols.T, cols.mean(axis=0)[:, None], out=np.empty(cols.shape[::-1]))
        spectrum = np.fft.rfft(centred, n=size, axis=1)  # along contiguous rows: ten times faster than columns
        rows = np.multiply(spectrum.real, spectrum.real, out=power[start:stop])
        rows += spectrum.imag**2
        total = rows.sum(axis=1, keepdims=True)
        rows /= np.where(total > 0, total, 1.0)
        dominant[start:stop] = np.where(total[:, 0] > 0, frequencies[np.argmax(rows, axis=1)], 0.0)

    on_every_core(transform, range(0, dims.size, chunk))
    return PositionSpectrum(frequencies, power.mean(axis=0), dims, dominant, 2.0 * np.pi / n)


def sampled_similarity(table, limit: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cosine_similarity_matrix` of at most ``limit`` evenly spaced positions. Returns ``(positions, S)``."""
    positions, rows = _sampled_rows(table, limit)
    return positions, cosine_similarity_matrix(rows)


def _sampled_rows(table, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``limit`` evenly spaced positions and their rows, validated (only the rows that are used; a table
    drawn on demand draws only those)."""
    if checks.drawn_on_demand(table):
        positions = evenly_spaced(table.shape[0], limit)
        return positions, table.rows(positions)
    array = np.asarray(table)
    if array.ndim != 2:
        checks.finite_table(array)
    positions = evenly_spaced(array.shape[0], limit)
    return positions, checks.finite_table(array[positions])


def sampled_projection(table, limit: int = 2048, method: str = "pca", seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`project` of at most ``limit`` evenly spaced positions (all of them if few enough).
    Returns ``(positions, coords)``."""
    checks.choice("method", method, PROJECTIONS)
    positions, rows = _sampled_rows(table, limit)
    return positions, project(rows, method=method, seed=seed)


def sampled_position_probe(table, limit: int = 1024, *, folds: int = 5, seed: int = 0) -> float:
    """:func:`position_probe` on at most ``limit`` evenly spaced positions, the regression target being the true
    position p (not the row's index among the sample), so the error stays in positions and pure noise still scores
    about n / 4. Equal to ``position_probe(table)`` when the table has at most ``limit`` rows."""
    positions, rows = _sampled_rows(table, limit)
    return nested_ridge_probe(rows, positions.astype(np.float64), folds, seed)


def constant_guess_error(n_positions: int) -> float:
    """The probe error of a reader that knows nothing: always guess the median position. For p uniform on
    0 .. n - 1 it is mean |p - median| = floor(n^2 / 4) / n, about n / 4."""
    n = checks.positive_int("n_positions", n_positions)
    return float((n * n // 4) / n)


#: Fewer positions than this and a table is too short to judge: the probe's five folds hold three positions or
#: fewer each, and a table of pure noise then scores anywhere from about 0.8 to 1.2 times the constant guess.
TINY_POSITIONS = 16
#: A probe error of at least this share of the constant guess reads as noise. Tables of N(0, 0.02^2) noise score
#: 0.8-1.2 times the guess at 16 positions and 0.94-1.06 from 64 on; the sinusoidal table a few thousandths of it,
#: the trained example of ``assets/trained`` a quarter.
NOISE_SHARE = 0.75


@dataclass(frozen=True)
class TableReading:
    """What a position table looks like as a whole, from its size and its position probe.

    ``kind`` is "tiny" (fewer than ``TINY_POSITIONS`` positions: too few to tell), "random" (the probe reads its
    positions no better than ``NOISE_SHARE`` of always guessing the middle: what an untrained table looks like) or
    "ordered" (a linear map reads its positions: what a trained or a formula table looks like). ``probe`` is
    :func:`sampled_position_probe` of the table (None below the probe's 10 positions), ``guess`` the
    :func:`constant_guess_error` of its ``n_positions``.
    """

    kind: str
    n_positions: int
    probe: float | None
    guess: float


def read_table(table, limit: int = 1024) -> TableReading:
    """Whether a table is tiny, reads like random noise, or orders its positions (see :class:`TableReading`).

    The verdict follows the probe of Wang & Chen (2020): a table of noise scores about the error of always guessing
    the middle, n / 4, a table that encodes positions a small fraction of it; below ``TINY_POSITIONS`` rows the
    probe cannot separate the two. The probe reads at most ``limit`` evenly spaced positions."""
    shape = table.shape if hasattr(table, "shape") else np.shape(table)
    n = int(shape[0]) if len(shape) == 2 else 0
    if n == 0:
        checks.finite_table(np.asarray(table))  # the sentence a student gets for a table that is not one
    return table_reading(n, sampled_position_probe(table, limit) if n >= PROBE_MIN_POSITIONS else None)


#: The fewest rows the probe runs on: five folds of two positions.
PROBE_MIN_POSITIONS = 2 * 5


def table_reading(n: int, probe: float | None) -> TableReading:
    """:func:`read_table`'s verdict on a table of ``n`` rows whose probe error is ``probe`` (``sampled_position_probe``;
    None below ``PROBE_MIN_POSITIONS`` rows)."""
    guess = constant_guess_error(n)
    if n < TINY_POSITIONS or probe is None:  # the probe runs from 10 positions, below TINY_POSITIONS
        kind = "tiny"
    elif probe >= NOISE_SHARE * guess:
        kind = "random"
    else:
        kind = "ordered"
    return TableReading(kind, n, probe, guess)


def table_digest(table) -> str:
    """sha256 of a table's shape, dtype and bytes: a short cache key for an array that has no parameters."""
    import hashlib

    array = np.ascontiguousarray(table)
    digest = hashlib.sha256(f"{array.shape}{array.dtype.str}".encode())
    digest.update(array.view(np.uint8).reshape(-1).data)
    return digest.hexdigest()


# ------------------------------------------------------------ positions of any table, by offset and past a length


def diagonal_spread(matrix) -> np.ndarray:
    """Spread of every diagonal of a square matrix: spread[k] = max_i S[i, i + k] - min_i S[i, i + k].

    A matrix whose entries depend on the offset j - i only (a Toeplitz matrix, such as the similarity of a
    sinusoidal table) has spread 0 on every diagonal, up to rounding; a random table does not.
    """
    matrix = checks.finite_table(matrix, name="matrix")
    n = matrix.shape[0]
    if matrix.shape[1] != n:
        raise ValueError(f"diagonals need a square matrix; got shape {matrix.shape}")
    i, k = np.arange(n)[None, :], np.arange(n)[:, None]
    inside = i + k < n
    skewed = matrix[np.minimum(i, n - 1), np.minimum(i + k, n - 1)]  # skewed[k, i] = S[i, i + k]
    high = np.where(inside, skewed, -np.inf).max(axis=1)
    low = np.where(inside, skewed, np.inf).min(axis=1)
    return high - low


def stride_for(n: int, limit: int) -> int:
    return -(-n // checks.positive_int("max_positions", limit))


def lag_spread(table, max_positions: int = 1024) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Evidence that the dot product and cosine depend on |i - j| only: ``(offsets, dot_spread, cos_spread)``.

    The rows p = 0, s, 2s, ... (stride s = ceil(n / max_positions), so every diagonal is one offset k s) give
    the Gram matrix G[i, j] = PE(i) . PE(j) and the cosine matrix; ``diagonal_spread`` of each, per offset.
    Only the offsets 1 .. m - 2 of the m rows are returned: the main diagonal holds the squared norms, and the
    last diagonal has a single entry, whose spread is 0 by definition.
    """
    table = checks.finite_table(table)
    stride = stride_for(table.shape[0], max_positions)
    return lag_spread_of_rows(table[::stride], stride)


def lag_spread_of_rows(rows: np.ndarray, stride: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gram = rows @ rows.T
    norms = np.linalg.norm(rows, axis=1)
    cosine = gram / np.outer(np.where(norms > 0, norms, 1.0), np.where(norms > 0, norms, 1.0))
    if rows.shape[0] < 3:
        raise ValueError(f"the spread along diagonals needs at least 3 positions; got {rows.shape[0]}")
    inner = slice(1, rows.shape[0] - 1)
    offsets = np.arange(rows.shape[0])[inner] * stride
    return offsets, diagonal_spread(gram)[inner], diagonal_spread(cosine)[inner]


def strided_offset_profile(table, max_positions: int = 4096) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``analysis.offset_profile`` on the rows p = 0, s, 2s, ... (s = ceil(n / max_positions)), so that the
    largest tables stay fast: ``(offsets, mean_dot, mean_cosine)`` with offsets in positions (multiples of s)."""

    table = checks.finite_table(table)
    stride = stride_for(table.shape[0], max_positions)
    profile = offset_profile(table[::stride])
    return profile.offsets * stride, profile.mean_dot, profile.mean_cosine


def beyond_training(table, train_len: int, *, margin: float = 0.01, chunk: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """What is new past the training length: ``(share_by_position, excess_by_dimension)``.

    The training range of column j is [min, max] of PE[p, j] over p < train_len. share[p] is the fraction of
    columns in which row p lies more than ``margin`` outside that range (0 before ``train_len``, by definition);
    excess[j] is how far column j gets outside its range at any later position (0 when it never does). Fast
    pairs repeat their values and stay familiar; slow pairs walk into values the model never saw.
    """
    table = checks.finite_table(table)
    train_len = checks.positive_int("train_len", train_len)
    seen = table[:train_len]
    low, high = seen.min(axis=0), seen.max(axis=0)
    share = np.empty(table.shape[0])
    excess = np.zeros(table.shape[1])
    for start in range(0, table.shape[0], chunk):  # chunks of rows bound the memory, not a per-position loop
        rows = table[start : start + chunk]
        share[start : start + len(rows)] = outside_excess(rows, low, high, max(train_len - start, 0), margin, excess)
    return share, excess


def outside_excess(rows, low, high, first_unseen: int, margin: float, excess: np.ndarray) -> np.ndarray:
    """Share of each row's columns more than ``margin`` outside [low, high]; raises ``excess`` (in place) to how
    far the rows from index ``first_unseen`` on get outside."""
    outside = np.maximum(low - rows, rows - high).clip(min=0.0)
    if first_unseen < len(rows):
        np.maximum(excess, outside[first_unseen:].max(axis=0), out=excess)
    return (outside > margin).mean(axis=1)


def project_positions(table, method: str = "pca", max_positions: int = 2048, seed: int = 0):
    """``analysis.project`` of at most ``max_positions`` evenly spaced rows: ``(positions, coords)``."""

    table = checks.finite_table(table)
    positions = evenly_spaced(table.shape[0], max_positions)
    return positions, project(table[positions], method=method, seed=seed)


# --------------------------------------------------------------------------------------------------------------------
# The classic findings about learned tables, as questions any loaded table answers


@dataclass(frozen=True)
class Components:
    """The leading principal components of a table's rows: ``coords`` (n, k) the coordinates of each position,
    ``share`` (k,) the share of the table's variance each component carries, ``winding`` the number of turns the
    positions make around the origin in the plane of components 2 and 3 (0 when k < 3)."""

    coords: np.ndarray
    share: np.ndarray
    winding: float


def principal_components(table, k: int = 3) -> Components:
    """Does the table trace a curve in few dimensions, a helix, say? (GPT-2's ``wpe`` has been described as one: a
    leading component that runs with the position and two more that turn around it.) PCA of the centred rows
    (Pearson, 1901): coords = U_k S_k, each axis signed so that its largest loading is positive; share_i =
    s_i^2 / ||X_c||_F^2 (the fraction of the total variance); winding = (unwrapped angle of (c_2, c_3) from the first
    position to the last) / 2 pi.
    """
    table = checks.finite_table(table, min_rows=2)
    k = checks.positive_int("k", k, maximum=min(table.shape))
    centred = table - table.mean(axis=0)
    scale = max(centred.max(), -centred.min()) or 1.0
    centred /= scale
    u, s, vt = _top_singular(centred, k)
    signs = np.sign(vt[np.arange(s.size), np.argmax(np.abs(vt), axis=1)])
    signs[signs == 0] = 1.0
    coords = np.zeros((table.shape[0], k))
    coords[:, : s.size] = u * s * signs * scale
    total = float(np.einsum("ij,ij->", centred, centred))
    share = np.zeros(k)
    share[: s.size] = s**2 / total if total > 0 else 0.0
    winding = 0.0
    if k >= 3:
        angle = np.unwrap(np.arctan2(coords[:, 2], coords[:, 1]))
        winding = float((angle[-1] - angle[0]) / (2 * np.pi))
    return Components(coords, share, winding)


@dataclass(frozen=True)
class SimilarityDecay:
    """Position-wise cosine similarity by offset (Wang & Chen, 2020, figure 1, read along its diagonals):
    ``offsets`` 0 .. n - 1, ``mean`` the mean of cos(PE(p), PE(p + offset)) over p (``offset_profile``), and
    ``half_offset`` the first offset where that mean falls to 1/2 or below (None if it never does)."""

    offsets: np.ndarray
    mean: np.ndarray
    half_offset: int | None


def similarity_decay(table) -> SimilarityDecay:
    """How fast does a position stop resembling its neighbours? Wang & Chen (2020, "What Do Position Embeddings
    Learn?", EMNLP 2020, arXiv:2010.04903) show the position-wise cosine similarity matrices of BERT, RoBERTa and
    GPT-2 (``cosine_similarity_matrix``): similarity falls away from the diagonal, at different speeds. Each diagonal
    is one offset; its mean is ``offset_profile``'s mean cosine, computed for every offset without the n x n
    matrix."""
    profile = offset_profile(table)
    below = np.flatnonzero(profile.mean_cosine <= 0.5)
    return SimilarityDecay(profile.offsets, profile.mean_cosine, int(below[0]) if below.size else None)


def relative_order_probe(table, *, pairs: int | None = None, folds: int = 5, seed: int = 0) -> float:
    """Can a linear classifier tell which of two rows comes first? Wang & Chen (2020)'s relative-position test:
    random pairs (i, j) of positions, the two rows side by side [PE(i), PE(j)] as the input, "j > i" the label, a
    logistic regression (scikit-learn, L2, C = 1) cross-validated over ``folds`` folds; returns the held-out error
    rate (0: the order is linearly readable; about 0.5: a coin toss). ``pairs`` defaults to n, as in their code."""
    table = checks.finite_table(table, min_rows=4)
    n = table.shape[0]
    pairs = n if pairs is None else checks.positive_int("pairs", pairs, maximum=1 << 20)
    folds = checks.positive_int("folds", folds)
    if folds < 2 or pairs < 2 * folds:
        raise ValueError(f"a {folds}-fold test needs folds >= 2 and at least {2 * folds} pairs; got {pairs}")
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    rng = np.random.default_rng(seed)
    first, second = rng.integers(0, n, size=(2, pairs))
    keep = first != second
    first, second = first[keep], second[keep]
    scale = np.abs(table).max() or 1.0
    inputs = np.hstack([table[first], table[second]]) / scale
    labels = second > first
    if labels.all() or not labels.any():
        raise ValueError("the random pairs all have the same order; use more pairs")
    accuracy = cross_val_score(LogisticRegression(max_iter=1000), inputs, labels, cv=folds)
    return float(1.0 - accuracy.mean())


#: The false-alarm rate of the roughness's level change: on a table of pure noise (independent normal entries) a
#: change is marked in this share of tables.
LEVEL_CHANGE_ALPHA = 0.01
#: Noise tables drawn to calibrate the level change: the most of these that draws at most LEVEL_CHANGE_BUDGET numbers
#: (else the last). Each makes a Monte Carlo test of exact size LEVEL_CHANGE_ALPHA, since (draws + 1) * 0.01 is a
#: whole number; more draws only make the threshold less random.
LEVEL_CHANGE_DRAWS = (9999, 999, 199)
LEVEL_CHANGE_BUDGET = 60_000_000


@dataclass(frozen=True)
class Roughness:
    """How noisy each row is against its neighbours: value(p) = ||PE(p + 1) - 2 PE(p) + PE(p - 1)|| / median ||PE||
    at ``positions`` 1 .. n - 2 (a smooth table is near 0, a table of independent noise near sqrt(6)), and whether
    its level changes at some row (:func:`roughness_by_position`)."""

    positions: np.ndarray
    value: np.ndarray
    #: ``cut`` when the change passes the test against noise (``p_value`` at most ``alpha``), else None.
    change: int | None
    #: The median value from the cut on over the median before it.
    ratio: float
    #: The first row of the second level of the best two-level fit of log(value) (None for fewer than 8 values).
    cut: int | None = None
    #: The share of the variance of log(value) that fit explains.
    explained: float = 0.0
    #: How often a table of pure noise of the same shape explains at least as much: (1 + k) / (draws + 1).
    p_value: float = 1.0
    alpha: float = LEVEL_CHANGE_ALPHA
    draws: int = 0


def _two_levels(logs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``logs`` (sequences of length m >= 4): the cut c (2 <= c <= m - 2) that minimises the squared
    error of fitting the row by one constant before c and another from c on, and the share of the row's variance that
    fit explains (0 for a constant row). Every cut at once, from cumulative sums."""
    m = logs.shape[1]
    cuts = np.arange(2, m - 1)  # at least two values on each side
    centred = logs - logs.mean(axis=1, keepdims=True)  # the fit is shift-free; centring keeps the sums small
    total, squares = np.cumsum(centred, axis=1), np.cumsum(centred**2, axis=1)
    before_sum, after_sum = total[:, cuts - 1], total[:, -1:] - total[:, cuts - 1]
    # the squared error of the split is the total sum of squares minus what the two means explain
    gain = before_sum**2 / cuts + after_sum**2 / (m - cuts)
    best = np.argmax(gain, axis=1)
    whole = squares[:, -1]
    spread = np.abs(logs).max(axis=1) * 1e-9  # below this the row is one constant up to rounding
    flat = np.sqrt(whole / m) <= np.maximum(spread, 1e-300)
    explained = np.where(flat, 0.0, gain[np.arange(len(logs)), best] / np.where(flat, 1.0, whole))
    return cuts[best], explained


def _noise_explained(rows: int, dims: int, draws: int, seed: int = 0) -> np.ndarray:
    """The share of variance the two-level fit explains on the log roughness (up to its scale, which the fit ignores)
    of ``draws`` tables of independent standard normal entries of shape (rows, dims), drawn in float32 in blocks of
    a few million numbers, so that memory stays small at any shape."""
    rng = np.random.default_rng(seed)
    per = max(1, 4_000_000 // (rows * dims))
    out = np.empty(draws)
    for start in range(0, draws, per):
        block = rng.standard_normal((min(per, draws - start), rows, dims), dtype=np.float32)
        second = block[:, 2:] - 2 * block[:, 1:-1] + block[:, :-2]
        logs = 0.5 * np.log(np.einsum("bpd,bpd->bp", second, second, dtype=np.float64))
        out[start : start + len(block)] = _two_levels(logs)[1]
    return out


_NOISE_EXPLAINED: dict[tuple[int, int], np.ndarray] = {}


def level_change_null(rows: int, dims: int) -> np.ndarray:
    """The share of variance the two-level fit explains on tables of pure noise of shape (rows, dims), one per draw
    (sorted; as many draws of LEVEL_CHANGE_DRAWS as LEVEL_CHANGE_BUDGET allows). Seeded, so the same shape always
    gets the same calibration; kept per shape for the process (8 bytes a draw: at most 80 kB a shape, 64 shapes)."""
    key = (int(rows), int(dims))
    if key not in _NOISE_EXPLAINED:
        fits = [d for d in LEVEL_CHANGE_DRAWS if rows * dims * d <= LEVEL_CHANGE_BUDGET]
        draws = fits[0] if fits else LEVEL_CHANGE_DRAWS[-1]
        explained = _noise_explained(rows, dims, draws)
        if len(_NOISE_EXPLAINED) >= 64:
            _NOISE_EXPLAINED.pop(next(iter(_NOISE_EXPLAINED)))
        _NOISE_EXPLAINED[key] = np.sort(explained)
    return _NOISE_EXPLAINED[key]


def roughness_by_position(table, *, alpha: float = LEVEL_CHANGE_ALPHA) -> Roughness:
    """value(p) = ||PE(p + 1) - 2 PE(p) + PE(p - 1)|| / median ||PE||, and whether the rows past some index are
    noisier than the ones before (Devlin et al., 2019, pre-trained BERT on 128 tokens for 90% of the steps and on 512
    for the rest, so its rows past 128 were trained far less).

    The cut c minimises the squared error of fitting log(value) by one constant before c and another from c on (every
    c at once, from cumulative sums); since value(p) reads rows p - 1 .. p + 1, noisy rows from k on start at
    p = k - 1 and the cut is reported as k. Pure noise has a best split too, so ``change`` is set only when the share
    of variance the split explains beats tables of independent normal entries of the same shape
    (``level_change_null``) at a Monte Carlo p-value of at most ``alpha`` (1%: a change is marked on 1% of noise
    tables)."""
    if not 0 < alpha < 1:
        raise ValueError(f"the false-alarm rate alpha must be between 0 and 1; got {alpha}")
    table = checks.finite_table(table, min_rows=3)
    second = table[2:] - 2 * table[1:-1] + table[:-2]
    norms = np.linalg.norm(table, axis=1)
    scale = float(np.median(norms)) or 1.0
    value = np.linalg.norm(second, axis=1) / scale
    positions = np.arange(1, table.shape[0] - 1)
    if value.size < 8:
        return Roughness(positions, value, None, 1.0, alpha=alpha)
    logs = np.log(np.maximum(value, 1e-300))
    cuts, explained = _two_levels(logs[None, :])
    split, share = int(cuts[0]), float(explained[0])
    before, after = float(np.median(value[:split])), float(np.median(value[split:]))
    ratio = after / before if before > 0 else float("inf")
    cut = int(positions[split]) + 1
    if share == 0.0:
        return Roughness(positions, value, None, ratio, cut=cut, alpha=alpha)
    null = level_change_null(table.shape[0], table.shape[1])
    beaten = null.size - int(np.searchsorted(null, share, side="left"))  # noise tables explaining at least as much
    p_value = (1 + beaten) / (null.size + 1)
    change = cut if p_value <= alpha else None
    return Roughness(positions, value, change, ratio, cut, share, p_value, alpha, int(null.size))
