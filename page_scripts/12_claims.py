"""Myth or fact: claims from the reference articles, each computed live and given a verdict.

``posviz.ui.claim_views`` draws them: ``verdicts`` states a claim and tables every verdict; one module per group of
claims reads a claim's control and draws its view (``posviz.ui.views.claims_<group>``: its figures and its
verdict)."""

import streamlit as st

from posviz.ui import errors_shown, intro, presenting, t, widgets
from posviz.ui.claim_views import attention, learned, rope, sinusoidal, verdicts

#: One entry per claim, in the order of ``claims.CLAIMS`` (grouped by topic); the code is the link's ``tab=``. Each
#: draws the claim's control, its figures and its verdict.
DRAW = {
    "exponent": sinusoidal.exponent,
    "norm": sinusoidal.norm,
    "unscaled": sinusoidal.unscaled,
    "precision": sinusoidal.precision,
    "shift": sinusoidal.shift,
    "sum": sinusoidal.position_sum,
    "base": sinusoidal.base,
    "blocks": learned.blocks,
    "learned": learned.learned,
    "oom": learned.oom,
    "albert": learned.albert,
    "rot90": rope.rot90,
    "head_dim": rope.head_dim,
    "snippets": rope.snippets,
    "max_pos": rope.max_pos,
    "alibi": attention.alibi,
    "tril": attention.tril,
    "symmetry": attention.symmetry,
    "extrapolate": attention.extrapolate,
    "xlnet": attention.xlnet,
}

intro("claims")
if not presenting():  # on a projector the chosen claim and its figure come first, the table of verdicts after it
    with errors_shown("setting"):
        verdicts.summary()
    st.divider()
# twenty claims do not fit a row of tabs: a selector, bound to the link as the tabs were (``tab=<code>``)
chosen = widgets.url_select(
    t("claims.pick"), list(DRAW), key="tab", default=next(iter(DRAW)), format_func=verdicts.label
)
with errors_shown("setting"):  # only the chosen claim computes
    verdicts.statement(chosen)
    DRAW[chosen]()
if presenting():
    st.divider()
    with errors_shown("setting"):
        verdicts.summary()
