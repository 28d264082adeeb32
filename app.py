"""posviz: the frame of the app. Page config, the sidebar (language), and navigation over page_scripts/."""

import os

# OpenMP threads (t-SNE, torch) that spin while they wait make a shared or busy machine several times slower;
# passive waiting sleeps instead. Read once, when the OpenMP runtime loads, which happens after this line.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import streamlit as st  # noqa: E402

from posviz.pages import BY_KEY, HOME  # noqa: E402
from posviz.ui import LANGUAGES, favicon, finish_page, heap, internals, link, menu, present, reconnect, t, widgets
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

pages = menu.pages()  # Home at the app's root and, hidden, under /home
asked = internals.requested_page_name()
if asked and asked not in {candidate.url_path for candidate in pages.values()}:
    internals.forget_requested_page_name()  # Home is drawn, and the link's notice says why, in the page's language
    link.no_page(asked)
page = st.navigation(
    {t(f"nav.{section}"): listed for section, listed in menu.sections(pages).items()},
    expanded=True,  # every page in view, not "View 3 more"
)
name = next(key for key, candidate in pages.items() if candidate is page)
script = BY_KEY[HOME if name == menu.HOME_BY_NAME else name].file
link.opened(name, script)
widgets.style()
try:
    page.run()
except Exception as exc:  # a page's own errors are shown where they happen; this is the last net, never a traceback
    st.error(t("error.unexpected", kind=type(exc).__name__, message=str(exc)[:500]))
finish_page()  # in slide mode, the chosen figure of a page without tabs
link.report()
heap.settle()  # after a run that imported modules, a full garbage collection no longer walks them
