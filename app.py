"""posviz: the frame of the app. Page config, the sidebar (language), and navigation over pages/."""

import os

# OpenMP threads (t-SNE, torch) that spin while they wait make a shared or busy machine several times slower;
# passive waiting sleeps instead. Read once, when the OpenMP runtime loads, which happens after this line.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import streamlit as st  # noqa: E402

from posviz.pages import BY_KEY, HOME, PAGES, SECTIONS  # noqa: E402
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

#: Home is served at the app's root; ``/home`` names it too (a hidden page of the same script, which Streamlit
#: would otherwise answer with a "Page not found" dialog in English).
home = BY_KEY[HOME]
pages = {
    p.key: st.Page(p.file, title=t(f"page.{p.key}"), icon=p.icon, url_path=p.url_path, default=p.key == HOME)
    for p in PAGES
}
menu = {t(f"nav.{section}"): [pages[p.key] for p in PAGES if p.section == section] for section in SECTIONS}
home_by_name = st.Page(home.file, title=t("page.home"), icon=home.icon, url_path=HOME, visibility="hidden")
menu[t("nav.lessons")].append(home_by_name)
page = st.navigation(menu, expanded=True)  # every page in view, not "View 3 more"
name, script = next(((p.key, p.file) for p in PAGES if pages[p.key] is page), (f"{HOME}-by-name", home.file))
link.opened(name, script)
widgets.style()
try:
    page.run()
except Exception as exc:  # a page's own errors are shown where they happen; this is the last net, never a traceback
    st.error(t("error.unexpected", kind=type(exc).__name__, message=str(exc)[:500]))
finish_page()  # in slide mode, the chosen figure of a page without tabs
link.report()
