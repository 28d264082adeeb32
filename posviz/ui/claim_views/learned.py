"""The claims about learned tables: their block structure, whether learning positions works, a position past the
table's end, ALBERT's table width. Each draws its view (``posviz.ui.views.claims_learned``)."""

from __future__ import annotations

from .. import views
from ..views import claims_learned as learned_views


def blocks() -> None:
    views.draw(learned_views.blocks())


def learned() -> None:
    views.draw(learned_views.learned())


def oom() -> None:
    views.draw(learned_views.oom())


def albert() -> None:
    views.draw(learned_views.albert())
