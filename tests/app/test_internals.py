"""The Streamlit internals the app reads (``posviz/ui/internals.py``) still mean what it expects, on the installed
Streamlit: a release that moves one fails here, by name. The torch allowlist the checkpoint loader reads is checked
in ``tests/core/test_checkpoint_internals.py``."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from posviz.ui import internals


def _script():
    import streamlit as st

    from posviz.ui import internals

    st.slider("a", 0, 10, 3, key="alpha")
    with internals.widgets_sent() as drawn:
        st.number_input("b", 0, 10, 4, key="beta")
        st.markdown("not a widget")
    st.selectbox("c", ["x", "y"], key="gamma")
    states = internals.widget_states()
    st.session_state["seen"] = {
        "session": internals.session_id(),
        "keys": sorted(internals.widget_keys_this_run()),
        "drawn": [(kind, proto.label) for kind, proto in drawn],
        "states": sorted(type(s).__name__ for s in states.values()),
    }


def test_the_internals_answer_inside_a_run():
    at = AppTest.from_function(_script).run()
    assert not at.exception
    seen = at.session_state["seen"]
    assert isinstance(seen["session"], str) and seen["session"]
    assert seen["keys"] == ["alpha", "beta", "gamma"]
    assert seen["drawn"] == [("number_input", "b")]  # only the block's widgets, and not the markdown
    at.slider(key="alpha").set_value(7).run()  # once the browser has sent values, each widget has a state
    assert at.session_state["seen"]["states"] == ["WidgetState"] * 3
    assert at.session_state["seen"]["session"] == seen["session"]  # the same session across runs


def test_outside_a_run_there_is_nothing_to_read():
    assert internals.session_id() is None
    assert internals.widget_keys_this_run() == frozenset()
    assert internals.widget_states() == {}
    with internals.widgets_sent() as drawn:
        pass
    assert drawn == []


def _navigation_script():
    import streamlit as st
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    from posviz.ui import internals

    ctx = get_script_run_ctx()
    ctx.pages_manager.set_script_intent("", st.session_state.get("ask", ""))
    st.session_state["asked"] = internals.requested_page_name()
    if st.session_state.get("forget"):
        internals.forget_requested_page_name()
    sent = []
    send = ctx.enqueue
    ctx.enqueue = lambda msg: (sent.append(msg.WhichOneof("type")), send(msg))
    home = st.Page(lambda: None, title="Home", url_path="home", default=True)
    page = st.navigation([home, st.Page(lambda: None, title="Other", url_path="other")])
    ctx.__dict__.pop("enqueue", None)
    st.session_state["ran"] = page.title
    st.session_state["not_found"] = "page_not_found" in sent


def test_the_requested_page_name_is_read_and_can_be_forgotten():
    """The name the browser asked for is what ``st.navigation`` resolves; forgotten, an unknown name runs the default
    page without Streamlit's own "Page not found"."""
    cases = (("nosuchpage", False, True, "Home"), ("nosuchpage", True, False, "Home"), ("other", False, False, "Other"))
    for ask, forget, not_found, ran in cases:
        at = AppTest.from_function(_navigation_script)
        at.session_state["ask"], at.session_state["forget"] = ask, forget
        at.run()
        assert not at.exception
        assert at.session_state["asked"] == ask and at.session_state["ran"] == ran
        assert at.session_state["not_found"] is not_found, (ask, forget)
    assert internals.requested_page_name() == ""
    internals.forget_requested_page_name()  # outside a run: nothing to forget, no error


def _column_script():
    import streamlit as st

    from posviz.ui import internals

    seen = {"top": internals.in_column()}
    left, _ = st.columns(2)
    with left:
        seen["column"] = internals.in_column()
        with st.container():
            seen["nested"] = internals.in_column()
    with st.expander("x"):
        seen["expander"] = internals.in_column()
    seen["after"] = internals.in_column()
    st.session_state["seen"] = seen


def test_in_column_knows_a_column_at_any_depth():
    at = AppTest.from_function(_column_script).run()
    assert not at.exception
    assert at.session_state["seen"] == {"top": False, "column": True, "nested": True, "expander": False, "after": False}


def _fragment_script():
    import streamlit as st

    from posviz.ui import internals

    st.session_state.setdefault("runs", [])

    @st.fragment
    def part():
        st.button("again", key="again")
        st.session_state["runs"].append(("fragment", internals.in_fragment_rerun()))

    st.session_state["runs"].append(("script", internals.in_fragment_rerun()))
    part()


def test_a_fragment_rerun_is_told_from_a_whole_run(monkeypatch):
    """A whole run, and the fragment called in it, are no fragment rerun; the fragment rerun alone (as a browser asks
    for when a widget inside it changes) is."""
    import functools

    import streamlit.testing.v1.local_script_runner as local_runner
    from streamlit.runtime.scriptrunner import RerunData

    fragments: set[str] = set()
    real = local_runner.LocalScriptRunner.run

    def run(runner, *args, **kwargs):
        tree = real(runner, *args, **kwargs)
        fragments.update(m.delta.fragment_id for m in runner.forward_msgs() if m.WhichOneof("type") == "delta")
        return tree

    monkeypatch.setattr(local_runner.LocalScriptRunner, "run", run)
    at = AppTest.from_function(_fragment_script).run()
    assert at.session_state["runs"] == [("script", False), ("fragment", False)]
    (fragment,) = fragments - {""}
    monkeypatch.setattr(local_runner, "RerunData", functools.partial(RerunData, fragment_id_queue=[fragment]))
    at.button(key="again").click().run()
    assert at.session_state["runs"][2:] == [("fragment", True)]
    assert internals.in_fragment_rerun() is False  # outside a run
