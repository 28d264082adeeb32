"""The claims about ALiBi and attention: the article's slopes, ``tril`` as a causal mask, the symmetry of attention
without positions, extrapolation past the training length, XLNet's two streams. Each reads its control and draws
its view (``posviz.ui.views.claims_attention``)."""

from __future__ import annotations

from .. import views, widgets
from ..views import claims_attention as attention_views
from .verdicts import setting


def alibi() -> None:
    views.draw(attention_views.alibi())


def tril() -> None:
    views.draw(attention_views.tril())


def symmetry() -> None:
    views.draw(attention_views.symmetry())


def extrapolate() -> None:
    train = setting(128, 8192, 512, key="train", marks=widgets.POWERS_OF_TWO)
    views.draw(attention_views.extrapolate(int(train)))


def xlnet() -> None:
    views.draw(attention_views.xlnet())
