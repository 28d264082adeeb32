"""The claims about the sinusoidal table: the exponent, the row norm, the embedding's scale, float precision, the
shift as a rotation, the sum of two positions, the choice of base. Each reads its control and draws its view
(``posviz.ui.views.claims_sinusoidal``)."""

from __future__ import annotations

from .. import views, widgets
from ..views import claims_sinusoidal as sinusoidal_views
from .verdicts import setting

D_MARKS = (64, 128, 256, 512, 768, 1024, 2048, 4096)  # the slider's widths, BERT's 768 among them


def width() -> int:
    """The width d of the sinusoidal table, the control shared by the claims that measure one (``?d=``)."""
    return int(setting(64, 4096, 512, key="d", grid=2, marks=D_MARKS))


def exponent() -> None:
    views.draw(sinusoidal_views.exponent(width()))


def norm() -> None:
    views.draw(sinusoidal_views.norm(width()))


def unscaled() -> None:
    views.draw(sinusoidal_views.unscaled(width()))


def precision() -> None:
    views.draw(sinusoidal_views.precision())


def shift() -> None:
    views.draw(sinusoidal_views.shift(int(setting(1, 511, 5, key="k", slider=False))))


def position_sum() -> None:
    views.draw(sinusoidal_views.position_sum())


def base() -> None:
    views.draw(sinusoidal_views.base(int(setting(256, 32768, 2048, key="ctx", marks=widgets.POWERS_OF_TWO))))
