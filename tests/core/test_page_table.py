"""The page table (``posviz.pages``) is the one list of pages: its files exist and are every page script, its keys are
unique and named in both catalogs, every section has a name in the menu, and every family's page is one of its keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import posviz
from posviz.pages import BY_KEY, HOME, PAGES, SECTIONS, script

ROOT = Path(__file__).resolve().parents[2]


def catalog(lang: str) -> dict[str, str]:
    merged: dict[str, str] = {}
    for path in sorted((ROOT / "assets" / "i18n" / lang).glob("*.json")):
        merged.update(json.loads(path.read_text(encoding="utf-8")))
    return merged


def test_the_table_is_every_page_script_once():
    files = [page.file for page in PAGES]
    assert sorted(files) == sorted(str(p.relative_to(ROOT)) for p in (ROOT / "page_scripts").glob("*.py"))
    assert len({page.key for page in PAGES}) == len(PAGES)
    assert PAGES[0].key == HOME and PAGES[0].url_path == "" and all(p.url_path == p.key for p in PAGES[1:])
    # a folder named pages/ beside app.py would put Streamlit in its legacy multipage mode until navigation runs
    assert not (ROOT / "pages").exists()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_page_and_section_is_named_in_the_catalog(lang):
    words = catalog(lang)
    assert all(f"page.{page.key}" in words for page in PAGES)
    assert {page.section for page in PAGES} == set(SECTIONS)
    assert all(f"nav.{section}" in words for section in SECTIONS)


def test_every_family_names_a_page_of_the_table():
    for family in posviz.FAMILIES.values():
        assert family.page in BY_KEY, family.key
        assert (ROOT / script(family.page)).is_file()


def test_an_unknown_page_is_a_key_error_that_lists_the_pages():
    with pytest.raises(KeyError, match="sinusoidal"):
        script("sinusoidl")
