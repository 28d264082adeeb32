"""The RoPE page's views: the angle table and the scores that depend on m - n only, as functions of their settings.

Each view calls the core (``posviz.encodings.rope``) and the figure builders (``posviz.figures.rope``) directly;
the page script reads the controls and draws what a view returns (``views.draw``).
"""

from __future__ import annotations

from posviz.base import checks
from posviz.encodings import rope
from posviz.figures import rope as rope_figures

from ..i18n import t
from ..pagekit import labels
from . import Figure, family_heatmap, heatmap, view

#: Positions of the shifted-scores pair of maps: at most this many of the page's n, so the two stay readable.
SHIFT_POSITIONS = 64
#: The colour bar's title of the score maps.
SCORE = "q·k / d"


def check(head_dim: int, base: float) -> None:
    """Raise the core's ``ValueError`` for the sizes every tab of the page refuses (a base of at most 1, a head
    that cannot turn in pairs), without building a table."""
    checks.positive_float("base", base, minimum_exclusive=1.0)
    rope.rotated_dim(head_dim, 1.0)


@view("rope")
def angle_table(n: int, head_dim: int, base: float):
    """cos(m theta_i) for every position m and pair i: the table of the RoPE family (``posviz.family("rope")``)."""
    table, fig = family_heatmap(
        "rope",
        {"base": base, "head_dim": head_dim, "n_positions": n},
        **labels("rope.table", "axis.pair", "axis.position"),
        zmin=-1.0,
        zmax=1.0,
        colorbar_title="cos",
    )
    return [Figure("table", fig, table)]


@view("rope")
def scores(n: int, head_dim: int, base: float, seed: int | None, shift: int):
    """S[m, n] = RoPE(q, m) . RoPE(k, n) / d (``rope.rope_score_matrix``; q = k = ones for ``seed=None``) and the
    same scores with both positions moved by ``shift`` (``rope.rope_shifted_scores``), on one colour scale (-1 .. 1
    for q = k = ones, where S is a mean of cosines; the largest |S| of the three maps otherwise)."""
    matrix = rope.rope_score_matrix(n, head_dim, base=base, seed=seed)
    k = min(n, SHIFT_POSITIONS)
    plain, shifted, diff = rope.rope_shifted_scores(k, head_dim, shift, base=base, seed=seed)
    reach = 1.0 if seed is None else rope_figures.symmetric_reach(matrix, plain, shifted)
    pair = rope_figures.heatmap_pair(
        plain,
        shifted,
        subtitles=(t("rope.shift.left"), t("rope.shift.right", s=shift)),
        **labels("rope.shift", "axis.key_position", "axis.query_position", k=k, diff=f"{diff:.2g}"),
        zmin=-reach,
        zmax=reach,
        colorbar_title=SCORE,
    )
    grid = heatmap(
        matrix,
        **labels("rope.scores", "axis.key_position", "axis.query_position"),
        zmin=-reach,
        zmax=reach,
        colorbar_title=SCORE,
    )
    return [
        Figure("scores", grid, matrix),
        Figure("shift", pair, {"S": plain.ravel(), "S_shifted": shifted.ravel()}, {"chart": "shift_fig"}),
    ]
