"""The menu's page objects: built once per language in a process, handed to every run as copies, so that the object
``st.navigation`` marks as the one to run is never shared by two sessions."""

from __future__ import annotations

import pytest

from posviz.pages import PAGES
from posviz.ui import menu

from ._support import LANGS, assert_clean, open_page, tr


def test_every_run_navigates_copies_of_the_process_pages(monkeypatch):
    handed: list[dict] = []
    build = menu.pages
    monkeypatch.setattr(menu, "pages", lambda: handed.append(build()) or handed[-1])
    for lang in LANGS:
        for key in ("home", "rope"):
            assert_clean(open_page(key, lang=lang))
    assert len(handed) >= 4
    kept = {id(page) for lang in LANGS for page in menu._kept(lang).values()}
    runs = [{id(page) for page in pages.values()} for pages in handed]
    assert all(not (ids & kept) for ids in runs)  # no run was given the process's objects
    assert all(not (a & b) for i, a in enumerate(runs) for b in runs[i + 1 :])  # nor another run's
    for lang in LANGS:
        kept = menu._kept(lang)
        assert [key for key in kept] == [p.key for p in PAGES] + [menu.HOME_BY_NAME]
        for p in PAGES:
            assert kept[p.key].title == tr(lang, f"page.{p.key}")
            assert kept[p.key].url_path == ("" if p.key == "home" else p.key)
        assert kept[menu.HOME_BY_NAME].url_path == "home"


def test_outside_a_run_the_menu_is_not_built():
    with pytest.raises(RuntimeError, match="inside a script run"):
        menu.pages()
    with pytest.raises(RuntimeError, match="inside a script run"):
        menu.page("rope")
