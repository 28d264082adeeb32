"""The claims about RoPE: ``torch.rot90`` as the rotation, head_dim against d_model, article 003's config snippets,
what max_position_embeddings changes. Each draws its view (``posviz.ui.views.claims_rope``)."""

from __future__ import annotations

import json

import streamlit as st

from posviz.lessons import claims

from .. import views
from ..views import claims_rope as rope_views


def rot90() -> None:
    views.draw(rope_views.rot90())


def head_dim() -> None:
    views.draw(rope_views.head_dim())


def snippets() -> None:
    """The article's config and its update, as code, then their frequencies."""
    first, update = (json.dumps(c, indent=4) for c in (claims.ARTICLE_CONFIG, claims.ARTICLE_UPDATE))
    st.code(f"model_config = {first}\nmodel_config.update({update})", language="python", wrap_lines=True)
    views.draw(rope_views.snippets())


def max_pos() -> None:
    views.draw(rope_views.max_pos())
