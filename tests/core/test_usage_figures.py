"""The figures of Transformer-XL and of RoPE frequency usage carry the arrays they are given (and the values derived
from them by the core), at the right places."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.encodings import transformer_xl as txl
from posviz.figures import frequency_usage as ufig
from posviz.figures import transformer_xl as xfig
from posviz.lessons import frequency_usage as fu

TEXT = dict(title="T", x_title="X", y_title="Y")


def test_relative_embedding_heatmap_rows_are_offsets():
    pe = txl.transformer_xl_pos_emb(3, 5, 8)
    fig = xfig.relative_embedding_heatmap(pe, 5, **TEXT)
    trace = fig.data[0]
    np.testing.assert_allclose(np.asarray(trace.z, dtype=np.float64), pe, atol=1e-7)
    offsets = trace.y0 + trace.dy * np.arange(len(pe))
    np.testing.assert_array_equal(offsets, txl.transformer_xl_offsets(3, 5))
    assert (trace.zmin, trace.zmax) == (-1.0, 1.0)


def test_score_terms_panels_carry_each_term_and_the_sum():
    weights = txl.xl_demo_weights(8, 4, seed=1)
    hidden = np.random.default_rng(0).standard_normal((7, 8))
    terms = txl.transformer_xl_score_terms(hidden[3:], hidden, weights, mem_len=3).row(2)
    panels = {
        "a": terms.content_content[0],
        "b": terms.content_position[0],
        "c": terms.content_bias[0],
        "d": terms.position_bias[0],
        "sum": terms.total[0],
    }
    fig = xfig.score_terms_figure(np.arange(7), panels, mem_len=3, memory_label="memory", **TEXT)
    assert len(fig.data) == 5
    for trace, (name, values) in zip(fig.data, panels.items(), strict=True):
        assert trace.name == name
        np.testing.assert_allclose(np.asarray(trace.y, dtype=np.float64), values, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(sum(np.asarray(t.y, dtype=np.float64) for t in fig.data[:4]), fig.data[4].y, atol=1e-5)
    assert [(shade.x0, shade.x1) for shade in fig.layout.shapes] == [(-0.5, 2.5)] * 5  # the memory, in every panel


def test_memory_figure_offsets_and_collisions():
    seg = txl.segment_positions(4, 3)
    fig = xfig.memory_figure(
        seg.offset,
        seg.naive,
        seg.collides,
        seg.mem_len,
        panel_titles=("p", "q"),
        x_title="key",
        y_title="query",
        title="T",
        offset_title="i - j",
        naive_title="abs",
        memory_label="memory",
    )
    heat, bars = fig.data
    np.testing.assert_array_equal(np.asarray(heat.z, dtype=np.float64), seg.offset)
    np.testing.assert_array_equal(np.asarray(bars.y, dtype=np.float64), [0, 1, 2, 3, 0, 1, 2])
    red = [c == xfig.COLLISION_COLOUR for c in bars.marker.color]
    assert red == [True, True, True, False, True, True, True]
    # each panel keeps its own axis titles; the queries read downwards, the positions from 0 up
    assert (fig.layout.yaxis.title.text, fig.layout.yaxis2.title.text) == ("query", "abs")
    assert (fig.layout.xaxis.title.text, fig.layout.xaxis2.title.text) == ("", "key")
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.yaxis2.rangemode == "tozero"


def test_usage_heatmap_and_wavelength_lines():
    usage = np.random.default_rng(3).random((5, 6))
    layers = [0, 2, 3, 7, 9]  # a rotary group's layers need not follow each other
    fig = ufig.usage_heatmap(usage, rows=layers, **TEXT)
    np.testing.assert_allclose(np.asarray(fig.data[0].z, dtype=np.float64), usage, rtol=1e-6)
    assert fig.data[0].zmin == 0
    assert list(fig.layout.yaxis.ticktext) == ["0", "2", "3", "7", "9"] and list(fig.layout.yaxis.tickvals) == [
        *range(5)
    ]
    assert np.asarray(fig.data[0].customdata)[:, 0].tolist() == layers and "%{customdata}" in fig.data[0].hovertemplate
    with pytest.raises(ValueError, match="5 rows of usage need as many labels"):
        ufig.usage_heatmap(usage, rows=[0, 1], **TEXT)

    theta = 10000.0 ** (-np.arange(6) / 6)
    wavelength = 2 * np.pi / theta
    fig = ufig.usage_against_wavelength(
        wavelength, {"q": usage[0], "k": usage[1]}, training_context=512, context_label="ctx", **TEXT
    )
    assert fig.layout.xaxis.type == "log"
    for trace, row in zip(fig.data, usage[:2], strict=True):
        order = np.argsort(wavelength)
        np.testing.assert_allclose(trace.x, wavelength[order])
        np.testing.assert_allclose(trace.y, row[order])
    assert [shape.x0 for shape in fig.layout.shapes] == [512.0]


@pytest.mark.parametrize("p", [0.25, 0.75])
def test_p_rope_figure_splits_kept_and_dropped(p):
    theta = 10000.0 ** (-np.arange(8) / 8)
    usage = np.arange(1.0, 9.0)
    dropped = fu.p_rope_dropped(theta, p)
    share = fu.p_rope_share(usage, dropped)
    fig = ufig.p_rope_figure(
        2 * np.pi / theta, usage, dropped, kept_label="kept", dropped_label="dropped", share_text=f"{share:.0%}", **TEXT
    )
    kept, gone = fig.data
    np.testing.assert_allclose(kept.x, 2 * np.pi / theta[~dropped])
    np.testing.assert_allclose(gone.y, usage[dropped])
    assert max(kept.x) < min(gone.x)  # the dropped pairs are the longest wavelengths
    assert fig.layout.annotations[0].text == f"{share:.0%}"
    np.testing.assert_allclose(share, (usage[dropped] ** 2).sum() / (usage**2).sum())


def test_score_pattern_lines_and_heatmap():
    rng = np.random.default_rng(4)
    theta = 10000.0 ** (-np.arange(4) / 4)
    distances = np.arange(-5, 6)
    few = fu.rope_score_pattern(rng.standard_normal((3, 8)), rng.standard_normal((1, 8)), theta, distances)
    fig = ufig.score_pattern_figure(distances, few.score, ["h0", "h1", "h2"], **TEXT)
    assert [t.name for t in fig.data] == ["h0", "h1", "h2"]
    for trace, row in zip(fig.data, few.score, strict=True):
        np.testing.assert_allclose(trace.y, row)
    many = fu.rope_score_pattern(rng.standard_normal((12, 8)), rng.standard_normal((4, 8)), theta, distances)
    fig = ufig.score_pattern_figure(distances, many.score, [f"h{i}" for i in range(12)], **TEXT)
    np.testing.assert_allclose(np.asarray(fig.data[0].z, dtype=np.float64), many.score, rtol=1e-6, atol=1e-6)
    assert fig.data[0].x0 == -5 and list(fig.layout.yaxis.ticktext)[-1] == "h11"


def test_layer_and_pair_means():
    usage = fu.FrequencyUsage(
        query=np.arange(24.0).reshape(2, 3, 4),
        key=np.ones((2, 1, 4)),
        inv_freq=np.ones(4),
        layout="half",
        layers=np.arange(2),
        head_dim=8,
        rotary_dim=8,
        training_context=None,
        model_type="llama",
    )
    np.testing.assert_allclose(usage.layer_means(), [[4, 5, 6, 7], [16, 17, 18, 19]])
    np.testing.assert_allclose(usage.pair_means("key"), np.ones(4))
    with pytest.raises(ValueError, match="query' or 'key"):
        usage.layer_means("value")


def test_findings_figures_carry_the_analyses():
    from posviz import analysis
    from posviz.figures import findings

    t = np.arange(200)
    table = np.stack([0.05 * t, np.cos(t / 10), np.sin(t / 10), np.zeros(200)], axis=1)
    found = analysis.principal_components(table)
    fig = findings.components_3d(t, found.coords, title="T", axis_titles=("a", "b", "c"), colorbar_title="p")
    trace = fig.data[0]
    np.testing.assert_allclose(np.column_stack([trace.x, trace.y, trace.z]), found.coords)
    np.testing.assert_array_equal(trace.marker.color, t)
    assert fig.layout.scene.zaxis.title.text == "c"

    decay = analysis.similarity_decay(table)
    fig = findings.similarity_decay_figure(
        decay.offsets, decay.mean, name="cos", half_offset=decay.half_offset, half_label="1/2", **TEXT
    )
    np.testing.assert_allclose(fig.data[0].y, decay.mean)
    assert [shape.x0 for shape in fig.layout.shapes] == [decay.half_offset]

    noisy = table.copy()
    noisy[120:] += np.random.default_rng(0).standard_normal((80, 4))
    rough = analysis.roughness_by_position(noisy)
    fig = findings.roughness_figure(
        rough.positions, rough.value, name="r", change=rough.change, change_label="change", **TEXT
    )
    np.testing.assert_allclose(fig.data[0].x, rough.positions)
    np.testing.assert_allclose(fig.data[0].y, rough.value)
    assert fig.layout.yaxis.type == "log" and [s.x0 for s in fig.layout.shapes] == [rough.change]
