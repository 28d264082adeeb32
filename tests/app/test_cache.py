"""The pages' cache (posviz/ui/cache.py): thin wrappers with the core functions' parameters over Streamlit's
``st.cache_data`` (small results, a fresh copy on every hit) and ``TABLES``, one store bounded by the bytes it holds,
of the large position tables, the results that can reach a million numbers and the built figures.

What it promises and is tested here: results equal the core's and a page cannot change a cached one; every byte a
``TABLES`` entry holds is counted (arrays inside result objects, tuples, dicts, torch tensors) and the least recently
used entries go once the budget is full; ``10`` and ``10.0`` are different keys; a table without parameters is keyed
by its content, so a changed upload is never answered with an old result; every session shares the entries.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json

import numpy as np
import pytest
import streamlit as st

import posviz
from posviz import analysis, figures
from posviz.ui import cache

from ._support import APP_FILE, PAGE_FILES


@pytest.fixture(autouse=True)
def empty_caches():
    """Every test starts from empty caches (they are the process's, shared with the other tests)."""
    cache.TABLES.clear()
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    cache.TABLES.clear()


def owned_bytes(array: np.ndarray) -> int:
    """Bytes of the array that really holds ``array``'s memory (a view keeps its whole base alive)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array.nbytes


class Counter:
    """Wraps a function of a module and counts its calls. A cache entry that is the function itself under a cache
    (``cache.rope_inv_freq = _results(rope.rope_inv_freq)``) holds the original, so it is replaced by the same
    cache over the counting function; a written-out wrapper calls the module's attribute, which is patched."""

    def __init__(self, monkeypatch, module, name: str):
        self.calls = 0
        original = getattr(module, name)

        @functools.wraps(original)
        def counted(*args, **kwargs):
            self.calls += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
        for entry, value in list(vars(cache).items()):
            if value is not counted and getattr(value, "__wrapped__", None) is original:
                recache = cache._results if type(value).__name__ == "CachedFunc" else cache._held
                monkeypatch.setattr(cache, entry, recache(counted))


# ------------------------------------------------------------------------------------------------ large tables


@pytest.mark.parametrize("key", list(posviz.FAMILIES))
def test_family_table_is_the_core_result_read_only(key):
    fam = posviz.family(key)
    got = cache.family_table(key, fam.defaults())
    np.testing.assert_array_equal(got, np.asarray(fam.build(**fam.defaults())))
    assert not got.flags.writeable
    with pytest.raises(ValueError):
        got[(0,) * got.ndim] = 1
    assert cache.family_table(key, fam.defaults()) is got  # a hit is the same array, never a copy


@pytest.mark.parametrize("key", list(posviz.FAMILIES))
def test_a_held_table_keeps_only_the_shown_matrix_alive(key):
    """E.g. ALiBi shows one head: the entry must not keep the bias of every head alive (at the page's limits,
    64 heads x 1024 x 1024, that is 512 MiB pinned for an 8 MiB picture, per entry)."""
    fam = posviz.family(key)
    got = cache.family_table(key, fam.defaults())
    assert owned_bytes(got) == got.nbytes, f"the {key} table keeps a {owned_bytes(got):,}-byte base alive"
    assert cache.TABLES.nbytes >= got.nbytes


def test_tables_are_keyed_by_parameters_and_their_types():
    """Another head is another table; an int and a float of the same value are two entries (``settings_key``)."""
    alibi = {"causal": True, "n_heads": 8, "seq_len": 16}
    np.testing.assert_array_equal(cache.family_table("alibi", {**alibi, "head": 1}), posviz.alibi_bias(8, 16)[1])
    np.testing.assert_array_equal(cache.family_table("alibi", {**alibi, "head": 2}), posviz.alibi_bias(8, 16)[2])
    sin = {"d_model": 16, "layout": "interleaved", "n_positions": 20}
    cache.family_table("sinusoidal", {**sin, "base": 10000})
    cache.family_table("sinusoidal", {**sin, "base": 10000.0})
    assert len(cache.TABLES) == 4
    assert sorted(type(p["base"]).__name__ for p in cache.held_tables("sinusoidal")) == ["float", "int"]


def test_the_store_is_bounded_by_bytes_and_forgets_the_least_recently_used():
    store = cache.TableStore(budget=3 * (8 * 100 + 200))  # three arrays of 100 float64, with their headers
    made = []

    def compute(i):
        def run():
            made.append(i)
            return np.full(100, float(i))

        return run

    for i in range(3):
        store.get((i,), compute(i))
    store.get((0,), compute(0))  # touch 0: now 1 is the least recently used
    store.get((3,), compute(3))  # evicts 1
    assert store.nbytes <= store.budget and len(store) == 3
    store.get((0,), compute(0))
    store.get((1,), compute(1))  # recomputed
    assert made == [0, 1, 2, 3, 1]
    huge = store.get(("huge",), lambda: np.zeros(1000))  # larger than the budget: returned, not kept
    assert huge.shape == (1000,) and not huge.flags.writeable
    assert ("huge",) not in store.keys()


def test_a_result_object_is_counted_with_every_array_it_holds():
    """A 41 kB ``PositionSpectrum`` is 41 kB of the budget, not 0: the store evicts for it."""
    spectrum = analysis.position_spectrum(posviz.sinusoidal(256, 64))
    arrays = sum(v.nbytes for v in vars(spectrum).values() if isinstance(v, np.ndarray))
    assert arrays > 10_000
    assert arrays <= cache.nbytes(spectrum) <= arrays + 4_096  # the arrays and the object's small headers
    store = cache.TableStore(budget=int(1.5 * arrays))
    store.get(("first",), lambda: analysis.position_spectrum(posviz.sinusoidal(256, 64)))
    store.get(("second",), lambda: analysis.position_spectrum(posviz.sinusoidal(256, 64, base=100.0)))
    assert store.keys() == [("second",)], "two spectra do not fit in 1.5 of one: the first must have gone"
    assert store.nbytes == cache.nbytes(store.get(("second",), lambda: None))


def test_nbytes_counts_containers_tensors_and_shared_memory_once():
    torch = pytest.importorskip("torch")
    a, b = np.zeros((10, 10)), np.ones(7, dtype=np.float32)
    both = a.nbytes + b.nbytes
    overhead = cache.nbytes(((a, b), {"x": [a[2:], b]})) - both  # a[2:] is a's memory again: counted once
    assert 0 < overhead < 1_000
    assert cache.nbytes(torch.zeros(50, 4, dtype=torch.float64)) == 50 * 4 * 8
    model = torch.nn.Linear(8, 3)  # 8 x 3 weights and 3 biases, float32
    assert cache.nbytes(model) == (8 * 3 + 3) * 4

    @dataclasses.dataclass(frozen=True)
    class Run:
        losses: np.ndarray
        model: object
        config: dict

    run = Run(np.zeros(1000), model, {"steps": 10})
    assert 8_000 + (8 * 3 + 3) * 4 <= cache.nbytes(run) <= 8_000 + (8 * 3 + 3) * 4 + 2_000


def test_arrays_inside_a_held_result_are_read_only():
    @dataclasses.dataclass(frozen=True)
    class Result:
        table: np.ndarray
        parts: dict

    parent = np.arange(20.0)
    held = cache.TABLES.get(("result",), lambda: Result(parent.reshape(4, 5), {"row": parent[:5]}))
    assert not held.table.flags.writeable and not held.parts["row"].flags.writeable
    assert held.parts["row"].base is None, "a view would keep its whole parent alive"


def test_a_large_held_table_has_its_preview_kept_beside_it(monkeypatch):
    calls = Counter(monkeypatch, cache.figures, "block_mean")
    params = {"base": 10000.0, "d_model": 1100, "layout": "interleaved", "n_positions": 1100}
    table = cache.family_table("sinusoidal", params)
    first = cache.preview(table)
    assert cache.preview(table) is first and calls.calls == 1
    np.testing.assert_array_equal(first, posviz.figures.block_mean(posviz.sinusoidal(1100, 1100)))
    assert cache.preview(np.array(table)) is None  # an equal copy is not the held table


def test_the_budget_is_a_setting():
    """POSVIZ_CACHE_MB sets the budget in megabytes; nonsense is refused with a sentence, not taken as zero."""
    assert cache.budget_bytes({}) == cache.CACHE_MB_DEFAULT << 20
    assert cache.budget_bytes({"POSVIZ_CACHE_MB": " 512 "}) == 512 << 20
    for bad in ("0", "63", "-5", "1e3", "lots"):
        with pytest.raises(ValueError, match="POSVIZ_CACHE_MB"):
            cache.budget_bytes({"POSVIZ_CACHE_MB": bad})


# ------------------------------------------------------------------------------------------------ results


def test_a_page_cannot_change_a_cached_result():
    """A small result (``st.cache_data``) is a copy on every hit: changing it leaves the next hit as the core
    computed it. A large one (held in ``TABLES``, never copied) is read-only: changing it raises."""
    slopes = cache.alibi_slopes(8)
    slopes[:] = 7.0
    np.testing.assert_array_equal(cache.alibi_slopes(8), 2.0 ** (-np.arange(1, 9)))

    positions, similarity = cache.sinusoidal_similarity(40, 8, 10)
    for array in (positions, similarity):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0
    again_positions, again = cache.sinusoidal_similarity(40, 8, 10)
    assert again is similarity  # the held array itself
    np.testing.assert_array_equal(again_positions, posviz.evenly_spaced(40, 10))
    table = posviz.sinusoidal(40, 8)
    np.testing.assert_allclose(again, posviz.cosine_similarity_matrix(table[again_positions]), atol=1e-12)


def test_held_results_are_keyed_by_their_arguments_with_their_types(monkeypatch):
    """``origin_similarity(..., bases=(10000,))`` and ``(10000.0,)`` are two entries, down inside the tuple."""
    from posviz.lessons import sinusoidal as sinlesson

    calls = Counter(monkeypatch, sinlesson, "origin_similarity")
    cache.origin_similarity(64, 8, (10000,))
    cache.origin_similarity(64, 8, (10000,))
    assert calls.calls == 1
    cache.origin_similarity(64, 8, (10000.0,))
    cache.origin_similarity(64, 8, bases=(10000.0,), max_points=1024)  # the same call, spelled out
    assert calls.calls == 2


def test_an_int_and_a_float_are_different_entries(monkeypatch):
    """``f(10)`` and ``f(10.0)`` are two keys: each call reaches the core with its own argument."""
    seen = []
    monkeypatch.setattr(cache, "constant_guess_error", cache._results(lambda n: seen.append(n) or repr(n)))
    assert cache.constant_guess_error(10) == "10"
    assert cache.constant_guess_error(10.0) == "10.0"
    assert cache.constant_guess_error(10) == "10"
    assert [type(n) for n in seen] == [int, float]


def test_an_analysis_is_keyed_by_the_table_name_never_the_array(monkeypatch):
    """A family table is named by its parameters and built only on a miss; a table without parameters is named
    by a digest of its bytes, so the same bytes hit and a one-element change is a new entry, never a stale one."""
    builds = Counter(monkeypatch, cache, "family_table")
    params = {"base": 10000.0, "d_model": 16, "layout": "interleaved", "n_positions": 50}
    positions, sim = cache.sampled_similarity(cache.Table.family("sinusoidal", params), 10)
    cache.sampled_similarity(cache.Table.family("sinusoidal", params), 10)
    assert builds.calls == 1
    np.testing.assert_array_equal(positions, posviz.evenly_spaced(50, 10))
    np.testing.assert_allclose(sim, posviz.cosine_similarity_matrix(posviz.sinusoidal(50, 16)[positions]), atol=1e-12)

    norms = Counter(monkeypatch, analysis, "row_norms")
    table = np.random.default_rng(1).normal(size=(40, 6))
    first = cache.row_norms(cache.Table.content(table))
    cache.row_norms(cache.Table.content(table.copy()))
    assert norms.calls == 1
    changed = table.copy()
    changed[17, 3] += 1.0
    again = cache.row_norms(cache.Table.content(changed))
    assert norms.calls == 2
    np.testing.assert_array_equal(again, posviz.row_norms(changed))
    assert again[17] != first[17]


def test_a_table_is_probed_once_for_its_reading_and_its_probe_view(monkeypatch):
    """The inspector reads a table (ordered, noise or tiny) from its position probe and draws that probe too: one
    probe, and the reading is the core's own verdict."""
    array = np.cumsum(np.random.default_rng(23).normal(size=(96, 8)), axis=0)  # a random walk orders its rows
    expected_reading, expected_probe = analysis.read_table(array, 1024), analysis.sampled_position_probe(array, 1024)
    probes = Counter(monkeypatch, analysis, "sampled_position_probe")
    table = cache.Table.content(array)
    reading = cache.read_table(table, 1024)
    error = cache.sampled_position_probe(table, 1024)
    assert probes.calls == 1
    assert reading == expected_reading and error == expected_probe == reading.probe


def test_a_changed_upload_is_loaded_again():
    """Two uploads that differ in one value are two checkpoints; the same bytes again are the held one."""
    import io

    def upload(table) -> bytes:
        buffer = io.BytesIO()
        np.save(buffer, table)
        return buffer.getvalue()

    table = np.random.default_rng(2).normal(size=(30, 8))
    digest, found = cache.checkpoint(upload(table))
    assert cache.checkpoint(upload(table)) == (digest, found)
    changed = table.copy()
    changed[5, 5] = 3.0
    other_digest, other = cache.checkpoint(upload(changed))
    assert other_digest != digest
    np.testing.assert_array_equal(other.table, changed)
    assert not other.matrix.flags.writeable
    assert cache._array_key(other.table)[:2] == ("held", ("checkpoint", other_digest, None, "matrix"))


# ------------------------------------------------------------------------------------------------ figures


def test_a_figure_is_built_once_for_the_same_values_and_again_for_others(monkeypatch):
    """Figures are keyed by the exact values of their arguments: a copy hits, a change in one element of a large
    array builds another, and so do another type of the same number and another title."""
    builds = Counter(monkeypatch, cache.figures, "heatmap")
    matrix = np.random.default_rng(3).normal(size=(800, 800))  # 640,000 elements: Streamlit's own hash samples
    first = cache.heatmap_figure(matrix, title="t", x_title="x", y_title="y")
    assert cache.heatmap_figure(matrix.copy(), title="t", x_title="x", y_title="y") is first
    assert builds.calls == 1
    changed = matrix.copy()
    changed[400, 123] += 1.0
    assert cache.heatmap_figure(changed, title="t", x_title="x", y_title="y") is not first
    assert cache.heatmap_figure(matrix, title="another", x_title="x", y_title="y") is not first
    assert cache.heatmap_figure(matrix, title="t", x_title="x", y_title="y", zmin=1) is not (
        cache.heatmap_figure(matrix, title="t", x_title="x", y_title="y", zmin=1.0)
    )
    assert builds.calls == 5


def test_the_heatmap_figure_takes_the_builders_parameters_and_a_given_reduced():
    """``cache.heatmap_figure`` is :func:`posviz.figures.heatmap` under the figure cache, with its parameters: block
    means the caller already has (``reduced``) are what it draws, and only without them the held preview."""
    assert inspect.signature(cache.heatmap_figure) == inspect.signature(figures.heatmap)
    matrix = np.random.default_rng(5).normal(size=(600, 600))  # more cells than are drawn exactly
    means = -figures.block_mean(matrix)  # not the matrix's own block means: only a given reduced draws these
    got = cache.heatmap_figure(matrix, title="t", x_title="x", y_title="y", reduced=means)
    want = figures.heatmap(matrix, title="t", x_title="x", y_title="y", reduced=means)
    assert got.data[0].source == want.data[0].source
    assert got.data[0].source != figures.heatmap(matrix, title="t", x_title="x", y_title="y").data[0].source


def test_a_held_figure_sends_the_dictionary_of_the_figure_it_was_built_as():
    """Its dictionary is computed once (every rerun's ``st.plotly_chart`` asks for it) and is the built figure's;
    the figure is a new object, the builder's own is never changed, and it counts every byte it holds."""
    import tracemalloc

    from posviz import figures

    x = np.linspace(0, 1, 2000)
    built = figures.lines(x, {"sin": np.sin(x)}, title="t", x_title="x", y_title="y")
    expected = built.to_json()
    tracemalloc.start()
    held = cache.HeldFigure(built)
    allocated, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert type(built) is posviz.figures.base.go.Figure and built.to_json() == expected
    assert held.to_dict() is held.to_dict()
    assert held.to_json() == expected
    assert json.loads(posviz.figures.base.go.Figure(held).to_json()) == json.loads(expected)  # a copy to change
    assert cache.nbytes(held) >= allocated


def test_a_figure_of_a_held_array_is_keyed_by_its_entry_not_its_bytes():
    """A 1,100 x 1,100 table held in TABLES is named by its key and window, never read whole to key a figure; a
    held result inside a tuple (a similarity matrix) too."""
    params = {"base": 10000.0, "d_model": 1100, "layout": "interleaved", "n_positions": 1100}
    table = cache.family_table("sinusoidal", params)
    key = cache._array_key(table)
    assert key[0] == "held" and key[1] == ("family", "sinusoidal", cache.settings_key(params))
    assert cache._array_key(table[1:]) != key  # another window of the same table
    _, similarity = cache.sinusoidal_similarity(100, 8, 50)
    assert cache._array_key(similarity)[1][1:3] == (
        "sinusoidal_similarity",
        cache.settings_key(
            {"base": 10000.0, "d_model": 8, "layout": "interleaved", "max_positions": 50, "n_positions": 100}
        ),
    )


# ------------------------------------------------------------------------------------------------ sessions


def test_two_sessions_share_the_entries(monkeypatch):
    """A second student opening the same view computes nothing: the core and the figure builder are not called
    again, and the table is the same held object."""
    from streamlit.testing.v1 import AppTest

    from posviz.lessons import sinusoidal as sinlesson

    similarity = Counter(monkeypatch, sinlesson, "sinusoidal_similarity")
    heatmaps = Counter(monkeypatch, cache.figures, "heatmap")

    def student():
        at = AppTest.from_file(str(APP_FILE), default_timeout=60)
        at.switch_page(PAGE_FILES["sinusoidal"])
        at.run()
        assert not at.exception
        return at

    student()
    assert similarity.calls == 1 and heatmaps.calls == 2  # the table's heatmap and the similarity's
    held = cache.TABLES.keys()
    second = student()
    assert similarity.calls == 1 and heatmaps.calls == 2
    assert cache.TABLES.keys() == held
    assert len(second.get("plotly_chart")) == 2
