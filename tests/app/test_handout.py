"""The handout: "Download this lesson" saves the open view as one self-contained HTML file.

The file is fetched the way a browser's click does it (Streamlit runs the button's deferred callable and stores
the bytes), then parsed: every figure the page sent is in it with the same plotly JSON, in order, with its caption;
the values and the link are the view's; nothing outside the file is needed.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import plotly
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

import posviz
from posviz.ui import handout

from ._support import TEXTS, assert_clean, figures, open_page, tr


@pytest.fixture
def download(monkeypatch):
    """``download(at)``: the handout of the view ``at`` shows, as its button's click would make it (str)."""
    managers: dict[str, MediaFileManager] = {}
    original = MediaFileManager.add_deferred

    def remember(self, *args, **kwargs):
        file_id = original(self, *args, **kwargs)
        managers[file_id] = self
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", remember)

    def fetch(at, label: str = "handout.download", button=None, **fields) -> str:
        """The file of the download button labelled by the catalog's ``label`` (the view's handout by default), or of
        ``button``, the handout's button as an earlier run drew it (a fragment's rerun draws only the fragment)."""
        if button is None:
            wanted = tr(lang_of(at), label, **fields)
            (button,) = [b for b in at.get("download_button") if b.proto.label == wanted]
        file_id = button.proto.deferred_file_id
        assert file_id, "the handout must be made on demand, not with every run"
        manager = managers[file_id]
        url = manager.execute_deferred(file_id)
        stored = manager._storage.get_file(url.rsplit("/", 1)[-1])
        assert stored.mimetype == "text/html"
        return stored.content.decode("utf-8")

    return fetch


def handout_buttons(at) -> list:
    """The "Download this lesson" button of the view ``at`` shows (none after a fragment's rerun)."""
    return [b for b in at.get("download_button") if b.proto.label == tr(lang_of(at), "handout.download")]


def lang_of(at) -> str:
    return at.session_state["lang"] if "lang" in at.session_state else "en"


class Handout(HTMLParser):
    """What a reader of the file gets: figures (JSON, caption), values, link, text, and every external reference."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.figures: list[dict] = []
        self.captions: list[str] = []
        self.values: dict[str, str] = {}
        self.links: list[str] = []
        self.references: list[tuple[str, str, str]] = []  # (tag, attribute, value) that would load something
        self.styles: list[str] = []
        self.scripts: dict[str, str] = {}
        self.math: list[tuple[str, str]] = []  # (display | inline, TeX)
        self.lang = self.h1 = self.heading = None
        self.figure_tabs: list[str | None] = []  # the tab heading each figure stands under
        self.tab_headings: list[str] = []
        self.packed = 0  # elements stored compressed
        self.text_html = text[text.index('<section id="text">') : text.index('<section id="values">')]
        self._stack: list[tuple[str, dict]] = []
        self._buffer: list[str] = []
        self._row: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.lang = attrs.get("lang")
        for name in ("src", "srcset", "data", "poster"):
            if attrs.get(name):
                self.references.append((tag, name, attrs[name]))
        if tag == "link" and attrs.get("href"):
            self.references.append((tag, "href", attrs["href"]))
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag == "tr":
            self._row = []
        if tag not in ("meta", "br", "img", "input", "hr", "link"):
            self._stack.append((tag, attrs))
            self._buffer.append("")

    def handle_endtag(self, tag):
        if not self._stack or tag in ("meta", "br", "img", "input", "hr", "link"):
            return
        (opened, attrs), content = self._stack.pop(), self._buffer.pop()
        if self._buffer:
            self._buffer[-1] += content
        cls = attrs.get("class", "")
        if opened == "script" and attrs.get("type") == "application/gzip":
            content = handout.unpacked(content)  # as the file's own script unpacks it
            self.packed += 1
        if opened == "script" and "posviz-figure" in cls:
            self.figures.append(json.loads(content))
            self.figure_tabs.append(self.heading)
        elif opened == "script":
            self.scripts[attrs.get("id", f"inline-{len(self.scripts)}")] = content
        elif opened == "style":
            self.styles.append(content)
        elif opened == "figcaption":
            self.captions.append(content.strip())
        elif opened == "td":
            self._row.append(content.strip())
        elif opened == "tr" and len(self._row) == 2:
            self.values[self._row[0]] = self._row[1]
        elif opened == "h1":
            self.h1 = content.strip()
        elif opened == "h3" and "tab" in cls.split():
            self.heading = content.strip()
            self.tab_headings.append(self.heading)
        elif "math" in cls.split():
            self.math.append(("display" if "display" in cls else "inline", content))

    def handle_data(self, data):
        if self._buffer:
            self._buffer[-1] += data


def page_captions(at) -> list[str]:
    return [c.value for c in at.caption]


@pytest.mark.parametrize(
    ("page", "query"),
    [
        ("sinusoidal", {}),
        ("alibi", {"tab": "row"}),
        ("rope", {}),  # figures drawn inside fragments, an animation among them
        ("relative", {"tab": "t5", "lang": "zh"}),
    ],
)
def test_the_handout_holds_every_figure_of_the_view_in_order_with_its_caption(download, page, query):
    at = open_page(page, query=query)
    assert_clean(at)
    shown = figures(at)
    assert shown
    doc = Handout(download(at))
    assert doc.figures == shown  # the same plotly JSON, figure for figure, frames included
    captions = page_captions(at)
    assert len(doc.captions) == len(shown)
    where = [captions.index(c) for c in doc.captions]  # each is a caption the page showed, in the page's order
    assert where == sorted(where)


def test_the_values_in_use_and_the_link_that_reopens_the_view(download):
    query = {"n": "64", "d": "32", "base": "100", "layout": "halves", "tab": "shift", "k": "5"}
    at = open_page("sinusoidal", query=query)
    doc = Handout(download(at))
    for key in ("n", "d", "base", "layout", "k"):
        assert doc.values[key] == query[key]
    assert "tab" not in doc.values and "lang" not in doc.values  # the tab is named above the figures
    (link,) = doc.links
    parts = urlsplit(link)
    assert parts.path == "/sinusoidal"
    assert parse_qs(parts.query) == {**{k: [v] for k, v in query.items()}, "lang": ["en"]}
    assert tr("en", "handout.tab", tab=tr("en", "sinusoidal.tab.shift")) in download(at)


def test_controls_left_at_their_default_are_listed_with_it(download):
    doc = Handout(download(open_page("sinusoidal")))
    family = posviz.family("sinusoidal")
    for key, param in (("n", "n_positions"), ("d", "d_model"), ("base", "base"), ("layout", "layout")):
        default = family.param(param).default
        assert doc.values[key] == (f"{default:g}" if isinstance(default, float) else str(default))
    (link,) = doc.links
    assert parse_qs(urlsplit(link).query) == {"lang": ["en"]}


def test_the_handout_is_in_the_pages_language(download):
    at = open_page("sinusoidal", query={"lang": "zh", "tab": "distance"})
    doc = Handout(download(at))
    assert doc.lang == "zh-CN"
    assert doc.h1 == tr("zh", "page.sinusoidal")
    assert doc.captions == [tr("zh", "sinusoidal.offset.notice"), tr("zh", "sinusoidal.spread.notice")]
    first_words = (TEXTS / "sinusoidal.zh.md").read_text(encoding="utf-8").split("$")[0].strip()[:20]
    assert first_words in doc.text_html
    for key in ("handout.values", "handout.figures"):
        assert f">{tr('zh', key)}<" in download(at)


def test_nothing_outside_the_file_is_needed(download):
    text = download(open_page("rope"))
    doc = Handout(text)
    assert doc.references == []  # no script, style sheet, image or frame loaded from anywhere
    assert len(doc.links) == 1  # the link back is the only address, and it is a link to follow, not to load
    for style in doc.styles:
        assert "@import" not in style
        for url in re.findall(r"url\(\s*['\"]?([^)'\"]*)", style):
            assert url == "" or url.startswith("data:"), url[:80]
    assert plotly.offline.get_plotlyjs() in doc.scripts["plotly-js"]  # unpacked, the package's own copy
    assert sum(script.count("plotly.js v") for script in doc.scripts.values()) == 1  # embedded once
    assert "window.katex=" in doc.scripts["katex-js"]
    assert re.search(r"@font-face\s*\{[^}]*KaTeX_Main[^}]*data:font/woff2;base64,", "".join(doc.styles))


def test_the_teaching_text_is_rendered_markdown_with_its_formulas_kept_for_typesetting(download):
    source = (TEXTS / "relative.en.md").read_text(encoding="utf-8")
    doc = Handout(download(open_page("relative")))
    display = [tex for kind, tex in doc.math if kind == "display"]
    inline = [tex for kind, tex in doc.math if kind == "inline"]
    assert source.count("$") == 4 * len(display) + 2 * len(inline) > 0
    for tex in display:
        assert f"$${tex}$$" in source.replace("$$\n", "$$").replace("\n$$", "$$")
    for tex in inline:
        assert f"${tex}$" in source
    bold = re.findall(r"\*\*([^*]+)\*\*", source)
    assert bold and all(f"<strong>{b}</strong>" in doc.text_html for b in bold)
    assert "**" not in doc.text_html


def test_the_handout_is_made_only_when_its_button_is_pressed(download, monkeypatch):
    made = []
    real = handout.render
    monkeypatch.setattr(handout, "render", lambda *a, **k: made.append(1) or real(*a, **k))
    at = open_page("sinusoidal")
    at.run()
    assert made == []
    download(at)
    assert made == [1]


def test_a_view_without_figures_says_so(download):
    at = open_page("inspect")
    assert_clean(at)
    assert not figures(at)
    doc = Handout(download(at))
    assert doc.figures == []
    assert tr("en", "handout.none") in download(at)


def test_the_file_embeds_plotly_once_compressed_and_is_a_fraction_of_its_plain_size(download):
    at = open_page("rope")  # 13 figures, an animation among them
    text = download(at)
    doc = Handout(text)
    assert doc.packed == len(doc.figures) + 2  # every figure, plotly.js and KaTeX's script
    plain = len(text.encode()) - sum(len(m) for m in re.findall(r'type="application/gzip"[^>]*>([^<]*)<', text))
    plain += sum(len(s.encode()) for s in doc.scripts.values() if s is not None)
    plain += sum(len(json.dumps(f).encode()) for f in doc.figures)
    size = len(text.encode())
    assert size < 0.5 * plain  # what the same file would weigh with its scripts and figures stored as text
    assert size < len(plotly.offline.get_plotlyjs().encode())  # less than plotly.js alone, plain


def prepare_whole(at):
    """Press "Whole lesson" as a click would: the next run draws every tab."""
    (button,) = [b for b in at.button if b.key == "posviz-handout-prepare"]
    assert button.label == tr(lang_of(at), "handout.whole")
    button.click()
    return at.run()


@pytest.mark.parametrize(("page", "lang"), [("sinusoidal", "en"), ("alibi", "zh")])
def test_the_whole_lesson_holds_every_tab_s_figures_in_tab_order(download, page, lang):
    from ._support import tab_codes, visit_tabs

    codes = list(tab_codes(page))
    visited = visit_tabs(open_page(page, lang=lang), page, codes, lang=lang)  # each tab opened by hand
    at = open_page(page, lang=lang, query={"tab": codes[1]})
    open_tab = figures(at)
    at = prepare_whole(at)
    assert_clean(at)
    assert figures(at) == open_tab  # the page still sends only the open tab's figures to the browser
    labels = [b.proto.label for b in at.get("download_button")]
    assert tr(lang, "handout.whole.download", n=len(codes)) in labels
    assert tr(lang, "handout.download") in labels  # this view's file is still offered beside it
    text = download(at, "handout.whole.download", n=len(codes))
    doc = Handout(text)
    expected = [f for code in codes for f in visited.by_tab[code]]
    assert doc.figures == expected  # the same plotly JSON as each tab opened by hand, tab by tab
    names = [tr(lang, f"{page}.tab.{code}") for code in codes if visited.by_tab[code]]
    assert doc.tab_headings == names  # one heading per tab that draws figures, in the tabs' order
    assert tr(lang, "handout.whole.tabs", n=len(codes)) in text
    assert at.query_params.get("tab") in ([codes[1]], codes[1])  # the open tab stays open
    at.run()  # the next run is this view again: the whole lesson is drawn only when asked for
    assert figures(at) == open_tab
    assert [b.key for b in at.button if b.key == "posviz-handout-prepare"]


def test_a_page_without_lazy_tabs_offers_no_whole_lesson():
    at = open_page("home")
    assert not [b for b in at.button if b.key == "posviz-handout-prepare"]
