"""Where the Models page's config.json comes from: a preset, the box it starts from (kept in the link), an uploaded
file, a model folder or a model of the local Hugging Face cache; and its text, checked as transformers reads it."""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

from posviz import checkpoint as ckpt
from posviz import models

from .. import cache, model_sources, t, widgets

SOURCES = ("preset", "paste", "upload", "path", "cache")
#: What a source gives, for the first words of an error about it (``errors_shown``).
ERROR_KIND = {"preset": "config", "paste": "config", "upload": "config", "path": "path", "cache": "cached"}
DEFAULT_MODEL = "llama4_scout"
#: The longest pasted config.json kept in the link (a published config is a few kB, Phi-3.5's about 7 kB).
LINK_CHARS = 64_000


def preset_name(name: str) -> str:
    """The preset's name as the page shows it (``models.preset.<name>``)."""
    return t(f"models.preset.{name}")


def pick_preset(default: str, label_key: str, *, key: str) -> str:
    """A preset chosen in a selector kept in the link as ``key``, labelled ``label_key`` (with its ``.help``)."""
    return widgets.url_select(
        t(label_key),
        list(models.PRESETS),
        key=key,
        default=default,
        format_func=preset_name,
        help=t(f"{label_key}.help"),
    )


def pasted(name: str) -> str:
    """The config box, starting from the preset ``name`` (or from a link's ``?cfg=``, read once per link); an edited
    config is written back to the link while it fits there."""
    given = st.query_params.get("cfg")
    if given and given != st.session_state.get("models.cfg_link"):
        st.session_state["cfg"] = given
        st.session_state["models.cfg_link"] = given
        st.session_state["models.cfg_preset"] = name
    elif "cfg" not in st.session_state or st.session_state.get("models.cfg_preset") != name:
        st.session_state["cfg"] = cache.model_preset_text(name)
        st.session_state["models.cfg_preset"] = name
    text = st.text_area(t("models.ctl.cfg"), key="cfg", height=220, help=t("models.ctl.cfg.help"))
    if text.strip() == cache.model_preset_text(name).strip():
        st.query_params.pop("cfg", None)
    elif len(text) > LINK_CHARS:  # a browser, and Streamlit, would drop the whole query string
        st.query_params.pop("cfg", None)
        st.caption(t("models.cfg.unlinked", n=f"{LINK_CHARS:,}"))
    else:
        st.query_params["cfg"] = text
    return text


def pick_config() -> tuple[str | None, str, str]:
    """The config chosen with the source controls: ``(config text or path, its name, source)``; the text is None
    while nothing is given."""
    source = widgets.Controls("models").radio("from", list(SOURCES), "preset")
    if source == "preset":
        name = pick_preset(DEFAULT_MODEL, "models.ctl.model", key="model")
        return cache.model_preset_text(name), preset_name(name), source
    if source == "paste":
        return pasted(pick_preset(DEFAULT_MODEL, "models.ctl.start", key="model")), t("models.name.pasted"), source
    if source == "upload":
        upload = st.file_uploader(t("models.ctl.upload"), type=["json"], key="upload", help=t("models.ctl.upload.help"))
        if upload is None:
            return None, "", source
        return upload.getvalue().decode("utf-8", errors="replace"), t("models.name.uploaded"), source
    if source == "path":
        return model_sources.typed_path("models", "~/models/Qwen3-8B") or None, t("models.name.folder"), source
    chosen = model_sources.cached_model(t("models.ctl.cached"), key="cached")
    return (None, "", source) if chosen is None else (*chosen, source)


def config_text(config: str, source: str) -> str:
    """The text of the chosen config, read as transformers reads it (``cache.model_positions``: a config it refuses
    raises its ``ValueError`` here): its text as it is, or for a folder (typed, or of the cache) the config.json the
    checkpoint inspector reads there (``checkpoint.load_model_config``: a sentence-transformers folder's Transformer
    module, or the folder holding a model file)."""
    if source in ("path", "cache"):
        found = ckpt.load_model_config(str(Path(config).expanduser()))
        if found is None:
            raise ValueError(t("models.no_config", path=config))
        config = json.dumps(found)
    cache.model_positions(config)
    return config
