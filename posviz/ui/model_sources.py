"""A model on this machine, named the way the checkpoint inspector and the Models page both let the user name one:
a typed path to a file or folder, or a model of the local Hugging Face cache."""

from __future__ import annotations

import streamlit as st

from posviz import checkpoint as ckpt

from .i18n import t


def typed_path(page: str, placeholder: str, key: str = "path") -> str:
    """The path typed in the box labelled ``<page>.ctl.path`` (with its help), kept in the link as ``key``; "" while
    the box is empty."""
    return st.text_input(
        t(f"{page}.ctl.path"), key=key, bind="query-params", placeholder=placeholder, help=t(f"{page}.ctl.path.help")
    ).strip()


def cached_model(label: str, key: str) -> tuple[str, str] | None:
    """A model of the local Hugging Face cache, chosen in a selector labelled ``label`` and kept in the link as
    ``key``: ``(its folder, its name)``; None when the cache holds none, with a note saying where it was looked for.
    The cache is listed anew on every run, so a new download shows up."""
    found = ckpt.list_cached_models()
    if not found:
        st.info(t("inspect.cache.empty", folder=str(ckpt.hf_cache_dir())))
        return None
    names = [m.name for m in found]
    name = st.selectbox(label, names, key=key, bind="query-params")
    return str(found[names.index(name)].path), name
