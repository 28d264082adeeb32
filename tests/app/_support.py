"""Helpers of the app tests: open a page in AppTest, read the plotly figures back as numpy arrays, find a chart by
what it is (the catalog key of its title, its traces, its axes) rather than by its place on the page, with the
caption under it, list every string a page shows, look up the string catalogs independently of ``posviz.ui``.

Every helper reads the sources of truth directly (``app.py``'s page list, ``assets/i18n/<lang>/*.json``), so a test
compares what the app shows with what the files and the core say, not with the app's own lookups.
"""

from __future__ import annotations

import ast
import base64
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import SelectSlider

ROOT = Path(__file__).resolve().parents[2]
APP_FILE = ROOT / "app.py"
I18N = ROOT / "assets" / "i18n"
TEXTS = ROOT / "assets" / "texts"
TIMEOUT = 60


@cache
def app_pages() -> tuple[tuple[str, str], ...]:
    """``(key, script path)`` of every page, from the page table app.py builds its navigation from."""
    from posviz.pages import PAGES

    return tuple((page.key, page.file) for page in PAGES)


@cache
def tab_codes(page: str) -> tuple[str, ...]:
    """The tab codes of ``page``, first tab first: the string keys of its ``DRAW = {...}`` literal (none: no tabs)."""
    tree = ast.parse((ROOT / PAGE_FILES[page]).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "DRAW" for t in node.targets):
            return tuple(ast.literal_eval(key) for key in node.value.keys)
    return ()


PAGE_NAMES = tuple(name for name, _ in app_pages())
PAGE_FILES = dict(app_pages())
LANGS = ("en", "zh")
#: Pages that draw no figure until the user loads or trains something.
EMPTY_PAGES = ("home", "inspect", "lab")


@cache
def catalog(lang: str) -> dict[str, str]:
    """The merged catalog of ``lang`` (every ``assets/i18n/<lang>/*.json``); a key found in two files fails."""
    merged: dict[str, str] = {}
    for path in sorted((I18N / lang).glob("*.json")):
        part = json.loads(path.read_text(encoding="utf-8"))
        assert not merged.keys() & part.keys(), f"{lang}/{path.name} repeats keys: {merged.keys() & part.keys()}"
        merged.update(part)
    return merged


def tr(lang: str, key: str, **values) -> str:
    """The catalog text of ``key`` in ``lang`` (no fallback: a missing key fails the test loudly)."""
    text = catalog(lang)[key]
    return text.format(**values) if values else text


def teaching_text(page: str, lang: str) -> str:
    return (TEXTS / f"{page}.{lang}.md").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------- running the app


def open_page(page: str, *, query: dict | None = None, lang: str | None = None, locale: str | None = None) -> AppTest:
    """A fresh AppTest of app.py that opens ``page`` directly (like a deep link) and has run once.

    ``query`` is the URL's query string, ``lang`` the language chosen in the sidebar (set as the widget's
    session state, as a click on the radio would), ``locale`` the browser's language (``st.context.locale``).
    """
    at = AppTest.from_file(str(APP_FILE), default_timeout=TIMEOUT)
    if page != "home":
        at.switch_page(PAGE_FILES[page])
    if query:
        at.query_params.update(query)
    if lang is not None:
        at.session_state["lang"] = lang
    if locale is not None:
        at.context["locale"] = locale
    return at.run()


@dataclass
class TabbedView:
    """What a page with lazy tabs showed over a visit of every tab, in tab order (only the open tab runs)."""

    figures: list[dict] = field(default_factory=list)
    markdown: list[str] = field(default_factory=list)
    captions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    infos: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    subheaders: list[str] = field(default_factory=list)
    metrics: list = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    widgets: dict = field(default_factory=dict)
    by_tab: dict = field(default_factory=dict)
    #: tab code -> its ``Chart``s (figure, key, the caption under it)
    charts: dict = field(default_factory=dict)
    #: every string the tabs showed (``visible_strings``), over all tabs
    strings: list = field(default_factory=list)

    def all_charts(self) -> list[Chart]:
        return [c for shown in self.charts.values() for c in shown]


def visit_tabs(
    at: AppTest, page: str, tabs: list[str], lang: str = "en", label_key: str = "{page}.tab.{code}"
) -> TabbedView:
    """Open each of ``tabs`` (codes, first tab first) in turn, as a click on its label would, and gather what
    each showed. ``at`` has run once; the figures of ``tab`` are ``view.by_tab[tab]``; ``label_key`` is the
    catalog key of a tab's label."""
    view = TabbedView()
    for code in tabs:
        at.session_state["tab"] = tr(lang, label_key.format(page=page, code=code))
        at.run()
        shown = figures(at)
        view.by_tab[code] = shown
        view.charts[code] = charts(at)
        view.strings += visible_strings(at)
        view.figures += shown
        view.markdown += [m.value for m in at.markdown]
        view.captions += [c.value for c in at.caption]
        view.warnings += [w.value for w in at.warning]
        view.infos += [i.value for i in at.info]
        view.errors += [e.value for e in at.error]
        view.exceptions += [e.value for e in at.exception]
        view.subheaders += [h.value for h in at.subheader]
        view.metrics += list(at.metric)
        view.codes += [c.value for c in at.code]
        for kind in ("slider", "select_slider", "number_input", "toggle", "radio", "checkbox"):
            view.widgets.update({w.key: w.value for w in getattr(at, kind) if w.key})
    return view


def assert_clean(at: AppTest) -> None:
    """No uncaught exception and no st.error on the page."""
    assert not at.exception, "uncaught exception:\n" + "\n".join(e.value for e in at.exception)
    assert not at.error, "st.error shown: " + " | ".join(e.value for e in at.error)


def widget(at: AppTest, key: str):
    """The widget with ``key`` whatever its kind (slider, select_slider, number_input, toggle, radio)."""
    for kind in ("slider", "select_slider", "number_input", "toggle", "radio", "checkbox"):
        for w in getattr(at, kind):
            if w.key == key:
                return w
    raise AssertionError(f"no widget with key {key!r} on the page")


def set_controls(at: AppTest, **values) -> AppTest:
    """Sets each control ``key=value`` of the page whatever its kind (``widget``; a select-slider's option is taken
    of the type of its value, so ``base=100`` picks 10² whether the options are ints or floats), reruns the page
    once and checks that it ran clean."""
    for key, value in values.items():
        control = widget(at, key)
        control.set_value(type(control.value)(value) if isinstance(control, SelectSlider) else value)
    at.run()
    assert_clean(at)
    return at


def has_widget(at: AppTest, key: str) -> bool:
    try:
        widget(at, key)
    except AssertionError:
        return False
    return True


def button(at: AppTest, label: str):
    matches = [b for b in at.button if b.label == label]
    assert matches, f"no button labelled {label!r}; buttons: {[b.label for b in at.button]}"
    return matches[0]


# ------------------------------------------------------------------------------------------- reading figures


def figures(at: AppTest) -> list[dict]:
    """Every plotly chart of the page as a figure dict, in page order."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def as_array(value) -> np.ndarray:
    """A plotly array as float64: a typed array ``{"dtype", "bdata", "shape"}`` or a (nested) list with
    ``None`` for missing values."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape is not None:
            dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else list(shape)
            arr = arr.reshape(dims)
        return arr.astype(np.float64)
    if isinstance(value, dict):
        raise AssertionError(f"unexpected plotly array encoding: {sorted(value)}")

    def clean(v):
        if isinstance(v, list):
            return [clean(x) for x in v]
        return np.nan if v is None else v

    return np.asarray(clean(value), dtype=np.float64)


def title(fig: dict) -> str:
    t = fig["layout"].get("title", {})
    return t.get("text", "") if isinstance(t, dict) else str(t)


def heatmap_z(fig: dict) -> np.ndarray:
    """The exact matrix of a heatmap figure (not a downsampled image)."""
    trace = fig["data"][0]
    assert trace["type"] == "heatmap", f"expected an exact heatmap, got a {trace['type']} trace"
    assert fig["layout"]["meta"]["downsampled"] is False
    z = as_array(trace["z"])
    assert list(z.shape) == fig["layout"]["meta"]["shape"] == fig["layout"]["meta"]["source_shape"]
    return z


def image_rgba(fig: dict) -> np.ndarray:
    """The PNG of a downsampled heatmap as an (rows, cols, 4) uint8 array."""
    from PIL import Image

    trace = fig["data"][0]
    assert trace["type"] == "image", f"expected a downsampled image, got a {trace['type']} trace"
    uri = trace["source"]
    assert uri.startswith("data:image/png;base64,")
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGBA"))


def assert_matrix(got: np.ndarray, expected, *, atol: float = 1e-6, what: str = "") -> None:
    """``got`` (float32 in the chart) equals ``expected`` (float64); NaN in ``got`` exactly where ``expected``
    is not finite (masks are drawn blank)."""
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    blank = ~np.isfinite(expected)
    np.testing.assert_array_equal(np.isnan(got), blank, err_msg=f"{what}: blank cells differ")
    np.testing.assert_allclose(got[~blank], expected[~blank], rtol=0, atol=atol, err_msg=what)


# ------------------------------------------------------------------ finding a figure by what it is, not its place


@dataclass(frozen=True)
class Chart:
    """A plotly chart as the page drew it: its figure, the key the page gave it (``show(..., key=...)``, "" if
    none) and the "what to notice" caption drawn right under it (``None`` if there is none)."""

    fig: dict
    key: str
    notice: str | None

    @property
    def title(self) -> str:
        return title(self.fig)

    @property
    def headline(self) -> str:
        """The title without a note under it (``<br><sup>...</sup>``, e.g. that a heatmap is downsampled)."""
        return re.sub(r"<br><sup>.*</sup>$", "", self.title, flags=re.S)

    def axes(self, axis: str = "") -> tuple[str, str]:
        """The (x, y) axis titles of the figure's first (or ``axis``-suffixed, e.g. "2") pair of axes."""
        layout = self.fig["layout"]
        return tuple(_text(layout.get(f"{a}axis{axis}", {}).get("title")) for a in "xy")

    def traces(self, kind: str) -> list[dict]:
        """The figure's traces of plotly type ``kind`` (``heatmap``, ``scatter``, ``bar``, ...)."""
        return [trace for trace in self.fig["data"] if trace.get("type", "scatter") == kind]


def _text(value) -> str:
    if isinstance(value, dict):
        return value.get("text", "") or ""
    return value or ""


def _blocks(node) -> Iterator:
    """The children of ``node`` in page order, blocks (tabs, columns, expanders) before their content."""
    for index in sorted(getattr(node, "children", {}) or {}):
        child = node.children[index]
        yield node, index, child
        yield from _blocks(child)


def charts(at: AppTest) -> list[Chart]:
    """Every plotly chart of the page (in any block) with the caption ``show`` draws right under it."""
    found = []
    for parent, index, node in _blocks(at.main):
        if node.type != "plotly_chart":
            continue
        after = parent.children.get(index + 1)
        parts = node.proto.id.split("-", 2)  # "$$ID-<hash>-<the page's key>", "None" without a key
        key = parts[2] if len(parts) == 3 and parts[0] == "$$ID" and parts[2] != "None" else ""
        notice = after.value if after is not None and after.type == "caption" else None
        found.append(Chart(json.loads(node.proto.spec), key, notice))
    return found


#: A ``{field}`` of a catalog entry, with or without a format spec.
FIELD = re.compile(r"\{[A-Za-z_0-9]*(?::[^}]*)?\}")


@cache
def _pattern(lang: str, key: str) -> re.Pattern:
    """The catalog entry ``key`` of ``lang`` as a pattern in which each ``{field}`` matches any text."""
    parts = FIELD.split(tr(lang, key))
    return re.compile(".+?".join(re.escape(part) for part in parts), re.S)


def says(text: str, lang: str, key: str, **values) -> bool:
    """Whether ``text`` is the catalog entry ``key`` of ``lang``: with ``values`` filled in exactly, or (without
    them) with its ``{fields}`` filled with anything."""
    return text == tr(lang, key, **values) if values else bool(_pattern(lang, key).fullmatch(text))


def chart(found: list[Chart], lang: str, key: str, **values) -> Chart:
    """The one chart of ``found`` whose title is the catalog entry ``key`` of ``lang`` (``says``)."""
    matches = [c for c in found if says(c.title, lang, key, **values) or says(c.headline, lang, key, **values)]
    assert len(matches) == 1, f"{len(matches)} charts titled {key!r} ({lang}); titles: {[c.title for c in found]}"
    return matches[0]


def charts_by_key(found: list[Chart], lang: str, keys) -> dict[str, Chart]:
    """``found`` holds one chart per catalog key of ``keys`` and nothing else, in any order: the charts by key.
    A key given as ``(key, {values})`` must be titled with exactly those values."""
    keyed = dict(k if isinstance(k, tuple) else (k, {}) for k in keys)
    by_key = {key: chart(found, lang, key, **values) for key, values in keyed.items()}
    assert len({id(c) for c in by_key.values()}) == len(by_key), f"one chart answers two of {sorted(keyed)}"
    extra = [c.title for c in found if all(c is not other for other in by_key.values())]
    assert not extra, f"charts not among {sorted(keyed)}: {extra}"
    return by_key


@cache
def _entries(lang: str) -> frozenset[str]:
    return frozenset(catalog(lang).values())


@cache
def _frames(lang: str) -> tuple[re.Pattern, ...]:
    """The entries that are only ``{fields}`` and punctuation (``**{number}.** {text}``), each field a group."""
    return tuple(
        re.compile("(.+?)".join(re.escape(part) for part in FIELD.split(entry)), re.S)
        for entry in catalog(lang).values()
        if FIELD.search(entry) and not re.search(r"\w", FIELD.sub("", entry))
    )


def _number(text: str) -> bool:
    return bool(re.fullmatch(r"[-+−]?[\d.,]+(e[-+]?\d+)?%?", text.strip()))


@cache
def _templates(lang: str) -> tuple[re.Pattern, ...]:
    """The entries with ``{fields}`` that say something besides their fields: ``{label}: {value}`` would match
    any text with a colon in it, in any language."""
    return tuple(
        _pattern(lang, key)
        for key, entry in catalog(lang).items()
        if FIELD.search(entry) and re.search(r"\w", FIELD.sub("", entry))
    )


def from_catalog(text: str, lang: str) -> bool:
    """Whether ``text`` is an entry of the ``lang`` catalog, its ``{fields}`` filled with anything; an entry that is
    only fields and punctuation (``{label}: {value}``, which would match any text with a colon) counts when each
    field holds a number or itself a text of the catalog."""
    if text in _entries(lang) or any(pattern.fullmatch(text) for pattern in _templates(lang)):
        return True
    for frame in _frames(lang):
        match = frame.fullmatch(text)
        if match and all(_number(part) or from_catalog(part, lang) for part in match.groups()):
            return True
    return False


#: Element types whose ``value`` is text the student reads.
TEXT_ELEMENTS = ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success")
#: Input widgets: their label, help and options are read.
INPUTS = (
    "slider", "select_slider", "number_input", "toggle", "radio", "checkbox", "selectbox", "multiselect",
    "text_input", "text_area",
)  # fmt: skip


def visible_strings(at: AppTest) -> list[tuple[str, str]]:
    """``(where, text)`` for every string a student reads in the page's main area and sidebar: headings, texts,
    captions and notices, tab and expander labels, control labels, help and options, button and link labels,
    metrics, and in each chart its title, axis titles, legend entries and annotations. Numbers, LaTeX and code are
    no text of a catalog and are left out: a chart's tick labels, an ``st.latex`` block, ``st.code``."""
    out = []
    for _, _, node in [*_blocks(at.main), *_blocks(at.sidebar)]:
        kind = node.type
        if kind in ("tab", "expander"):
            out.append((kind, node.label))
        elif kind in TEXT_ELEMENTS:  # (an ``st.latex`` block is of type "latex")
            out.append((kind, node.value))
        elif kind in INPUTS:
            out.append((f"{kind} {node.key}", node.label))
            if node.help:
                out.append((f"{kind} {node.key} help", node.help))
            if kind in ("radio", "selectbox", "multiselect"):
                out += [(f"{kind} {node.key} option", str(option)) for option in node.options]
        elif kind in ("button", "download_button", "page_link"):
            out.append((kind, node.proto.label))
        elif kind == "metric":
            out += [("metric", node.label), ("metric value", node.value)]
        elif kind == "plotly_chart":
            fig = json.loads(node.proto.spec)
            layout = fig["layout"]
            out.append(("chart title", title(fig)))
            out += [(f"chart {a}", _text(layout[a].get("title"))) for a in sorted(layout) if a[1:5] == "axis"]
            out += [("chart legend", trace["name"]) for trace in fig["data"] if trace.get("name")]
            out += [("chart annotation", a["text"]) for a in layout.get("annotations", []) if a.get("text")]
    return [(where, text) for where, text in out if text and text.strip()]


# ---------------------------------------------------------------------- closed forms the charts are checked against


def sinusoidal_formula(n, d, base=10000.0, layout="interleaved"):
    """PE[p, 2k] = sin(p w_k), PE[p, 2k + 1] = cos(p w_k), w_k = base^(-2k / d) (Vaswani et al. 2017); even d."""
    omega = base ** (-np.arange(0, d, 2) / d)
    angles = np.arange(n)[:, None] * omega[None, :]
    if layout == "halves":
        return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
    table = np.empty((n, d))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


def sinusoidal_similarity_formula(n, d, base=10000.0):
    """Every row has norm sqrt(d / 2) and PE(i) . PE(j) = sum_k cos((i - j) w_k), so S depends on i - j only."""
    omega = base ** (-np.arange(0, d, 2) / d)
    lag = np.arange(n)[:, None] - np.arange(n)[None, :]
    return np.cos(lag[..., None] * omega).sum(axis=-1) / (d / 2)


def rope_table_formula(n, head_dim, base=10000.0):
    """cos(m theta_i), theta_i = base^(-2i / d), i = 0 .. d/2 - 1 (Su et al. 2021)."""
    theta = base ** (-np.arange(0, head_dim, 2) / head_dim)
    return np.cos(np.arange(n)[:, None] * theta[None, :])


def rope_score_formula(n, head_dim, base=10000.0):
    """q = k = ones: S[m, n] = mean_i cos((m - n) theta_i)."""
    theta = base ** (-np.arange(0, head_dim, 2) / head_dim)
    lag = np.arange(n)[:, None] - np.arange(n)[None, :]
    return np.cos(lag[..., None] * theta).mean(axis=-1)


def order_on_page(at) -> list[int]:
    """The factorisation order printed on the XLNet page (any language: the numbers between the arrows)."""
    texts = [m.value for m in at.markdown if "→" in m.value]
    assert len(texts) == 1, texts
    return [int(v) for v in re.findall(r"\d+", texts[0].split("**")[1])]


def figure_spec(fig) -> str:
    """A figure's dictionary as JSON, arrays included, to compare two figures."""
    from plotly.utils import PlotlyJSONEncoder

    return json.dumps(fig.to_dict(), cls=PlotlyJSONEncoder, sort_keys=True)


def held_view_keys() -> list:
    """The keys of the views the store holds now."""
    from posviz.ui import cache

    return [key for key in cache.TABLES.keys() if key[0] == "view"]


def assert_same_items(cached, fresh) -> None:
    """A view's cached output and a fresh build of it (``view.uncached``) show the same items: figures with the same
    key, options and dictionary, and equal texts and tables."""
    from posviz.ui.views import Figure

    fresh = list(fresh)
    assert [type(item) for item in cached.items] == [type(item) for item in fresh]
    for got, built in zip(cached.items, fresh, strict=True):
        if isinstance(got, Figure):
            assert (got.key, dict(got.options)) == (built.key, dict(built.options))
            assert figure_spec(got.fig) == figure_spec(built.fig)
        else:
            assert got == built


def sinusoid_omega(d: int, base: float = 10_000.0) -> np.ndarray:
    """w_i = base^(-2i/d), i = 0 .. ceil(d/2) - 1 (Vaswani et al., 2017, section 3.5)."""
    return base ** (-np.arange(0, d, 2) / d)


def sinusoid_rows(positions, d: int, base: float = 10_000.0, layout: str = "interleaved") -> np.ndarray:
    """PE[p, 2i] = sin(p w_i), PE[p, 2i + 1] = cos(p w_i) (interleaved), or every sin column and then every cos
    column (halves), at ``positions``; an odd d ends its sin columns with one that has no cos partner."""
    angles = np.asarray(positions, dtype=np.float64)[:, None] * sinusoid_omega(d, base)[None, :]
    sines, cosines = np.sin(angles), np.cos(angles)[:, : d // 2]
    if layout == "halves":
        return np.concatenate([sines, cosines], axis=1)
    table = np.empty((angles.shape[0], d))
    table[:, 0::2], table[:, 1::2] = sines, cosines
    return table


def spaced(n: int, limit: int) -> np.ndarray:
    """At most ``limit`` positions evenly spaced over 0 .. n - 1, the first and the last among them."""
    return np.arange(n) if n <= limit else np.unique(np.round(np.linspace(0, n - 1, limit)).astype(np.int64))


def cosines(rows: np.ndarray) -> np.ndarray:
    """The cosine similarity of every pair of rows."""
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit @ unit.T
