"""The pages' caches (posviz/ui/cache.py): results equal the core's, are read-only, and a cached entry keeps only
the array the page shows alive (``st.cache_resource`` holds up to 48 entries per function for the session's
lifetime, so an entry that pins a larger base array multiplies the server's memory)."""

from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz.ui import cache


def owned_bytes(array: np.ndarray) -> int:
    """Bytes of the array that really holds ``array``'s memory (a view keeps its whole base alive)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array.nbytes


@pytest.mark.parametrize("key", list(posviz.FAMILIES))
def test_family_matrix_is_the_core_result_read_only(key):
    fam = posviz.family(key)
    params = tuple(sorted(fam.defaults().items()))
    got = cache.family_matrix(key, params)
    np.testing.assert_array_equal(got, np.asarray(fam.build(**fam.defaults())))
    assert not got.flags.writeable
    with pytest.raises(ValueError):
        got[0, 0] = 1


@pytest.mark.parametrize("key", list(posviz.FAMILIES))
def test_cached_entry_holds_only_the_shown_matrix(key):
    """E.g. ALiBi shows one head: the entry must not keep the bias of every head alive (at the page's limits,
    64 heads x 1024 x 1024, that is 512 MiB pinned for an 8 MiB picture, per entry)."""
    fam = posviz.family(key)
    got = cache.family_matrix(key, tuple(sorted(fam.defaults().items())))
    assert owned_bytes(got) == got.nbytes, (
        f"the cached {key} matrix ({got.nbytes:,} bytes) keeps a {owned_bytes(got):,}-byte base array alive"
    )


def test_cache_is_keyed_by_parameters():
    a = cache.family_matrix("alibi", (("causal", True), ("head", 1), ("n_heads", 8), ("seq_len", 16)))
    b = cache.family_matrix("alibi", (("causal", True), ("head", 2), ("n_heads", 8), ("seq_len", 16)))
    np.testing.assert_array_equal(a, posviz.alibi_bias(8, 16)[1])
    np.testing.assert_array_equal(b, posviz.alibi_bias(8, 16)[2])
    assert cache.call(posviz.alibi_slopes, 4) is cache.call(posviz.alibi_slopes, 4)  # a hit returns the entry
    np.testing.assert_array_equal(cache.call(posviz.alibi_slopes, 5), posviz.alibi_slopes(5))


def test_similarity_uses_evenly_spaced_positions():
    params = (("base", 10000.0), ("d_model", 16), ("layout", "interleaved"), ("n_positions", 50))
    positions, sim = cache.similarity("sinusoidal", params, 10)
    np.testing.assert_array_equal(positions, np.unique(np.round(np.linspace(0, 49, 10)).astype(int)))
    assert positions[0] == 0 and positions[-1] == 49
    table = posviz.sinusoidal(50, 16)
    np.testing.assert_allclose(sim, posviz.cosine_similarity_matrix(table[positions]), atol=1e-12)


def test_the_cache_is_bounded_by_bytes_and_forgets_the_least_recently_used():
    store = cache._BudgetCache(budget=3 * 8 * 100)  # three arrays of 100 float64
    made = []

    def compute(i):
        def run():
            made.append(i)
            return np.full(100, float(i))

        return run

    for i in range(3):
        store.get(i, compute(i))
    store.get(0, compute(0))  # touch 0: now 1 is the least recently used
    store.get(3, compute(3))  # evicts 1
    assert store.nbytes <= store.budget
    store.get(0, compute(0))
    store.get(1, compute(1))  # recomputed
    assert made == [0, 1, 2, 3, 1]
    huge = store.get("huge", lambda: np.zeros(1000))  # larger than the budget: returned, not kept
    assert huge.shape == (1000,) and not huge.flags.writeable
    assert "huge" not in store._entries


def test_tables_without_parameters_are_cached_by_content():
    """Same bytes hit the cache; a one-element change is a different entry (never a stale result)."""
    from posviz import analysis

    table = np.random.default_rng(1).normal(size=(40, 6))
    first = cache.on_table(posviz.row_norms, analysis.table_digest(table), table)
    assert cache.on_table(posviz.row_norms, analysis.table_digest(table.copy()), table.copy()) is first
    changed = table.copy()
    changed[17, 3] += 1.0
    again = cache.on_table(posviz.row_norms, analysis.table_digest(changed), changed)
    np.testing.assert_array_equal(again, posviz.row_norms(changed))
    assert again[17] != first[17]
