"""What a position table has learned: any (positions, dims) matrix in, arrays out.

Used on sinusoidal tables, BERT-style random tables, trained tables from checkpoints and the training lab
alike, so every function takes a plain matrix and validates it with the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .encodings import _checks

#: Largest table whose full (positions x positions) similarity matrix is built at once (512 MiB in float64).
MAX_SIMILARITY_POSITIONS = 8_192
#: Largest table t-SNE is run on.
MAX_TSNE_POSITIONS = 8_192
PROJECTIONS = ("pca", "tsne")


def _unit_rows(table: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    return table / np.where(norms > 0, norms, 1.0)


def evenly_spaced(n_positions: int, limit: int) -> np.ndarray:
    """At most ``limit`` evenly spaced position indices out of ``n_positions`` (all of them if few enough),
    always including the first and last position."""
    n = _checks.positive_int("n_positions", n_positions)
    limit = _checks.positive_int("limit", limit)
    if n <= limit:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, limit)).astype(np.int64))


def row_norms(table) -> np.ndarray:
    """Euclidean norm of every row, ||PE(p)||_2. For an even-width sinusoidal table it is sqrt(d/2) exactly,
    since each sin/cos pair contributes sin^2 + cos^2 = 1."""
    return np.linalg.norm(_checks.finite_table(table), axis=1)


def cosine_similarity_matrix(table) -> np.ndarray:
    """S[i, j] = PE(i) . PE(j) / (||PE(i)|| ||PE(j)||), shape (n, n). A zero row has similarity 0 to every row
    (as in scikit-learn). Sinusoidal tables give a band that depends on |i - j| only (Vaswani et al., 2017);
    learned tables show what training made of their rows."""
    table = _checks.finite_table(table)
    if table.shape[0] > MAX_SIMILARITY_POSITIONS:
        raise ValueError(
            f"a similarity matrix of {table.shape[0]:,} positions has {table.shape[0] ** 2:,} entries; posviz builds "
            f"it for at most {MAX_SIMILARITY_POSITIONS:,} positions, so take a slice or a stride of the table first"
        )
    unit = _unit_rows(table)
    return np.clip(unit @ unit.T, -1.0, 1.0)


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


def _lag_sums(table: np.ndarray, chunk: int = 256) -> np.ndarray:
    """sum_i table[i] . table[i + k] for k = 0 .. n - 1, via the Wiener-Khinchin theorem (zero-padded FFT)."""
    n = table.shape[0]
    size = 1 << (2 * n - 1).bit_length()
    power = np.zeros(size // 2 + 1)
    for start in range(0, table.shape[1], chunk):  # chunks of columns bound the memory, not a per-dim loop
        spectrum = np.fft.rfft(table[:, start : start + chunk], n=size, axis=0)
        power += (spectrum.real**2 + spectrum.imag**2).sum(axis=1)
    return np.fft.irfft(power, n=size)[:n]


def offset_profile(table) -> OffsetProfile:
    """Mean cosine similarity and mean dot product as a function of the offset k = |i - j|.

    mean_dot[k] = (1 / (n - k)) * sum_{i=0}^{n-k-1} PE(i) . PE(i + k), and likewise for the cosine on
    unit-normalised rows. Computed for all k at once with FFT autocorrelation, O(n d log n) time, no n x n
    matrix, so it works at the largest table sizes. For a sinusoidal table mean_dot[k] = sum_i cos(k omega_i).
    """
    table = _checks.finite_table(table)
    n = table.shape[0]
    pairs = np.arange(n, 0, -1)
    return OffsetProfile(
        offsets=np.arange(n),
        mean_cosine=np.clip(_lag_sums(_unit_rows(table)) / pairs, -1.0, 1.0),
        mean_dot=_lag_sums(table) / pairs,
        pairs=pairs,
    )


def project(table, method: str = "pca", seed: int = 0) -> np.ndarray:
    """Two-dimensional coordinates of every position, shape (n, 2).

    ``"pca"``: the first two principal components, U_k S_k of the SVD of the centred table (Pearson, 1901),
    each axis signed so that its largest loading is positive, making the result deterministic.
    ``"tsne"``: scikit-learn's t-SNE (van der Maaten & Hinton, 2008), PCA-initialised, perplexity
    min(30, (n - 1) / 3), reproducible from ``seed``.
    """
    _checks.choice("method", method, PROJECTIONS)
    table = _checks.finite_table(table)
    n = table.shape[0]
    if method == "pca":
        centred = table - table.mean(axis=0)
        u, s, vt = np.linalg.svd(centred, full_matrices=False)
        k = min(2, s.size)
        signs = np.sign(vt[np.arange(k), np.argmax(np.abs(vt[:k]), axis=1)])
        signs[signs == 0] = 1.0
        coords = np.zeros((n, 2))
        coords[:, :k] = u[:, :k] * s[:k] * signs
        return coords
    if n < 4:
        raise ValueError(f"t-SNE needs at least 4 positions to place; got {n}")
    if n > MAX_TSNE_POSITIONS:
        raise ValueError(f"t-SNE of {n:,} positions is too slow to be useful; use at most {MAX_TSNE_POSITIONS:,}")
    from sklearn.manifold import TSNE

    tsne = TSNE(n_components=2, perplexity=min(30.0, (n - 1) / 3), init="pca", random_state=int(seed))
    return tsne.fit_transform(table).astype(np.float64)


def position_probe(table, *, folds: int = 5, alpha: float = 1e-3, seed: int = 0) -> float:
    """How well a linear map reads the position index back out of a row: the mean absolute error, in positions,
    of a ``folds``-fold cross-validated linear regression from PE(p) to p (the probe of Wang & Chen, 2020,
    "What Do Position Embeddings Learn?"). A small ridge penalty ``alpha`` keeps the fit defined when the table
    is wider than it is long. 0 means positions are perfectly linearly decodable; a table of pure noise scores
    about n / 4, the error of always guessing the middle position.
    """
    table = _checks.finite_table(table)
    folds = _checks.positive_int("folds", folds)
    n = table.shape[0]
    if folds < 2 or n < 2 * folds:
        raise ValueError(f"a {folds}-fold probe needs folds >= 2 and at least {2 * folds} positions; got {n}")
    alpha = _checks.positive_float("alpha", alpha)
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import KFold, cross_val_predict

    target = np.arange(n, dtype=np.float64)
    splitter = KFold(n_splits=folds, shuffle=True, random_state=int(seed))
    predicted = cross_val_predict(Ridge(alpha=alpha), table, target, cv=splitter)
    return float(np.mean(np.abs(predicted - target)))
