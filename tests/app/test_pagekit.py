"""The page helpers: ``pagekit.labels`` (a figure's title and axis titles from their catalog keys) and
``Figures.show(chart=...)`` (a figure whose key a control of the page already has)."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from ._support import LANGS, TIMEOUT, tr


def _labels_app():
    import streamlit as st

    from posviz.ui.pagekit import labels

    st.session_state["three"] = labels("txl.memory.title", "txl.keys.x", "txl.memory.y", mem=3, n=5)
    st.session_state["two"] = labels("rope.layouts", "axis.dimension")


@pytest.mark.parametrize("lang", LANGS)
def test_labels_read_each_text_in_the_language_and_fill_its_own_fields(lang):
    at = AppTest.from_function(_labels_app, default_timeout=TIMEOUT)
    at.session_state["lang"] = lang
    at.run()
    assert not at.exception
    assert at.session_state["three"] == {
        "title": tr(lang, "txl.memory.title", mem=3, n=5),
        "x_title": tr(lang, "txl.keys.x", mem=3),  # the axis names the memory length too
        "y_title": tr(lang, "txl.memory.y"),
    }
    assert "3" in at.session_state["three"]["x_title"]
    assert at.session_state["two"] == {"title": tr(lang, "rope.layouts"), "x_title": tr(lang, "axis.dimension")}


def _shared_name_app():
    import plotly.graph_objects as go
    import streamlit as st

    from posviz.ui import Figures

    st.number_input("base", value=10.0, key="base")
    Figures("sinusoidal").show("base", go.Figure(go.Scatter(x=[0, 1], y=[2, 3])), chart="bases")


def test_a_figure_named_like_a_control_is_drawn_under_its_chart_name():
    at = AppTest.from_function(_shared_name_app, default_timeout=TIMEOUT).run()
    assert not at.exception
    (chart,) = at.get("plotly_chart")
    assert json.loads(chart.proto.spec)["data"][0]["y"] == [2, 3]
    assert "bases" in chart.proto.id and at.caption[0].value == tr("en", "sinusoidal.base.notice")
