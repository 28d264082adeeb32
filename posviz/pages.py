"""The app's pages, once: each page's key (its URL path and catalog key ``page.<key>``), script, icon and the section
of the menu it is listed in. ``app.py`` builds the navigation from it, the family registry names a family's page by
its key, ``posviz.ui.menu`` builds the pages' Streamlit objects from it, and the tests and benchmarks iterate over it.

No Streamlit here: the table is plain data, importable by anything.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Page:
    key: str
    file: str
    icon: str
    section: str

    @property
    def url_path(self) -> str:
        """The page's path in the app: Home is the root, every other page its key."""
        return "" if self.key == HOME else self.key


#: The menu's sections, in order (catalog keys ``nav.<section>``).
SECTIONS = ("lessons", "tools", "check")
HOME = "home"

PAGES: tuple[Page, ...] = (
    Page("home", "pages/1_home.py", ":material/home:", "lessons"),
    Page("sinusoidal", "pages/2_sinusoidal.py", ":material/waves:", "lessons"),
    Page("learned", "pages/3_learned.py", ":material/school:", "lessons"),
    Page("rope", "pages/4_rope.py", ":material/rotate_right:", "lessons"),
    Page("alibi", "pages/5_alibi.py", ":material/trending_down:", "lessons"),
    Page("relative", "pages/6_relative.py", ":material/compare_arrows:", "lessons"),
    Page("xlnet", "pages/7_xlnet.py", ":material/shuffle:", "lessons"),
    Page("compare", "pages/10_compare.py", ":material/balance:", "lessons"),
    Page("inspect", "pages/8_inspect.py", ":material/search:", "tools"),
    Page("lab", "pages/9_lab.py", ":material/model_training:", "tools"),
    Page("models", "pages/13_models.py", ":material/layers:", "tools"),
    Page("pitfalls", "pages/11_pitfalls.py", ":material/bug_report:", "check"),
    Page("claims", "pages/12_claims.py", ":material/fact_check:", "check"),
)
BY_KEY = {page.key: page for page in PAGES}


def script(key: str) -> str:
    """The script of the page ``key``, from the project's folder (the app links to a page through
    ``posviz.ui.menu.page(key)``, its Streamlit page object)."""
    try:
        return BY_KEY[key].file
    except KeyError:
        raise KeyError(f"no page {key!r}; the pages are {', '.join(BY_KEY)}") from None
