"""Myth or fact's views (posviz/ui/views/claims*.py): each claim's figures and verdict kept whole by its setting and
the language, its numbers those of the formula the claim is about, derived here by hand; a refused setting raised
and never kept; the cached output the one built afresh; one evidence per claim and parameters, shared by the
claim's view in every language and the table of verdicts."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import streamlit as st
from plotly.utils import PlotlyJSONEncoder

from posviz.encodings import learned
from posviz.lessons import attention_demo, claims
from posviz.ui import cache, views
from posviz.ui.views import claims as claims_views
from posviz.ui.views import claims_attention, claims_learned, claims_rope, claims_sinusoidal
from tests.core._oracles import paper_alibi_slopes as paper_slopes

from ._support import as_array, assert_matrix, heatmap_z, says, title, tr

pytestmark = pytest.mark.usefixtures("views_in_english")


# ------------------------------------------------------------------------------------ the formulas, by hand


def omega(d: int, base: float = 10000.0) -> np.ndarray:
    """w_k = base^(-2k/d), k = 0 .. d/2 - 1 (Vaswani et al., 2017, section 3.5; RoFormer's theta_i alike)."""
    return base ** (-np.arange(0, d, 2) / d)


def pe(positions, d: int) -> np.ndarray:
    """PE[p, 2k] = sin(p w_k), PE[p, 2k + 1] = cos(p w_k)."""
    angles = np.asarray(positions, dtype=np.float64)[:, None] * omega(d)[None, :]
    table = np.empty((angles.shape[0], d))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


def cosines(rows: np.ndarray) -> np.ndarray:
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit @ unit.T


def diagonal_means(matrix: np.ndarray) -> np.ndarray:
    """The mean of each diagonal |i - j| = 1 .. n - 1 of a symmetric matrix."""
    n = matrix.shape[0]
    return np.array([np.diagonal(matrix, k).mean() for k in range(1, n)])


def rounded(values, dtype: str) -> np.ndarray:
    """``values`` rounded once to ``dtype`` (ties to even), as float64: numpy's own conversion for float16 and
    float32; bfloat16 keeps 8 significant bits of a normal number (``frexp``)."""
    values = np.asarray(values, dtype=np.float64)
    if dtype == "bfloat16":
        mantissa, exponent = np.frexp(values)
        return np.ldexp(np.rint(mantissa * 2.0**8), exponent - 8)
    return values.astype(dtype).astype(np.float64)


def worst_pair_error(positions, d: int, dtype: str) -> np.ndarray:
    """max_k max(|sin_dtype(p w_k) - sin(p w_k)|, |cos_dtype(p w_k) - cos(p w_k)|): p, w_k, their product and each
    sine rounded to ``dtype``."""
    p = np.asarray(positions, dtype=np.float64)[:, None]
    w = omega(d)[None, :]
    angle = rounded(rounded(p, dtype) * rounded(w, dtype), dtype)
    sin_error = np.abs(rounded(np.sin(angle), dtype) - np.sin(p * w))
    cos_error = np.abs(rounded(np.cos(angle), dtype) - np.cos(p * w))
    return np.maximum(sin_error, cos_error).max(axis=1)


# ---------------------------------------------------------------------------------------------- reading back


def fig(output, key: str) -> dict:
    return output.figure(key).fig.to_dict()


def ys(figure: dict) -> list[np.ndarray]:
    return [as_array(trace["y"]) for trace in figure["data"]]


def lines_at(figure: dict, axis: str) -> list[float]:
    """Where the figure's straight marks stand: the x of its vertical ones (``axis="x"``) or the y of its
    horizontal ones."""
    other = "y" if axis == "x" else "x"
    return [
        shape[f"{axis}0"]
        for shape in figure["layout"].get("shapes", [])
        if shape[f"{axis}0"] == shape[f"{axis}1"] and shape[f"{other}0"] != shape[f"{other}1"]
    ]


def spec(figure) -> str:
    return json.dumps(figure.to_dict(), cls=PlotlyJSONEncoder, sort_keys=True)


def claim_keys() -> list:
    return [key for key in cache.TABLES.keys() if key[0] in ("view", "shared")]


def evidence_keys() -> set:
    """The keys of every claim's evidence kept: ``("shared", "posviz.lessons.claims", check, arguments)``."""
    return {key for key in cache.TABLES.keys() if key[:2] == ("shared", "posviz.lessons.claims")}


def the_verdict(output, claim_id: str, code: str, lang: str = "en", **values) -> None:
    """The output ends with the verdict ``code``'s badge and sentence of ``claim_id`` (with ``values`` exactly, if
    given)."""
    badge = {"holds": ":green-badge[:material/check_circle: ", "wrong": ":red-badge[:material/cancel: "}
    badge["partly"] = ":orange-badge[:material/error: "
    last = output.items[-1]
    assert isinstance(last, views.Text) and last.kind == "markdown"
    start = f"{badge[code]}{tr(lang, f'claims.verdict.{code}')}] "
    assert last.text.startswith(start), last.text
    assert says(last.text[len(start) :], lang, f"claims.{claim_id}.{code}", **values), last.text


# ------------------------------------------------------------------ every view: cached whole, built the same

#: Each claim's view, a setting and another one (None for a view of no setting).
VIEWS = [
    (claims_sinusoidal.exponent, (64,), (128,)),
    (claims_sinusoidal.norm, (256,), (512,)),
    (claims_sinusoidal.unscaled, (1000,), (512,)),
    (claims_sinusoidal.precision, (), None),
    (claims_sinusoidal.shift, (7,), (5,)),
    (claims_sinusoidal.position_sum, (), None),
    (claims_sinusoidal.base, (512,), (256,)),
    (claims_learned.blocks, (), None),
    (claims_learned.learned, (), None),
    (claims_learned.oom, (), None),
    (claims_learned.albert, (), None),
    (claims_rope.rot90, (), None),
    (claims_rope.head_dim, (), None),
    (claims_rope.snippets, (), None),
    (claims_rope.max_pos, (), None),
    (claims_attention.alibi, (), None),
    (claims_attention.tril, (), None),
    (claims_attention.symmetry, (), None),
    (claims_attention.extrapolate, (256,), (512,)),
    (claims_attention.xlnet, (), None),
]
IDS = [view.__name__ for view, _, _ in VIEWS]


def test_every_claim_has_one_view():
    named = {"position_sum": "sum"}
    assert sorted(named.get(name, name) for name in IDS) == sorted(claims.CLAIMS)


@pytest.mark.parametrize(("view", "settings", "other"), VIEWS, ids=IDS)
def test_a_view_is_kept_by_its_setting_and_the_language_and_equals_its_fresh_build(view, settings, other):
    first = view(*settings)
    assert view(*settings) is first
    if other is not None:
        assert view(*other) is not first
    fresh = list(view.uncached(*settings))
    assert [type(item) for item in first.items] == [type(item) for item in fresh]
    for got, built in zip(first.items, fresh, strict=True):
        if isinstance(got, views.Figure):
            assert (got.key, got.options) == (built.key, built.options)
            assert spec(got.fig) == spec(built.fig)
        else:
            assert got == built
    st.session_state["lang"] = "zh"
    chinese = view(*settings)
    assert chinese is not first
    assert chinese.texts[-1] != first.texts[-1]  # the verdict, in the other language
    assert [item.key for item in chinese.items if isinstance(item, views.Figure)] == [
        item.key for item in first.items if isinstance(item, views.Figure)
    ]


@pytest.mark.parametrize(
    ("view", "settings"),
    [
        (claims_sinusoidal.exponent, (0,)),
        (claims_sinusoidal.norm, (0,)),
        (claims_sinusoidal.unscaled, (-4,)),
        (claims_sinusoidal.shift, (0,)),
        (claims_sinusoidal.shift, (512,)),  # the table has 512 rows: no row 512 to shift to
        (claims_sinusoidal.base, (2,)),
        (claims_attention.extrapolate, (1,)),
    ],
    ids=lambda value: getattr(value, "__name__", str(value)),
)
def test_a_refused_setting_raises_and_is_not_kept(view, settings):
    for _ in range(2):
        with pytest.raises(ValueError):
            view(*settings)
    assert not claim_keys()


def test_an_unknown_claim_is_refused():
    with pytest.raises(ValueError, match="there is no claim 'nonsense'"):
        claims_views.evidence("nonsense")
    assert not claim_keys()


# --------------------------------------------------------------------------- the evidence and the verdicts


def test_one_evidence_per_claim_and_parameters_shared_by_every_language_and_the_table():
    found = claims_views.evidence("shift", k=7)
    assert claims_views.evidence("shift", k=7) is found
    assert claims_views.evidence("shift", k=7, d_model=32) is found  # the default, spelled out
    assert claims_views.evidence("shift", k=8) is not found
    assert not found.arrays["M"].flags.writeable  # held, shared: read-only
    claims_sinusoidal.shift(7)
    st.session_state["lang"] = "zh"
    claims_sinusoidal.shift(7)
    assert {key[2:] for key in evidence_keys()} == {
        ("shift_is_rotation", (("d_model", "int", 32), ("k", "int", k), ("n_positions", "int", 512))) for k in (7, 8)
    }


def test_the_table_of_verdicts_reads_the_evidence_the_claims_draw_at_their_defaults():
    [frame] = claims_views.verdict_table().items
    assert isinstance(frame, views.Frame)
    held = evidence_keys()
    assert sorted(key[2] for key in held) == sorted(claim.check.__qualname__ for claim in claims.CLAIMS.values())
    claims_sinusoidal.exponent(512)  # the page's default width: the evidence the table read
    claims_attention.extrapolate(512)
    assert evidence_keys() == held
    columns = dict(frame.columns)
    assert list(columns) == [tr("en", f"claims.col.{c}") for c in ("claim", "verdict", "source", "sources")]
    assert columns[tr("en", "claims.col.claim")] == [tr("en", f"claims.{c}.short") for c in claims.CLAIMS]
    verdicts = dict(zip(claims.CLAIMS, columns[tr("en", "claims.col.verdict")], strict=True))
    # the doubled exponent is not the paper's, and a row's norm is sqrt(d/2), not sqrt(d): both wrong
    assert verdicts["exponent"] == verdicts["norm"] == tr("en", "claims.verdict.wrong")
    assert set(verdicts.values()) == {tr("en", f"claims.verdict.{v}") for v in claims.VERDICTS}
    rot90 = dict(zip(claims.CLAIMS, columns[tr("en", "claims.col.sources")], strict=True))["rot90"]
    assert "Su, J., Lu, Y., Pan, S., Murtadha, A., Wen, B., & Liu, Y. (2021)" in rot90 and "2104.09864" in rot90
    assert "](https://arxiv.org" not in rot90  # the CSV's citations are plain text
    assert claims_views.verdict_table() is claims_views.verdict_table()
    st.session_state["lang"] = "zh"
    chinese = claims_views.verdict_table()
    assert list(dict(chinese.items[0].columns))[0] == tr("zh", "claims.col.claim")


def test_formatted_numbers():
    got = claims_views.formatted(
        {"none": None, "flag": True, "whole": 32768, "big": 1e7, "large": 12345.6, "small": 0.70710678, "tiny": 1e-16}
    )
    assert got == {
        "none": "—",
        "flag": "True",
        "whole": "32,768",
        "big": "10,000,000",
        "large": "12,346",
        "small": "0.707",
        "tiny": "1e-16",
    }
    assert claims_views.formatted({"error": "IndexError: index out of range in self", "float": 2048.0}) == {
        "error": "IndexError: index out of range in self",
        "float": "2,048",
    }


def test_citations():
    paper, article = claims.SOURCES["press2022"], claims.SOURCES["002"]
    assert claims_views.author_list(paper) == "Press, O., Smith, N. A., & Lewis, M."
    assert "[2108.12409](https://arxiv.org/abs/2108.12409)" in claims_views.citation(paper)
    assert claims_views.short(paper) == tr("en", "claims.cite.short", first="Press", year=2022)
    untitled = tr("en", "claims.cite.article.untitled", id="002", title=article.titles["en"])
    assert claims_views.citation(article) == untitled
    st.session_state["lang"] = "zh"
    assert claims_views.citation(article) == tr(
        "zh", "claims.cite.article.untitled", id="002", title=article.titles["zh"]
    )


# ------------------------------------------------------------------------------ the sinusoidal table's claims


def test_exponent_draws_both_wavelengths_and_counts_the_pairs_that_hardly_move():
    d = 64
    out = claims_sinusoidal.exponent(d)
    figure = fig(out, "exponent")
    assert title(figure) == tr("en", "claims.exponent.fig", d=d)
    correct, doubled = ys(figure)
    k = np.arange(d // 2)
    np.testing.assert_allclose(correct, 2 * np.pi * 10000.0 ** (2 * k / d), rtol=1e-12)
    np.testing.assert_allclose(doubled, 2 * np.pi * 10000.0 ** (4 * k / d), rtol=1e-12)
    still = {name: int((512 * 10000.0 ** (-c * k / d) < 0.1).sum()) for name, c in (("correct", 2), ("doubled", 4))}
    assert still["doubled"] > still["correct"]
    the_verdict(
        out,
        "exponent",
        "wrong",
        pairs="32",
        still_correct=str(still["correct"]),
        still_doubled=str(still["doubled"]),
        slowest_correct=f"{10000.0 ** (-62 / 64):.3g}",
        slowest_doubled=f"{10000.0 ** (-124 / 64):.3g}",
    )


def test_norm_is_sqrt_of_half_d_against_the_claimed_sqrt_d():
    d = 256
    out = claims_sinusoidal.norm(d)
    figure = fig(out, "norm")
    assert title(figure) == tr("en", "claims.norm.fig", d=d)
    [norms] = ys(figure)
    assert norms.size == 1024
    np.testing.assert_allclose(norms, np.sqrt(d / 2), rtol=1e-12)
    assert lines_at(figure, "y") == [pytest.approx(16.0)]
    assert figure["layout"]["yaxis"]["range"] == [0.0, pytest.approx(16.0 * 1.15)]
    the_verdict(
        out,
        "norm",
        "wrong",
        measured_min="11.3",
        measured_max="11.3",
        half="11.3",
        d="256",
        claimed="16",
        scaled="0.707",
    )


def test_unscaled_ratios_across_widths():
    d = 1000
    out = claims_sinusoidal.unscaled(d)
    figure = fig(out, "unscaled")
    widths = np.array(sorted({64, 128, 256, 512, 768, 1024, 2048, 4096, d}))
    rng = np.random.default_rng(0)  # SCALE_TOKENS = 256 token vectors of N(0, 1/w) per width
    token = np.array([np.linalg.norm(rng.standard_normal((256, w)), axis=1).mean() / np.sqrt(w) for w in widths])
    position = np.sqrt(widths / 2)
    none, paper, article = (trace for trace in figure["data"][:3])
    for trace in (none, paper, article):
        np.testing.assert_array_equal(as_array(trace["x"]), widths)
    np.testing.assert_allclose(as_array(none["y"]), position / token, rtol=1e-9)
    np.testing.assert_allclose(as_array(paper["y"]), position / (token * np.sqrt(widths)), rtol=1e-9)
    np.testing.assert_allclose(as_array(article["y"]), as_array(paper["y"]), rtol=1e-12)
    assert d in lines_at(figure, "x") and 1.0 in lines_at(figure, "y")
    the_verdict(out, "unscaled", "wrong")


def test_precision_errors_against_float64():
    out = claims_sinusoidal.precision()
    figure = fig(out, "precision")
    *curves, floor = figure["data"]
    assert floor["name"] == tr("en", "figure.floor", floor="1e-12")
    assert [trace["name"] for trace in curves] == ["float16", "bfloat16", "float32"]
    positions = as_array(curves[0]["x"])
    np.testing.assert_array_equal(positions, np.unique(np.round(np.linspace(0, 32767, 4096))))
    for trace in curves:
        expected = np.maximum(worst_pair_error(positions, 128, trace["name"]), 1e-12)
        np.testing.assert_allclose(as_array(trace["y"]), expected, rtol=1e-6, err_msg=trace["name"])
    assert claims.ARTICLE_POSITION in lines_at(figure, "x")
    the_verdict(out, "precision", "partly")


def test_shift_is_one_rotation_per_pair():
    k = 7
    out = claims_sinusoidal.shift(k)
    assert out.figure("shift").options == {"suffix": "k7"}
    figure = fig(out, "shift")
    assert title(figure) == tr("en", "claims.shift.fig", k=k, d=32)
    angle = k * omega(32)
    expected = np.zeros((32, 32))
    for i, a in enumerate(angle):  # sin(x + a) = sin x cos a + cos x sin a; cos(x + a) = cos x cos a - sin x sin a
        expected[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]
    assert_matrix(heatmap_z(figure), expected)
    table = pe(np.arange(20), 32)
    np.testing.assert_allclose(table[:-k] @ out.figure("shift").data.T, table[k:], atol=1e-12)
    the_verdict(out, "shift", "holds")


def test_a_sum_of_two_positions_is_not_their_sum():
    out = claims_sinusoidal.position_sum()
    table = pe(np.arange(127), 512)
    i, j = np.indices((64, 64))
    expected = np.linalg.norm(table[i] + table[j] - table[i + j], axis=2) / np.linalg.norm(table[i + j], axis=2)
    assert_matrix(heatmap_z(fig(out, "sum")), expected)
    assert expected[0].min() == pytest.approx(1.0)  # PE(0) = (0, 1, 0, 1, ...) is not zero
    the_verdict(out, "sum", "wrong")


def test_base_neighbours_order_and_ends():
    context = 512
    out = claims_sinusoidal.base(context)
    figure = fig(out, "base")
    assert title(figure) == tr("en", "claims.base.fig", d=512, context="512")
    near, order = figure["data"]
    bases = as_array(near["x"])
    np.testing.assert_allclose(bases, 10.0 ** np.arange(1.0, 7.01, 0.25), rtol=1e-12)
    w = bases[:, None] ** (-np.arange(0, 512, 2)[None, :] / 512)
    np.testing.assert_allclose(as_array(near["y"]), 1 - np.cos(w).mean(axis=1), rtol=1e-9)
    offsets = np.arange(1, context)
    similarity = np.cos(offsets[:, None] * 1000.0 ** (-np.arange(0, 512, 2) / 512)).mean(axis=1)
    ranks = np.argsort(np.argsort(-similarity, kind="stable"))
    at_1000 = int(np.argmin(np.abs(bases - 1000)))
    assert as_array(order["y"])[at_1000] == pytest.approx(np.corrcoef(ranks, offsets)[0, 1], abs=1e-9)
    assert bases[np.argmax(as_array(order["y"]))] == pytest.approx(1000.0)
    assert sorted(lines_at(figure, "x")) == [1000.0, 1000.0, 10000, 10000]  # the best base and 10,000, both panels
    ends = fig(out, "base.ends")
    fastest, slowest = ys(ends)[:2]
    np.testing.assert_allclose(fastest, 2 * np.pi, rtol=1e-12)
    np.testing.assert_allclose(slowest, 2 * np.pi * bases ** (510 / 512), rtol=1e-9)
    assert lines_at(ends, "y") == [context]
    wrapping = out.figure("base.ends").data["wrapping_pairs"]
    np.testing.assert_array_equal(wrapping, (2 * np.pi / w < context).sum(axis=1))
    the_verdict(out, "base", "wrong")


# ---------------------------------------------------------------------------------- the learned tables' claims


def test_blocks_are_the_two_tables_cosine_similarities():
    out = claims_learned.blocks()
    example = learned.example_table()
    assert_matrix(heatmap_z(fig(out, "blocks.learned")), cosines(example))
    sinusoidal = heatmap_z(fig(out, "blocks.sinusoidal"))
    gap = np.subtract.outer(np.arange(64), np.arange(64))
    assert_matrix(sinusoidal, np.cos(gap[..., None] * omega(64)).mean(axis=-1))  # sum_k cos((i - j) w_k) / (d/2)
    for key in ("blocks.sinusoidal", "blocks.learned"):
        figure = fig(out, key)
        assert (figure["data"][0]["zmin"], figure["data"][0]["zmax"]) == (-1.0, 1.0)
    the_verdict(out, "blocks", "partly")


def test_learned_mean_similarity_by_offset():
    out = claims_learned.learned()
    trained, init, sinusoidal = ys(fig(out, "learned"))
    np.testing.assert_allclose(trained, diagonal_means(cosines(learned.example_table())), rtol=1e-9, atol=1e-12)
    init_table = np.asarray(learned.RandomTable(64, 64, std=0.02, seed=0))
    np.testing.assert_allclose(init, diagonal_means(cosines(init_table)), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sinusoidal, np.cos(np.arange(1, 64)[:, None] * omega(64)).mean(axis=1), atol=1e-12)
    assert trained[0] > 0.5 > np.abs(init).max()
    the_verdict(out, "learned", "partly")


def test_past_the_table_is_an_index_error_not_memory():
    out = claims_learned.oom()
    figure = fig(out, "oom")
    found, missing = figure["data"][:2]
    tokens = as_array(found["x"])
    np.testing.assert_array_equal(tokens, np.arange(1, 1501))
    mib = 4 * 768 * tokens / 2**20
    assert_matrix(as_array(found["y"]), np.where(tokens <= 1024, mib, np.nan))
    assert_matrix(as_array(missing["y"]), np.where(tokens >= 1024, mib, np.nan))
    assert lines_at(figure, "x") == [1024]
    assert "IndexError: index out of range in self" in out.texts[-1]
    the_verdict(out, "oom", "wrong")


def test_albert_widths():
    out = claims_learned.albert()
    figure = fig(out, "albert")
    albert, bert = figure["data"]
    assert list(albert["x"]) == [tr("en", f"claims.albert.stage.{s}") for s in claims.EMBEDDING_STAGES]
    assert list(as_array(albert["y"])) == [128, 128, 128, 128, 768] and list(as_array(bert["y"])) == [768] * 5
    the_verdict(out, "albert", "wrong")


# ------------------------------------------------------------------------------------------ RoPE's claims


def test_rot90_is_no_rotation_and_the_quarter_turn_is():
    out = claims_rope.rot90()
    rot90, turn = ys(fig(out, "rot90"))
    x = np.random.default_rng(0).standard_normal(64)
    theta = omega(64)
    m = np.arange(64)[:, None]
    a, b = x[0::2], x[1::2]
    rope = np.empty((64, 64))
    rope[:, 0::2] = a * np.cos(m * theta) - b * np.sin(m * theta)
    rope[:, 1::2] = a * np.sin(m * theta) + b * np.cos(m * theta)
    turned = np.rot90(x.reshape(32, 2)).reshape(-1)  # numpy's rot90 turns the array as torch's does
    np.testing.assert_allclose(rot90, np.linalg.norm(rope - turned, axis=1) / np.linalg.norm(x), rtol=1e-9)
    assert turn.max() < 1e-14
    the_verdict(out, "rot90", "wrong")


def test_head_dim_wavelengths():
    out = claims_rope.head_dim()
    figure = fig(out, "head_dim")
    assert title(figure) == tr("en", "claims.head_dim.fig", hidden=4096, heads=32, head_dim=128)
    head, model = ys(figure)
    i = np.arange(64)
    np.testing.assert_allclose(head, 2 * np.pi * 10000.0 ** (2 * i / 128), rtol=1e-12)
    np.testing.assert_allclose(model, 2 * np.pi * 10000.0 ** (2 * i / 4096), rtol=1e-12)
    assert lines_at(figure, "y") == [4096]
    the_verdict(out, "head_dim", "wrong")


def test_snippets_as_transformers_reads_them():
    out = claims_rope.snippets()
    traces = {trace["name"]: as_array(trace["y"]) for trace in fig(out, "snippets")["data"]}
    default, theta = omega(128), omega(128, 50000.0)
    np.testing.assert_allclose(traces[tr("en", "claims.snippets.linear")], 0.25, rtol=1e-12)
    np.testing.assert_allclose(traces[tr("en", "claims.snippets.article", n="8,192")], theta / default, rtol=1e-12)
    meant = omega(128, 50000.0 * (2 * 8192 / 2048 - 1) ** (128 / 126))
    key = tr("en", "claims.snippets.meant", n="8,192", original="2,048")
    np.testing.assert_allclose(traces[key], meant / default, rtol=1e-12)
    past = omega(128, 50000.0 * (2 * 65536 / 32768 - 1) ** (128 / 126))  # dynamic x2 at twice 32,768 tokens
    np.testing.assert_allclose(traces[tr("en", "claims.snippets.past", n="65,536")], past / default, rtol=1e-12)
    the_verdict(out, "snippets", "wrong")


def test_max_position_embeddings_changes_dynamic_and_yarn_only():
    out = claims_rope.max_pos()
    [bars] = fig(out, "max_pos")["data"]
    change = dict(zip(bars["x"], as_array(bars["y"]), strict=True))
    assert change["default"] == change["linear"] == 0.0
    # dynamic x4 at 8,192 tokens: past 2,048, base' = base 13^(d/(d-2)) with 13 = 4 * 8192 / 2048 - 3; within 32,768
    # the base itself. ln theta_i changes by (2i/d) (d/(d-2)) ln 13, ln 13 at the slowest pair i = d/2 - 1
    assert change["dynamic"] == pytest.approx(math.log(13), rel=1e-9)
    assert change["yarn"] > 0
    the_verdict(out, "max_pos", "partly")


# ------------------------------------------------------------------------------ ALiBi's and attention's claims


def test_alibi_slopes_of_the_paper_and_of_the_article():
    out = claims_attention.alibi()
    traces = fig(out, "alibi")["data"]
    for index, h in enumerate((8, 12, 16)):
        paper, article = traces[2 * index : 2 * index + 2]
        np.testing.assert_allclose(as_array(paper["y"]), paper_slopes(h), rtol=1e-12)
        np.testing.assert_allclose(as_array(article["y"]), 2.0 ** (-(8 + np.arange(h)) / h), rtol=1e-12)
        assert article["line"]["dash"] == "dash"
    data = out.figure("alibi").data
    assert list(data.columns) == ["heads", "head", "paper", "article"] and len(data) == 8 + 12 + 16
    the_verdict(out, "alibi", "wrong")


def test_tril_leaves_the_future_at_zero_bias():
    out = claims_attention.tril()
    i, j = np.indices((16, 16))
    assert_matrix(heatmap_z(fig(out, "tril.bias")), np.where(j > i, 0.0, -0.5 * (i - j)))
    mass = ys(fig(out, "tril.mass"))
    assert len(mass) == 8
    for h, row in enumerate(mass):
        m = 2.0 ** -(h + 1)
        later = 15 - np.arange(16)
        past = np.array([np.exp(-m * np.arange(q + 1)).sum() for q in range(16)])
        np.testing.assert_allclose(row, later / (past + later), rtol=1e-9, atol=1e-15)
    the_verdict(out, "tril", "partly")


def test_symmetry_scores_and_shuffles():
    out = claims_attention.symmetry()
    sentence = attention_demo.EXAMPLES["dog"]
    tokens = attention_demo.tokenize(sentence)
    x = attention_demo.token_embeddings(tokens)
    w_q, w_k, _ = attention_demo.projections()
    expected = (x @ w_q) @ (x @ w_k).T / np.sqrt(w_q.shape[1])
    scores = heatmap_z(fig(out, "symmetry.scores"))
    assert_matrix(scores, expected)
    assert np.abs(scores - scores.T).max() > 0.1
    plain, placed = fig(out, "symmetry.shuffle")["data"]
    assert list(plain["x"]) == [f"{i} {w}" for i, w in enumerate(tokens)]
    assert as_array(plain["y"]).max() < 1e-12 < as_array(placed["y"]).max()
    the_verdict(out, "symmetry", "wrong")


def test_extrapolation_counts_the_angles_training_never_reached():
    t = 256
    out = claims_attention.extrapolate(t)
    figure = fig(out, "extrapolate")
    assert title(figure) == tr("en", "claims.extrapolate.fig", train="256")
    sinusoidal, rope = figure["data"][:2]
    steps = as_array(rope["x"])
    assert steps[-1] == 4 * t and {t - 1, t, 2 * t} <= set(steps)
    for trace, w in ((sinusoidal, omega(512)), (rope, omega(128))):
        swept = (t - 1) * w  # training turned pair k from 0 to (T - 1) w_k
        angle = np.mod(steps[:, None] * w, 2 * np.pi)
        expected = ((swept < 2 * np.pi) & (angle > swept + 1e-9)).mean(axis=1)
        np.testing.assert_allclose(as_array(trace["y"]), expected, atol=1e-12)
        assert as_array(trace["y"])[steps < t].max() == 0.0
    assert t in lines_at(figure, "x")
    the_verdict(out, "extrapolate", "wrong")


def test_xlnet_streams_see_earlier_steps_and_the_content_stream_itself():
    out = claims_attention.xlnet()
    order_text = out.texts[0]
    assert says(order_text, "en", "claims.xlnet.order")
    order = [int(i) for i in re.search(r"\*\*(.+)\*\*", order_text).group(1).split(" → ")]
    assert sorted(order) == list(range(6)) and order != list(range(6))
    step = {token: s for s, token in enumerate(order)}
    content, query = (as_array(trace["z"]) for trace in fig(out, "xlnet")["data"][:2])
    expected_query = np.array([[step[j] < step[i] for j in range(6)] for i in range(6)], dtype=float)
    np.testing.assert_array_equal(query, expected_query)
    np.testing.assert_array_equal(content, expected_query + np.eye(6))
    the_verdict(out, "xlnet", "wrong")
