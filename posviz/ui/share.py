"""Share this view: a button that shows the link of the open view and its QR code, for the room to open on their
phones.

The link is the handout's "Open this view" (``handout.link_of``, sealed with the page's record as the run ends), so
the two can never differ. The QR code is made by ``segno`` (pure Python) and drawn as inline SVG: nothing is fetched
and it stays sharp at any size. In presentation mode it is drawn large enough to scan from the back of a room, at
least 60% of a 720-pixel screen's height.

The button only asks; the dialog opens at the end of the run (``finish_page`` calls ``open_if_asked``), once the
record holds this run's link.
"""

from __future__ import annotations

import base64
import functools
import html
import ipaddress
from urllib.parse import urlsplit

import segno
import streamlit as st

from . import lesson as lessons
from . import present
from .i18n import t

BUTTON = "posviz-share"
#: Set by the button; the dialog opens as the run ends.
ASKED = "posviz.share.asked"
#: The QR code's side on the screen (px): in presentation mode 62% of a 720-pixel screen, else a phone-sized square.
PRESENT_SIZE = 450
SIZE = 300


@functools.lru_cache(maxsize=256)
def qr_svg(link: str) -> str:
    """The QR code of ``link`` as an inline ``<svg>`` element that scales to its box (a ``viewBox``, no size),
    black on white with the standard quiet zone of four modules, error correction M (a smudged screen still
    reads)."""
    code = segno.make(link, error="m", boost_error=False)
    return code.svg_inline(scale=1, border=4, dark="#000", light="#fff", omitsize=True, svgclass="posviz-qr")


def button(*, label: bool = True) -> None:
    """The "Share this view" button (its label beside the icon, or only the icon in a tight bar)."""
    st.button(
        t("share.button") if label else "",
        key=BUTTON,
        icon=":material/qr_code_2:",
        help=t("share.help"),
        on_click=_ask,
    )


def _ask() -> None:
    st.session_state[ASKED] = True


def open_if_asked(record: lessons.Lesson | None) -> None:
    """After the page has run (its record sealed): open the dialog if the button was pressed in this run."""
    if not st.session_state.pop(ASKED, False) or record is None or record.link is None:
        return
    st.dialog(t("share.title"), width="large")(_dialog)(record.link, present.presenting())


def qr_data_url(link: str) -> str:
    """``qr_svg(link)`` as a ``data:`` URL, the source of the dialog's image (in the page itself: nothing is fetched,
    and no sanitiser of Streamlit's HTML touches an ``<img>``'s SVG)."""
    svg = qr_svg(link).replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def local_host(link: str) -> str | None:
    """The host of ``link`` when it names this computer only (``localhost``, a loopback address): a phone that
    scans it opens itself, not posviz. None for any other host, and for a bare path (no browser)."""
    host = urlsplit(link).hostname
    if host is None:
        return None
    if host == "localhost" or host.endswith(".localhost"):
        return host
    try:
        return host if ipaddress.ip_address(host).is_loopback else None
    except ValueError:  # a name: the network's to resolve
        return None


def _dialog(link: str, large: bool) -> None:
    size = PRESENT_SIZE if large else SIZE
    st.code(link, language=None, wrap_lines=True)
    host = local_host(link)
    if host is not None:
        st.warning(t("share.local", host=host), icon=":material/wifi_off:")
    st.html(
        f'<img class="posviz-qr" src="{qr_data_url(link)}" alt="{html.escape(t("share.qr.alt"))}" '
        f'width="{size}" height="{size}" style="display:block;margin:0 auto;image-rendering:pixelated">'
    )
    st.caption(t("share.scan") + " " + t("share.copy"))
