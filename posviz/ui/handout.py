"""The handout: a view of a page, or the whole lesson (every tab), as ONE self-contained HTML file that works
offline.

"Download this view" saves the page's teaching text, every figure the view drew (interactive, in order, with its
caption), the values in use and the link that reopens the view, in the page's language. "Whole lesson" draws every
tab once (the closed ones out of sight) and then offers the same file with every tab's figures, tab by tab.

Nothing in the file is fetched: plotly.js is embedded once (the copy that ships with the ``plotly`` package), and
so are KaTeX's script, its style and its fonts, taken from Streamlit's own static folder, which typesets the
formulas. If that copy of KaTeX cannot be found (another Streamlit), the formulas stay as their TeX source in a
monospace font, which reads. The scripts and the figures are stored gzip-compressed (base64 text in a
``<script type="application/gzip">`` element) and unpacked by the browser's own ``DecompressionStream``, so a file
is about a third of its plain size (plotly.js alone is 4.6 MB plain, 1.9 MB so).

A file is built only when its button is pressed (``st.download_button`` with a callable), from the figures the
run recorded (``lesson.Lesson``): the same objects the page showed, serialised the way ``st.plotly_chart`` does.
"""

from __future__ import annotations

import base64
import datetime
import functools
import gzip
import html
import re
from pathlib import Path
from urllib.parse import urlencode

import plotly.io as pio
import streamlit as st

from . import lesson as lessons
from . import link
from .i18n import catalog

#: Link keys that are not values of the view: the frame's own (language, presentation mode), the open tab (the
#: handout names it), the slide; keys of the app's own buttons.
FRAME_KEYS = frozenset({"lang", "present", "tab", "slide"})
BUTTON_PREFIXES = ("posviz", "csv-")

_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")
#: ``$$ display $$`` (over lines too) and ``$inline$`` (no space inside either dollar, as in Streamlit's markdown).
_MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?![\s$])([^$\n]+?)(?<![\s\\])\$(?!\$)", re.S)


# ------------------------------------------------------------------------------------------ embedded assets


@functools.cache
def plotly_js() -> str:
    """plotly.js as shipped in the plotly package, safe inside a ``<script>`` element."""
    from plotly.offline import get_plotlyjs

    return _script_safe(get_plotlyjs())


def packed(text: str) -> str:
    """``text`` gzip-compressed as base64: what a ``<script type="application/gzip">`` element holds."""
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")


def unpacked(content: str) -> str:
    """The text ``packed`` stored (for a reader of the file that is not a browser)."""
    return gzip.decompress(base64.b64decode(content)).decode("utf-8")


@functools.cache
def _packed_asset(name: str) -> str:
    """An embedded script, compressed once per process."""
    if name == "plotly":
        return packed(plotly_js())
    katex = katex_assets()
    return packed(katex[1]) if katex is not None else ""


def _script_safe(code: str) -> str:
    return re.sub(r"</(script)", r"<\\/\1", code, flags=re.IGNORECASE)


@functools.cache
def katex_assets() -> tuple[str, str] | None:
    """``(css, js)`` of the KaTeX in Streamlit's static folder: its style rules with every font inlined as a data
    URL, and its script as a classic script defining ``window.katex``; None when that copy is not there as
    expected."""
    static = Path(st.__file__).resolve().parent / "static" / "static"
    scripts = sorted((static / "js").glob("katex.*.js"))
    sheets = sorted((static / "css").glob("index.*.css"))
    if len(scripts) != 1 or not sheets:
        return None
    code = scripts[0].read_text(encoding="utf-8")
    export = re.search(r"export\s*\{\s*([\w$]+)\s+as\s+default\s*\}\s*;?\s*$", code)
    if export is None or re.search(r"^\s*import[\s{*]", code, re.M) or "import.meta" in code:
        return None
    js = code[: export.start()] + f";window.katex={export.group(1)};"
    css = "\n".join(_katex_rules(sheet.read_text(encoding="utf-8"), static / "media") for sheet in sheets)
    if ".katex" not in css or "@font-face" not in css:
        return None
    return css, _script_safe("(function(){" + js + "})();")


def _blocks(css: str):
    """``(prelude, whole block)`` of every top-level rule of a stylesheet (nested blocks kept inside theirs)."""
    depth, start, prelude_start = 0, 0, 0
    for i, char in enumerate(css):
        if char == "{":
            if depth == 0:
                start = i
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                yield css[prelude_start:start].strip(), css[prelude_start : i + 1]
                prelude_start = i + 1


def _katex_rules(css: str, media: Path) -> str:
    """KaTeX's rules out of Streamlit's stylesheet, its fonts inlined (a font that is not there is left out)."""
    kept = []
    for prelude, block in _blocks(css):
        if prelude.startswith("@font-face"):
            if "KaTeX" not in block:
                continue
        elif ".katex" not in prelude or prelude.startswith("@"):
            continue

        def inline(match: re.Match) -> str:
            path = media / Path(match.group(1)).name
            if not path.is_file():
                return "url()"
            return f"url(data:font/woff2;base64,{base64.b64encode(path.read_bytes()).decode('ascii')})"

        kept.append(re.sub(r"url\(\s*['\"]?\.\./media/([^)'\"]+)['\"]?\s*\)", inline, block))
    return "\n".join(kept)


# ------------------------------------------------------------------------------------------------ markdown


@functools.cache
def _markdown():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table").enable("strikethrough")


def _protect_math(text: str) -> tuple[str, list[tuple[str, bool]]]:
    """``text`` with its formulas replaced by placeholders markdown leaves alone, and the formulas (TeX, display)."""
    found: list[tuple[str, bool]] = []

    def keep(match: re.Match) -> str:
        display = match.group(1) is not None
        found.append(((match.group(1) if display else match.group(2)).strip(), display))
        return f"\ue000{len(found) - 1}\ue001"

    return _MATH.sub(keep, text), found


def _restore_math(rendered: str, found: list[tuple[str, bool]]) -> str:
    def formula(i: int) -> str:
        tex, display = found[i]
        kind = "display" if display else "inline"
        tag = "div" if display else "span"
        return f'<{tag} class="math {kind}">{html.escape(tex)}</{tag}>'

    # a formula alone in its paragraph is a display block, not a paragraph
    rendered = re.sub(
        "<p>\ue000(\\d+)\ue001</p>", lambda m: formula(int(m.group(1))) if found[int(m.group(1))][1] else m[0], rendered
    )
    return _PLACEHOLDER.sub(lambda m: formula(int(m.group(1))), rendered)


def markdown_html(text: str, *, inline: bool = False) -> str:
    """Markdown (CommonMark with tables, as Streamlit writes it) as HTML, its ``$...$`` / ``$$...$$`` formulas kept
    as TeX in ``.math`` elements for KaTeX. Raw HTML in the text is escaped, not passed through."""
    protected, found = _protect_math(text)
    md = _markdown()
    rendered = md.renderInline(protected) if inline else md.render(protected)
    return _restore_math(rendered, found)


# ------------------------------------------------------------------------------------------- the document

_STYLE = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans SC", "PingFang SC", "Microsoft YaHei",
       sans-serif; color: #1f2328; background: #fff; max-width: 1100px; margin: 2rem auto; padding: 0 1.5rem;
       line-height: 1.6; font-size: 17px; }
h1 { font-size: 2.1rem; margin: 0 0 .3rem; }
h3.tab { font-size: 1.25rem; margin: 2rem 0 .6rem; }
#unsupported { background: #fff8c5; border: 1px solid #d4a72c; padding: .6rem 1rem; }
h2 { font-size: 1.45rem; margin: 2.2rem 0 .8rem; border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; }
.source { color: #57606a; margin: 0; }
.link a { word-break: break-all; }
table.values { border-collapse: collapse; }
table.values th, table.values td { border: 1px solid #d0d7de; padding: .25rem .8rem; text-align: left; }
table.values td:first-child { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
figure { margin: 1.5rem 0 2.5rem; }
.plot { width: 100%; min-height: 300px; }
figcaption { color: #3d444d; margin-top: .4rem; }
.math { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
div.math { margin: 1rem 0; overflow-x: auto; }
.math .katex { font-family: KaTeX_Main, "Times New Roman", serif; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; background: #f6f8fa;
       padding: .1rem .3rem; border-radius: 4px; }
"""

#: Unpacks the compressed scripts and figures (gzip in base64, through the browser's DecompressionStream), runs
#: plotly.js and KaTeX, then draws every figure and typesets every formula. A browser without DecompressionStream
#: (before 2023) shows the note ``#unsupported`` instead.
_RENDER = """
(async function () {
  if (typeof DecompressionStream === "undefined") {
    document.getElementById("unsupported").hidden = false;
    return;
  }
  async function unpack(el) {
    var raw = atob(el.textContent.trim()), bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return await new Response(stream).text();
  }
  async function run(id) {
    var el = document.getElementById(id);
    if (!el || !el.textContent.trim()) { return; }
    var script = document.createElement("script");
    script.textContent = await unpack(el);
    document.head.appendChild(script);
  }
  await run("plotly-js");
  await run("katex-js");
  var config = %s;
  for (const source of document.querySelectorAll("script.posviz-figure")) {
    var spec = JSON.parse(await unpack(source));
    var target = document.getElementById(source.dataset.target);
    var options = Object.assign({}, config, {toImageButtonOptions: {scale: 3, filename: source.dataset.name}});
    await Plotly.newPlot(target, spec.data || [], spec.layout || {}, options);
    if (spec.frames && spec.frames.length) { Plotly.addFrames(target, spec.frames); }
    target.dataset.drawn = "true";
  }
  if (window.katex) {
    document.querySelectorAll(".math").forEach(function (el) {
      try {
        window.katex.render(el.textContent, el, {displayMode: el.classList.contains("display"), throwOnError: false});
      } catch (err) { /* the TeX source stays readable */ }
    });
  }
})();
"""

_CONFIG = '{"displaylogo": false, "responsive": true}'


def figure_json(fig) -> str:
    """A figure as plotly JSON, as ``st.plotly_chart`` serialises it (arrays as base64 typed arrays)."""
    return pio.to_json(fig, validate=False)


def render(
    lesson: lessons.Lesson, *, link: str, values: list[tuple[str, str]], made: datetime.date | None = None
) -> str:
    """The handout of ``lesson`` as one HTML document (see the module's docstring)."""
    words = catalog(lesson.lang)

    def say(key: str, **fields) -> str:
        text = words.get(key) or catalog("en")[key]
        return text.format(**fields) if fields else text

    made = made or datetime.date.today()
    parts = [
        "<!DOCTYPE html>",
        f'<html lang="{"zh-CN" if lesson.lang == "zh" else lesson.lang}">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="generator" content="posviz">',
        f"<title>{html.escape(say('handout.title', page=lesson.title))}</title>",
        f"<style>{_STYLE}</style>",
    ]
    katex = katex_assets()
    if katex is not None:
        parts.append(f'<style id="katex-style">{katex[0]}</style>')
    parts.append(f'<script type="application/gzip" id="plotly-js">{_packed_asset("plotly")}</script>')
    if katex is not None:
        parts.append(f'<script type="application/gzip" id="katex-js">{_packed_asset("katex")}</script>')
    parts += [
        "</head>",
        "<body>",
        f'<p id="unsupported" hidden>{html.escape(say("handout.unsupported"))}</p>',
        "<header>",
        f"<h1>{html.escape(lesson.title)}</h1>",
        f'<p class="source">{html.escape(say("handout.made", date=made.isoformat()))}</p>',
        f'<p class="link">{html.escape(say("handout.link"))} <a id="link" href="{html.escape(link)}">'
        f"{html.escape(link)}</a></p>",
        "</header>",
        '<section id="text">',
        markdown_html(lessons_text(lesson)),
        "</section>",
        '<section id="values">',
        f"<h2>{html.escape(say('handout.values'))}</h2>",
    ]
    if lesson.whole:
        parts.append(f'<p id="tab">{html.escape(say("handout.whole.tabs", n=len(lesson.tabs)))}</p>')
    elif lesson.tab_label:
        parts.append(f'<p id="tab">{html.escape(say("handout.tab", tab=lesson.tab_label))}</p>')
    if values:
        parts.append('<table class="values"><tbody>')
        parts += [f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in values]
        parts.append("</tbody></table>")
    else:
        parts.append(f"<p>{html.escape(say('handout.defaults'))}</p>")
    parts += ["</section>", '<section id="figures">', f"<h2>{html.escape(say('handout.figures'))}</h2>"]
    if not lesson.figures:
        parts.append(f"<p>{html.escape(say('handout.none'))}</p>")
    heading = None
    for i, shown in enumerate(lesson.figures, start=1):
        if lesson.whole and shown.tab is not None and shown.tab != heading:
            heading = shown.tab
            parts.append(f'<h3 class="tab">{html.escape(heading)}</h3>')
        parts += [
            f'<figure id="figure-{i}" data-name="{html.escape(shown.name)}">',
            f'<div class="plot" id="plot-{i}"></div>',
            f'<script type="application/gzip" class="posviz-figure" data-target="plot-{i}" '
            f'data-name="{html.escape(shown.name)}">{packed(figure_json(shown.fig))}</script>',
        ]
        if shown.notice:
            parts.append(f"<figcaption>{markdown_html(shown.notice, inline=True)}</figcaption>")
        parts.append("</figure>")
    parts += ["</section>", f"<script>{_RENDER % _CONFIG}</script>", "</body>", "</html>"]
    return "\n".join(parts)


def lessons_text(lesson: lessons.Lesson) -> str:
    from .i18n import _text

    return _text(lesson.page, lesson.lang)


# ------------------------------------------------------------------------------------ the link and the values


def _shown_value(value) -> str | None:
    """A control's value as text, or None for what is not a value (a file, an object)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.10g}"
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float, str)) for v in value):
        return ", ".join(str(_shown_value(v)) for v in value)  # each a number, a flag or a text: never None
    name = getattr(value, "name", None)  # an uploaded file
    return name if isinstance(name, str) else None


def values_in_use(lesson: lessons.Lesson) -> list[tuple[str, str]]:
    """``(key, value)`` of every control of the view, by its link key: the link's values first, in its order, then
    the controls left at their default, alphabetically. A posviz control's value is the one it returned
    (``link.in_use``), never what its widgets hold; the others' (switches, a text) their widget's value. Buttons
    (never true between runs) are not values."""
    in_link = [key for key in st.query_params if key not in FRAME_KEYS]
    keys = set(in_link) | lessons.current_keys() | lesson.keys
    figures = {shown.key for shown in lesson.figures}  # a chart's key is a widget key too
    keys = {k for k in keys - figures if k not in FRAME_KEYS and not k.startswith(BUTTON_PREFIXES) and "." not in k}
    returned = link.in_use()
    out = []
    for key in in_link + sorted(keys - set(in_link)):
        if key in returned:
            shown = _shown_value(returned[key])
        elif key in st.session_state:
            value = st.session_state[key]
            if value is False and key not in in_link:  # a button, or a switch that is off: only the link's count
                continue
            shown = _shown_value(value)
        elif key in in_link:
            shown = ", ".join(st.query_params.get_all(key))
        else:
            continue
        if shown is not None:
            out.append((key, shown))
    return out


def link_of(base: str, lesson: lessons.Lesson) -> str:
    """The link that reopens the view: the page's address with every value of its link, and the language."""
    pairs = [(key, value) for key in st.query_params if key != "slide" for value in st.query_params.get_all(key)]
    if "lang" not in st.query_params:
        pairs.append(("lang", lesson.lang))
    return f"{base}?{urlencode(pairs)}"


def page_address(page: str) -> str:
    """The page's address as the browser sees it (behind a proxy too), or its path when there is no browser."""
    try:
        url = st.context.url
    except Exception:  # no browser context (a bare script run)
        url = None
    return url or ("/" if page == "home" else f"/{page}")


def seal(lesson: lessons.Lesson) -> None:
    """Keep the link that reopens the view and the values in use with the record, read now, in the run, where the
    link and the controls are this view's. The frame calls it as a run ends; ``refresh`` as a fragment's run ends,
    since a fragment's rerun (a view of the RoPE page) is no run of the frame."""
    lesson.link = link_of(page_address(lesson.page), lesson)
    lesson.values = values_in_use(lesson)


def refresh() -> None:
    """Seal the open page's record again, as a fragment's run ends (``ui.fragment``): the handout is the view as it
    is now, whether the whole page or one fragment of it has just run."""
    record = lessons.current()
    if record is not None:
        seal(record)


def build(lesson: lessons.Lesson) -> bytes:
    """The handout's bytes, when its button is pressed (on one of Streamlit's worker threads): made from the record
    alone, sealed at the end of the run that drew the button."""
    link = lesson.link if lesson.link is not None else page_address(lesson.page)
    return render(lesson, link=link, values=lesson.values).encode("utf-8")


def file_name(lesson: lessons.Lesson) -> str:
    """``posviz-rope-en.html`` for a view, ``posviz-rope-lesson-en.html`` for the whole lesson."""
    return f"posviz-{lesson.page}{'-lesson' if lesson.whole else ''}-{lesson.lang}.html"


def button(lesson: lessons.Lesson) -> None:
    """The "Download this view" button; the file is made only when it is pressed."""
    from .i18n import t

    _download(lesson, t("handout.download"), key="posviz-handout", help=t("handout.help"))


def _download(lesson: lessons.Lesson, label: str, **kwargs) -> None:
    """A download button of ``lesson``'s handout, made from its record only when pressed."""
    st.download_button(
        label,
        data=functools.partial(build, lesson),
        file_name=file_name(lesson),
        mime="text/html",
        icon=":material/download:",
        on_click="ignore",
        **kwargs,
    )


def whole_button(lesson: lessons.Lesson) -> None:
    """As the run ends, in the place the sidebar kept for it: on a page of lazy tabs, "Whole lesson", which reruns
    the page drawing every tab; after that run, the download of the whole lesson (until the next run)."""
    from .i18n import t

    if lesson.slot is None or not lesson.lazy:
        return
    with lesson.slot.container():
        if lesson.whole:
            _download(
                lesson,
                t("handout.whole.download", n=len(lesson.tabs)),
                key="posviz-handout-whole",
                type="primary",
                help=t("handout.whole.ready"),
            )
        else:
            st.button(
                t("handout.whole"),
                key="posviz-handout-prepare",
                icon=":material/library_books:",
                on_click=lessons.ask_whole,
                args=(lesson.page,),
                help=t("handout.whole.help"),
            )
