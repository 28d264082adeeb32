"""The pages' store (posviz/ui/cache.py): ``TABLES``, one store bounded by the bytes it holds, keyed by parameters,
of the families' tables, loaded checkpoints, models' positions, the views' whole outputs and the results views share.

What it promises and is tested here: a table equals the core's and is read-only, the same object on every hit;
every byte an entry holds is counted (arrays inside result objects, tuples, dicts, torch tensors) and the least
recently used entries go once the budget is full; ``10`` and ``10.0`` are different keys; a checkpoint is keyed by its
content, so a changed upload is never answered with an old result; every session shares the entries.
"""

from __future__ import annotations

import dataclasses
import functools
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
    """Wraps a function of a module and counts its calls (the views call the core through its module)."""

    def __init__(self, monkeypatch, module, name: str):
        self.calls = 0
        original = getattr(module, name)

        @functools.wraps(original)
        def counted(*args, **kwargs):
            self.calls += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)


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


def test_the_budget_is_a_setting():
    """POSVIZ_CACHE_MB sets the budget in megabytes; nonsense is refused with a sentence, not taken as zero."""
    assert cache.budget_bytes({}) == cache.CACHE_MB_DEFAULT << 20
    assert cache.budget_bytes({"POSVIZ_CACHE_MB": " 512 "}) == 512 << 20
    for bad in ("0", "63", "-5", "1e3", "lots"):
        with pytest.raises(ValueError, match="POSVIZ_CACHE_MB"):
            cache.budget_bytes({"POSVIZ_CACHE_MB": bad})


# ------------------------------------------------------------------------------------------------ results


def test_a_page_cannot_change_a_held_result():
    """A result is held, never copied: its arrays are read-only, so changing one raises, and the next hit is the
    same object as the core computed it."""
    from posviz.lessons import sinusoidal as sinlesson
    from posviz.ui import views

    positions, similarity = views.shared(sinlesson.sinusoidal_similarity, 40, 8, 10)
    for array in (positions, similarity):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0
    again_positions, again = views.shared(sinlesson.sinusoidal_similarity, 40, 8, max_positions=10)
    assert again is similarity  # the held array itself, however the arguments are spelled
    np.testing.assert_array_equal(again_positions, posviz.evenly_spaced(40, 10))
    table = posviz.sinusoidal(40, 8)
    np.testing.assert_allclose(again, posviz.cosine_similarity_matrix(table[again_positions]), atol=1e-12)


def test_results_are_keyed_by_their_arguments_with_their_types(monkeypatch):
    """``origin_similarity(..., bases=(10000,))`` and ``(10000.0,)`` are two entries, down inside the tuple."""
    from posviz.lessons import sinusoidal as sinlesson
    from posviz.ui import views

    calls = Counter(monkeypatch, sinlesson, "origin_similarity")
    views.shared(sinlesson.origin_similarity, 64, 8, (10000,))
    views.shared(sinlesson.origin_similarity, 64, 8, (10000,))
    assert calls.calls == 1
    views.shared(sinlesson.origin_similarity, 64, 8, (10000.0,))
    views.shared(sinlesson.origin_similarity, 64, 8, bases=(10000.0,), max_points=1024)  # the same, spelled out
    assert calls.calls == 2


def test_settings_keys_keep_types_inside_containers_and_dicts():
    """``settings_key`` is what every key is made of: names sorted, each value with its type, inside tuples, lists
    and dicts too; ``held_tables`` reads the values back."""
    assert cache.settings_key({"b": 1, "a": 2.0}) == (("a", "float", 2.0), ("b", "int", 1))
    assert cache.settings_key({"x": (1, 1.0)}) != cache.settings_key({"x": (1.0, 1)})
    assert cache.settings_key({"p": {"base": 10}}) != cache.settings_key({"p": {"base": 10.0}})
    assert cache.settings_key({"p": {"a": 1, "b": 2}}) == cache.settings_key({"p": {"b": 2, "a": 1}})
    params = {"base": 500, "d_model": 8, "layout": "half", "n_positions": 12, "nested": ((1, 2.5), [3])}
    assert cache._untyped(cache._typed_value(params)) == params


def test_a_model_s_positions_are_kept_by_its_config_s_text(monkeypatch):
    from posviz import models

    reads = Counter(monkeypatch, models, "model_positions")
    text = cache.model_preset_text("llama3_1_8b")
    first = cache.model_positions(text)
    assert cache.model_positions(text) is first and reads.calls == 1
    direct = models.model_positions(text)  # (the second read)
    assert len(first.layers) == len(direct.layers) == 32
    np.testing.assert_array_equal(first.layers[0].inv_freq, direct.layers[0].inv_freq)
    assert not first.layers[0].inv_freq.flags.writeable  # held read-only
    other = cache.model_positions(text.replace("500000.0", "250000.0"))
    assert other is not first and other.layers[0].rope_theta == 250000.0


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
    assert ("checkpoint", other_digest, None) in cache.TABLES.keys()


# ------------------------------------------------------------------------------------------------ figures


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


# ------------------------------------------------------------------------------------------------ sessions


def test_two_sessions_share_the_entries(monkeypatch):
    """A second student opening the same view computes nothing: the core and the figure builder are not called
    again, and the table is the same held object."""
    from streamlit.testing.v1 import AppTest

    from posviz.lessons import sinusoidal as sinlesson

    similarity = Counter(monkeypatch, sinlesson, "sinusoidal_similarity")
    heatmaps = Counter(monkeypatch, figures, "heatmap")

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


def test_a_table_is_named_by_its_content_never_by_the_array(monkeypatch):
    """A table without parameters is a ``Table`` named by a digest of its bytes: the same bytes hit (a copy too) and a
    one-element change is a new entry, never a stale one; a family table is named by its parameters and built only
    on a miss."""
    from posviz.ui import views

    norms = Counter(monkeypatch, analysis, "row_norms")

    def row_norms(table: cache.Table) -> np.ndarray:
        return analysis.row_norms(table.matrix)

    array = np.random.default_rng(1).normal(size=(40, 6))
    first = views.shared(row_norms, cache.Table.content(array))
    assert views.shared(row_norms, cache.Table.content(array.copy())) is first
    assert norms.calls == 1
    changed = array.copy()
    changed[17, 3] += 1.0
    again = views.shared(row_norms, cache.Table.content(changed))
    assert norms.calls == 2 and again[17] != first[17]
    np.testing.assert_array_equal(again, posviz.row_norms(changed))

    builds = Counter(monkeypatch, cache, "family_table")
    params = {"base": 10000.0, "d_model": 16, "layout": "interleaved", "n_positions": 50}
    named = cache.Table.family("sinusoidal", params)
    assert builds.calls == 0  # naming a table builds nothing
    np.testing.assert_allclose(views.shared(row_norms, named), np.sqrt(8.0), atol=1e-12)  # sqrt(d/2) for every row
    views.shared(row_norms, cache.Table.family("sinusoidal", dict(params)))
    assert builds.calls == 1
