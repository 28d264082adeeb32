"""Every numeric control of every page: a value typed into its box is the value the handout's "Values in use" names
and the value its link carries, and the figures the handout holds are the ones drawn with it.

A browser reruns only the fragment a widget sits in (``st.fragment``: most of the RoPE page's views), not the whole
page; AppTest reruns the whole script on every interaction. ``Browser`` makes AppTest rerun the way the browser
does: a widget drawn inside a fragment reruns that fragment alone (the fragment id the element was sent with).
The controls are found, not listed: every number box each tab of each page draws at its defaults.
"""

from __future__ import annotations

import functools
from urllib.parse import parse_qs, urlsplit

import pytest
import streamlit.testing.v1.local_script_runner as local_runner
from streamlit.runtime.scriptrunner import RerunData

from posviz.ui import widgets

from ._support import PAGE_NAMES, as_array, assert_clean, figures, open_page, tab_codes
from .test_handout import Handout, download, handout_buttons  # noqa: F401  (the fixture)

EXACT = ".exact"


class Browser:
    """AppTest rerunning as a browser does: ``type(at, key, value)`` types ``value`` into the number box ``key`` and
    presses Enter, which reruns the fragment the box is in, or the whole page when it is in none."""

    def __init__(self, monkeypatch):
        self.fragment_of: dict[str, str] = {}  # widget id -> the fragment it was drawn in ("" for none)
        self.monkeypatch = monkeypatch
        self.button = None  # the handout's button, as the last run that drew it did
        real = local_runner.LocalScriptRunner.run
        browser = self

        def run(runner, *args, **kwargs):
            tree = real(runner, *args, **kwargs)
            for msg in runner.forward_msgs():
                if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
                    element = msg.delta.new_element
                    proto = getattr(element, element.WhichOneof("type"))
                    if getattr(proto, "id", ""):
                        browser.fragment_of[proto.id] = msg.delta.fragment_id
            return tree

        monkeypatch.setattr(local_runner.LocalScriptRunner, "run", run)

    def type(self, at, key: str, value: float):
        box = at.number_input(key=key)
        fragment = self.fragment_of.get(box.proto.id)
        self.button = (handout_buttons(at) or [self.button])[0]
        box.set_value(value)
        if fragment:  # the runner's first request and the click's both name the fragment: it alone reruns
            self.monkeypatch.setattr(
                local_runner, "RerunData", functools.partial(RerunData, fragment_id_queue=[fragment])
            )
        try:
            at.run()
        finally:
            self.monkeypatch.setattr(local_runner, "RerunData", RerunData)
        return at


@pytest.fixture
def browser(monkeypatch) -> Browser:
    return Browser(monkeypatch)


@functools.cache
def numeric_controls() -> tuple[tuple[str, str | None, str], ...]:
    """``(page, tab, box key)`` of every number box the pages draw at their defaults, each on the first tab that
    draws it (a box left disabled by another control's default is not typed into)."""
    found: dict[tuple[str, str], str | None] = {}
    for page in PAGE_NAMES:
        for tab in tab_codes(page) or (None,):
            at = open_page(page, query={"tab": tab} if tab else None)
            for box in at.number_input:
                if box.key and not box.proto.disabled:
                    found.setdefault((page, box.key), tab)
    return tuple((page, tab, key) for (page, key), tab in found.items())


def link_values(doc: Handout) -> dict[str, list[str]]:
    (link,) = doc.links
    return parse_qs(urlsplit(link).query)


def check_typed(at, browser: Browser, download, key: str) -> None:  # noqa: F811
    """Type a value other than the one shown into the box ``key`` (one step up, or down when that is past the top),
    then check the handout against the value the box shows as used (a value off the control's steps is moved to
    one, and the box says so)."""
    control = key.removesuffix(EXACT)
    box = at.number_input(key=key)
    shown, step = box.value, box.proto.step or 1.0
    for value in (shown + step, shown - step):
        browser.type(at, key, value)
        assert_clean(at)
        used = at.number_input(key=key).value
        if used != shown:
            break
    assert used != shown, f"{control}: no value but {shown} could be typed"
    written = widgets.plain(float(used))
    assert at.query_params.get(control) == written
    drawn = figures(at)  # the figures this rerun drew (the fragment's, or the whole page's)
    doc = Handout(download(at, button=browser.button if not handout_buttons(at) else None))
    assert doc.values.get(control) == written, f"{control}: the handout names {doc.values.get(control)!r}"
    assert link_values(doc).get(control) == [written], f"{control}: the handout's link is {doc.links}"
    for fig in drawn:  # the handout holds the figures drawn with the typed value
        assert fig in doc.figures


@pytest.mark.slow
def test_a_value_typed_into_any_number_box_is_the_handouts_value_and_in_its_link(browser, download):  # noqa: F811
    controls = numeric_controls()
    keys = {(page, key) for page, _, key in controls}
    assert {("rope", "factor.exact"), ("rope", "orig.exact"), ("rope", "decay_len.exact"), ("sinusoidal", "n")} <= keys
    assert {page for page, _ in keys} >= {"home", "sinusoidal", "learned", "rope", "alibi", "models", "pitfalls"}
    wrong = []
    for page, tab, key in controls:
        at = open_page(page, query={"tab": tab} if tab else None)
        try:
            check_typed(at, browser, download, key)
        except AssertionError as exc:
            wrong.append(f"{page} ({tab}) {key}: {str(exc).splitlines()[0]}")
    assert wrong == []


@pytest.mark.parametrize(
    ("tab", "key", "typed"), [("extension", "factor.exact", 40), ("decay", "decay_len.exact", 3000)]
)
def test_a_value_typed_into_a_rope_fragment_is_the_handouts(browser, download, tab, key, typed):  # noqa: F811
    at = open_page("rope", query={"tab": tab})
    browser.type(at, key, typed)
    assert_clean(at)
    control = key.removesuffix(EXACT)
    doc = Handout(download(at, button=browser.button if not handout_buttons(at) else None))
    assert doc.values[control] == str(typed)
    assert link_values(doc)[control] == [str(typed)]
    assert link_values(doc)["tab"] == [tab]
    if control == "factor":  # Dynamic NTK's curve for the page's factor
        names = [str(trace.get("name", "")) for fig in doc.figures for trace in fig["data"]]
        assert f"factor {typed}" in names
    else:  # the bound is drawn at distances from 0 to the largest distance typed
        (decay,) = [fig for fig in doc.figures if fig["layout"].get("xaxis", {}).get("type") == "log"]
        assert max(as_array(trace["x"]).max() for trace in decay["data"]) == typed


def test_every_fragment_seals_the_handout_as_it_ends():
    """A fragment's rerun is no run of the frame, which seals the record: every fragment of the app is ``ui.fragment``
    (which seals it as the fragment's run ends), none Streamlit's own ``st.fragment``."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    wrapper = root / "posviz/ui/__init__.py"
    sources = [root / "app.py", *(root / "page_scripts").glob("*.py"), *(root / "posviz").rglob("*.py")]
    direct = [
        f"{path.relative_to(root)}:{node.lineno}"
        for path in sources
        if path != wrapper
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "fragment" and getattr(node.value, "id", "") == "st"
    ]
    assert direct == []
