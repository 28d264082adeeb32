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
    Page("home", "page_scripts/1_home.py", ":material/home:", "lessons"),
    Page("sinusoidal", "page_scripts/2_sinusoidal.py", ":material/waves:", "lessons"),
    Page("learned", "page_scripts/3_learned.py", ":material/school:", "lessons"),
    Page("rope", "page_scripts/4_rope.py", ":material/rotate_right:", "lessons"),
    Page("alibi", "page_scripts/5_alibi.py", ":material/trending_down:", "lessons"),
    Page("relative", "page_scripts/6_relative.py", ":material/compare_arrows:", "lessons"),
    Page("xlnet", "page_scripts/7_xlnet.py", ":material/shuffle:", "lessons"),
    Page("compare", "page_scripts/10_compare.py", ":material/balance:", "lessons"),
    Page("inspect", "page_scripts/8_inspect.py", ":material/search:", "tools"),
    Page("lab", "page_scripts/9_lab.py", ":material/model_training:", "tools"),
    Page("models", "page_scripts/13_models.py", ":material/layers:", "tools"),
    Page("pitfalls", "page_scripts/11_pitfalls.py", ":material/bug_report:", "check"),
    Page("claims", "page_scripts/12_claims.py", ":material/fact_check:", "check"),
)
BY_KEY = {page.key: page for page in PAGES}


def script(key: str) -> str:
    """The script of the page ``key``, from the project's folder (the app links to a page through
    ``posviz.ui.menu.page(key)``, its Streamlit page object)."""
    try:
        return BY_KEY[key].file
    except KeyError:
        raise KeyError(f"no page {key!r}; the pages are {', '.join(BY_KEY)}") from None
