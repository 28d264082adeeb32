"""XLNet: Transformer-XL's relative positions (R_{i-j}, the four terms of a score, memory), then the content and query
masks of a factorisation order, read for one token."""

import numpy as np
import pandas as pd
import streamlit as st

import posviz
from posviz.encodings import xlnet
from posviz.ui import Figures, cache, controls, errors_shown, intro, t, widgets
from posviz.ui.pagekit import labels

FAMILY = posviz.family("xlnet")
CTL = widgets.Controls("xlnet")
FIG = Figures("xlnet")
#: The relative section's texts: Transformer-XL's (``txl.*``).
TXL = Figures("txl")
MAX_TOKENS = 32
MAX_MEMORY = 16
#: The demo head of the relative section: hidden states are the words' embeddings (``attention_demo``'s table, 16
#: numbers a word), projected by random weights to 8 numbers a head, drawn from ``WEIGHT_SEED``.
D_MODEL, D_HEAD, WEIGHT_SEED = 16, 8, 0


def _shuffle() -> None:
    """Next seed, wrapping round at the largest one; a typed order gives way to the shuffled one."""
    seed = int(st.session_state.get("seed", FAMILY.param("seed").default))
    st.session_state["seed"] = seed % int(FAMILY.param("seed").maximum) + 1
    st.session_state["order"] = ""


def _words(n: int) -> list[str]:
    """The example sentence of the current language, one word per token (``#i`` past its end)."""
    sentence = t("xlnet.sentence").split()
    return [sentence[i] if i < len(sentence) else f"#{i}" for i in range(n)]


def _listed(tokens, words) -> str:
    return ", ".join(f"{words[j]} ({j})" for j in tokens) or t("xlnet.nothing")


def _mask(key, mask, colorscale, token, words):
    """The content or query mask (``key``) of the order, the row of ``token`` marked."""
    fig = cache.mask_heatmap_figure(
        mask,
        tuple(words),
        token,
        label_limit=MAX_TOKENS,
        downsampled_note=t("figure.downsampled"),
        **labels(f"xlnet.{key}", "axis.key_token", "axis.query_token"),
        colorscale=colorscale,
        zmin=0.0,
        zmax=1.0,
        zmid=None,
        colorbar_title=t("axis.may_attend"),
    )
    FIG.show(key, fig, mask.astype(np.int8))


def _clamped(key: str, n: int) -> None:
    """A token index kept in the session (or the URL) that the current order no longer has becomes its last one."""
    if isinstance(st.session_state.get(key), int) and st.session_state[key] >= n:
        st.session_state[key] = n - 1


def relative_positions(order, words) -> None:
    """Transformer-XL's relative encoding for the segment of the chosen order: R_{i-j} by offset, the four terms of one
    query's score, and the memory that relative offsets make possible."""
    n = len(order)
    st.subheader(t("txl.heading"))
    left, right = st.columns(2, vertical_alignment="bottom")
    with left:
        mem = CTL.numeric("mem", 0, MAX_MEMORY, 4)
    with right:
        _clamped("q", n)
        query = st.select_slider(
            t("xlnet.ctl.q"),
            list(range(n)),
            value=n - 1,
            key="q",
            bind="query-params",
            help=t("xlnet.ctl.q.help"),
        )
    k_len = mem + n
    pos_emb = cache.transformer_xl_pos_emb(n, k_len, D_MODEL)
    offsets = cache.transformer_xl_offsets(n, k_len)
    half = D_MODEL // 2
    fig = cache.relative_embedding_heatmap_figure(
        pos_emb, k_len, **labels("txl.r", "txl.r.x", "txl.r.y"), colorbar_title="R"
    )
    columns = [f"sin {k}" for k in range(half)] + [f"cos {k}" for k in range(half)]
    data = pd.DataFrame(pos_emb, index=pd.Index(offsets, name="offset"), columns=columns)
    TXL.show("r", fig, data, top=k_len, bottom=1 - n, half=half)

    st.markdown(t("txl.terms.intro"))
    st.latex(
        r"A_{i,j} = \underbrace{q_i^\top k_j}_{(a)} + \underbrace{q_i^\top W_{k,R} R_{i-j}}_{(b)}"
        r" + \underbrace{u^\top k_j}_{(c)} + \underbrace{v^\top W_{k,R} R_{i-j}}_{(d)},"
        r"\qquad q_i = W_q h_i,\ k_j = W_{k,E}\, h_j"
    )
    memory_words = [f"#{j}" for j in range(-mem, 0)]
    hidden = cache.xl_token_embeddings(tuple(memory_words + list(words)), D_MODEL)
    weights = cache.xl_demo_weights(D_MODEL, D_HEAD, WEIGHT_SEED)
    terms = cache.transformer_xl_score_terms(hidden[mem:], hidden, weights, mem_len=mem).row(query)
    keys = np.arange(k_len)
    parts = {
        "content_content": terms.content_content[0],
        "content_position": terms.content_position[0],
        "content_bias": terms.content_bias[0],
        "position_bias": terms.position_bias[0],
        "total": terms.total[0],
    }
    fig = cache.score_terms_figure(
        keys,
        {t(f"txl.term.{name}"): values for name, values in parts.items()},
        **labels("txl.terms", "txl.keys.x", "txl.terms.y", word=words[query], query=query, mem=mem),
        mem_len=mem,
        memory_label=t("txl.memory"),
    )
    TXL.show("terms", fig, {"key": keys, "offset": terms.offset[0]} | parts)
    _, sees_query = cache.visible_tokens(order, query)
    st.markdown(t("txl.kept", word=words[query], query=query, mem=mem, listed=_listed(sees_query, words)))

    seg = cache.segment_positions(mem, n)
    fig = cache.memory_figure(
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
    data = {"key": keys, "naive_position": seg.naive, "shares_position": seg.collides}
    data |= {f"offset from query {i}": seg.offset[i] for i in range(n)}
    TXL.show("memory", fig, data, variant=None if mem else "none", mem=mem, n=n)


intro("xlnet")
with controls():
    c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
    with c1:
        length = widgets.number(FAMILY.param("seq_len"), key="len", maximum=MAX_TOKENS)
    with c2:
        seed = widgets.number(FAMILY.param("seed"), key="seed", slider=False)
    with c3:
        st.button(t("xlnet.shuffle"), on_click=_shuffle, icon=":material/shuffle:")
    typed = st.text_input(
        t("xlnet.ctl.order"),
        key="order",
        bind="query-params",
        placeholder="3,1,0,2",
        help=t("xlnet.ctl.order.help"),
    )
# with a typed order, the order is all the page reads: length and seed are not used
with errors_shown("order" if typed.strip() else "setting"):
    if typed.strip():
        order = cache.parse_order(typed, MAX_TOKENS)
        st.caption(t("xlnet.typed", n=len(order)))
    else:
        order = cache.factorisation_order(length, seed)
    st.markdown(t("xlnet.order", order=" → ".join(str(i) for i in order)))
    words = _words(len(order))
    targets = cache.prediction_targets(order)
    st.markdown(
        t(
            "xlnet.targets",
            k=xlnet.PARTIAL_PREDICTION_K,
            count=len(targets),
            n=len(order),
            listed=_listed(targets, words),
        )
    )
    rank = cache.factorisation_rank(order)

    relative_positions(order, words)

    st.subheader(t("txl.masks.heading"))
    _clamped("tok", len(order))
    token = st.select_slider(
        t("xlnet.ctl.token"),
        list(range(len(order))),
        value=min(1, len(order) - 1),
        key="tok",
        bind="query-params",
        help=t("xlnet.ctl.token.help"),
    )
    content, query = cache.xlnet_masks(order)
    left, right = st.columns(2)
    with left:
        _mask("content", content, "Blues", token, words)
    with right:
        _mask("query", query, "Oranges", token, words)

    sees_content, sees_query = cache.visible_tokens(order, token)
    word = words[token]
    st.markdown(t("xlnet.for_token", word=word, token=token, rank=int(rank[token]), others=len(order) - 1))
    st.markdown(t("xlnet.content_sees", word=word, listed=_listed(sees_content, words)))
    st.markdown(t("xlnet.query_sees", word=word, listed=_listed(sees_query, words)))
    st.info(t("xlnet.why", word=word))
    st.latex(
        r"h_{z_t} \leftarrow \mathrm{Attention}(Q = h_{z_t},\ KV = h_{z_{\le t}}),\qquad "
        r"g_{z_t} \leftarrow \mathrm{Attention}(Q = g_{z_t},\ KV = h_{z_{< t}})"
    )

    tokens = tuple(f"{i} {w}" for i, w in enumerate(words))
    fig = cache.rank_bars_figure(tokens, rank, targets=targets, **labels("xlnet.rank", "axis.position", "xlnet.rank.y"))
    positions = range(len(order))
    data = {"position": positions, "token": words, "rank": rank, "target": np.isin(positions, targets)}
    FIG.show("rank", fig, data)
