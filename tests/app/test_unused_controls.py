"""A tab that does not use some of the controls at the top of its page says so, naming them as the controls do, and
only such a tab: moving a control it names changes nothing on it, and every control it does not name changes
something (a figure, a sentence) on it, or is one of the few that it reads but that provably change nothing there.

The second half is what finds every case: each top control of every tabbed page is moved on every tab."""

from __future__ import annotations

import json

import numpy as np
import pytest

import posviz

from ._support import LANGS, as_array, figures, open_page, tab_codes, tr, widget

#: The top controls of each tabbed page: URL key -> (catalog key of its label, another value for it).
CONTROLS = {
    "sinusoidal": {
        "n": ("param.n_positions", "64"),
        "d": ("param.d_model", "64"),
        "base": ("param.base", "100"),
        "layout": ("param.layout", "halves"),
    },
    "learned": {
        "init": ("learned.ctl.table", "sinusoidal"),
        "n": ("param.n_positions", "64"),
        "d": ("param.d_model", "64"),
        "std": ("param.std", "0.05"),
        "seed": ("param.seed", "3"),
    },
    "rope": {"n": ("param.n_positions", "64"), "head_dim": ("param.head_dim", "32"), "base": ("param.base", "100")},
    "alibi": {
        "heads": ("param.n_heads", "12"),
        "len": ("param.seq_len", "64"),
        "head": ("param.head", "3"),
        "causal": ("param.causal", "false"),
    },
    "pitfalls": {"n": ("param.n_positions", "96"), "d": ("param.d_model", "64"), "base": ("param.base", "100")},
}
#: (page, tab) -> the top controls the tab says it does not use, in the order it names them.
UNUSED = {
    ("sinusoidal", "frequencies"): ["layout"],
    ("sinusoidal", "layout"): ["n", "base", "layout"],
    ("sinusoidal", "precision"): ["n", "layout"],
    ("learned", "probe"): ["init"],
    ("rope", "decay"): ["n"],
    ("rope", "layouts"): ["n", "head_dim"],
    ("rope", "extension"): ["n"],
    ("rope", "config"): ["n", "head_dim", "base"],
    ("alibi", "origin"): ["len", "head", "causal"],
    ("alibi", "article"): ["heads", "len", "head", "causal"],
    ("alibi", "row"): ["head", "causal"],
    ("alibi", "long"): ["len", "head", "causal"],
    ("pitfalls", "zero"): ["base"],
    ("pitfalls", "shape"): ["n", "d", "base"],
    ("pitfalls", "rope"): ["d"],
    ("pitfalls", "alibi"): ["n", "d", "base"],
    ("pitfalls", "index"): ["n", "d", "base"],
    ("pitfalls", "float16"): ["n"],
}
#: Controls a tab reads but that provably change nothing it shows at the values moved here: dot products, norms and
#: principal components do not depend on the order of the columns; every row of the sinusoidal table has length
#: sqrt(d / 2) whatever the base; ALiBi's row stays at query 16 for any length above it; the probe does not depend on
#: the scale of a table, so on the spread of the random one.
INVARIANT = {
    ("sinusoidal", "distance"): {"layout"},
    ("sinusoidal", "projection"): {"layout"},
    ("sinusoidal", "norms"): {"base", "layout"},
    ("alibi", "row"): {"len"},
    ("learned", "probe"): {"std"},
}
CASES = [(page, tab) for page in CONTROLS for tab in tab_codes(page)]


def notice(lang: str, page: str, tab: str) -> str:
    labels = tr(lang, "list.sep").join(f"**{tr(lang, CONTROLS[page][key][0])}**" for key in UNUSED[page, tab])
    reason = tr(lang, f"{page}.unused.{tab}")
    return ":material/info: " + tr(lang, "controls.unused", controls=labels, reason=reason)


def opened(page: str, tab: str, **values):
    query = {} if tab == tab_codes(page)[0] else {"tab": tab}
    return open_page(page, query={**query, **values})


def shown(at) -> list:
    """What a view shows: every figure's data arrays and every sentence (markdown, captions, infos, metrics)."""
    arrays, texts = [], []
    for fig in figures(at):
        for trace in fig["data"]:
            for name in ("x", "y", "z", "source", "text"):
                if name in trace:
                    value = trace[name]
                    arrays.append(as_array(value) if isinstance(value, dict) else json.dumps(value))
    for kind in ("markdown", "caption", "info", "warning", "success", "code", "latex"):
        texts += [e.value for e in getattr(at, kind)]
    texts += [f"{m.label}={m.value}" for m in at.metric]
    return arrays + texts


def same(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
            if x.shape != y.shape or not np.allclose(x, y, rtol=1e-9, atol=1e-12, equal_nan=True):
                return False
        elif x != y:
            return False
    return True


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", list(CONTROLS))
def test_only_the_tabs_that_ignore_controls_say_so(page, lang):
    at = open_page(page, lang=lang)
    for key, (label, _) in CONTROLS[page].items():  # the notice names the controls as they are labelled
        assert widget(at, key).label == tr(lang, label), key
    for tab in tab_codes(page):
        at.session_state["tab"] = tr(lang, f"{page}.tab.{tab}")
        at.run()
        assert not at.exception, (tab, [e.value for e in at.exception])
        captions = [c.value for c in at.caption]
        lead = tr(lang, "controls.unused", controls="", reason="")[:6]
        said = [c for c in captions if c.startswith(":material/info: " + lead)]
        assert said == ([notice(lang, page, tab)] if (page, tab) in UNUSED else []), (tab, said)


@pytest.mark.parametrize(("page", "tab"), CASES, ids=[f"{p}-{t}" for p, t in CASES])
def test_a_tab_changes_with_every_control_it_does_not_name(page, tab):
    """Moving a control a tab names changes nothing on it; moving any other control changes what it shows."""
    reference = shown(opened(page, tab))
    unused = set(UNUSED.get((page, tab), ()))
    changed = {}
    for key, (_, value) in CONTROLS[page].items():
        at = opened(page, tab, **{key: value})
        assert not at.exception and not at.error, (key, [e.value for e in (*at.exception, *at.error)])
        changed[key] = not same(reference, shown(at))
    assert {key for key, moved in changed.items() if not moved} == unused | INVARIANT.get((page, tab), set())
    if unused:  # all of them at once too
        assert same(reference, shown(opened(page, tab, **{k: CONTROLS[page][k][1] for k in unused})))


COST_VALUES = {"cd": "1536", "ch": "24", "cl": "24"}


def cost_curves(at) -> dict:
    """Each family's curves on the Cost tab (left and right panel), by its name."""
    (fig,) = figures(at)
    curves = {}
    for trace in fig["data"]:
        curves.setdefault(trace["name"], []).append(as_array(trace["y"]))
    return curves


@pytest.mark.parametrize("lang", LANGS)
def test_each_cost_control_says_which_curves_it_moves(lang):
    """Compare → Cost: under each control, the families whose curves it moves, found here by moving it."""
    reference = cost_curves(open_page("compare", query={"tab": "cost"}, lang=lang))
    at = open_page("compare", query={"tab": "cost"}, lang=lang)
    captions = [c.value for c in at.caption]
    names = {tr(lang, f"family.{key}.name"): key for key in posviz.FAMILIES}
    for control, value in COST_VALUES.items():
        moved = cost_curves(open_page("compare", query={"tab": "cost", control: value}, lang=lang))
        families = [
            names[name]
            for name, curves in reference.items()
            if any(not np.array_equal(a, b) for a, b in zip(curves, moved[name], strict=True))
        ]
        assert families, control
        listed = tr(lang, "list.sep").join(tr(lang, f"family.{key}.name") for key in posviz.FAMILIES if key in families)
        assert tr(lang, "compare.cost.moves", families=listed) in captions, (control, families)
