"""The RoPE rotation animation in a real browser: pressing Play moves the position slider and the drawn points,
frame by frame, and the points it draws are the rotations the core computes."""

from __future__ import annotations

import math

import pytest

from .test_pages import errors_on, page_url, settle

# The animation's graph div: the only chart with play/pause buttons.
GRAPH = "[...document.querySelectorAll('.js-plotly-plot')].find(g => (g.layout.updatemenus || []).length)"

STATE_JS = f"""() => {{
  const g = {GRAPH};
  const hand = g._fullData[1];
  return {{active: g._fullLayout.sliders[0].active, x: Array.from(hand.x), y: Array.from(hand.y),
          centers: g.layout.meta.centers, frames: g._transitionData._frames.length}};
}}"""


def hand_angles(state) -> list[float]:
    """The angle of each dial's hand: its drawn point relative to the dial's centre (x, y, gap per dial)."""
    return [math.atan2(state["y"][3 * j + 1], state["x"][3 * j + 1] - c) for j, c in enumerate(state["centers"])]


def test_play_advances_the_frames_and_the_points(page, app_url, screenshot_dir):
    page.goto(page_url(app_url, "rope", "anim_len=40&head_dim=16"), wait_until="domcontentloaded")
    settle(page, min_charts=2, timeout=90_000)
    assert errors_on(page) == []
    graph = page.locator(".js-plotly-plot").filter(has=page.locator(".updatemenu-button")).first
    graph.scroll_into_view_if_needed()

    start = page.evaluate(STATE_JS)
    assert start["active"] == 0 and start["frames"] == 40
    assert hand_angles(start)[0] == pytest.approx(math.pi / 4, abs=1e-5)  # (1, 1) at position 0

    graph.locator(".updatemenu-button").first.click()  # Play
    page.wait_for_function(f"() => {GRAPH}._fullLayout.sliders[0].active >= 5", timeout=20_000)
    graph.locator(".updatemenu-button").nth(1).click()  # Pause
    page.wait_for_timeout(400)
    paused = page.evaluate(STATE_JS)
    page.wait_for_timeout(600)
    assert page.evaluate(STATE_JS) == paused, "the animation kept running after Pause"

    m = paused["active"]
    assert 5 <= m < 40
    # pair 0 turns by one radian per position, so its hand points at pi/4 + m (mod 2 pi)
    expected = math.atan2(math.sin(math.pi / 4 + m), math.cos(math.pi / 4 + m))
    assert hand_angles(paused)[0] == pytest.approx(expected, abs=1e-4)
    assert hand_angles(paused)[0] != pytest.approx(hand_angles(start)[0], abs=1e-3)
    label = graph.locator(".slider-group > .slider-label").first.text_content()
    assert label.endswith(str(m)), label

    screenshot_dir.mkdir(parents=True, exist_ok=True)
    graph.screenshot(path=str(screenshot_dir / "rope-animation.png"))


#: The boxes (left, top, right, bottom) of the animation's slider value ("position m = 0"), of its buttons and of its
#: figure, as Chromium draws them.
BOXES_JS = f"""() => {{
  const g = {GRAPH};
  const box = e => {{ const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; }};
  return {{label: [...g.querySelectorAll('.slider-group > .slider-label')].map(box),
          buttons: [...g.querySelectorAll('.updatemenu-button')].map(box), figure: box(g.querySelector('.main-svg'))}};
}}"""
#: (width, height, presentation mode): a laptop, and a 1280 x 720 projector with presentation mode's larger type.
SCREENS = [(1280, 800, False), (1280, 720, True)]


def overlap(a, b) -> bool:
    """Whether two boxes (left, top, right, bottom) share any area."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("width", "height", "presenting"), SCREENS, ids=[f"{w}x{h}{'-present' if p else ''}" for w, h, p in SCREENS]
)
def test_the_slider_value_is_clear_of_the_buttons(page, app_url, width, height, presenting, lang):
    """The slider's current value ("position m = 0") is written where neither Play nor Pause covers it, and inside
    the figure, at 1280 px with the sidebar open and in presentation mode, in both languages."""
    page.set_viewport_size({"width": width, "height": height})
    query = "&".join(part for part in ("present=true" if presenting else "", f"lang={lang}") if part)
    page.goto(page_url(app_url, "rope", query), wait_until="domcontentloaded")
    settle(page, min_charts=2, timeout=90_000)
    assert errors_on(page) == []
    page.locator(".js-plotly-plot").filter(has=page.locator(".updatemenu-button")).first.scroll_into_view_if_needed()
    boxes = page.evaluate(BOXES_JS)
    assert len(boxes["label"]) == 1 and len(boxes["buttons"]) == 2, boxes
    label, figure = boxes["label"][0], boxes["figure"]
    assert label[2] > label[0] and label[3] > label[1], f"the slider value is not drawn: {boxes}"
    for button in boxes["buttons"]:
        assert not overlap(label, button), f"the slider value {label} runs under a button {button}"
    assert figure[0] <= label[0] and label[2] <= figure[2], f"the slider value {label} leaves the figure {figure}"
