"""Every use of Streamlit's private internals, in one place, each where no public API does the job.

Streamlit's public API has no session id, no list of the widgets a run has drawn, and no way to read or forget the
page path the browser asked for. The few things the app needs of those are read here, through
functions with plain signatures; ``tests/app/test_internals.py`` checks each against the installed Streamlit, so
that a release which moves one fails those tests by name instead of breaking a page quietly.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

#: The widget elements ``widgets_sent`` collects (the element's field name in Streamlit's protocol).
WIDGET_KINDS = ("number_input", "slider", "radio", "selectbox", "checkbox", "text_input", "multiselect", "button_group")


def _ctx():
    return get_script_run_ctx(suppress_warning=True)


def session_id() -> str | None:
    """The id of the session this run belongs to (the one the browser sends back when it reconnects); None outside
    a script run."""
    ctx = _ctx()
    return None if ctx is None else ctx.session_id


def widget_keys_this_run() -> frozenset[str]:
    """The user keys of the widgets created so far in this run (Streamlit keeps them to refuse duplicates)."""
    ctx = _ctx()
    return frozenset() if ctx is None else frozenset(ctx.shared.widget_user_keys_this_run.snapshot())


def widget_states() -> dict[str, Any]:
    """Widget id -> its serialized state (a ``WidgetState``: the value as the browser shows it), for this session."""
    ctx = _ctx()
    return {} if ctx is None else {state.id: state for state in ctx.session_state.get_widget_states()}


@contextlib.contextmanager
def widgets_sent() -> Iterator[list[tuple[str, Any]]]:
    """Collect the widget elements sent to the browser inside the block, in page order, as ``(kind, proto)``: every
    element a run draws passes through the session's script-run context, where the block reads it on its way out."""
    ctx = _ctx()
    drawn: list[tuple[str, Any]] = []
    if ctx is None:
        yield drawn
        return
    own = ctx.__dict__.get("enqueue")  # an instance attribute already set (nested blocks), else the method
    send = ctx.enqueue

    def spy(msg):
        if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
            kind = msg.delta.new_element.WhichOneof("type")
            if kind in WIDGET_KINDS:
                drawn.append((kind, getattr(msg.delta.new_element, kind)))
        send(msg)

    ctx.enqueue = spy
    try:
        yield drawn
    finally:
        if own is None:
            ctx.__dict__.pop("enqueue", None)
        else:
            ctx.enqueue = own


def requested_page_name() -> str:
    """The URL path the browser asked this run for (``nosuchpage`` for ``/nosuchpage``), "" for the root, for a page
    picked by its id (the menu, ``st.page_link``) and outside a script run."""
    ctx = _ctx()
    return "" if ctx is None else ctx.pages_manager.intended_page_name or ""


def forget_requested_page_name() -> None:
    """Let ``st.navigation`` run its default page as if the root had been asked for: it says nothing of a path it
    does not know (Streamlit would open its own "Page not found" dialog, in English whatever the page's language;
    the caller says it instead)."""
    ctx = _ctx()
    if ctx is not None:
        manager = ctx.pages_manager
        manager.set_script_intent(manager.intended_page_script_hash or "", "")


def in_column() -> bool:
    """Whether what is drawn now goes into a column of ``st.columns`` (at any depth): a figure beside another one."""
    from streamlit.delta_generator_singletons import context_dg_stack

    innermost = context_dg_stack.get()[-1]._active_dg
    return "column" in tuple(innermost._ancestor_block_types)


def in_fragment_rerun() -> bool:
    """Whether this run reruns fragments only (a widget inside one changed, or its ``run_every`` came), not the
    whole script; False outside a script run."""
    ctx = _ctx()
    return ctx is not None and bool(ctx.fragment_ids_this_run)
