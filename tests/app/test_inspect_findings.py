"""The inspector's classic findings on a loaded table: the first three principal components with their variance
shares, the mean cosine by offset with its half point, the which-comes-first probe and the roughness by position with
the row where it changes level, each checked against an independent computation on a table built to have them (a
helix whose rows turn noisy from a known row on)."""

from __future__ import annotations

import numpy as np
import pytest
from safetensors.numpy import save_file

from posviz import analysis

from ._support import as_array, assert_clean, charts, charts_by_key, open_page, tr

N, D, NOISY_FROM = 240, 16, 160
KEYS = ("findings.pca", "findings.decay", "findings.rough")


@pytest.fixture(scope="module")
def helix(tmp_path_factory):
    """A GPT-2-like ``wpe``: a line along one axis, a turn in two others, a few slow waves, and noise from row
    NOISY_FROM on."""
    p = np.arange(N, dtype=np.float64)
    table = np.zeros((N, D))
    table[:, 0] = p / 40
    table[:, 1], table[:, 2] = np.cos(p / 25), np.sin(p / 25)
    for c in range(3, D):
        table[:, c] = 0.2 * np.sin(p / (10 + 7 * c) + c)
    table[NOISY_FROM:] += np.random.default_rng(0).normal(0, 0.3, (N - NOISY_FROM, D))
    folder = tmp_path_factory.mktemp("helix")
    save_file({"wpe.weight": table.astype(np.float32)}, str(folder / "model.safetensors"))
    return table.astype(np.float32).astype(np.float64), folder / "model.safetensors"


def findings(path, lang="en"):
    at = open_page("inspect", query={"from": "path", "path": str(path), "tab": "findings"}, lang=lang)
    assert_clean(at)
    return at, charts_by_key(charts(at), lang, KEYS)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_principal_components_of_the_loaded_table(helix, lang):
    table, path = helix
    at, drawn = findings(path, lang)
    pca = drawn["findings.pca"]
    (trace,) = pca.traces("scatter3d")
    centred = table - table.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    shares = s[:3] ** 2 / (s**2).sum()
    got = np.column_stack([as_array(trace[a]) for a in "xyz"])
    for k in range(3):  # each axis up to its sign
        expected = u[:, k] * s[k]
        sign = np.sign(got[np.argmax(np.abs(got[:, k])), k] * expected[np.argmax(np.abs(got[:, k]))])
        np.testing.assert_allclose(got[:, k], sign * expected, rtol=1e-4, atol=1e-4)
    scene = pca.fig["layout"]["scene"]
    titles = [scene[f"{a}axis"]["title"]["text"] for a in "xyz"]
    assert titles == [tr(lang, "findings.pc", k=k + 1, share=f"{shares[k]:.0%}") for k in range(3)]
    turns = abs(analysis.principal_components(table).winding)
    assert pca.notice == tr(
        lang, "findings.pca.notice", shares=" · ".join(f"{x:.0%}" for x in shares), turns=f"{turns:.1f}"
    )


def cosine(a, b):
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


@pytest.mark.slow
def test_similarity_decay_and_the_order_probe(helix):
    table, path = helix
    at, drawn = findings(path)
    decay = drawn["findings.decay"]
    (line,) = decay.traces("scatter")
    offsets = as_array(line["x"]).astype(int)
    np.testing.assert_array_equal(offsets, np.arange(N))
    mean = as_array(line["y"])
    for o in (0, 1, 7, 40, 120, N - 1):  # the diagonal of the cosine matrix, one pair at a time
        expected = np.mean([cosine(table[p], table[p + o]) for p in range(N - o)])
        np.testing.assert_allclose(mean[o], expected, atol=1e-6)
    half = next(o for o in range(N) if np.mean([cosine(table[p], table[p + o]) for p in range(N - o)]) <= 0.5)
    assert [shape["x0"] for shape in decay.fig["layout"]["shapes"]] == [half]
    assert decay.notice == tr("en", "findings.decay.notice", k=half)
    error = analysis.relative_order_probe(table)
    assert tr("en", "findings.order", pairs=N, error=f"{error:.0%}") in [m.value for m in at.markdown]


@pytest.mark.slow
def test_roughness_changes_level_where_the_noise_starts(helix):
    table, path = helix
    _, drawn = findings(path)
    rough = drawn["findings.rough"]
    (line,) = rough.traces("scatter")
    positions = as_array(line["x"]).astype(int)
    np.testing.assert_array_equal(positions, np.arange(1, N - 1))
    scale = np.median([np.linalg.norm(row) for row in table])
    expected = [np.linalg.norm(table[p + 1] - 2 * table[p] + table[p - 1]) / scale for p in positions]
    np.testing.assert_allclose(as_array(line["y"]), expected, rtol=1e-5)
    assert [shape["x0"] for shape in rough.fig["layout"]["shapes"]] == [NOISY_FROM]  # the first noisy row
    found = analysis.roughness_by_position(table)
    test = {"p": f"{found.p_value:.2g}", "alpha": "1%", "draws": f"{found.draws:,}"}
    assert found.p_value <= 0.01
    assert rough.notice == tr("en", "findings.rough.notice", row=NOISY_FROM, ratio=f"{found.ratio:.1f}", **test)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_table_of_pure_noise_has_no_level_change_marked(tmp_path, lang):
    """Pure noise always has a best two-level split; the caption says the split fails the test against noise, and
    the figure marks nothing."""
    noise = np.random.default_rng(4).standard_normal((N, D)).astype(np.float32)
    save_file({"wpe.weight": noise}, str(tmp_path / "model.safetensors"))
    _, drawn = findings(tmp_path / "model.safetensors", lang)
    rough = drawn["findings.rough"]
    assert not rough.fig["layout"].get("shapes") and not rough.fig["layout"].get("annotations")
    found = analysis.roughness_by_position(noise.astype(np.float64))
    assert found.change is None and found.p_value > 0.01
    test = {"p": f"{found.p_value:.2g}", "alpha": "1%", "draws": f"{found.draws:,}"}
    assert rough.notice == tr(lang, "findings.rough.notice.none", row=found.cut, ratio=f"{found.ratio:.1f}", **test)
