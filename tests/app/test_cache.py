"""The pages' cache (posviz/ui/cache.py: one process-wide store of core results keyed by parameters, bounded by the
bytes of the arrays it holds): results equal the core's, are read-only, and a cached entry keeps only the array the
page shows alive (an entry that pins a larger base array would hold memory the budget does not count)."""

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


# ------------------------------------------------------------------------------------------ built figures


def _frozen(array) -> np.ndarray:
    array = np.array(array, dtype=np.float64)
    array.flags.writeable = False
    return array


def test_a_figure_of_the_same_read_only_arrays_and_values_is_built_once():
    from posviz import figures

    cache.FIGURE_STORE.clear()
    x, y = _frozen(np.arange(5)), _frozen(np.arange(5) ** 2)
    first = cache.figure(figures.lines, x, {"y": y}, title="t", x_title="x", y_title="y")
    assert cache.figure(figures.lines, x, {"y": y}, title="t", x_title="x", y_title="y") is first
    np.testing.assert_array_equal(np.asarray(first.data[0].y, dtype=float), y)
    # any difference is another figure: a value, a type (1 is not 1.0 is not True), an array that is equal but not
    # the same object, the builder
    other = cache.figure(figures.lines, x, {"y": y}, title="u", x_title="x", y_title="y")
    assert other is not first and other.layout.title.text == "u"
    assert cache.figure(figures.lines, x, {"y": _frozen(y)}, title="t", x_title="x", y_title="y") is not first
    assert cache.figure(figures.bars, x, y, title="t", x_title="x", y_title="y") is not first


def test_a_writeable_array_is_never_a_key():
    """A page may change a writeable array in place between reruns, so its figure is built every time."""
    from posviz import figures

    x, y = np.arange(4.0), np.ones(4)
    first = cache.figure(figures.lines, x, {"y": y}, title="t", x_title="x", y_title="y")
    y[2] = 7.0
    second = cache.figure(figures.lines, x, {"y": y}, title="t", x_title="x", y_title="y")
    assert second is not first
    np.testing.assert_array_equal(np.asarray(second.data[0].y, dtype=float), [1, 1, 7, 1])


def test_a_dead_array_never_answers_for_a_new_one_with_its_id():
    """Entries hold weak references: once an array is gone, a new array at the same address is not a hit."""
    import gc

    from posviz import figures

    cache.FIGURE_STORE.clear()
    built, addresses = [], set()
    for value in range(30):  # freed arrays' addresses are reused quickly; each figure must show its own value
        y = _frozen(np.full(3, float(value)))
        addresses.add(id(y))
        fig = cache.figure(figures.bars, ("a", "b", "c"), y, title="t", x_title="x", y_title="y")
        built.append(float(fig.data[0].y[0]))
        del y, fig
        gc.collect()
    assert len(addresses) < 30  # the situation this test is about did happen
    assert built == [float(v) for v in range(30)]


def test_the_figure_cache_is_bounded():
    from posviz import figures

    cache.FIGURE_STORE.clear()
    x = _frozen(np.arange(3))
    for k in range(cache.FIGURES + 10):
        cache.figure(figures.bars, ("a", "b", "c"), x, title=str(k), x_title="x", y_title="y")
    assert len(cache.FIGURE_STORE._entries) == cache.FIGURES


def test_figures_of_arrays_that_are_gone_are_dropped():
    import gc

    from posviz import figures

    cache.FIGURE_STORE.clear()
    kept = _frozen(np.arange(3))
    cache.figure(figures.bars, ("a", "b", "c"), kept, title="kept", x_title="x", y_title="y")
    for k in range(5):
        gone = _frozen(np.full(3, float(k)))
        cache.figure(figures.bars, ("a", "b", "c"), gone, title="gone", x_title="x", y_title="y")
        del gone
        gc.collect()
    assert len(cache.FIGURE_STORE._entries) == 2  # the kept one and the last one built


def test_a_shared_figure_sends_the_dictionary_of_the_figure_it_was_built_as():
    from posviz import figures

    cache.FIGURE_STORE.clear()
    x, y = _frozen(np.linspace(0, 1, 50)), _frozen(np.sin(np.linspace(0, 1, 50)))
    shared = cache.figure(figures.lines, x, {"sin": y}, title="t", x_title="x", y_title="y")
    assert isinstance(shared, cache.SharedFigure)
    assert shared.to_dict() is shared.to_dict()  # computed once, for every rerun that draws it
    fresh = figures.lines(x, {"sin": y}, title="t", x_title="x", y_title="y").to_json()
    assert shared.to_json() == fresh


def test_core_results_in_dicts_and_objects_are_read_only_and_key_figures():
    """A dict of arrays (compare.beyond_training) and result objects are frozen by the cache, so figures built
    from them, through dataclass arguments too (compare's Series), are kept."""
    from posviz.figures import compare as cmpfig
    from posviz.lessons import compare

    cache.FIGURE_STORE.clear()
    curves = cache.call(compare.beyond_training, 16, 64)
    assert all(not a.flags.writeable for pair in curves.values() for a in pair if isinstance(a, np.ndarray))
    rows = [("y", [cmpfig.Series("rope", "RoPE", *curves["rope"])])]
    first = cache.figure(cmpfig.panels, rows, title="t", x_title="x")
    again = [("y", [cmpfig.Series("rope", "RoPE", *cache.call(compare.beyond_training, 16, 64)["rope"])])]
    assert cache.figure(cmpfig.panels, again, title="t", x_title="x") is first


def test_views_of_a_cached_array_key_by_their_owner_and_window():
    """``far[h]`` is a new view object on every rerun: it is the same figure when it shows the same window of the
    same read-only owner, another when the window differs; a view of a writeable owner is never a key."""
    from posviz import figures

    cache.FIGURE_STORE.clear()
    owner = _frozen(np.arange(12.0).reshape(3, 4))

    def draw(row):
        return cache.figure(figures.lines, owner[0], {"row": row}, title="t", x_title="x", y_title="y")

    first = draw(owner[1])
    assert draw(owner[1]) is first
    assert draw(owner[2]) is not first
    np.testing.assert_array_equal(np.asarray(draw(owner[2]).data[0].y, dtype=float), [8, 9, 10, 11])
    assert draw(owner[1, ::2]) is not first  # same start, another stride
    loose = np.arange(4.0)
    view = loose[:]
    view.flags.writeable = False
    shown = cache.figure(figures.lines, owner[0], {"row": view}, title="t", x_title="x", y_title="y")
    loose[0] = 99.0  # its owner can still change: never served from the cache
    again = cache.figure(figures.lines, owner[0], {"row": view}, title="t", x_title="x", y_title="y")
    assert again is not shown and float(again.data[0].y[0]) == 99.0


def test_the_cache_budget_is_a_setting():
    """POSVIZ_CACHE_MB sets the budget in megabytes; nonsense is refused with a sentence, not taken as zero."""
    from posviz.ui.cache import CACHE_MB_DEFAULT, budget_bytes

    assert budget_bytes({}) == CACHE_MB_DEFAULT << 20
    assert budget_bytes({"POSVIZ_CACHE_MB": " 512 "}) == 512 << 20
    for bad in ("0", "63", "-5", "1e3", "lots"):
        with pytest.raises(ValueError, match="POSVIZ_CACHE_MB"):
            budget_bytes({"POSVIZ_CACHE_MB": bad})
