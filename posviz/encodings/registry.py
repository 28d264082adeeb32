"""The family registry: one entry per positional-encoding family.

Pages, the command line and the comparison views iterate over ``FAMILIES`` instead of naming families by hand,
so adding a family is one module in ``posviz/encodings``, one entry here, one page and its texts.
Each entry says what the family's parameters are (with ranges and defaults, which the UI turns into controls;
``Param.clamp`` coerces a value into range), how it enters the model, and ``build(**params)``: the matrix its
page shows first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import alibi, learned, relative, rope, sinusoidal, xlnet
from ._checks import MAX_DIM, MAX_POSITIONS


@dataclass(frozen=True)
class Param:
    """One parameter of a family: a number in [minimum, maximum] or one of ``options``."""

    name: str
    default: Any
    minimum: float | None = None
    maximum: float | None = None
    step: float | None = None
    options: tuple = ()
    log: bool = False

    def clamp(self, value):
        """``value`` coerced into this parameter's range or options; the default when it makes no sense."""
        if self.options:
            return value if value in self.options else self.default
        try:
            number = type(self.default)(value)
        except (TypeError, ValueError, OverflowError):
            return self.default
        if number != number:  # NaN
            return self.default
        return type(self.default)(min(max(number, self.minimum), self.maximum))


@dataclass(frozen=True)
class Family:
    """A positional-encoding family as the app and the CLI see it."""

    key: str
    name: str
    summary: str
    paper: str
    page: str
    params: tuple[Param, ...]
    build: Callable[..., np.ndarray]
    enters: str  # "input" (added to embeddings), "rotation" (q and k), "bias" (scores), "mask" (who sees whom)
    relative: bool  # does the score depend on j - i only?
    learnable: bool
    extrapolates: bool  # defined for positions past the training length?
    capabilities: frozenset[str] = field(default_factory=frozenset)
    depends_on: str = ""  # what the position signal is a function of: "position", "offset" (j - i) or "order"
    param_formula: str = ""  # learned parameters per layer, n = context length, e.g. "n·d"
    models: str = ""  # well-known models that use the family

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"{self.key} has no parameter {name!r}")


N_POSITIONS = Param("n_positions", 128, 1, MAX_POSITIONS, 1)
D_MODEL = Param("d_model", 128, 1, MAX_DIM, 1)
BASE = Param("base", 10000.0, 100.0, 1_000_000.0, None, log=True)


def _rope_table(n_positions: int, head_dim: int, base: float) -> np.ndarray:
    """cos(m * theta_i) for every position m and pair i, shape (positions, head_dim / 2): how far RoPE has
    turned each pair at each position (a pair's first coordinate, starting from (1, 0))."""
    inv, _ = rope.rope_inv_freq(head_dim, base=base)
    return np.cos(np.arange(n_positions, dtype=np.float64)[:, None] * inv[None, :])


FAMILIES: dict[str, Family] = {
    f.key: f
    for f in (
        Family(
            key="sinusoidal",
            name="Sinusoidal",
            summary="Fixed sin/cos waves of geometrically spaced frequencies, added to the token embeddings.",
            paper="Vaswani et al. 2017, Attention Is All You Need",
            page="pages/2_sinusoidal.py",
            params=(N_POSITIONS, D_MODEL, BASE, Param("layout", "interleaved", options=sinusoidal.LAYOUTS)),
            build=lambda n_positions=128, d_model=128, base=10000.0, layout="interleaved": sinusoidal.sinusoidal(
                n_positions, d_model, base=base, layout=layout
            ),
            enters="input",
            relative=False,
            learnable=False,
            extrapolates=True,
            capabilities=frozenset({"table", "similarity", "projection"}),
            depends_on="position",
            param_formula="0",
            models="Transformer (2017), Marian",
        ),
        Family(
            key="learned",
            name="Learned absolute",
            summary="A trainable table with one vector per position (BERT, GPT-2), or one started from sinusoids.",
            paper="Devlin et al. 2019, BERT; Radford et al. 2019, GPT-2",
            page="pages/3_learned.py",
            params=(
                N_POSITIONS,
                D_MODEL,
                Param("init", "random", options=("random", "sinusoidal")),
                Param("std", 0.02, 0.001, 1.0, 0.001),
                Param("seed", 0, 0, 2**31 - 1, 1),
            ),
            build=lambda n_positions=128, d_model=128, init="random", std=0.02, seed=0: (
                learned.learned_init(n_positions, d_model, std=std, seed=seed)
                if init == "random"
                else learned.sin_init(n_positions, d_model)
            ),
            enters="input",
            relative=False,
            learnable=True,
            extrapolates=False,
            capabilities=frozenset({"table", "similarity", "projection"}),
            depends_on="position",
            param_formula="n·d",
            models="BERT, GPT-2, RoBERTa",
        ),
        Family(
            key="rope",
            name="RoPE",
            summary="Rotates each pair of query and key dimensions by an angle proportional to the position.",
            paper="Su et al. 2021, RoFormer",
            page="pages/4_rope.py",
            params=(
                N_POSITIONS,
                Param("head_dim", 64, 2, 1024, 2),
                BASE,
            ),
            build=lambda n_positions=128, head_dim=64, base=10000.0: _rope_table(n_positions, head_dim, base),
            enters="rotation",
            relative=True,
            learnable=False,
            extrapolates=True,
            capabilities=frozenset({"table", "scores", "scaling"}),
            depends_on="offset",
            param_formula="0",
            models="LLaMA, Qwen, Mistral, GPT-NeoX",
        ),
        Family(
            key="alibi",
            name="ALiBi",
            summary="No position vectors: each head subtracts a slope times the distance from the attention score.",
            paper="Press et al. 2022, Train Short, Test Long",
            page="pages/5_alibi.py",
            params=(
                Param("n_heads", 8, 1, alibi.MAX_HEADS, 1),
                Param("seq_len", 32, 1, 4096, 1),
                Param("head", 0, 0, alibi.MAX_HEADS - 1, 1),
                Param("causal", True, options=(True, False)),
            ),
            build=lambda n_heads=8, seq_len=32, head=0, causal=True: alibi.alibi_bias(
                n_heads, seq_len, causal=causal, heads=[min(head, n_heads - 1)]
            )[0],
            enters="bias",
            relative=True,
            learnable=False,
            extrapolates=True,
            capabilities=frozenset({"bias"}),
            depends_on="offset",
            param_formula="0",
            models="BLOOM, MPT",
        ),
        Family(
            key="shaw",
            name="Relative (Shaw)",
            summary="A learned vector per clipped relative distance, used inside the attention score.",
            paper="Shaw et al. 2018, Self-Attention with Relative Position Representations",
            page="pages/6_relative.py",
            params=(Param("seq_len", 32, 1, 4096, 1), Param("max_relative_position", 8, 1, 512, 1)),
            build=lambda seq_len=32, max_relative_position=8: relative.shaw_relative_index(
                seq_len, seq_len, max_relative_position
            ),
            enters="bias",
            relative=True,
            learnable=True,
            extrapolates=True,
            capabilities=frozenset({"index"}),
            depends_on="offset",
            param_formula="2(2k+1)·d_head",
            models="Music Transformer, BERT relative_key",
        ),
        Family(
            key="t5",
            name="Relative (T5 buckets)",
            summary="One learned scalar per head and log-spaced distance bucket, added to the attention score.",
            paper="Raffel et al. 2020, T5",
            page="pages/6_relative.py",
            params=(
                Param("seq_len", 64, 1, 4096, 1),
                Param("num_buckets", 32, 4, 256, 2),
                Param("max_distance", 128, 16, 4096, 1),
                Param("bidirectional", True, options=(True, False)),
            ),
            build=lambda seq_len=64, num_buckets=32, max_distance=128, bidirectional=True: relative.t5_bucket_matrix(
                seq_len, seq_len, num_buckets=num_buckets, max_distance=max_distance, bidirectional=bidirectional
            ),
            enters="bias",
            relative=True,
            learnable=True,
            extrapolates=True,
            capabilities=frozenset({"index"}),
            depends_on="offset",
            param_formula="buckets·heads",
            models="T5, Flan-T5, mT5",
        ),
        Family(
            key="xlnet",
            name="XLNet two-stream",
            summary="A factorisation order decides who sees whom; the query stream knows a position, not its token.",
            paper="Yang et al. 2019, XLNet",
            page="pages/7_xlnet.py",
            params=(Param("seq_len", 8, 2, 64, 1), Param("seed", 0, 0, 2**31 - 1, 1)),
            build=lambda seq_len=8, seed=0: xlnet.xlnet_masks(xlnet.factorisation_order(seq_len, seed))[1],
            enters="mask",
            relative=False,
            learnable=False,
            extrapolates=True,
            capabilities=frozenset({"mask"}),
            depends_on="order",
            param_formula="0",
            models="XLNet",
        ),
    )
}


def family(key: str) -> Family:
    """The registry entry for ``key``; a ValueError naming the known families otherwise."""
    try:
        return FAMILIES[key]
    except KeyError:
        raise ValueError(f"unknown family {key!r}; known families are {', '.join(FAMILIES)}") from None
