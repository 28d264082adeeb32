"""Models: any model's positions layer by layer, read from its config.json as transformers reads it; two models side
by side; Qwen2-VL's three positions per token (M-RoPE) and a vision encoder's 2-D RoPE, axial and mixed."""

import functools

import streamlit as st

from posviz.ui import cache, controls, errors_shown, intro, lazy_tabs, t, unused_controls, views, widgets
from posviz.ui.model_views import source, words
from posviz.ui.views import models as model_views

CTL = widgets.Controls("models")
DEFAULT_MODEL_B = "gemma3_4b"
#: The M-RoPE settings used when the chosen model has none: Qwen2-VL's.
MROPE_FALLBACK = "qwen2_vl_7b"


def map_tab(config: str, name: str) -> None:
    views.draw(model_views.reading(config))
    words.ignored_notice(cache.model_positions(config))
    views.draw(model_views.layer_map(config, name))


def layers_tab(config: str) -> None:
    """One group of RoPE layers: its wavelengths, plain and as scaled, against the contexts the config names, and
    how far each pair turns within them."""
    found = cache.model_positions(config)
    groups = model_views.rope_groups(found)
    if not groups:
        st.info(t("models.layers.none", kinds=t("list.sep").join(t(f"models.kind.{k}") for k in found.counts())))
        return
    labels = {str(i): model_views.group_label(g.layer) for i, g in enumerate(groups)}
    with controls():
        choice = widgets.url_select(
            t("models.ctl.group"),
            list(labels),
            key="group",
            default="0",
            format_func=labels.get,
            help=t("models.ctl.group.help"),
        )
    views.draw(model_views.layers(config, int(choice)))


def compare_tab(config: str, name: str) -> None:
    """The chosen model beside a preset: both in a sentence, their layer maps, and every RoPE group's wavelengths."""
    with controls():
        other = source.pick_preset(DEFAULT_MODEL_B, "models.ctl.model_b", key="model_b")
    views.draw(model_views.compare(config, name, other))


def mrope_tab(config: str | None, name: str) -> None:
    """Qwen2-VL's three position ids per token for text, an image and a video; which pairs each axis turns; and the
    score of two patches moving apart along one axis. ``config`` is None when the chosen one could not be read."""
    st.latex(r"(t, h, w)_{\text{patch}} = (p + k,\ p + r,\ p + c),\qquad p_{\text{next text}} = p + \max(h, w)/m")
    own = config is not None and model_views.mrope_layer(cache.model_positions(config)) is not None
    model = name if own else source.preset_name(MROPE_FALLBACK)
    st.caption(t("models.mrope.own" if own else "models.mrope.fallback", model=model))
    with controls():
        c = st.columns(4)
        with c[0]:
            text1 = CTL.numeric("text1", 1, 256, 4, slider=False)
            text2 = CTL.numeric("text2", 1, 256, 3, slider=False)
        with c[1]:
            img_h = CTL.numeric("img_h", 2, 64, 4, step=2, grid=2, slider=False)
            img_w = CTL.numeric("img_w", 2, 64, 6, step=2, grid=2, slider=False)
        with c[2]:
            vid_t = CTL.numeric("vid_t", 1, 16, 2, slider=False)
            vid_h = CTL.numeric("vid_h", 2, 64, 4, step=2, grid=2, slider=False)
        with c[3]:
            vid_w = CTL.numeric("vid_w", 2, 64, 4, step=2, grid=2, slider=False)
            reach = CTL.numeric("reach", 1, 512, 64, slider=False)
    segments = (
        int(text1),
        ("image", 1, int(img_h), int(img_w)),
        int(text2),
        ("video", int(vid_t), int(vid_h), int(vid_w)),
    )
    drawn = config if own and config is not None else cache.model_preset_text(MROPE_FALLBACK)
    views.draw(model_views.mrope_grid(segments))
    views.draw(model_views.mrope_axes(drawn))
    views.draw(model_views.mrope_score(drawn, int(reach)))


def rope2d_tab() -> None:
    """The similarity of one patch to every other under axial and mixed 2-D RoPE, and along the two diagonals."""
    unused_controls(t("models.ctl.from"), t("models.ctl.model"), reason=t("models.unused.rope2d"))
    st.latex(
        r"\text{axial: } \phi_{t} = r\,\theta_{2k}\ \text{or}\ c\,\theta_{2k+1},\qquad"
        r"\text{mixed: } \phi_t = \theta_t\,(r \sin\varphi_t + c \cos\varphi_t),\ "
        r"\varphi_t = \tfrac{\pi}{2} - \tfrac{\pi (t \bmod D)}{D}"
    )
    with controls():
        c = st.columns(3)
        with c[0]:
            rows = int(CTL.numeric("rows", 2, 32, 15, slider=False))
            cols = int(CTL.numeric("cols", 2, 32, 15, slider=False))
        with c[1]:
            head_dim = int(CTL.numeric("hd", 4, 256, 64, step=4, grid=4, slider=False))
            base = float(CTL.numeric("b2d", 2.0, 1_000_000.0, 10.0, log=True))
        with c[2]:
            row = int(CTL.numeric("pr", 0, rows - 1, min(7, rows - 1), slider=False))
            col = int(CTL.numeric("pc", 0, cols - 1, min(7, cols - 1), slider=False))
            directions = int(CTL.numeric("dirs", 2, 16, 8, step=2, grid=2, slider=False))
    views.draw(model_views.rope2d(rows, cols, head_dim, base, row, col, directions))


intro("models")
text = None
with controls():
    config, name, kind = source.pick_config()
if config is None:
    st.info(t(f"models.empty.{kind}"))
else:
    with errors_shown(source.ERROR_KIND[kind]):
        text = source.config_text(config, kind)
DRAW = {
    "map": functools.partial(map_tab, text, name),
    "layers": functools.partial(layers_tab, text),
    "compare": functools.partial(compare_tab, text, name),
    "mrope": functools.partial(mrope_tab, text, name),
    "rope2d": rope2d_tab,
}
if text is None:  # the error above says what is wrong; M-RoPE and 2-D RoPE have their own settings
    DRAW = {code: draw if code in ("mrope", "rope2d") else st.empty for code, draw in DRAW.items()}
lazy_tabs("models", DRAW)
