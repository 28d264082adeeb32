"""RoPE: pairs turning with the position, a score that depends on m - n only, its decay, the two pair layouts,
partial rotation, the context-extension scalings side by side and any model's config.json."""

import functools

import streamlit as st

import posviz
from posviz.encodings import rope
from posviz.models import rope_configs
from posviz.ui import (
    Figures,
    cache,
    controls,
    errors_shown,
    fragment,
    intro,
    lazy_tabs,
    menu,
    t,
    unused_controls,
    views,
    widgets,
)
from posviz.ui.views import rope as rope_views

CTL = widgets.Controls("rope")
FIG = Figures("rope")

FAMILY = posviz.family("rope")


@fragment
def animation(head_dim, base):
    st.subheader(t("rope.anim.header"))
    c1, c2 = st.columns(2)
    with c1:
        length = CTL.numeric("anim_len", 8, 120, 64, slider=True)
    with c2:
        count = CTL.numeric("anim_pairs", 2, 6, 4, slider=True)
    with errors_shown("setting"):
        views.draw(rope_views.animation(head_dim, base, int(length), int(count)))


@fragment
def scores(n, head_dim, base):
    st.subheader(t("rope.scores.header"))
    st.latex(
        r"q_m^{\top} k_n = \operatorname{Re}\sum_{i=0}^{d/2-1} \tilde q_i\,\overline{\tilde k_i}\;"
        r"e^{\mathrm{i}(m-n)\theta_i}"
    )
    c1, c2, c3 = st.columns(3)
    with c1:
        qk = CTL.radio("qk", ["ones", "random"], "ones")
    with c2:
        seed = CTL.numeric("seed", 0, 9999, 0, slider=False, disabled=qk == "ones")
    with c3:
        shift = CTL.numeric("shift", 1, 4096, 100, slider=True)
    seed = None if qk == "ones" else int(seed)
    with errors_shown("setting"):
        views.draw(rope_views.scores(n, head_dim, base, seed, shift))


@fragment
def decay(head_dim, base):
    unused_controls(t("param.n_positions"), reason=t("rope.unused.decay"))
    st.subheader(t("rope.decay.header"))
    st.latex(r"\frac{1}{d/2}\sum_{j=1}^{d/2}\lvert S_j\rvert,\qquad S_j=\sum_{i=0}^{j-1} e^{\mathrm{i}(m-n)\theta_i}")
    reach = CTL.numeric("decay_len", 16, 32768, 1024, marks=widgets.POWERS_OF_TWO)
    with errors_shown("setting"):
        views.draw(rope_views.decay(head_dim, base, int(reach)))


@fragment
def layouts(base):
    unused_controls(t("param.n_positions"), t("param.head_dim"), reason=t("rope.unused.layouts"))
    st.subheader(t("rope.layouts.header"))
    st.latex(r"x^{\text{half}} = x^{\text{interleaved}}[p],\quad p = (0, 2, 4, \dots, r-2,\; 1, 3, \dots, r-1)")
    d = CTL.numeric("perm_d", 2, 32, 8, step=2, slider=True)
    with errors_shown("setting"):
        views.draw(rope_views.layouts(int(d), base))


@fragment
def partial(n, head_dim, base):
    st.subheader(t("rope.partial.header"))
    st.latex(
        r"r = 2\left\lceil \lfloor d \cdot \text{partial\_rotary\_factor} \rfloor / 2 \right\rceil,\qquad "
        r"x_{r:d}\ \text{passes through unchanged}"
    )
    c1, c2 = st.columns(2)
    with c1:
        prf = CTL.numeric("prf", 0.05, 1.0, 0.5, step=0.05, slider=True)
    with c2:
        layout = CTL.radio("rope_layout", list(rope.LAYOUTS), "half", text="layout", names="rope.layout")
    with errors_shown("setting"):
        views.draw(rope_views.partial(n, head_dim, base, round(prf, 2), layout))


@fragment
def extension(head_dim, base):
    unused_controls(t("param.n_positions"), reason=t("rope.unused.extension"))
    st.subheader(t("rope.ext.header"))
    st.latex(
        r"\lambda_i = \frac{2\pi}{\theta_i},\qquad \rho_i = \frac{\theta_i^{\text{scaled}}}{\theta_i},\qquad"
        r"\text{NTK: } \text{base}' = \text{base}\cdot s^{d/(d-2)}"
    )
    c1, c2, c3 = st.columns(3)
    with c1:
        factor = CTL.numeric("factor", 2, 64, 8, marks=widgets.POWERS_OF_TWO)
    with c2:
        original = CTL.numeric("orig", 256, 262144, 4096, marks=widgets.POWERS_OF_TWO)
    with c3:
        share = CTL.numeric("cur", 1, 64, 8, marks=widgets.POWERS_OF_TWO)
    current = original * min(share, factor)
    with errors_shown("setting"):
        views.draw(rope_views.extension(head_dim, base, factor, original, current))
    dynamic_growth(factor, original, current)


@fragment
def dynamic_growth(factor: int, original: int, current: int):
    """How dynamic NTK's factor and the length read combine into the scale it applies."""
    st.subheader(t("rope.ext.dynamic.header"))
    st.latex(  # on two lines: on one it is wider than the column of a 1280 px screen
        r"\begin{aligned}"
        r"\text{base}' &= \text{base}\cdot s_{\text{eff}}^{\,d/(d-2)},\\"
        r"s_{\text{eff}} &= \text{factor}\cdot\frac{L}{L_{\max}} - (\text{factor}-1)"
        r" = 1 + \text{factor}\,\Bigl(\frac{L}{L_{\max}} - 1\Bigr),\quad L \ge L_{\max}"
        r"\end{aligned}"
    )
    with errors_shown("setting"):
        views.draw(rope_views.dynamic_growth(factor, original, current))


def models_hint(text: str) -> None:
    """A config that sets positions differently for different layers (Gemma 3, OLMo 3, Llama 4, ...), which this tab
    reads as one setting or refuses: a pointer to the Models page, which reads every layer, with this config."""
    try:
        groups = cache.model_positions(text).summary()
    except ValueError:
        return
    if len(groups) > 1:
        st.info(t("rope.cfg.models"), icon=":material/layers:")
        st.page_link(
            menu.page("models"),
            label=t("rope.cfg.models.link"),
            icon=":material/arrow_forward:",
            query_params={"from": "paste", "cfg": text},
        )


@fragment
def config_explorer():
    st.subheader(t("rope.cfg.header"))
    unused_controls(t("param.n_positions"), t("param.head_dim"), t("param.base"), reason=t("rope.unused.config"))
    st.markdown(t("rope.cfg.intro"))
    names = list(rope_configs.PRESETS)
    preset = CTL.radio(
        "preset",
        names,
        "llama3_1_8b",
        names=lambda name: t(f"models.preset.{name}"),
        aliases=rope_configs.PRESET_ALIASES,
    )
    if "cfg" not in st.session_state:  # a link carries an edited config.json as ?cfg=..., a preset as ?preset=...
        st.session_state["cfg"] = st.query_params.get("cfg") or rope_configs.preset_text(preset)
        st.session_state["cfg_preset"] = preset
    elif st.session_state.get("cfg_preset") != preset:
        st.session_state["cfg"] = rope_configs.preset_text(preset)
        st.session_state["cfg_preset"] = preset
    text = st.text_area(t("rope.ctl.cfg"), key="cfg", height=260, help=t("rope.ctl.cfg.help"))
    if text.strip() == rope_configs.preset_text(preset).strip():
        st.query_params.pop("cfg", None)
    else:
        st.query_params["cfg"] = text
    models_hint(text)
    with errors_shown("config"):
        views.draw(rope_views.config(text))


def rotation(n, head_dim, base):
    views.draw(rope_views.angle_table(n, head_dim, base))
    animation(head_dim, base)


intro("rope")
with controls():
    c1, c2, c3 = st.columns(3)
    with c1:
        n = widgets.number(FAMILY.param("n_positions"), key="n", maximum=2048)
    with c2:
        head_dim = widgets.number(FAMILY.param("head_dim"), key="head_dim", maximum=512)
    with c3:
        base = widgets.log_number(FAMILY.param("base"), key="base")
valid = False
with errors_shown("setting"):
    rope_views.check(head_dim, base)
    valid = True
DRAW = {
    "rotation": functools.partial(rotation, n, head_dim, base),
    "scores": functools.partial(scores, n, head_dim, base),
    "decay": functools.partial(decay, head_dim, base),
    "layouts": functools.partial(layouts, base),
    "partial": functools.partial(partial, n, head_dim, base),
    "extension": functools.partial(extension, head_dim, base),
    "config": config_explorer,
}
if not valid:  # the error above names the bad size; only the config.json tab has its own inputs
    DRAW = {code: draw if code == "config" else st.empty for code, draw in DRAW.items()}
lazy_tabs("rope", DRAW)  # only the open tab computes
