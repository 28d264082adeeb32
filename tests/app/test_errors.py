"""Bad input shows a readable st.error with the core's message, never a traceback; the rest of the page stays."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import posviz

from ._support import TIMEOUT, assert_clean, assert_matrix, figures, heatmap_z, open_page, tr


def core_message(func, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as info:
        func(*args, **kwargs)
    return str(info.value)


@pytest.mark.parametrize(
    ("controls", "kwargs"),
    [
        # 128 buckets leave an exact region of 32 positions per side, which a max distance of 16 cannot exceed
        ({"t5_buckets": 128, "t5_max_distance": 16}, dict(num_buckets=128, max_distance=16, bidirectional=True)),
        ({"t5_buckets": 64, "t5_max_distance": 16}, dict(num_buckets=64, max_distance=16, bidirectional=True)),
    ],
    ids=["exact-region-32", "exact-region-16"],
)
def test_t5_settings_that_cannot_work_show_an_error(controls, kwargs):
    """Reachable with the sliders: the T5 tab shows the core's reason, and the Shaw tab still draws."""
    at = open_page("relative", query={"tab": "t5"})
    for key, value in controls.items():
        at.slider(key=key).set_value(value)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    message = core_message(posviz.t5_bucket_matrix, 64, 64, **kwargs)
    assert [e.value for e in at.error] == [tr("en", "error.bad_input", message=message)]
    assert not figures(at)  # nothing half-drawn under the message
    at.slider(key="t5_buckets").set_value(32)
    at.slider(key="t5_max_distance").set_value(128)
    at.run()
    assert not at.error and len(figures(at)) == 4  # back to a drawable setting: matrix, curve, sizes, bias
    at.session_state["tab"] = tr("en", "relative.shaw")
    at.run()
    assert not at.error
    assert_matrix(heatmap_z(figures(at)[0]), posviz.shaw_relative_index(32, 32, 8))


def test_odd_head_dim_from_the_url_is_named_and_the_page_stays():
    """The slider steps by 2 but a hand-edited URL can say head_dim=7: the control takes only even values, so the
    link's notice names it, the default is drawn and the page stays RoPE; typed into the box, 7 goes to the nearest
    even value with a message under the box."""
    at = open_page("rope", query={"head_dim": "7"})
    assert_clean(at)
    assert [t.value for t in at.title] == [tr("en", "page.rope")]
    assert at.slider(key="head_dim").value == 64
    assert [t.value for t in at.toast] == [tr("en", "link.ignored", values="head_dim=7")]
    at.number_input(key="head_dim.exact").set_value(7).run()
    assert_clean(at)
    used = at.slider(key="head_dim").value
    assert used in (6, 8) and at.query_params["head_dim"] == str(used)
    said = tr("en", "number.grid", given="7", value=str(used), step="2")
    assert said in [c.value.removeprefix(":orange[").removesuffix("]") for c in at.caption]


def test_error_is_shown_in_the_chosen_language():
    at = open_page("relative", query={"t5_buckets": "128", "t5_max_distance": "16", "tab": "t5"}, lang="zh")
    assert not at.exception
    message = core_message(posviz.t5_bucket_matrix, 64, 64, num_buckets=128, max_distance=16)
    assert [e.value for e in at.error] == [tr("zh", "error.bad_input", message=message)]


def _errors_shown_script(kind: str) -> None:
    import streamlit as st

    from posviz.ui import errors_shown

    with errors_shown():
        st.write("before")
        if kind == "value":
            raise ValueError("head_dim must be even; got 7")
        if kind == "index":
            raise IndexError("position 9 is outside the learned table")
        raise TypeError("a programming error")
    st.write("after")


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("value", "head_dim must be even; got 7"),
        ("index", "position 9 is outside the learned table"),
    ],
)
def test_errors_shown_turns_core_errors_into_a_message(kind, message):
    at = AppTest.from_function(_errors_shown_script, args=(kind,), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    assert [e.value for e in at.error] == [tr("en", "error.bad_input", message=message)]
    assert [m.value for m in at.markdown] == ["before", "after"]  # the script goes on after the block


def test_errors_shown_does_not_hide_programming_errors():
    at = AppTest.from_function(_errors_shown_script, args=("type",), default_timeout=TIMEOUT)
    at.run()
    assert not at.error
    assert len(at.exception) == 1  # its text is redacted (.streamlit/config.toml: showErrorDetails = "none")
    assert [m.value for m in at.markdown] == ["before"]


def test_an_unexpected_error_is_a_message_and_the_app_frame_stays(monkeypatch):
    """The last net in app.py: an exception no page expected becomes a sentence, not a traceback."""
    import posviz.encodings.xlnet as xlnet

    def broken(*args, **kwargs):
        raise RuntimeError("the order could not be drawn")

    monkeypatch.setattr(xlnet, "factorisation_order", broken)
    at = open_page("xlnet", query={"len": "11", "seed": "913"})  # settings no earlier test has cached
    assert not at.exception
    message = tr("en", "error.unexpected", kind="RuntimeError", message="the order could not be drawn")
    assert message in [e.value for e in at.error]
    assert [r.key for r in at.sidebar.radio] == ["lang"]  # the frame (language switch, navigation) is intact
