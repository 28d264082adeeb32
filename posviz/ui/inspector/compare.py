"""The inspector's compare tab: a second checkpoint, chosen with its own source controls, beside the first."""

from __future__ import annotations

import streamlit as st

from .. import errors_shown, t
from ..views import inspect_tables as table_views
from .source import Loaded, load, pick_source
from .tables import side_by_side


def compare(loaded: Loaded) -> None:
    """The similarity of both tables side by side, their mean similarity against the offset, and the probe error of
    each (``views.inspect_tables.compare``); the second table must be an absolute position table too."""
    st.markdown(t("inspect.compare.intro"))
    chosen = pick_source("2")
    if chosen is None:
        return
    other = None
    with errors_shown(chosen[2]):
        other = load(chosen, key=None)
    if other is None:
        return
    if other.found.kind != "absolute":
        st.warning(t("inspect.compare.kind"))
        return
    side_by_side(table_views.compare(loaded.ref, loaded.label, other.ref, other.label), per_column=1)
