"""The XLNet page's views: Transformer-XL's relative positions (R_{i-j}, the four terms of one query's score, the
memory) and the two-stream masks of a factorisation order, as functions of their settings.

Each view calls the core (``posviz.encodings.xlnet``, ``posviz.encodings.transformer_xl``, the demo embeddings of
``posviz.lessons.attention_demo``) and the figure builders (``posviz.figures.xlnet``, ``posviz.figures.transformer_xl``)
directly. The relative section's figures are named and captioned by Transformer-XL's texts (``txl.*``), the masks'
by XLNet's (``xlnet.*``). A factorisation order is a setting as a tuple of token indices (``chosen_order``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz.base import checks
from posviz.encodings import transformer_xl as txl
from posviz.encodings import xlnet
from posviz.figures import transformer_xl as txl_figures
from posviz.figures import xlnet as xlnet_figures
from posviz.lessons import attention_demo

from ..i18n import t
from ..pagekit import labels
from . import Figure, Text, view

#: The longest order the page takes (typed or shuffled); up to this many tokens, the masks' rows and columns are
#: labelled with their words.
MAX_TOKENS = 32
#: The demo head of the relative section: hidden states are the words' embeddings (``attention_demo``'s table, 16
#: numbers a word), projected by random weights to 8 numbers a head, drawn from ``WEIGHT_SEED``.
D_MODEL, D_HEAD, WEIGHT_SEED = 16, 8, 0
#: The colour scale of each stream's mask.
STREAMS = {"content": "Blues", "query": "Oranges"}


def chosen_order(typed: str, length: int, seed: int) -> tuple[int, ...]:
    """The factorisation order in use: the one typed (``xlnet.parse_order``, at most ``MAX_TOKENS`` tokens), else
    the order of ``length`` tokens drawn from ``seed`` (``xlnet.factorisation_order``; seed 0 is left to right)."""
    found = xlnet.parse_order(typed, MAX_TOKENS) if typed.strip() else xlnet.factorisation_order(length, seed)
    return tuple(int(i) for i in found)


def _words(n: int) -> list[str]:
    """The example sentence of the current language, one word per token (``#i`` past its end)."""
    sentence = t("xlnet.sentence").split()
    return [sentence[i] if i < len(sentence) else f"#{i}" for i in range(n)]


def _listed(tokens, words) -> str:
    return ", ".join(f"{words[j]} ({j})" for j in tokens) or t("xlnet.nothing")


@view("xlnet")
def summary(order: tuple[int, ...], typed: bool):
    """The order z and its prediction targets z_{>c}, the last max(1, round(L / K)) tokens
    (``xlnet.prediction_targets``, Yang et al. 2019, section 2.3); with ``typed``, that the order was typed."""
    targets = xlnet.prediction_targets(order)
    words = _words(len(order))
    items = [Text(t("xlnet.typed", n=len(order)), "caption")] if typed else []
    items += [
        Text(t("xlnet.order", order=" → ".join(str(i) for i in order))),
        Text(
            t(
                "xlnet.targets",
                k=xlnet.PARTIAL_PREDICTION_K,
                count=len(targets),
                n=len(order),
                listed=_listed(targets, words),
            )
        ),
    ]
    return items


@view("txl")
def relative_embedding(n: int, mem: int):
    """R_p = [sin(p w_k) | cos(p w_k)], w_k = 10000^(-2k / d), for every offset p = i - j from k_len = mem + n down
    to 1 - n, in XLNet's order (``transformer_xl.transformer_xl_pos_emb``; Dai et al. 2019, section 3.3)."""
    k_len = mem + n
    pos_emb = txl.transformer_xl_pos_emb(n, k_len, D_MODEL)
    offsets = txl.transformer_xl_offsets(n, k_len)
    half = D_MODEL // 2
    fig = txl_figures.relative_embedding_heatmap(
        pos_emb, k_len, **labels("txl.r", "txl.r.x", "txl.r.y"), colorbar_title="R"
    )
    columns = [f"sin {k}" for k in range(half)] + [f"cos {k}" for k in range(half)]
    data = pd.DataFrame(pos_emb, index=pd.Index(offsets, name="offset"), columns=columns)
    return [Figure("r", fig, data, {"top": k_len, "bottom": 1 - n, "half": half})]


@view("txl")
def score_terms(n: int, mem: int, query: int):
    """The four terms of A_{i,j} for query i = ``query`` of the n-token segment against the ``mem`` memory keys and
    the segment: (a) q_i . k_j, (b) q_i . W_{k,R} R_{i-j}, (c) u . k_j, (d) v . W_{k,R} R_{i-j}, and their sum
    (``transformer_xl.transformer_xl_score_terms``, Dai et al. 2019, section 3.3), for the demo head on the words'
    embeddings (memory keys ``#-mem`` .. ``#-1``)."""
    words = _words(n)
    memory_words = [f"#{j}" for j in range(-mem, 0)]
    hidden = attention_demo.token_embeddings(tuple(memory_words + words), D_MODEL)
    weights = txl.xl_demo_weights(D_MODEL, D_HEAD, WEIGHT_SEED)
    terms = txl.transformer_xl_score_terms(hidden[mem:], hidden, weights, mem_len=mem)
    checks.whole("query", query, minimum=0, maximum=n - 1)
    terms = terms.row(query)
    keys = np.arange(mem + n)
    parts = {
        "content_content": terms.content_content[0],
        "content_position": terms.content_position[0],
        "content_bias": terms.content_bias[0],
        "position_bias": terms.position_bias[0],
        "total": terms.total[0],
    }
    fig = txl_figures.score_terms_figure(
        keys,
        {t(f"txl.term.{name}"): values for name, values in parts.items()},
        **labels("txl.terms", "txl.keys.x", "txl.terms.y", word=words[query], query=query, mem=mem),
        mem_len=mem,
        memory_label=t("txl.memory"),
    )
    return [Figure("terms", fig, {"key": keys, "offset": terms.offset[0]} | parts)]


@view("txl")
def query_keys(order: tuple[int, ...], query: int, mem: int):
    """What the query stream of ``query`` reads: the ``mem`` memory keys and the segment's tokens j with
    rank(j) < rank(query) in the order (``xlnet.visible_tokens``)."""
    _, sees = xlnet.visible_tokens(order, query)
    words = _words(len(order))
    return [Text(t("txl.kept", word=words[query], query=query, mem=mem, listed=_listed(sees, words)))]


@view("txl")
def memory(n: int, mem: int):
    """The offset i + mem - j of each query of the segment to each key (memory, then segment), distinct along a
    row, against the absolute positions a model numbering every segment from 0 would give the keys
    (``transformer_xl.segment_positions``; Dai et al. 2019, section 3.3)."""
    seg = txl.segment_positions(mem, n)
    fig = txl_figures.memory_figure(
        seg.offset,
        seg.naive,
        seg.collides,
        mem,
        **labels("txl.memory.title", "txl.keys.x", "txl.memory.y", mem=mem, n=n),
        panel_titles=(t("txl.memory.top"), t("txl.memory.bottom")),
        offset_title="i + M − j",
        naive_title=t("txl.memory.naive"),
        memory_label=t("txl.memory"),
    )
    data = {"key": np.arange(mem + n), "naive_position": seg.naive, "shares_position": seg.collides}
    data |= {f"offset from query {i}": seg.offset[i] for i in range(n)}
    return [Figure("memory", fig, data, {"variant": None if mem else "none", "mem": mem, "n": n})]


@view("xlnet")
def mask(order: tuple[int, ...], token: int, stream: str):
    """The ``stream`` mask of the order, row ``token`` outlined: content[i, j] = rank(j) <= rank(i),
    query[i, j] = rank(j) < rank(i) (``xlnet.xlnet_masks``; Yang et al. 2019, equations 4 and 5)."""
    content, query = xlnet.xlnet_masks(order)
    stream = checks.choice("stream", stream, tuple(STREAMS))
    checks.whole("token", token, minimum=0, maximum=len(order) - 1)
    matrix = content if stream == "content" else query
    fig = xlnet_figures.mask_heatmap(
        matrix,
        tuple(_words(len(order))),
        token,
        label_limit=MAX_TOKENS,
        downsampled_note=t("figure.downsampled"),
        **labels(f"xlnet.{stream}", "axis.key_token", "axis.query_token"),
        colorscale=STREAMS[stream],
        zmin=0.0,
        zmax=1.0,
        zmid=None,
        colorbar_title=t("axis.may_attend"),
    )
    return [Figure(stream, fig, matrix.astype(np.int8))]


@view("xlnet")
def reading(order: tuple[int, ...], token: int):
    """The row of ``token`` in words: its rank in the order, and the tokens each stream may attend to, content
    {j : rank(j) <= rank(token)} and query {j : rank(j) < rank(token)} (``xlnet.visible_tokens``)."""
    sees_content, sees_query = xlnet.visible_tokens(order, token)
    rank = xlnet.factorisation_rank(order)
    words = _words(len(order))
    word = words[token]
    return [
        Text(t("xlnet.for_token", word=word, token=token, rank=int(rank[token]), others=len(order) - 1)),
        Text(t("xlnet.content_sees", word=word, listed=_listed(sees_content, words))),
        Text(t("xlnet.query_sees", word=word, listed=_listed(sees_query, words))),
        Text(t("xlnet.why", word=word), "info"),
    ]


@view("xlnet")
def ranks(order: tuple[int, ...]):
    """rank[t], the step at which token t is predicted (``xlnet.factorisation_rank``), per position, the prediction
    targets (``xlnet.prediction_targets``) marked."""
    rank = xlnet.factorisation_rank(order)
    targets = xlnet.prediction_targets(order)
    words = _words(len(order))
    tokens = tuple(f"{i} {w}" for i, w in enumerate(words))
    fig = xlnet_figures.rank_bars(
        tokens, rank, targets=targets, **labels("xlnet.rank", "axis.position", "xlnet.rank.y")
    )
    positions = range(len(order))
    data = {"position": positions, "token": words, "rank": rank, "target": np.isin(positions, targets)}
    return [Figure("rank", fig, data)]
