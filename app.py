"""posviz: the frame of the app. Page config, the sidebar (language), and navigation over pages/."""

import os

# OpenMP threads (t-SNE, torch) that spin while they wait make a shared or busy machine several times slower;
# passive waiting sleeps instead. Read once, when the OpenMP runtime loads, which happens after this line.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import streamlit as st  # noqa: E402

from posviz.ui import LANGUAGES, favicon, link, present, reconnect, t
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

PAGES = [
    ("home", "pages/1_home.py", ":material/home:"),
    ("sinusoidal", "pages/2_sinusoidal.py", ":material/waves:"),
    ("learned", "pages/3_learned.py", ":material/school:"),
    ("rope", "pages/4_rope.py", ":material/rotate_right:"),
    ("alibi", "pages/5_alibi.py", ":material/trending_down:"),
    ("relative", "pages/6_relative.py", ":material/compare_arrows:"),
    ("xlnet", "pages/7_xlnet.py", ":material/shuffle:"),
    ("inspect", "pages/8_inspect.py", ":material/search:"),
    ("lab", "pages/9_lab.py", ":material/model_training:"),
    ("compare", "pages/10_compare.py", ":material/balance:"),
    ("pitfalls", "pages/11_pitfalls.py", ":material/bug_report:"),
    ("claims", "pages/12_claims.py", ":material/fact_check:"),
]

page = st.navigation(
    [
        st.Page(path, title=t(f"page.{name}"), icon=icon, url_path=name, default=name == "home")
        for name, path, icon in PAGES
    ]
)
try:
    page.run()
except Exception as exc:  # a page's own errors are shown where they happen; this is the last net, never a traceback
    st.error(t("error.unexpected", kind=type(exc).__name__, message=str(exc)[:500]))
link.report()
