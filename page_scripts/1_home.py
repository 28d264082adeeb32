"""Home: why a Transformer needs positions (a sentence and its shuffle through one attention head), a first
lesson's tour, the map of the families and the other tools."""

import streamlit as st

import posviz
from posviz.lessons import attention_demo as demo
from posviz.ui import controls, current_language, errors_shown, intro, menu, t, views, widgets
from posviz.ui.views import home as home_views

OWN = "own"
#: The example sentence a visitor sees first, in the language of the page.
FIRST_EXAMPLE = {"en": "dog", "zh": "zh_dog"}
#: What the box of one's own sentence holds at first.
OWN_DEFAULT = {"en": "time flies like an arrow", "zh": "光阴似箭，日月如梭"}
#: The first lesson: (step, page key, query parameters that open the right view).
TOUR = (
    ("demo", "home", {"pe": "true"}),
    ("table", "sinusoidal", None),
    ("distance", "sinusoidal", {"tab": "distance"}),
    ("shift", "sinusoidal", {"tab": "shift"}),
    ("rope", "rope", None),
    ("alibi", "alibi", None),
    ("compare", "compare", None),
)

CTL = widgets.Controls("home")
#: Pages beyond the families.
TOOLS = ("inspect", "models", "lab", "compare", "pitfalls", "claims")


def first_example() -> str:
    """The example shown until the user picks one: the current language's. A language switch moves an untouched
    choice (the other language's first example, which a link does not name) to the new language's."""
    first = FIRST_EXAMPLE[current_language()]
    if st.session_state.get("ex") in set(FIRST_EXAMPLE.values()) - {first} and "ex" not in st.query_params:
        st.session_state["ex"] = first
    return first


def sentence_controls() -> tuple[str, int, bool, bool, bool]:
    left, right = st.columns([3, 2])
    with left:
        example = CTL.radio(
            "ex",
            [*demo.EXAMPLES, OWN],
            first_example(),
            text="example",
            names=lambda code: demo.EXAMPLES.get(code) or t("home.ctl.own"),
            horizontal=False,
        )
        sentence = demo.EXAMPLES.get(example)
        if sentence is None:
            sentence = st.text_input(
                t("home.ctl.text"),
                OWN_DEFAULT[current_language()],
                key="text",
                bind="query-params",
                help=t("home.ctl.text.help", max=demo.MAX_TOKENS),
            )
    with right:
        seed = CTL.numeric("seed", 0, 9999, 0, slider=False)
        positions = CTL.toggle("pe", False)
        causal = CTL.toggle("causal", False)
        back = CTL.toggle("back", False)
    return sentence, int(seed), positions, causal, back


def shuffle_section(sentence: str, seed: int, positions: bool, causal: bool, back: bool) -> None:
    views.draw(home_views.attention(sentence, seed, positions, causal, back))
    views.draw(home_views.distance(sentence, seed, positions, causal))


def tour() -> None:
    for number, (code, key, query) in enumerate(TOUR, start=1):
        st.markdown(t("home.tour.step", number=number, text=t(f"home.tour.{code}")))
        st.page_link(
            menu.page(key), label=t(f"home.tour.{code}.link"), icon=":material/arrow_forward:", query_params=query
        )


def family_link(fam) -> dict | None:
    """The query that opens ``fam`` on its page: a page that teaches several families (Relative: Shaw and T5) has
    a tab per family, whose code is the family's key."""
    shared = sum(other.page == fam.page for other in posviz.FAMILIES.values()) > 1
    return {"tab": fam.key} if shared else None


def families() -> None:
    columns = st.columns(3)
    for i, fam in enumerate(posviz.FAMILIES.values()):
        with columns[i % 3].container(border=True):
            st.page_link(
                menu.page(fam.page),
                label=t(f"family.{fam.key}.name"),
                icon=":material/arrow_forward:",
                query_params=family_link(fam),
            )
            st.caption(t(f"family.{fam.key}.summary"))
            st.caption(f"{t('home.enters', how=t(f'enters.{fam.enters}'))} · {fam.paper}")


def tools() -> None:
    columns = st.columns(3)
    for i, name in enumerate(TOOLS):
        with columns[i % 3].container(border=True):
            st.page_link(menu.page(name), label=t(f"page.{name}"), icon=":material/arrow_forward:")
            st.caption(t(f"home.more.{name}"))


intro("home")
st.subheader(t("home.demo"))
st.markdown(t("home.demo.how"))
st.latex(  # on two lines: on one it is wider than the column of a 1280 px screen
    r"\begin{gathered}"
    r"\mathrm{Attn}(PX) = P\,\mathrm{Attn}(X) \qquad \mathrm{Attn}(PX + PE) \neq P\,\mathrm{Attn}(X + PE)\\"
    r"\mathrm{Attn}_{\text{causal}}(PX) \neq P\,\mathrm{Attn}_{\text{causal}}(X)"
    r"\end{gathered}"
)
with controls():
    choice = sentence_controls()
with errors_shown("sentence"):
    shuffle_section(*choice)
st.subheader(t("home.tour"))
tour()
st.subheader(t("home.families"))
families()
st.subheader(t("home.more"))
tools()
