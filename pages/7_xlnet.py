"""XLNet two-stream attention: content and query masks for a factorisation order, read for one token."""

import numpy as np
import streamlit as st

import posviz
from posviz.encodings import xlnet
from posviz.ui import cache, controls, errors_shown, intro, show, t, widgets

FAMILY = posviz.family("xlnet")
MAX_TOKENS = 32


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


def _mask(mask, title_key, notice_key, colorscale, token, words, key):
    show(
        cache.mask_heatmap_figure(
            mask,
            tuple(words),
            token,
            label_limit=MAX_TOKENS,
            downsampled_note=t("figure.downsampled"),
            title=t(title_key),
            x_title=t("axis.key_token"),
            y_title=t("axis.query_token"),
            colorscale=colorscale,
            zmin=0.0,
            zmax=1.0,
            zmid=None,
            colorbar_title=t("axis.may_attend"),
        ),
        notice=t(notice_key),
        key=key,
        data=mask.astype(np.int8),
        name=f"xlnet-{key}",
    )


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

    if isinstance(st.session_state.get("tok"), int) and st.session_state["tok"] >= len(order):
        st.session_state["tok"] = len(order) - 1
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
        _mask(content, "xlnet.content", "xlnet.content.notice", "Blues", token, words, "content")
    with right:
        _mask(query, "xlnet.query", "xlnet.query.notice", "Oranges", token, words, "query")

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

    show(
        cache.rank_bars_figure(
            tuple(f"{i} {w}" for i, w in enumerate(words)),
            rank,
            targets=targets,
            title=t("xlnet.rank"),
            x_title=t("axis.position"),
            y_title=t("xlnet.rank.y"),
        ),
        notice=t("xlnet.rank.notice"),
        key="rank",
        data={
            "position": range(len(order)),
            "token": words,
            "rank": rank,
            "target": np.isin(range(len(order)), targets),
        },
        name="xlnet-rank",
    )
