"""A model on this machine, named the way the checkpoint inspector and the Models page both let the user name one:
a typed path to a file or folder, or a model of the local Hugging Face cache.

Both read only inside the folders the server's owner allowed (``checkpoint.read_roots``: ``POSVIZ_READ_ROOTS``, else
the user's model cache and home on a server that listens on loopback only, else nothing), and a refusal is one
sentence that names no path, so a visitor cannot learn what exists on the server."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from posviz import checkpoint as ckpt

from .i18n import t


def read_roots() -> tuple[Path, ...]:
    """The folders this server may read under: ``checkpoint.read_roots`` for the address it listens on."""
    return ckpt.read_roots(st.get_option("server.address"))


def typed_path(page: str, placeholder: str, key: str = "path") -> str:
    """The path typed in the box labelled ``<page>.ctl.path`` (with its help), resolved and checked against the read
    roots; "" while the box is empty or when the path is refused, with the refusal shown under the box. The typed
    path is kept in the link as ``key`` only when it was allowed. With no read root there is no box, only the
    sentence that says so."""
    roots = read_roots()
    if not roots:
        st.query_params.pop(key, None)
        st.info(t("source.not_allowed"))
        return ""
    given = st.query_params.get(key)
    opened = f"{page}.{key}.link"  # a link's path is put in the box once, then the box is the user's
    if given and given != st.session_state.get(opened):
        st.session_state[key] = given
        st.session_state[opened] = given
    typed = st.text_input(
        t(f"{page}.ctl.path"), key=key, placeholder=placeholder, help=t(f"{page}.ctl.path.help")
    ).strip()
    try:
        path = ckpt.allowed_path(typed, roots) if typed else None
    except ckpt.PathNotAllowed:
        path = None
        st.error(t("source.refused"))
    if path is None:
        st.query_params.pop(key, None)
        return ""
    st.query_params[key] = typed
    st.session_state[opened] = typed
    return str(path)


def cached_model(label: str, key: str) -> tuple[str, str] | None:
    """A model of the local Hugging Face cache, chosen in a selector labelled ``label`` and kept in the link as
    ``key``: ``(its folder, its name)``; None when the cache holds none, with a note saying where it was looked for,
    or when the read roots do not hold the cache, with the sentence that says so. The cache is listed anew on every
    run, so a new download shows up."""
    roots = read_roots()
    try:
        folder = ckpt.allowed_path(ckpt.hf_cache_dir(), roots)
    except ckpt.PathNotAllowed as exc:
        st.query_params.pop(key, None)
        st.info(t("source.not_allowed" if isinstance(exc, ckpt.ReadingNotAllowed) else "source.cache_not_allowed"))
        return None
    found = [model for model in ckpt.list_cached_models(folder) if _allowed(model.path, roots)]
    if not found:
        st.info(t("inspect.cache.empty", folder=str(ckpt.hf_cache_dir())))
        return None
    names = [m.name for m in found]
    name = st.selectbox(label, names, key=key, bind="query-params")
    return str(found[names.index(name)].path), name


def _allowed(path: Path, roots: tuple[Path, ...]) -> bool:
    """Whether a cached model's snapshot folder, its symlinks resolved, is inside the read roots."""
    try:
        ckpt.allowed_path(path, roots)
    except ckpt.PathNotAllowed:
        return False
    return True
