"""The string catalogs and teaching texts are complete: every key the app can ask for exists, non-empty, in every
language, with the same ``{fields}``; every page has its teaching text in every language.

Keys are collected from the sources (``t("literal")`` calls in app.py, page_scripts/*.py and posviz/ui/ with its view
packages, read with ``ast`` so conditional keys count too; the keys a call names through ``Figures(page).show(key)``,
``Controls(page).numeric(key)`` or ``labels(title, x, y)``, as those helpers build them) and from the registry (keys
built with f-strings).
"""

from __future__ import annotations

import ast
import json
import re
import string
from pathlib import Path

import pytest

import posviz
from posviz.ui.i18n import LANGUAGES

from ._support import I18N, PAGE_NAMES, ROOT, TEXTS, catalog

SOURCES = sorted([ROOT / "app.py", *(ROOT / "page_scripts").glob("*.py"), *(ROOT / "posviz" / "ui").rglob("*.py")])
CATALOG_LANGS = sorted(p.name for p in I18N.iterdir() if p.is_dir())
CJK = re.compile(r"[\u4e00-\u9fff]")


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def _strings(node) -> list[str]:
    """String constants a key expression can evaluate to (a literal, or the branches of ``a if c else b``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _strings(node.body) + _strings(node.orelse)
    return []


#: Texts passed on as templates that a figure builder fills later: keyword -> the fields it fills
#: (``posviz.figures.heatmap`` formats ``downsampled_note`` with ``src`` and ``dst``).
TEMPLATE_KEYWORDS = {"downsampled_note": {"src", "dst"}}


#: ``Figures.show`` / ``Figures.notice`` keywords that are not fields of the caption.
FIGURE_OPTIONS = {"variant", "suffix", "each", "extra", "chart", "captioned"}
CONTROL_METHODS = {"numeric", "toggle", "radio"}


def _pattern(node) -> str | None:
    """The regular expression of an f-string key (its names match any text)."""
    if not isinstance(node, ast.JoinedStr):
        return None
    return "".join(re.escape(part.value) if isinstance(part, ast.Constant) else r"[^{}]+" for part in node.values)


def _helpers(tree) -> dict[str, tuple[str, str]]:
    """Module names bound to a helper of one page: ``FIG = Figures("rope")`` -> ``{"FIG": ("Figures", "rope")}``."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            helper = _helper(node.value, {})
            if helper:
                found[node.targets[0].id] = helper
    return found


def _helper(node, bound) -> tuple[str, str] | None:
    """``("Figures", page)`` or ``("Controls", page)`` for ``Figures("page")``, ``widgets.Controls("page")`` or a name
    bound to one."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in ("Figures", "Controls"):
            return name, node.args[0].value
    return None


def _named(node, bound):
    """``(keys, pattern, given)`` of a call that names catalog texts through a helper, or None."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    given = {k.arg for k in node.keywords}
    if name == "labels":  # pagekit.labels(title, x, y, **values): each a key, each filled from the values
        return [k for arg in node.args for k in _strings(arg)], None, given
    helper = _helper(func.value, bound) if isinstance(func, ast.Attribute) else None
    if helper is None or not node.args:
        return None
    kind, page = helper
    key = node.args[0]
    keyword = {k.arg: k.value for k in node.keywords}
    if kind == "Controls" and name in CONTROL_METHODS:
        text = keyword.get("text", key)
        return [f"{page}.ctl.{k}" for k in _strings(text)], None, set()
    if kind == "Figures" and name in ("show", "notice"):
        captioned = keyword.get("captioned")
        if isinstance(captioned, ast.Constant) and captioned.value is False:
            return None  # drawn without a caption: no text named
        variant = keyword.get("variant")
        if name == "notice" and variant is None and len(node.args) > 1:
            variant = node.args[1]
        if variant is None or (isinstance(variant, ast.Constant) and variant.value is None):
            endings = [""]
        elif _strings(variant) or isinstance(variant, ast.IfExp):
            endings = ["" if v is None else f".{v}" for v in _constants(variant)]
        else:
            endings = None  # a variant named at run time: some text must match
        given = given - FIGURE_OPTIONS
        stem = _pattern(key)
        if stem is not None or endings is None:
            base = stem if stem is not None else "|".join(re.escape(k) for k in _strings(key))
            tail = r"(\.[^{}]+)?" if endings is None else "(" + "|".join(re.escape(e) for e in endings) + ")"
            return [], f"{re.escape(page)}\\.({base})\\.notice{tail}", given
        return [f"{page}.{k}.notice{e}" for k in _strings(key) for e in endings], None, given
    return None


def _constants(node) -> list:
    """The constants (strings or None) the branches of ``a if c else b`` can be."""
    if isinstance(node, ast.Constant):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _constants(node.body) + _constants(node.orelse)
    return []


def _view_page(func: ast.FunctionDef) -> str | None:
    """The page of a view, ``@view("rope")``, or None for a function that is no view."""
    for decorator in func.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and getattr(decorator.func, "id", getattr(decorator.func, "attr", "")) == "view"
            and decorator.args
            and isinstance(decorator.args[0], ast.Constant)
        ):
            return decorator.args[0].value
    return None


def _view_figures(tree) -> list[tuple[ast.Call, str, ast.FunctionDef]]:
    """Every ``Figure(key, fig, data, {options})`` of a view module, with the page whose ``Figures.show`` draws it:
    the enclosing view's, or for a helper outside any view the module's one page (when its views share one)."""
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    pages = {page for page in map(_view_page, functions) if page is not None}
    found: dict[int, tuple[ast.Call, str, ast.FunctionDef]] = {}
    for func in functions:
        page = _view_page(func) or (next(iter(pages)) if len(pages) == 1 else None)
        if page is None:
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Figure" and node.args:
                found.setdefault(id(node), (node, page, func))
    return list(found.values())


def _as_show(figure: ast.Call, func: ast.FunctionDef) -> ast.Call:
    """``Figure(key, fig, data, {"variant": v, "n": n})`` as the ``FIG.show(key, fig, data, variant=v, n=n)`` that
    ``views.draw`` makes of it (the options a dict literal of string keys, or a name ``func`` binds to one)."""
    options = (
        figure.args[3] if len(figure.args) > 3 else next((k.value for k in figure.keywords if k.arg == "options"), None)
    )
    if isinstance(options, ast.Name):
        name = options.id
        bound = [
            node.value
            for node in ast.walk(func)
            if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == name for target in node.targets)
        ]
        options = bound[0] if len(bound) == 1 else options
    keywords = []
    if isinstance(options, ast.Dict):
        keywords = [
            ast.keyword(arg=k.value, value=v)
            for k, v in zip(options.keys, options.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ]
    unread = options is not None and (not isinstance(options, ast.Dict) or None in options.keys)
    if unread and not any(k.arg == "variant" for k in keywords):
        # options passed in (``{**given, "extra": e}``, a parameter): the variant is named at run time
        keywords.append(ast.keyword(arg="variant", value=ast.Name(id="given", ctx=ast.Load())))
    show = ast.Attribute(value=ast.Name(id="FIG", ctx=ast.Load()), attr="show", ctx=ast.Load())
    return ast.Call(func=show, args=list(figure.args[:1]), keywords=keywords)


def t_calls():
    """``(where, keys, f-string pattern or None, keyword names)`` for every ``t(...)`` call in the sources, and every
    call that names texts through ``Figures``, ``Controls`` or ``labels``; a call passed as a template keyword
    (``downsampled_note=t(...)``) counts the fields the builder fills as given."""
    calls = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound = _helpers(tree)
        filled_later = {
            id(kw.value): TEMPLATE_KEYWORDS[kw.arg]
            for kw in ast.walk(tree)
            if isinstance(kw, ast.keyword) and kw.arg in TEMPLATE_KEYWORDS
        }
        if path.parent.name == "views":
            for figure, page, func in _view_figures(tree):
                named = _named(_as_show(figure, func), {"FIG": ("Figures", page)})
                if named is not None:
                    calls.append((f"{path.relative_to(ROOT)}:{figure.lineno}", *named))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if not (isinstance(node.func, ast.Name) and node.func.id == "t"):
                named = _named(node, bound)
                if named is not None:
                    calls.append((where, *named))
                continue
            if not node.args:
                continue
            key = node.args[0]
            given = {k.arg for k in node.keywords} | filled_later.get(id(node), set())
            calls.append((where, _strings(key), _pattern(key), given))
    return calls


CALLS = t_calls()


def test_template_keywords_are_what_the_builder_fills():
    import numpy as np

    from posviz import figures

    fig = figures.heatmap(np.zeros((2000, 300)), title="T", x_title="x", y_title="y", downsampled_note="<{src}|{dst}>")
    assert fig.layout.title.text == "T<br><sup><2000×300|1024×300></sup>"
    # drawn as an image without reducing anything: no note claims a reduction
    fig = figures.heatmap(np.zeros((300, 300)), title="T", x_title="x", y_title="y", downsampled_note="<{src}|{dst}>")
    assert fig.layout.title.text == "T" and fig.layout.meta["downsampled"] is True


def test_the_scan_finds_the_calls():
    """Guard against a scanner that silently finds nothing."""
    literal = {k for _, keys, _, _ in CALLS for k in keys}
    assert {
        "xlnet.shuffle",
        "alibi.bias",
        "controls.unused",
        "alibi.bias.notice.causal",  # FIG.show("bias", ..., variant="causal" if causal else "symmetric")
        "alibi.bias.notice.symmetric",
        "alibi.slopes.notice",  # variant="power" if ... else None
        "alibi.slopes.notice.power",
        "rope.ext.wavelength.notice",  # a dotted figure key
        "usage.by_layer.notice",  # a view module of the inspector
        "rope.scores.notice",  # Figure("scores", ...) of a view, posviz/ui/views/rope.py
        "rope.ctl.factor",  # CTL.numeric("factor", ...)
        "learned.ctl.table",  # CTL.radio("init", ..., text="table")
    } <= literal
    patterns = [p for _, _, p, _ in CALLS if p]
    assert any(re.fullmatch(p, "learned.table.notice.random") for p in patterns)  # variant=kind


def test_languages_are_the_catalogs():
    assert sorted(LANGUAGES) == CATALOG_LANGS == ["en", "zh"]


def test_catalogs_have_the_same_keys():
    keys = {lang: set(catalog(lang)) for lang in CATALOG_LANGS}
    problems = [
        f"{key!r} is in {a} catalog but missing from the {b} catalog"
        for a in CATALOG_LANGS
        for b in CATALOG_LANGS
        if a != b
        for key in sorted(keys[a] - keys[b])
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", CATALOG_LANGS)
def test_no_empty_or_malformed_value(lang):
    problems = []
    for key, text in catalog(lang).items():
        if not isinstance(text, str) or not text.strip():
            problems.append(f"{lang} catalog: {key!r} is empty")
            continue
        try:
            fields(text)
        except ValueError as exc:
            problems.append(f"{lang} catalog: {key!r} has a broken {{field}}: {exc}")
    assert not problems, "\n".join(problems)


def test_both_languages_have_the_same_fields():
    en = catalog("en")
    problems = [
        f"{key!r}: en has {sorted(fields(en[key]))}, {lang} has {sorted(fields(text))}"
        for lang in CATALOG_LANGS
        for key, text in catalog(lang).items()
        if key in en and fields(text) != fields(en[key])
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", CATALOG_LANGS)
def test_every_literal_key_exists(lang):
    missing = [
        f"{key!r} (used in {where}) is missing from the {lang} catalog"
        for where, keys, _, _ in CALLS
        for key in keys
        if key not in catalog(lang)
    ]
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("lang", CATALOG_LANGS)
def test_every_call_fills_the_fields_its_text_needs(lang):
    """``t(key, **values)`` formats the text with ``values``: a field the call does not give is a KeyError at
    run time; a call without values shows the text as is, so it must have no field."""
    problems = []
    for where, keys, _, given in CALLS:
        if None in given:  # t(key, **values): a mapping gives the fields, seen at run time
            continue
        for key in keys:
            needed = fields(catalog(lang).get(key, ""))
            if given and not needed <= given:
                problems.append(f"{where}: {lang} catalog {key!r} needs {sorted(needed - given)}")
            if not given and needed:
                problems.append(
                    f"{where}: {lang} catalog {key!r} has {sorted(needed)} but t() is called without values"
                )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", CATALOG_LANGS)
def test_every_f_string_key_has_entries(lang):
    keys = catalog(lang)
    missing = [
        f'no key of the {lang} catalog matches {pattern!r} (t(f"...") in {where})'
        for where, _, pattern, _ in CALLS
        if pattern and not any(re.fullmatch(pattern, k) for k in keys)
    ]
    assert not missing, "\n".join(missing)


def dynamic_keys() -> list[str]:
    """Every key the app builds from the registry and from app.py's page list."""
    keys = [f"page.{name}" for name in PAGE_NAMES]
    for fam in posviz.FAMILIES.values():
        keys += [f"family.{fam.key}.name", f"family.{fam.key}.summary", f"enters.{fam.enters}"]
        for param in fam.params:
            keys += [f"param.{param.name}", f"help.{param.name}"]
            keys += [f"option.{o}" for o in param.options if isinstance(o, str)]
    # page_scripts/3_learned.py: the notices follow the chosen init
    for init in posviz.family("learned").param("init").options:
        keys += [f"learned.table.notice.{init}", f"learned.similarity.notice.{init}"]
    return list(dict.fromkeys(keys))


def test_dynamic_keys_cover_the_registry():
    keys = dynamic_keys()
    assert "option.halves" in keys and "param.max_relative_position" in keys and "enters.rotation" in keys
    assert not any(k.startswith("option.") and k.endswith(("True", "False")) for k in keys)  # bools excluded


@pytest.mark.parametrize("lang", CATALOG_LANGS)
def test_every_dynamic_key_exists(lang):
    missing = [f"{key!r} is missing from the {lang} catalog" for key in dynamic_keys() if key not in catalog(lang)]
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("lang", CATALOG_LANGS)
@pytest.mark.parametrize("page", PAGE_NAMES)
def test_teaching_text_exists(page, lang):
    path: Path = TEXTS / f"{page}.{lang}.md"
    assert path.is_file(), f"missing teaching text {path.relative_to(ROOT)} ({lang})"
    text = path.read_text(encoding="utf-8")
    assert text.strip(), f"{path.relative_to(ROOT)} is empty"
    if lang == "zh":
        assert len(CJK.findall(text)) >= 20, f"{path.relative_to(ROOT)} has (almost) no Chinese characters"


@pytest.mark.parametrize("lang", CATALOG_LANGS)
@pytest.mark.parametrize("page", PAGE_NAMES)
def test_display_formulas_open_and_close_on_their_line(page, lang):
    """A display formula written ``$$...$$`` in a paragraph closes on its line (or stands between two lines that are
    ``$$`` alone): one that ran onto the next line drew the rest of the Relative page's paragraph as red raw LaTeX."""
    path: Path = TEXTS / f"{page}.{lang}.md"
    broken = [
        f"{path.name}:{number}"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if line.strip() != "$$"
        and (line.count("$$") % 2 or (line.lstrip().startswith("$$") and not line.rstrip().endswith("$$")))
    ]
    assert not broken, f"display formulas not closed on their line: {broken}"


def test_chinese_catalog_is_chinese():
    """Every page title and every family name's or summary's text in the zh catalog is written in Chinese."""
    zh = catalog("zh")
    not_chinese = [
        k for k, v in zh.items() if k.startswith(("page.", "family.", "help.", "enters.")) and not CJK.search(v)
    ]
    assert not not_chinese, f"zh catalog entries without Chinese characters: {not_chinese}"


def test_each_language_has_the_same_catalog_files():
    """Every page's strings live in one file per language; the file lists match."""
    files = {lang: sorted(p.name for p in (I18N / lang).glob("*.json")) for lang in CATALOG_LANGS}
    assert files["en"] == files["zh"], files
    assert "common.json" in files["en"]


_HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_chinese_paragraphs_have_no_line_break_between_characters(page):
    """Markdown turns a line break inside a paragraph into a space, which Chinese does not write between two
    characters ("服务器上 做遮罩"): a Chinese paragraph is one line, or breaks only next to Latin text."""
    lines = (TEXTS / f"{page}.zh.md").read_text(encoding="utf-8").split("\n")
    for before, after in zip(lines, lines[1:], strict=False):
        if not before.strip() or not after.strip() or after.lstrip().startswith(("-", "*", "|", "#", "$$", ">", "1.")):
            continue
        assert not (_HAN.match(before.rstrip()[-1]) and _HAN.match(after.lstrip()[0])), (before[-20:], after[:20])


@pytest.mark.parametrize("path", sorted((I18N / "zh").glob("*.json")), ids=lambda p: p.stem)
def test_chinese_strings_have_no_space_between_two_characters(path):
    """The same rule for the catalog: a space only next to Latin letters, digits or symbols, never between two Chinese
    characters. The XLNet example sentence is the exception: its tokens are written one per character on purpose."""
    for key, text in json.loads(path.read_text(encoding="utf-8")).items():
        if key == "xlnet.sentence":
            continue
        assert not re.search(r"[\u4e00-\u9fff，。；：、] +[\u4e00-\u9fff]", text), (key, text)


_FULL_WIDTH = "，。；：、！？（）“”《》"
_STRAY = re.compile(
    rf"[\u4e00-\u9fff{_FULL_WIDTH}] +[{_FULL_WIDTH}]|[{_FULL_WIDTH}] +[\u4e00-\u9fff]"
    r"|[\u4e00-\u9fff] +——|—— +[\u4e00-\u9fff]"
)


@pytest.mark.parametrize(
    "path", [*sorted((I18N / "zh").glob("*.json")), *sorted(TEXTS.glob("*.zh.md"))], ids=lambda p: p.name
)
def test_no_space_next_to_chinese_punctuation(path):
    """Full-width punctuation and the Chinese dash carry their own spacing: "**特征** —— 在" reads as a gap."""
    if path.suffix == ".json":
        texts = {k: v for k, v in json.loads(path.read_text(encoding="utf-8")).items() if k != "xlnet.sentence"}
    else:
        texts = {path.name: path.read_text(encoding="utf-8")}
    stray = {key: match.group(0) for key, text in texts.items() for match in [_STRAY.search(text)] if match}
    assert not stray, stray
