"""posviz: the frame of the app. Page config, the sidebar (language), and navigation over pages/."""

import os

# OpenMP threads (t-SNE, torch) that spin while they wait make a shared or busy machine several times slower;
# passive waiting sleeps instead. Read once, when the OpenMP runtime loads, which happens after this line.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import streamlit as st  # noqa: E402

from posviz.ui import LANGUAGES, favicon, finish_page, link, present, reconnect, t, widgets
from posviz.ui.i18n import browser_language
from posviz.ui.widgets import url_radio

st.set_page_config(  # a projector's link (?present=true) opens with the sidebar closed
    page_title="posviz",
    page_icon=favicon(),
    layout="wide",
    initial_sidebar_state="collapsed" if present.requested(st.query_params) else "auto",
)
link.remember()

with st.sidebar:
    url_radio(
        "Language / 语言",
        list(LANGUAGES),
        key="lang",
        default=browser_language(),
        format_func=LANGUAGES.get,
        horizontal=True,
    )
    present.toggle()
reconnect.notice()

#: Every page: its name (its URL path and catalog key), script, icon and the section of the menu it is listed in.
PAGES = [
    ("home", "pages/1_home.py", ":material/home:", "lessons"),
    ("sinusoidal", "pages/2_sinusoidal.py", ":material/waves:", "lessons"),
    ("learned", "pages/3_learned.py", ":material/school:", "lessons"),
    ("rope", "pages/4_rope.py", ":material/rotate_right:", "lessons"),
    ("alibi", "pages/5_alibi.py", ":material/trending_down:", "lessons"),
    ("relative", "pages/6_relative.py", ":material/compare_arrows:", "lessons"),
    ("xlnet", "pages/7_xlnet.py", ":material/shuffle:", "lessons"),
    ("compare", "pages/10_compare.py", ":material/balance:", "lessons"),
    ("inspect", "pages/8_inspect.py", ":material/search:", "tools"),
    ("lab", "pages/9_lab.py", ":material/model_training:", "tools"),
    ("pitfalls", "pages/11_pitfalls.py", ":material/bug_report:", "check"),
    ("claims", "pages/12_claims.py", ":material/fact_check:", "check"),
]
SECTIONS = ("lessons", "tools", "check")
#: Home is served at the app's root; ``/home`` names it too (a hidden page of the same script, which Streamlit
#: would otherwise answer with a "Page not found" dialog in English).
HOME_BY_NAME = "home"

pages = {
    name: st.Page(
        path, title=t(f"page.{name}"), icon=icon, url_path="" if name == "home" else name, default=name == "home"
    )
    for name, path, icon, _ in PAGES
}
menu = {t(f"nav.{section}"): [pages[name] for name, *_, where in PAGES if where == section] for section in SECTIONS}
home_by_name = st.Page(PAGES[0][1], title=t("page.home"), icon=PAGES[0][2], url_path=HOME_BY_NAME, visibility="hidden")
menu[t("nav.lessons")].append(home_by_name)
page = st.navigation(menu)
name, script = next(
    ((name, path) for name, path, *_ in PAGES if pages[name] is page), (f"{HOME_BY_NAME}-by-name", PAGES[0][1])
)
link.opened(name, script)
widgets.style()
try:
    page.run()
except Exception as exc:  # a page's own errors are shown where they happen; this is the last net, never a traceback
    st.error(t("error.unexpected", kind=type(exc).__name__, message=str(exc)[:500]))
finish_page()  # in slide mode, the chosen figure of a page without tabs
link.report()
