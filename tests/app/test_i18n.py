"""The string catalogs and teaching texts are complete: every key the app can ask for exists, non-empty, in every
language, with the same ``{fields}``; every page has its teaching text in every language.

Keys are collected from the sources (``t("literal")`` calls in app.py, pages/*.py and posviz/ui/*.py, read
with ``ast`` so conditional keys count too) and from the registry (keys built with f-strings).
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

SOURCES = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "posviz" / "ui").glob("*.py")])
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


def t_calls():
    """``(where, keys, f-string pattern or None, keyword names)`` for every ``t(...)`` call in the sources; a call
    passed as a template keyword (``downsampled_note=t(...)``) counts the fields the builder fills as given."""
    calls = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        filled_later = {
            id(kw.value): TEMPLATE_KEYWORDS[kw.arg]
            for kw in ast.walk(tree)
            if isinstance(kw, ast.keyword) and kw.arg in TEMPLATE_KEYWORDS
        }
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "t"):
                continue
            if not node.args:
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            key = node.args[0]
            pattern = None
            if isinstance(key, ast.JoinedStr):
                pattern = "".join(
                    re.escape(part.value) if isinstance(part, ast.Constant) else r"[^{}]+" for part in key.values
                )
            given = {k.arg for k in node.keywords} | filled_later.get(id(node), set())
            calls.append((where, _strings(key), pattern, given))
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
        "alibi.bias.notice.causal",
        "alibi.bias.notice.symmetric",
    } <= literal
    assert any(p for _, _, p, _ in CALLS)


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
    # pages/3_learned.py: the notices follow the chosen init
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
