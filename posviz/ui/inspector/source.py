"""Where the inspector's table comes from: the source controls (an upload, a typed path, a model of the local Hugging
Face cache), loading the table through the cache, its summary, and the links that hand it to the other pages."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from posviz import checkpoint as ckpt

from .. import cache, menu, model_sources, session_tables, t, widgets
from . import usage

ORIGINS = ("upload", "path", "cache")
UPLOAD_MB = ckpt.MAX_UPLOAD_BYTES >> 20
LEARNED_SESSION = "session:"  # the Learned page's option code for a session table


class Loaded:
    """A loaded table as the views take it, named by the checkpoint's content digest and the tensor: ``ref`` its
    real positions (rows ``offset`` onwards), ``stored`` every stored row."""

    def __init__(self, digest: str, found: ckpt.PositionTable, name: str):
        self.found, self.name = found, name
        self.table = found.table
        self.ref = cache.Table.content(found.table, digest=f"{digest}:{found.key}")
        self.stored = cache.Table.content(found.matrix, digest=f"{digest}:{found.key}:stored")

    @property
    def label(self) -> str:
        return f"{self.name} · {self.found.key}"


def pick_source(suffix: str = "") -> tuple | None:
    """The model chosen with the source controls: ``(source, name, kind)``, or None while nothing is chosen; ``kind``
    says what the user gave ("file", "path" or "cached"), for the first words of an error about it. ``suffix`` follows
    the controls' keys (a second set for the compare tab)."""
    origin = widgets.url_radio(
        t("inspect.ctl.origin"),
        list(ORIGINS),
        key=f"from{suffix}",
        default="upload",
        format_func=lambda o: t(f"inspect.origin.{o}"),
        horizontal=True,
    )
    if origin == "upload":
        upload = st.file_uploader(
            t("inspect.ctl.upload"),
            key=f"upload{suffix}",
            max_upload_size=UPLOAD_MB,
            help=t("inspect.ctl.upload.help", mb=UPLOAD_MB),
        )
        # Streamlit's uploader refuses a larger file in the browser, before the page can see it: say the limit and
        # the way round it here, where the refusal appears
        st.caption(
            t("inspect.upload.limit", mb=UPLOAD_MB, path=t("inspect.origin.path"), cache=t("inspect.origin.cache"))
        )
        return (upload.getvalue(), upload.name, "file") if upload is not None else None
    if origin == "path":
        path = model_sources.typed_path("inspect", "~/models/bert-base-uncased", key=f"path{suffix}")
        return (path, path, "path") if path else None
    chosen = model_sources.cached_model(t("inspect.ctl.cached"), key=f"model{suffix}")
    return None if chosen is None else (*chosen, "cached")


def load(chosen: tuple, *, key: str | None) -> Loaded | None:
    """Load the position table of ``chosen`` (``pick_source``'s answer); with ``key``, the URL key of a selector that
    lets the user pick any candidate tensor (None: no selector).

    A RoPE model has no table: its frequencies and their usage are shown instead (``usage``), and None is returned."""
    source, name, _ = chosen
    digest = ckpt.fingerprint(source)
    candidates = cache.candidates(digest, source, name=name)
    try:
        _, found = cache.checkpoint(source, name=name)
    except ckpt.RopeModel as exc:
        usage.rope_model(exc)
        usage.frequency_usage(chosen, digest, has_weights=bool(candidates))
        return None
    except ckpt.NoPositionTable:
        if not candidates or key is None:
            raise
        found = None
    if key is not None:
        candidate_table(candidates)
        keys = [c.key for c in candidates]
        if found is None:
            st.info(t("inspect.pick"))
        tensor = st.selectbox(
            t("inspect.ctl.key"),
            keys,
            index=keys.index(found.key) if found is not None and found.key in keys else 0,
            key=key,
            bind="query-params",
            help=t("inspect.ctl.key.help"),
        )
        if found is None or tensor != found.key:
            _, found = cache.checkpoint(source, tensor, name=name)
    assert found is not None  # read above, or picked in the selector when no tensor is a known table
    return Loaded(digest, found, name)


def known_label(name: str | None) -> str:
    """The translated name of a known tensor family (the core names them in English), or "" for None."""
    suffix = {known.name: known.suffix for known in ckpt.KNOWN_KEYS}.get(name) if name is not None else None
    return t(f"inspect.known.{suffix}") if suffix else (name or "")


def candidate_table(candidates) -> None:
    """Every 2-D tensor of the file (``cache.candidates``): key, shape, dtype and known family, in an expander."""
    rows = {
        t("inspect.col.key"): [c.key for c in candidates],
        t("inspect.col.shape"): [" × ".join(map(str, c.shape)) for c in candidates],
        t("inspect.col.dtype"): [c.dtype for c in candidates],
        t("inspect.col.known"): [known_label(c.known) for c in candidates],
    }
    with st.expander(t("inspect.candidates", n=len(candidates))):
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def summary(loaded: Loaded) -> None:
    """What was loaded, in a sentence (tensor, shape, dtype, format, family), and the rows before the positions."""
    found = loaded.found
    st.markdown(
        t(
            "inspect.summary",
            tensor=found.key,
            rows=found.matrix.shape[0],
            dims=found.matrix.shape[1],
            dtype=found.dtype,
            format=found.format,
            known=known_label(found.known) or t("inspect.unknown"),
        )
    )
    if found.offset:
        st.info(t("inspect.offset", offset=found.offset, rows=found.matrix.shape[0], positions=loaded.table.shape[0]))


def hand_over(loaded: Loaded) -> None:
    """Leave the table in the session for the other pages, with a link that opens it there."""
    found = loaded.found
    tables = session_tables()
    if found.kind == "t5_bias":
        tables[loaded.label] = found.matrix
        st.page_link(
            menu.page("relative"),
            label=t("inspect.open.relative"),
            icon=":material/compare_arrows:",
            query_params={"tab": "t5"},
        )
    else:
        tables[loaded.label] = loaded.table
        st.page_link(
            menu.page("learned"),
            label=t("inspect.open.learned"),
            icon=":material/school:",
            query_params={"init": LEARNED_SESSION + loaded.label},
        )
