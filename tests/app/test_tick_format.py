"""Axes of every figure the app draws. No axis can write its numbers with SI prefixes ("600n", "20k", "1µ": they read as
units): every axis, 3-D axis and colour bar of every figure of every tab of every page (the inspector with a table
loaded, each claim of Myth or fact) writes plain or scientific numbers. Plotly's default exponent format is "B", an
SI-like one, so an axis that sets no format of its own fails. And every 2-D axis makes room for its labels
(``automargin``), so that long row labels are not cut."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from safetensors.numpy import save_file

from posviz.lessons import claims

from ._support import PAGE_NAMES, assert_clean, figures, open_page, tab_codes

#: The exponent formats that write plain or scientific numbers (plotly: "none", "e", "E", "power"; "B" and "SI"
#: write prefixes).
PLAIN = ("none", "e", "E", "power")
#: Trace types that draw a colour bar of their own.
COLORBARS = ("heatmap", "contour", "histogram2d", "histogram2dcontour", "surface")
#: Trace types drawn on a pair of 2-D axes.
CARTESIAN = ("scatter", "scattergl", "bar", "heatmap", "histogram", "box", "violin", "image", "contour")


def number_axes(fig: dict) -> Iterator[tuple[str, dict]]:
    """``(where, settings)`` of every axis or colour bar of ``fig`` that writes numbers."""
    layout = fig["layout"]
    for name, part in layout.items():
        if name.startswith(("xaxis", "yaxis")):
            yield name, part
        elif name.startswith("scene"):
            for axis in ("xaxis", "yaxis", "zaxis"):
                yield f"{name}.{axis}", part.get(axis, {})
        elif name.startswith("coloraxis"):
            yield f"{name}.colorbar", part.get("colorbar", {})
    for i, trace in enumerate(fig["data"]):
        kind = trace.get("type", "scatter")
        if kind in COLORBARS and trace.get("showscale", True) and "coloraxis" not in trace:
            yield f"data[{i}].colorbar", trace.get("colorbar", {})
        marker = trace.get("marker", {})
        if isinstance(marker, dict) and marker.get("showscale"):
            yield f"data[{i}].marker.colorbar", marker.get("colorbar", {})
        if kind in CARTESIAN:  # the axes a trace is drawn on exist in the layout (else plotly's defaults apply)
            for letter in "xy":
                ref = trace.get(f"{letter}axis", letter)
                name = f"{letter}axis{ref[1:]}"
                if name not in layout:
                    yield name, {}


def can_show_si(axis: dict) -> bool:
    """Whether plotly would write this axis's numbers with SI prefixes at some range: a d3 format with the ``s``
    type, or no format and an exponent format of "B" (plotly's default) or "SI"."""
    if axis.get("tickformat"):
        return axis["tickformat"].rstrip().endswith("s")
    return axis.get("exponentformat", "B") not in PLAIN


def si_axes(figs: list[dict]) -> list[tuple[str, str]]:
    return [
        (str(fig["layout"].get("title", {}).get("text", "?"))[:60], where)
        for fig in figs
        for where, axis in number_axes(fig)
        if can_show_si(axis)
    ]


def cut_labels(figs: list[dict]) -> list[tuple[str, str]]:
    """The 2-D axes that make no room for their labels (no ``automargin``): a long row label (a token, a model's
    name) is cut at the figure's fixed margin, in the handout above all, where no theme of Streamlit's makes room."""
    return [
        (str(fig["layout"].get("title", {}).get("text", "?"))[:60], name)
        for fig in figs
        for name, axis in fig["layout"].items()
        if name.startswith(("xaxis", "yaxis")) and axis.get("automargin") is not True
    ]


def test_the_checker_sees_plotlys_default_and_an_si_tickformat():
    import plotly.graph_objects as go

    from posviz.figures.base import lines

    bare = go.Figure(go.Heatmap(z=np.eye(3))).to_plotly_json()
    assert [where for _, where in si_axes([bare])] == ["data[0].colorbar", "xaxis", "yaxis"]
    styled = lines(np.arange(3), {"a": np.array([1e-7, 2e-7, 3e-7])}, title="t", x_title="x", y_title="y")
    assert si_axes([styled.to_plotly_json()]) == []
    styled.update_yaxes(tickformat="~s")
    assert [where for _, where in si_axes([styled.to_plotly_json()])] == ["yaxis"]


def drawn(page: str, query: dict | None = None) -> list[dict]:
    at = open_page(page, query=query)
    assert_clean(at)
    return figures(at)


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGE_NAMES if p not in ("inspect", "lab", "claims")])
def test_every_tab_of_every_page_writes_plain_numbers(page):
    codes = tab_codes(page) or (None,)
    figs = [fig for code in codes for fig in drawn(page, {"tab": code} if code else None)]
    assert figs
    assert not si_axes(figs), si_axes(figs)
    assert not cut_labels(figs), cut_labels(figs)


@pytest.mark.slow
def test_every_claim_writes_plain_numbers():
    figs = [fig for code in claims.CLAIMS for fig in drawn("claims", {"tab": code})]
    assert figs
    assert not si_axes(figs), si_axes(figs)
    assert not cut_labels(figs), cut_labels(figs)


@pytest.mark.slow
def test_every_inspector_tab_writes_plain_numbers(tmp_path):
    table = np.random.default_rng(0).standard_normal((64, 16)).astype(np.float32) * 1e-6  # tiny numbers: SI's "µ"
    save_file({"wpe.weight": table}, str(tmp_path / "model.safetensors"))
    source = {"from": "path", "path": str(tmp_path / "model.safetensors")}
    figs = [fig for code in tab_codes("inspect") or ("table",) for fig in drawn("inspect", {**source, "tab": code})]
    assert len(figs) > 5
    assert not si_axes(figs), si_axes(figs)
    assert not cut_labels(figs), cut_labels(figs)


def test_the_labs_figures_write_plain_numbers():
    """The lab draws its figures only after a training run: its builders, called as the page calls them."""
    from posviz.figures import lab

    steps, mats = np.array([0, 10]), np.stack([np.eye(4), np.eye(4) * 1e-6])
    figs = [
        lab.similarity_animation(steps, mats, title="t", axis_title="p", play="play", pause="pause", slider_prefix="s"),
        lab.accuracy_by_length(
            np.arange(4, 8),
            {"a": np.linspace(0, 1e-5, 4)},
            min_len=4,
            train_len=6,
            title="t",
            x_title="L",
            y_title="acc",
            trained_label="trained",
            train_line_label="train",
        ),  # fmt: skip
        lab.probe_bars(
            ["a", "b"], {"before": np.array([1e-6, 2e-6])}, guess=(1e-6, "g"), title="t", x_title="e", y_title="err"
        ),  # fmt: skip
    ]
    assert not si_axes([fig.to_plotly_json() for fig in figs])
    assert not cut_labels([fig.to_plotly_json() for fig in figs])
