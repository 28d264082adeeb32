"""A page whose views live in a package of ``posviz/ui`` (``posviz/ui/inspector/``) has the keys of those views as
its settings: ``link.known_keys`` follows the page's imports into the package, and the package's own imports, but
gives the keys to no other page."""

from __future__ import annotations

import pytest

from posviz.ui import link


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A small app: a frame module, a package of views (one module imported by a page, one importing another, one
    imported by nobody), a page that imports the views and a page that does not."""
    (tmp_path / "app.py").write_text("")
    ui = tmp_path / "posviz" / "ui"
    views = ui / "lesson_views"
    views.mkdir(parents=True)
    (ui / "frame.py").write_text('st.toggle("x", key="framed")\n')
    (views / "__init__.py").write_text("")
    (views / "tables.py").write_text(
        "from .shared import pick\n\n\ndef draw():\n    st.radio('a', [1], key='in_tables')\n"
    )
    (views / "shared.py").write_text("def pick():\n    CTL.numeric('deep', 1, 2, 1)\n")
    (views / "other.py").write_text("st.radio('b', [1], key='not_imported')\n")
    pages = tmp_path / "page_scripts"
    pages.mkdir()
    (pages / "1_a.py").write_text("from posviz.ui.lesson_views import tables\n")
    (pages / "2_b.py").write_text("import streamlit as st\n")
    caches = (link.known_keys, link._frame_files, link._keys_in)
    for cached in caches:
        cached.cache_clear()
    monkeypatch.setattr(link, "ROOT", tmp_path)
    yield tmp_path
    for cached in caches:  # drop what was read from the small app before the real one is read again
        cached.cache_clear()


def test_the_keys_of_the_views_a_page_imports_are_its_settings(tree):
    assert link.is_known("in_tables", "page_scripts/1_a.py")
    assert link.is_known("deep", "page_scripts/1_a.py")  # through the views' own import
    assert link.is_known("framed", "page_scripts/1_a.py")  # the frame's, as before


def test_the_keys_of_views_a_page_does_not_import_are_not_its_settings(tree):
    assert not link.is_known("not_imported", "page_scripts/1_a.py")
    assert not link.is_known("in_tables", "page_scripts/2_b.py")
    assert not link.is_known("deep", "page_scripts/2_b.py")
    assert link.is_known("framed", "page_scripts/2_b.py")
