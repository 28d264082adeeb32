"""Links and number boxes as a browser meets them: ``/home`` in any language or mode is Home, a bad value keeps its
page with the notice, a key that is no setting is named, an exact base from a link is drawn, what is typed into a
number box (``1e3``, ``63.5``, ``0``) is used or clamped with a message, the menu is in sections, and code on the
Pitfalls page wraps instead of being clipped. Screenshots in ``test-artifacts/screenshots/``."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from .test_pages import catalog, errors_on, page_url, screenshot, settle, title_of

NOT_FOUND = "Page not found"


def toasts(tab) -> list[str]:
    return tab.locator('[data-testid="stToast"]').all_inner_texts()


def query(tab) -> dict[str, list[str]]:
    return parse_qs(urlsplit(tab.url).query)


@pytest.mark.parametrize(
    ("path", "lang", "present"),
    [("/home", "en", False), ("/home?lang=zh", "zh", False), ("/home?present=true", "en", True)],
)
def test_home_by_name_opens_home(page, app_url, screenshot_dir, path, lang, present):
    page.goto(f"{app_url}{path}", wait_until="domcontentloaded")
    settle(page, min_charts=1, min_links=6)
    assert NOT_FOUND not in page.locator("body").inner_text()
    assert title_of(page) == catalog(lang)["page.home"]
    assert errors_on(page) == []
    if present:
        sidebar = page.locator('[data-testid="stSidebar"]').bounding_box()
        assert sidebar is None or sidebar["x"] + sidebar["width"] <= 1, "presentation mode keeps the sidebar closed"
    screenshot(page, screenshot_dir / f"links-home-by-name-{lang}{'-present' if present else ''}.png")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_address_that_names_no_page_says_so_and_shows_home(page, app_url, screenshot_dir, lang):
    extra = "?lang=zh" if lang == "zh" else ""
    page.goto(f"{app_url}/nosuchpage{extra}", wait_until="domcontentloaded")
    settle(page, min_charts=1, min_links=6)
    assert title_of(page) == catalog(lang)["page.home"]
    said = catalog(lang)["link.no_page"].replace("{path}", "/nosuchpage")
    page.wait_for_function(
        "(want) => [...document.querySelectorAll('[data-testid=stToast]')].some(t => t.innerText.includes(want))",
        arg=said,
        timeout=30_000,
    )
    assert errors_on(page) == []
    screenshot(page, screenshot_dir / f"links-no-such-page-{lang}.png")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_bad_value_keeps_its_page_and_is_named(page, app_url, screenshot_dir, lang):
    extra = "&lang=zh" if lang == "zh" else ""
    page.goto(page_url(app_url, "sinusoidal", f"n=inf&method=rope{extra}"), wait_until="domcontentloaded")
    settle(page, min_charts=1)
    assert urlsplit(page.url).path.endswith("/sinusoidal")
    assert title_of(page) == catalog(lang)["page.sinusoidal"]
    said = " ".join(toasts(page))
    words = catalog(lang)
    assert words["link.ignored"].split("{values}")[0].strip() in said and "n=inf" in said
    assert words["link.unknown"].split("{keys}")[0].strip() in said and "method=rope" in said
    assert errors_on(page) == []
    screenshot(page, screenshot_dir / f"links-bad-value-{lang}.png")


def test_a_links_exact_base_is_drawn_and_kept(page, app_url, screenshot_dir):
    page.goto(page_url(app_url, "rope", "base=500000"), wait_until="domcontentloaded")
    settle(page, min_charts=1)
    box = page.locator(".st-key-base-exact input")
    assert box.input_value().replace(",", "") == "500000"
    assert query(page)["base"] == ["500000"] and toasts(page) == []
    screenshot(page, screenshot_dir / "links-rope-base-500000.png")


def type_into(page, selector: str, text: str) -> None:
    box = page.locator(selector)
    box.fill(text)
    box.press("Enter")
    settle(page, min_charts=1)


@pytest.mark.parametrize(
    ("typed", "used", "message"),
    [("1e3", "1000", None), ("63.5", "64", "number.whole"), ("0", "1", "number.below"), ("-5", "1", "number.below")],
)
def test_what_is_typed_into_a_number_box_is_used_or_clamped_with_a_message(page, app_url, typed, used, message):
    page.goto(page_url(app_url, "sinusoidal", "d=8"), wait_until="domcontentloaded")
    settle(page, min_charts=1)
    type_into(page, ".st-key-n input", typed)
    page.wait_for_function("(want) => new URL(location.href).searchParams.get('n') === want", arg=used, timeout=30_000)
    page.wait_for_function(  # the box shows the value in use once the server's answer is drawn
        "(want) => document.querySelector('.st-key-n input').value.replace(/,/g, '') === want", arg=used, timeout=30_000
    )
    captions = page.locator('[data-testid="stCaptionContainer"]').all_inner_texts()
    if message is None:
        assert not any("is used" in c for c in captions)
    else:
        start = catalog("en")[message].split("{given}")[1].split("{")[0].strip()  # "is not a whole number" …
        assert any(c.startswith(typed) and start in c and used in c for c in captions), captions
    # the narrow box shows its digits: Streamlit's "Press Enter to apply" hint is not drawn over them
    assert page.locator('.st-key-n [data-testid="InputInstructions"]').evaluate_all(
        "els => els.every(e => getComputedStyle(e).display === 'none')"
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_letters_typed_into_a_number_box_are_named_not_read_as_zero(page, app_url, lang):
    """A browser's number field keeps no letters: "abc" reaches the server as no number, which is said, with the
    value still in use, instead of being read as 0 and clamped."""
    extra = "&lang=zh" if lang == "zh" else ""
    page.goto(page_url(app_url, "sinusoidal", f"d=8&n=48{extra}"), wait_until="domcontentloaded")
    settle(page, min_charts=1)
    box = page.locator(".st-key-n input")
    box.click()
    box.press("Control+a")
    page.keyboard.type("abc")
    page.keyboard.press("Enter")
    said = catalog(lang)["number.empty"].replace("{value}", "48")
    page.wait_for_function(
        "(want) => [...document.querySelectorAll('[data-testid=stCaptionContainer]')].some(c => c.innerText === want)",
        arg=said,
        timeout=30_000,
    )
    page.wait_for_function("() => document.querySelector('.st-key-n input').value === '48'", timeout=30_000)
    assert query(page)["n"] == ["48"]
    assert page.locator('.st-key-n [data-testid="stNumberInputClearButton"]').evaluate_all(
        "els => els.every(e => getComputedStyle(e).display === 'none')"
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_menu_is_in_sections(page, app_url, screenshot_dir, lang):
    page.goto(page_url(app_url, "sinusoidal", "lang=zh" if lang == "zh" else ""), wait_until="domcontentloaded")
    settle(page, min_charts=1)
    nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
    words = catalog(lang)
    places = [nav.find(words[f"nav.{s}"]) for s in ("lessons", "tools", "check")]
    assert all(p >= 0 for p in places) and places == sorted(places), nav
    # each page under its section: a lesson before Tools, the inspector between Tools and Check yourself
    assert places[0] < nav.find(words["page.rope"]) < places[1] < nav.find(words["page.inspect"]) < places[2]
    assert places[2] < nav.find(words["page.claims"])
    assert nav.count(words["page.home"]) == 1  # /home is a hidden second name of Home, not a second entry
    screenshot(page, screenshot_dir / f"links-menu-{lang}.png")


@pytest.mark.parametrize("tab", ["rope", "alibi", "scale", "index"])
def test_pitfalls_code_wraps_instead_of_being_clipped(page, app_url, screenshot_dir, tab):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(page_url(app_url, "pitfalls", f"tab={tab}&present=true"), wait_until="domcontentloaded")
    # every one of these tabs shows code: wait for it (a loaded machine can settle on the frame before the tab draws)
    page.wait_for_selector('[data-testid="stCode"] pre', timeout=90_000)
    settle(page)
    blocks = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stCode"] pre')].map(p =>
             ({scroll: p.scrollWidth, client: p.clientWidth, text: p.innerText.slice(0, 40)}))"""
    )
    assert blocks, "no code on the tab"
    clipped = [b for b in blocks if b["scroll"] > b["client"] + 1]
    assert clipped == [], clipped
    screenshot(page, screenshot_dir / f"links-pitfalls-code-{tab}-1280x720.png")
