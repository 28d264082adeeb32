"""posviz.analysis.read_table: is a position table tiny, random-looking, or does it order its positions?

Oracles: tables whose nature is known by construction (noise of BERT's initialisation, the sinusoidal formula, the
trained example of ``assets/trained``, noise with a position written into one column), and the probe's own
definition recomputed here with scikit-learn's ridge regression.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import KFold, cross_val_predict

from posviz import analysis

ROOT = Path(__file__).resolve().parents[2]


def sinusoidal(n: int, d: int) -> np.ndarray:
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)
    table = np.empty((n, d))
    table[:, 0::2], table[:, 1::2] = np.sin(np.outer(np.arange(n), omega)), np.cos(np.outer(np.arange(n), omega))
    return table


def ridge_probe(table: np.ndarray) -> float:
    """The probe's idea, independently: a 5-fold cross-validated ridge regression from a row to its position, with a
    penalty chosen inside each training fold, scored by its mean absolute error in positions."""
    target = np.arange(table.shape[0], dtype=float)
    scale = np.abs(table - table.mean(axis=0)).max()
    model = RidgeCV(alphas=np.append(10.0 ** np.arange(-8.0, 4.25, 0.5), 1e12) * table.shape[1])
    folds = KFold(5, shuffle=True, random_state=0)
    return float(np.mean(np.abs(cross_val_predict(model, table / scale, target, cv=folds) - target)))


@pytest.mark.parametrize(("n", "d"), [(16, 8), (64, 32), (128, 16), (512, 64)])
@pytest.mark.parametrize("seed", range(3))
def test_noise_of_bert_s_initialisation_reads_as_random(n, d, seed):
    table = np.random.default_rng(seed).normal(0.0, 0.02, size=(n, d))
    reading = analysis.read_table(table)
    assert reading.kind == "random"
    assert reading.n_positions == n and reading.guess == pytest.approx(np.mean(np.abs(np.arange(n) - n // 2)))
    assert reading.probe == pytest.approx(analysis.position_probe(table))
    assert ridge_probe(table) > 0.7 * reading.guess  # noise is noise to any ridge probe


@pytest.mark.parametrize(("n", "d"), [(16, 8), (64, 32), (1024, 64)])
def test_the_sinusoidal_table_orders_its_positions(n, d):
    reading = analysis.read_table(sinusoidal(n, d))
    assert reading.kind == "ordered" and reading.probe < 0.05 * reading.guess
    assert ridge_probe(sinusoidal(n, d)) < 0.25 * reading.guess


def test_the_trained_example_orders_its_positions():
    table = np.load(ROOT / "assets" / "trained" / "example_positions.npy")
    reading = analysis.read_table(table)
    assert reading.kind == "ordered"
    assert ridge_probe(table) < 0.5 * reading.guess  # a quarter of the guess with our probe, about that with sklearn's


@pytest.mark.parametrize("strength", [0.0, 10.0])
def test_the_verdict_follows_what_the_rows_say_about_their_position(strength):
    """Noise with the position written into one column turns from random to ordered."""
    n = 200
    table = np.random.default_rng(5).normal(0.0, 0.02, size=(n, 16))
    table[:, 3] += strength * 0.02 * np.arange(n) / n
    assert analysis.read_table(table).kind == ("ordered" if strength else "random")


@pytest.mark.parametrize("n", [1, 2, 9, 10, 15])
def test_fewer_than_sixteen_positions_are_too_few_to_tell(n):
    for table in (np.random.default_rng(n).normal(size=(n, 4)), sinusoidal(n, 4)):
        reading = analysis.read_table(table)
        assert reading.kind == "tiny" and reading.n_positions == n
        assert (reading.probe is None) == (n < 10)  # the probe's five folds need two positions each


def test_a_sampled_probe_reads_a_long_table():
    """Past ``limit`` rows the probe reads evenly spaced positions, each against its true position."""
    table = sinusoidal(4096, 32)
    reading = analysis.read_table(table, limit=512)
    assert reading.kind == "ordered" and reading.guess == pytest.approx(1024.0)
    assert reading.probe == pytest.approx(analysis.sampled_position_probe(table, 512))


@pytest.mark.parametrize("bad", [np.zeros((0, 4)), np.zeros(5), np.full((20, 3), np.nan)])
def test_what_is_not_a_table_gets_a_sentence(bad):
    with pytest.raises(ValueError, match="table|position|NaN|finite"):
        analysis.read_table(bad)
