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

from ..base.checks import MAX_DIM, MAX_POSITIONS
from . import alibi, learned, relative, rope, sinusoidal, xlnet


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

    @property
    def bounds(self) -> tuple[float, float]:
        """``(minimum, maximum)`` of a numeric parameter; ``TypeError`` for one of options."""
        if self.minimum is None or self.maximum is None:
            raise TypeError(f"{self.name} is not a number in a range")
        return self.minimum, self.maximum

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


#: Where a family's signal enters attention, in the order the data flows: added to the input embeddings, a rotation
#: of q and k, a term of the score computed from the query, a bias added to the score whatever the tokens, a mask
#: over the scores, a vector added to the values.
STAGES = ("input", "rotation", "score", "bias", "mask", "values")
#: What a term is a function of: the absolute position i, the offset j - i, or a factorisation order.
DEPENDS = ("position", "offset", "order")
#: Where a family's learned parameters live: nowhere ("", nothing is learned), one table at the input ("input"),
#: one table in the first layer whose output every layer reuses ("first_layer"), or a copy in every layer ("layer").
SCOPES = ("", "input", "first_layer", "layer")


@dataclass(frozen=True)
class Term:
    """One place where a family acts on attention, and what that term is a function of.

    ``content`` says whether the term also depends on the tokens (through the query or the key): Shaw et al.'s
    q_i . a^K_{j-i} does, T5's bias b(j - i) does not. ``position_code`` is False for a term that is not a position
    code at all: XLNet's factorisation-order masks are a training device, used only in pretraining.
    """

    stage: str
    depends_on: str
    content: bool
    position_code: bool = True

    def __post_init__(self):
        if self.stage not in STAGES or self.depends_on not in DEPENDS:
            raise ValueError(f"a term enters one of {STAGES} and depends on one of {DEPENDS}; got {self}")


@dataclass(frozen=True)
class Family:
    """A positional-encoding family as the app and the CLI see it.

    ``terms`` lists where the family acts on attention, its position code first (``enters``, ``depends_on`` and
    ``content`` read that first term); ``relative`` says whether its score depends on j - i only.
    """

    key: str
    name: str
    summary: str
    paper: str
    page: str  # the key of its page in ``posviz.pages`` (the script is ``posviz.pages.script(page)``)
    params: tuple[Param, ...]
    build: Callable[..., np.ndarray]
    terms: tuple[Term, ...]
    relative: bool  # does the score depend on j - i only?
    learnable: bool
    extrapolates: bool  # defined for positions past the training length?
    capabilities: frozenset[str] = field(default_factory=frozenset)
    param_formula: str = "0"  # its learned parameters, n = context length, e.g. "n·d"; see ``param_scope``
    param_scope: str = ""  # where they live: one of ``SCOPES``
    models: str = ""  # well-known models that use the family

    def __post_init__(self):
        if not self.terms or not self.terms[0].position_code:
            raise ValueError(f"{self.key}: the first term must be the family's position code")
        if self.param_scope not in SCOPES or (self.param_scope == "") != (self.param_formula == "0"):
            raise ValueError(f"{self.key}: learned parameters need a scope in {SCOPES[1:]}, and only they do")

    @property
    def enters(self) -> str:
        """Where the position code enters attention (its first term's stage, one of ``STAGES``)."""
        return self.terms[0].stage

    @property
    def depends_on(self) -> str:
        """What the position code is a function of: "position" (absolute) or "offset" (j - i)."""
        return self.terms[0].depends_on

    @property
    def content(self) -> bool:
        """Does the position code's effect on the score also depend on the tokens (the query or the key)?"""
        return self.terms[0].content

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
            page="sinusoidal",
            params=(N_POSITIONS, D_MODEL, BASE, Param("layout", "interleaved", options=sinusoidal.LAYOUTS)),
            build=lambda n_positions=128, d_model=128, base=10000.0, layout="interleaved": sinusoidal.sinusoidal(
                n_positions, d_model, base=base, layout=layout
            ),
            terms=(Term("input", "position", content=True),),  # added to the token, then projected with it
            relative=False,
            learnable=False,
            extrapolates=True,
            capabilities=frozenset({"table", "similarity", "projection"}),
            models="Transformer (2017), Marian",
        ),
        Family(
            key="learned",
            name="Learned absolute",
            summary="A trainable table with one vector per position (BERT, GPT-2), or one started from sinusoids.",
            paper="Devlin et al. 2019, BERT; Radford et al. 2019, GPT-2",
            page="learned",
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
            terms=(Term("input", "position", content=True),),
            relative=False,
            learnable=True,
            extrapolates=False,
            capabilities=frozenset({"table", "similarity", "projection"}),
            param_formula="n·d",
            param_scope="input",
            models="BERT, GPT-2, RoBERTa",
        ),
        Family(
            key="rope",
            name="RoPE",
            summary="Rotates each pair of query and key dimensions by an angle proportional to the position.",
            paper="Su et al. 2021, RoFormer",
            page="rope",
            params=(
                N_POSITIONS,
                Param("head_dim", 64, 2, 1024, 2),
                BASE,
            ),
            build=lambda n_positions=128, head_dim=64, base=10000.0: _rope_table(n_positions, head_dim, base),
            terms=(Term("rotation", "offset", content=True),),  # q^T R_{j-i} k: the offset acts through q and k
            relative=True,
            learnable=False,
            extrapolates=True,
            capabilities=frozenset({"table", "scores", "scaling"}),
            models="LLaMA, Qwen, Mistral, GPT-NeoX",
        ),
        Family(
            key="alibi",
            name="ALiBi",
            summary="No position vectors: each head subtracts a slope times the distance from the attention score.",
            paper="Press et al. 2022, Train Short, Test Long",
            page="alibi",
            params=(
                Param("n_heads", 8, 1, alibi.MAX_HEADS, 1),
                Param("seq_len", 32, 1, 4096, 1),
                Param("head", 0, 0, alibi.MAX_HEADS - 1, 1),
                Param("causal", True, options=(True, False)),
            ),
            build=lambda n_heads=8, seq_len=32, head=0, causal=True: alibi.alibi_bias(
                n_heads, seq_len, causal=causal, heads=[min(head, n_heads - 1)]
            )[0],
            terms=(Term("bias", "offset", content=False),),
            relative=True,
            learnable=False,
            extrapolates=True,
            capabilities=frozenset({"bias"}),
            models="BLOOM, MPT",
        ),
        Family(
            key="shaw",
            name="Relative (Shaw)",
            summary="Learned vectors per clipped relative distance: a^K meets the query in the score (q_i·a^K), "
            "a^V is added to the values.",
            paper="Shaw et al. 2018, Self-Attention with Relative Position Representations",
            page="relative",
            params=(Param("seq_len", 32, 1, 4096, 1), Param("max_relative_position", 8, 1, 512, 1)),
            build=lambda seq_len=32, max_relative_position=8: relative.shaw_relative_index(
                seq_len, seq_len, max_relative_position
            ),
            # Shaw et al. 2018, eq. 4: e_ij = x_i W^Q (x_j W^K + a^K_ij)^T / sqrt(d_z), so the position term
            # q_i . a^K_ij depends on the query; eq. 3: z_i = sum_j alpha_ij (x_j W^V + a^V_ij), a value term.
            terms=(Term("score", "offset", content=True), Term("values", "offset", content=False)),
            relative=True,
            learnable=True,
            extrapolates=True,
            capabilities=frozenset({"index"}),
            param_formula="2(2k+1)·d_head",  # a^K and a^V, shared by the heads, in every layer
            param_scope="layer",
            models="Shaw et al. (2018); its key term alone in Music Transformer, Wav2Vec2-BERT",
        ),
        Family(
            key="t5",
            name="Relative (T5 buckets)",
            summary="One learned scalar per head and log-spaced distance bucket, added to the attention score.",
            paper="Raffel et al. 2020, T5",
            page="relative",
            params=(
                Param("seq_len", 64, 1, 4096, 1),
                Param("num_buckets", 32, 4, 256, 2),
                Param("max_distance", 128, 16, 4096, 1),
                Param("bidirectional", True, options=(True, False)),
            ),
            build=lambda seq_len=64, num_buckets=32, max_distance=128, bidirectional=True: relative.t5_bucket_matrix(
                seq_len, seq_len, num_buckets=num_buckets, max_distance=max_distance, bidirectional=bidirectional
            ),
            terms=(Term("bias", "offset", content=False),),
            relative=True,
            learnable=True,
            extrapolates=True,
            capabilities=frozenset({"index"}),
            param_formula="num_buckets·num_heads",  # in the first layer of a stack; every later layer reuses its bias
            param_scope="first_layer",
            models="T5, Flan-T5, mT5",
        ),
        Family(
            key="xlnet",
            name="XLNet two-stream",
            summary="Positions from Transformer-XL's relative encoding: sinusoids R_{i-j} of the offset, read through "
            "the query's content and a learned bias v (u does the same for the key's content), a relative term that "
            "depends on content; the two-stream masks of a sampled factorisation order only decide, in pretraining, "
            "which keys each stream may see.",
            paper="Yang et al. 2019, XLNet; Dai et al. 2019, Transformer-XL",
            page="xlnet",
            # seed 0 is the left-to-right order, which looks like a causal mask; the default is a shuffled one
            params=(Param("seq_len", 8, 2, 64, 1), Param("seed", 1, 0, 2**31 - 1, 1)),
            build=lambda seq_len=8, seed=1: xlnet.xlnet_masks(xlnet.factorisation_order(seq_len, seed))[1],
            # Dai et al. 2019, eq. for A^rel: terms (b) q_i . W_R R_{i-j} and (d) v . W_R R_{i-j}, R sinusoidal;
            # Yang et al. 2019, section 2.3: the masks of the factorisation order, pretraining only.
            terms=(
                Term("score", "offset", content=True),
                Term("mask", "order", content=False, position_code=False),
            ),
            relative=True,
            learnable=True,
            extrapolates=True,
            capabilities=frozenset({"mask"}),
            param_formula="d²+d",  # W_R (d x heads x d_head) and the bias v (heads x d_head), in every layer
            param_scope="layer",
            models="XLNet, Transformer-XL",
        ),
    )
}


def family(key: str) -> Family:
    """The registry entry for ``key``; a ValueError naming the known families otherwise."""
    try:
        return FAMILIES[key]
    except KeyError:
        raise ValueError(f"unknown family {key!r}; known families are {', '.join(FAMILIES)}") from None
