"""Every UI string goes through ``t(key)``. The catalog of a language is the union of the JSON files in
``assets/i18n/<lang>/`` (``common.json`` plus one file per page, so a page's strings live together); a key
may appear in only one of them. Teaching texts are ``assets/texts/<page>.<lang>.md``. The language lives in the
URL-bound ``lang`` widget of the sidebar."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import streamlit as st

ASSETS = Path(__file__).resolve().parents[2] / "assets"
LANGUAGES = {"en": "English", "zh": "简体中文"}
DEFAULT_LANGUAGE = "en"


@cache
def catalog(lang: str) -> dict[str, str]:
    """The string catalog of ``lang``: a flat key -> text mapping merged from ``assets/i18n/<lang>/*.json``."""
    merged: dict[str, str] = {}
    for path in sorted((ASSETS / "i18n" / lang).glob("*.json")):
        part = json.loads(path.read_text(encoding="utf-8"))
        clash = merged.keys() & part.keys()
        if clash:
            raise ValueError(f"{path.name} repeats catalog keys of another file: {', '.join(sorted(clash))}")
        merged.update(part)
    return merged


def browser_language() -> str:
    """``zh`` when the browser prefers Chinese, else ``en``."""
    try:
        locale = (st.context.locale or "").lower()
    except Exception:  # no browser context (bare script runs)
        locale = ""
    return "zh" if locale.startswith("zh") else DEFAULT_LANGUAGE


def current_language() -> str:
    lang = st.session_state.get("lang")
    return lang if lang in LANGUAGES else browser_language()


def t(key: str, **values) -> str:
    """The text of ``key`` in the current language, with ``{name}`` fields filled from ``values``."""
    text = catalog(current_language()).get(key) or catalog(DEFAULT_LANGUAGE).get(key) or key
    return text.format(**values) if values else text


def has_text(key: str) -> bool:
    """Whether the catalog has ``key`` (in English, which has every key)."""
    return key in catalog(DEFAULT_LANGUAGE)


@cache
def _text(page: str, lang: str) -> str:
    return (ASSETS / "texts" / f"{page}.{lang}.md").read_text(encoding="utf-8")


def teaching_text(page: str) -> str:
    """The teaching markdown of ``page`` in the current language."""
    return _text(page, current_language())


#: The catalog keys of posviz's own error messages: ``core.<name>``, whose English text is the core's message with its
#: values as ``{fields}`` (a test holds each to what the core raises).
CORE_MESSAGES = "core."


@cache
def _core_patterns() -> tuple[tuple[str, re.Pattern], ...]:
    """``(key, pattern)`` of every ``core.`` entry: its English text, each ``{field}`` a named group."""
    found = []
    for key, text in catalog(DEFAULT_LANGUAGE).items():
        if key.startswith(CORE_MESSAGES):
            parts = re.split(r"\{(\w+)\}", text)  # text, field, text, field, ..., text
            pattern = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)" for i, part in enumerate(parts))
            found.append((key, re.compile(pattern, re.S)))
    return tuple(found)


def core_message(text: str) -> str:
    """A message of posviz's core (the text of a ``ValueError`` / ``IndexError`` it raised, or an explanation it
    returns) in the current language: the core speaks English; the ``core.`` entry whose English text it is gives the
    sentence, its values taken from the English text. A message with no entry is shown as it is."""
    for key, pattern in _core_patterns():
        match = pattern.fullmatch(text)
        if match is not None:
            return t(key, **match.groupdict())
    return text
