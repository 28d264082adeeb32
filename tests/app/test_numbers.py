"""Numeric controls take exact values: a link's ``base=500000`` is drawn as 500,000 (Llama 3's RoPE base, which the
log slider's two-digit steps do not offer), a value typed into a box is used as typed when the control can take it,
and otherwise it is clamped to the nearest limit or step, or refused, with a message under the box that says which
value is in use. The oracle is the core itself: the figure drawn is the one the core computes for the value said."""

from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz.encodings import rope

from ._support import assert_clean, figures, heatmap_z, open_page, rope_table_formula, tr, widget

ORANGE = ":orange["


def messages(at) -> list[str]:
    """The messages under the number boxes (an orange caption each)."""
    return [c.value[len(ORANGE) : -1] for c in at.caption if c.value.startswith(ORANGE)]


def test_a_link_sets_the_rope_base_of_llama_3_exactly():
    at = open_page("rope", query={"base": "500000", "n": "16", "head_dim": "8"})
    assert_clean(at)
    assert [t.value for t in at.toast] == []  # nothing of the link went unused
    assert widget(at, "base.exact").value == 500_000
    assert float(widget(at, "base").value) == 500_000
    assert at.query_params["base"] == "500000"
    inv, _ = rope.rope_inv_freq(8, base=500_000.0)
    np.testing.assert_allclose(inv, 1.0 / 500_000.0 ** (np.arange(0, 8, 2) / 8), rtol=1e-12)  # the formula itself
    table = heatmap_z(figures(at)[0])
    np.testing.assert_allclose(table, rope_table_formula(16, 8, base=500_000.0), atol=1e-6)


def test_a_base_typed_into_the_box_is_used_exactly_and_kept_in_the_link():
    at = open_page("sinusoidal", query={"n": "16", "d": "8"})
    at.number_input(key="base.exact").set_value(123_456).run()
    assert_clean(at)
    assert messages(at) == []
    assert float(widget(at, "base").value) == 123_456 and at.query_params["base"] == "123456"
    # the link reopens the same value
    fresh = open_page("sinusoidal", query={key: at.query_params[key] for key in at.query_params})
    assert float(widget(fresh, "base").value) == 123_456


@pytest.mark.parametrize(
    ("typed", "used", "key", "fields"),
    [
        (0, 1, "number.below", {"limit": "1"}),
        (-5, 1, "number.below", {"limit": "1"}),
        (1_000_000, posviz.MAX_POSITIONS, "number.above", {"limit": f"{posviz.MAX_POSITIONS:,}"}),
        (63.5, 64, "number.whole", {}),
        (1000, 1000, None, {}),
    ],
)
def test_a_number_box_clamps_what_it_cannot_take_and_says_which_value_is_used(typed, used, key, fields):
    at = open_page("sinusoidal", query={"d": "8"})
    at.number_input(key="n").set_value(typed).run()
    assert_clean(at)
    assert widget(at, "n").value == used
    assert at.query_params.get("n") == (None if used == 128 else str(used))
    if key is None:
        assert messages(at) == []
    else:
        given = f"{typed:,}" if float(typed).is_integer() else str(typed)
        assert messages(at) == [tr("en", key, given=given, value=f"{used:,}", **fields)]
    # the message is said once: the next run, with nothing typed, keeps the value and says nothing
    at.run()
    assert widget(at, "n").value == used and messages(at) == []


def test_a_message_is_in_the_pages_language():
    at = open_page("sinusoidal", query={"d": "8", "lang": "zh"})
    at.number_input(key="n").set_value(-5).run()
    assert_clean(at)
    assert messages(at) == [tr("zh", "number.below", given="-5", value="1", limit="1")]


@pytest.mark.parametrize("typed", [float("nan"), float("inf"), float("-inf")])
def test_not_a_number_is_refused_and_the_value_in_use_stays(typed):
    """No browser box sends these (and AppTest sends them as 0), so the rule is checked where it is made."""
    from posviz.ui.widgets import Span

    span = Span(1.0, float(posviz.MAX_POSITIONS), 128, True, 1)
    assert span.typed(typed, 64) == (64, tr("en", "number.refused", given=str(typed), value="64"))


def test_the_box_over_a_slider_and_the_slider_agree():
    at = open_page("rope", query={"n": "16"})
    at.slider(key="head_dim").set_value(32).run()
    assert_clean(at)
    assert widget(at, "head_dim.exact").value == 32 and at.query_params["head_dim"] == "32"
    at.number_input(key="head_dim.exact").set_value(48).run()
    assert_clean(at)
    assert widget(at, "head_dim").value == 48 and at.query_params["head_dim"] == "48"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("key", ["n", "base.exact"])
def test_an_emptied_box_says_it_holds_no_number_and_keeps_the_value_in_use(lang, key):
    """Letters typed into a box reach the server as no number at all (the browser's number field holds none): the
    message says so and which value is still used, the box shows that value again, and the link keeps it."""
    at = open_page("sinusoidal", query={"n": "48", "d": "8", "base": "500", "lang": lang})
    before = heatmap_z(figures(at)[0])
    at.number_input(key=key).set_value(None).run()
    assert_clean(at)
    used = {"n": "48", "base.exact": "500"}[key]
    assert messages(at) == [tr(lang, "number.empty", value=used)]
    assert widget(at, key).value == int(used)
    assert at.query_params["n"] == "48" and at.query_params["base"] == "500"
    np.testing.assert_array_equal(heatmap_z(figures(at)[0]), before)
    at.run()
    assert messages(at) == [] and widget(at, key).value == int(used)
