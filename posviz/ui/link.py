"""Tell the reader which values of a shared link were not used.

Streamlit drops a URL value that its widget cannot take (``n=abc``, ``n=99999`` past the maximum) and the page
falls back to the default, silently. ``remember`` keeps the link as it arrived, on the first run of a session;
``report`` runs after the page and names, once, every value that the controls did not take.
"""

from __future__ import annotations

import streamlit as st

from .i18n import t

ARRIVED = "posviz.link"
REPORTED = "posviz.link.reported"


#: Spellings of infinity and not-a-number: no control of the app takes one, and Streamlit's number boxes fail on
#: them, so they leave the link before any control reads it (and are reported like any other unused value).
NOT_FINITE = frozenset({"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan", "+nan", "-nan"})


def remember() -> None:
    """Keep the query string of the session's first run, without the values no control can take."""
    if ARRIVED not in st.session_state:
        st.session_state[ARRIVED] = {key: st.query_params.get_all(key) for key in st.query_params}
        unreadable = [
            k for k, given in st.session_state[ARRIVED].items() if any(v.strip().lower() in NOT_FINITE for v in given)
        ]
        for key in unreadable:
            del st.query_params[key]
        if unreadable:
            st.rerun()  # the controls of this first run would still read the link as it arrived


def _same(given: list[str], value) -> bool:
    shown = [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
    if len(shown) != len(given):
        return False
    for a, b in zip(given, shown, strict=True):
        try:
            if float(a) != float(b):
                return False
        except ValueError:
            if a.strip().lower() != b.strip().lower():
                return False
    return True


def ignored() -> dict[str, list[str]]:
    """The values of the arriving link that a control on this page did not take: gone from the URL, and the
    control (or the open tab) shows something else."""
    arrived = st.session_state.get(ARRIVED, {})
    out = {}
    for key, given in arrived.items():
        if st.query_params.get_all(key) == given:
            continue  # still in the link: taken, or waiting for a tab that is not open
        value = st.session_state.get(f"{key}.code", st.session_state.get(key))
        if value is None or not _same(given, value):
            out[key] = given
    return out


def report() -> None:
    """Once per session, a toast naming the link's values that were not used (the defaults were shown instead)."""
    if st.session_state.get(REPORTED) or ARRIVED not in st.session_state:
        return
    st.session_state[REPORTED] = True
    dropped = ignored()
    if dropped:
        listed = ", ".join(f"{key}={'/'.join(values)}" for key, values in dropped.items())
        st.toast(t("link.ignored", values=listed), icon=":material/link_off:")
