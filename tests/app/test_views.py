"""Views (posviz/ui/views/): functions of their settings that return what a page shows, cached as a whole.

What is promised and tested here: a view's output is kept by its settings (values and types) and the language, so
the same settings give the same shared object and any changed one a new output; its numbers are those the core
gives, checked against an independent derivation; a refused setting raises the core's ValueError and is never
cached; a view module calls the core and the figure builders itself, never the page cache's aliases or Streamlit.
"""

from __future__ import annotations

import ast
import functools
import pathlib

import numpy as np
import pytest
import streamlit as st

from posviz.ui import cache, views
from posviz.ui.views import rope as rope_views

from ._support import assert_matrix, heatmap_z

VIEWS_DIR = pathlib.Path(views.__file__).parent


pytestmark = pytest.mark.usefixtures("views_in_english")


def mean_cos_scores(positions_q, positions_k, head_dim: int, base: float) -> np.ndarray:
    """S[m, n] = mean_i cos((m - n) theta_i) with theta_i = base^(-2i/d): RoPE's score for q = k = ones, derived
    by hand (each pair contributes 2 cos((m - n) theta_i), and S divides the sum by d)."""
    theta = base ** (-np.arange(0, head_dim, 2) / head_dim)
    gap = np.subtract.outer(np.asarray(positions_q, float), np.asarray(positions_k, float))
    return np.cos(gap[..., None] * theta).mean(axis=-1)


def test_same_settings_give_the_same_output_and_a_changed_one_a_new_output():
    first = rope_views.scores(40, 16, 1000.0, None, 100)
    assert rope_views.scores(40, 16, 1000.0, None, 100) is first
    assert rope_views.scores(n=40, head_dim=16, base=1000.0, seed=None, shift=100) is first
    assert rope_views.scores(40, 16, 1000.0, None, 101) is not first
    assert rope_views.scores(40, 16, 1000.0, 3, 100) is not first
    # 1000 and 1000.0 are drawn alike here but keyed apart: a value's type can change what a figure says
    assert rope_views.scores(40, 16, 1000, None, 100) is not first


def test_the_language_is_part_of_the_key():
    english = rope_views.scores(40, 16, 1000.0, None, 7)
    st.session_state["lang"] = "zh"
    chinese = rope_views.scores(40, 16, 1000.0, None, 7)
    assert chinese is not english
    assert (
        chinese.figure("scores").fig.to_dict()["layout"]["title"]
        != english.figure("scores").fig.to_dict()["layout"]["title"]
    )
    assert_matrix(heatmap_z(chinese.figure("scores").fig.to_dict()), heatmap_z(english.figure("scores").fig.to_dict()))


def test_scores_are_the_hand_derived_mean_of_cosines():
    n, head_dim, base, shift = 40, 16, 1000.0, 100
    out = rope_views.scores(n, head_dim, base, None, shift)
    expected = mean_cos_scores(np.arange(n), np.arange(n), head_dim, base)
    assert_matrix(heatmap_z(out.figure("scores").fig.to_dict()), expected, what="scores")
    assert_matrix(out.figure("scores").data, expected, atol=1e-12, what="scores data")
    k = min(n, rope_views.SHIFT_POSITIONS)
    shifted = out.figure("shift").data["S_shifted"].reshape(k, k)
    assert_matrix(shifted, mean_cos_scores(np.arange(k) + shift, np.arange(k) + shift, head_dim, base), atol=1e-9)
    assert out.figure("shift").options == {"chart": "shift_fig"}


def test_a_view_equals_its_uncached_build():
    cached = rope_views.scores(24, 8, 500.0, 5, 30)
    fresh = rope_views.scores.uncached(24, 8, 500.0, 5, 30)
    assert [item.key for item in cached.items] == [item.key for item in fresh]
    for got, built in zip(cached.items, fresh, strict=True):
        assert got.fig.to_dict() == built.fig.to_dict()


def test_angle_table_is_cos_of_m_theta():
    n, head_dim, base = 50, 12, 200.0
    out = rope_views.angle_table(n, head_dim, base)
    theta = base ** (-np.arange(0, head_dim, 2) / head_dim)
    expected = np.cos(np.arange(n)[:, None] * theta[None, :])
    assert_matrix(heatmap_z(out.figure("table").fig.to_dict()), expected)
    # the figure's data is the family's table itself, held once for every page that draws it
    assert out.figure("table").data is cache.family_table(
        "rope", {"base": base, "head_dim": head_dim, "n_positions": n}
    )


@pytest.mark.parametrize(("head_dim", "base"), [(63, 10_000.0), (64, 1.0), (64, 0.5), (0, 10_000.0)])
def test_refused_settings_raise_and_are_not_cached(head_dim, base):
    with pytest.raises(ValueError):
        rope_views.check(head_dim, base)
    for _ in range(2):
        with pytest.raises(ValueError):
            rope_views.scores(16, head_dim, base, None, 10)
    assert not [key for key in cache.TABLES.keys() if key[0] == "view"]


def test_check_lets_every_drawable_size_through():
    for head_dim in (2, 3, 4, 8, 64, 512):
        rope_views.check(head_dim, 10_000.0)


def test_text_kinds_are_checked():
    with pytest.raises(TypeError):
        views.Text("a sentence", kind="banner")


def view_modules() -> list[pathlib.Path]:
    return sorted(path for path in VIEWS_DIR.glob("*.py") if path.name != "__init__.py")


@pytest.mark.parametrize("path", view_modules(), ids=lambda path: path.name)
def test_a_view_module_calls_the_core_itself(path):
    """One hop from the page: a view reads the core and the builders, not the page cache's aliases of them (the
    shared family tables and their previews are the only store it asks; a table it is handed is a ``cache.Table``,
    named by its content), and draws nothing itself."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    allowed = {"family_table", "family_preview", "TABLES", "Table"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "cache":
            assert node.attr in allowed, f"{path.name}:{node.lineno} calls cache.{node.attr}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [alias.name for alias in node.names] + [getattr(node, "module", None) or ""]
            assert not any(name.startswith("streamlit") for name in names), f"{path.name} imports streamlit"


def test_draw_shows_every_kind_of_text_and_table_in_order():
    from streamlit.testing.v1 import AppTest

    def script():
        from posviz.ui import views

        views.draw(
            views.Output(
                "rope",
                (
                    views.Text("**bold**"),
                    views.Text("a caption", "caption"),
                    views.Text("a note", "info"),
                    views.Text("a warning", "warning"),
                    views.Text(r"m_h = 2^{-8h/n}", "latex"),
                    views.Text("IndexError: index out of range in self", "code"),
                    views.Frame({"head": [0, 1], "slope": [0.5, 0.25]}),
                ),
            )
        )

    at = AppTest.from_function(script, default_timeout=30).run()
    assert not at.exception
    assert [m.value for m in at.markdown if m.value == "**bold**"] == ["**bold**"]
    assert [c.value for c in at.caption] == ["a caption"]
    assert [i.value for i in at.info] == ["a note"]
    assert [w.value for w in at.warning] == ["a warning"]
    assert [x.value.strip("$\n") for x in at.latex] == [r"m_h = 2^{-8h/n}"]
    assert [c.value for c in at.code] == ["IndexError: index out of range in self"]
    assert at.dataframe[0].value["slope"].tolist() == [0.5, 0.25]


def test_a_shared_result_is_computed_once_for_the_same_arguments():
    calls = []

    def errors(span: int, d: int, *, base: float = 10_000.0) -> np.ndarray:
        calls.append((span, d, base))
        return np.full(3, float(span))

    first = views.shared(errors, 100, 8)
    assert views.shared(errors, 100, 8, base=10_000.0) is first  # the default named or not: one key
    assert views.shared(errors, 100, 8, base=500.0) is not first
    assert calls == [(100, 8, 10_000.0), (100, 8, 500.0)]
    assert not first.flags.writeable  # held read-only, as every result of the store


def test_the_precision_map_and_lines_read_one_computation(monkeypatch):
    from posviz.lessons import precision
    from posviz.ui.views import sinusoidal as sin_views

    counted = []
    real = precision.pair_errors_by_dtype

    @functools.wraps(real)  # its name and signature: the key of the shared result
    def counting(*args, **kwargs):
        counted.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(precision, "pair_errors_by_dtype", counting)
    sin_views.precision_map(600, 16, 10_000.0, "float16")
    sin_views.precision_map(600, 16, 10_000.0, "bfloat16")
    sin_views.precision_lines(600, 16, 10_000.0)
    assert len(counted) == 1
