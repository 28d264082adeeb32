"""The relative page's lesson figures: Shaw's count of distinct embeddings, T5's curve with its regions, bucket
sizes, the never-used bucket, and the bias per head from a synthetic table or one loaded in the session."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import posviz
from posviz.encodings import relative

from ._support import (
    APP_FILE,
    PAGE_FILES,
    TIMEOUT,
    as_array,
    assert_clean,
    chart,
    charts,
    charts_by_key,
    open_page,
    title,
    tr,
    visit_tabs,
)

URL = {"shaw_len": "20", "shaw_k": "3", "t5_buckets": "16", "t5_max_distance": "64", "t5_bidirectional": "false"}


def lines(fig) -> list[np.ndarray]:
    return [as_array(trace["y"]) for trace in fig["data"] if trace.get("x") != [None]]


def visit(query: dict | None = None, lang: str = "en"):
    """The page opened with ``query``, both tabs visited in turn."""
    at = open_page("relative", query=query, lang=lang)
    view = visit_tabs(at, "relative", ["shaw", "t5"], lang, label_key="{page}.{code}")
    assert not view.exceptions and not view.errors, view.exceptions + view.errors
    return view


#: The charts each tab draws: a name used below -> the catalog key of its title (a synthetic bias table: none was
#: loaded in the session).
LAYOUT = {
    "shaw": {"index": "relative.shaw.index", "distinct": "relative.shaw.distinct"},
    "t5": {
        "matrix": "relative.t5.matrix",
        "curve": "relative.t5.curve",
        "sizes": "relative.t5.sizes",
        "bias": "relative.t5.bias.synthetic",
    },
}


def lesson_charts(view, lang: str = "en") -> dict[str, dict]:
    """The figures of both tabs by name, each found by its title in ``lang``; each tab draws these and no other."""
    figs = {}
    for tab, names in LAYOUT.items():
        found = charts_by_key(view.charts[tab], lang, names.values())
        figs |= {name: found[key].fig for name, key in names.items()}
    return figs


def check_lessons(view, *, shaw_len, k, num_buckets, max_distance, bidirectional, lang="en"):
    figs = lesson_charts(view, lang)
    distinct, curve, sizes, bias = (figs[name] for name in ("distinct", "curve", "sizes", "bias"))
    lengths = as_array(distinct["data"][0]["x"]).astype(int)
    np.testing.assert_array_equal(lengths, np.arange(1, max(4 * k, 2 * shaw_len) + 1))
    enumerated = [np.unique(posviz.shaw_relative_index(n, n, k)).size for n in lengths]
    np.testing.assert_array_equal(as_array(distinct["data"][0]["y"]), enumerated)
    assert distinct["layout"]["shapes"][0]["x0"] == k + 1

    kw = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    offsets = np.arange(-2 * max_distance, 2 * max_distance + 1)
    np.testing.assert_array_equal(as_array(curve["data"][0]["y"]), posviz.t5_relative_bucket(offsets, **kw))
    exact = relative.t5_exact_region(num_buckets, bidirectional)
    # where the flat tail starts: the first distance transformers puts into the last bucket of its side
    side = num_buckets // 2 if bidirectional else num_buckets
    past = t5_bucket(-np.arange(4 * max_distance), **kw)
    start = int(np.flatnonzero(past == side - 1)[0])
    assert (past[start:] == side - 1).all()
    edges = sorted({round(e, 1) for s in curve["layout"]["shapes"] for e in (s["x0"], s["x1"])})
    inner = [-start + 0.5, -exact + 0.5] + ([exact - 0.5, start - 0.5] if bidirectional else [])
    assert set(inner) <= set(edges) and edges[0] == offsets[0] - 0.5 and edges[-1] == offsets[-1] + 0.5
    regions = [trace["name"] for trace in curve["data"][1:]]
    assert regions == [
        tr(lang, "relative.t5.region.exact", n=exact),
        tr(lang, "relative.t5.region.log", n=exact, s=start),
        tr(lang, "relative.t5.region.flat", s=start),
    ]
    notice = "relative.t5.curve.notice" if start < max_distance else "relative.t5.curve.notice.clamp"
    assert tr(lang, notice, s=start, d=max_distance, top=max_distance - 1) in view.captions
    flat = np.abs(offsets) >= start
    curve_buckets = as_array(curve["data"][0]["y"])
    assert np.unique(curve_buckets[flat & (offsets < 0)]).size == 1  # the tail drawn flat is flat
    assert curve_buckets[offsets == -(start - 1)][0] < side - 1  # and one step before it is not yet

    counts = as_array(sizes["data"][0]["y"])
    np.testing.assert_array_equal(counts, relative.t5_bucket_sizes(**kw))
    assert counts.sum() == 2 * max_distance + 1
    unused = np.flatnonzero(counts == 0)
    key = "relative.t5.unused.bidirectional" if bidirectional else "relative.t5.unused.causal"
    values = {"b": num_buckets // 2} if bidirectional else {}
    assert tr(lang, key, listed=", ".join(map(str, unused)) or "—", **values) in view.infos
    return bias, offsets, kw


def t5_bucket(relative_position, **kwargs) -> np.ndarray:
    """transformers' ``T5Attention._relative_position_bucket`` (key index - query index -> bucket)."""
    import torch
    from transformers.models.t5.modeling_t5 import T5Attention

    rel = torch.as_tensor(np.asarray(relative_position, dtype=np.int64))
    return T5Attention._relative_position_bucket(rel, **kwargs).numpy()


def test_default_view_lessons():
    view = visit()
    bias, offsets, kw = check_lessons(view, shaw_len=32, k=8, num_buckets=32, max_distance=128, bidirectional=True)
    assert tr("en", "relative.t5.region.flat", s=91) in [t["name"] for t in lesson_charts(view)["curve"]["data"]]
    assert tr("en", "relative.t5.bias.notice", s=91) in view.captions
    assert tr("en", "relative.t5.unused.bidirectional", b=16, listed="16") in view.infos
    assert tr("en", "relative.t5.bias.none") in view.infos
    assert title(bias) == tr("en", "relative.t5.bias.synthetic", b=32)
    table = relative.t5_synthetic_bias_table(32)
    buckets = posviz.t5_relative_bucket(offsets, **kw)
    for h, y in enumerate(lines(bias)):
        np.testing.assert_allclose(y, table[buckets, h], rtol=1e-12)


def test_url_view_lessons_in_chinese():
    view = visit(URL, lang="zh")
    assert {
        k: view.widgets[k] for k in ("shaw_len", "shaw_k", "t5_buckets", "t5_max_distance", "t5_bidirectional")
    } == {"shaw_len": 20, "shaw_k": 3, "t5_buckets": 16, "t5_max_distance": 64, "t5_bidirectional": False}
    bias, _, _ = check_lessons(view, shaw_len=20, k=3, num_buckets=16, max_distance=64, bidirectional=False, lang="zh")
    start = int(
        np.flatnonzero(t5_bucket(-np.arange(64), bidirectional=False, num_buckets=16, max_distance=64) == 15)[0]
    )
    assert tr("zh", "relative.t5.bias.notice", s=start) in view.captions
    assert title(lesson_charts(view, "zh")["distinct"]) == tr("zh", "relative.shaw.distinct", k=3, total=7)
    assert title(bias) == tr("zh", "relative.t5.bias.synthetic", b=16)


def test_session_bias_table_is_shown():
    """A table left by the checkpoint inspector replaces the synthetic one; its bucket count wins."""
    table = np.random.default_rng(7).normal(size=(16, 3))
    at = AppTest.from_file(str(APP_FILE), default_timeout=TIMEOUT)
    at.switch_page(PAGE_FILES["relative"])
    at.query_params["tab"] = "t5"  # the link the checkpoint inspector gives
    at.session_state["posviz.tables"] = {
        "t5.relative_attention_bias": table,
        "bert.position_embeddings": np.zeros((4, 4)),
    }
    at.run()
    assert_clean(at)
    learned = {"name": "t5.relative_attention_bias", "b": 16, "h": 3}
    bias = chart(charts(at), "en", "relative.t5.bias.learned", **learned).fig
    assert tr("en", "relative.t5.bias.none") not in [i.value for i in at.info]
    offsets = as_array(bias["data"][0]["x"]).astype(int)
    np.testing.assert_array_equal(offsets, np.arange(-256, 257))
    buckets = posviz.t5_relative_bucket(offsets, num_buckets=16, max_distance=128, bidirectional=True)
    got = lines(bias)
    assert len(got) == 3
    for h in range(3):
        np.testing.assert_allclose(got[h], table[buckets, h], rtol=1e-12)
    # the table's 16 buckets, not the slider's 32, decide where its biases go flat
    past = t5_bucket(-np.arange(512), num_buckets=16, max_distance=128, bidirectional=True)
    start = int(np.flatnonzero(past == 7)[0])
    assert start != 91 and tr("en", "relative.t5.bias.notice", s=start) in [c.value for c in at.caption]


@pytest.mark.parametrize(
    "query",
    [
        {"shaw_k": "zz", "t5_bidirectional": "perhaps", "t5_buckets": "-2"},
        {"t5_max_distance": "1e9", "shaw_len": "0"},
    ],
)
def test_nonsense_in_the_url_falls_back(query):
    check_lessons(visit(query), shaw_len=32, k=8, num_buckets=32, max_distance=128, bidirectional=True)
