"""What the Models page says beside its views: the config keys transformers ignores, as a note with its icon (the
sentence is ``views.models_words.ignored_sentence``)."""

from __future__ import annotations

import streamlit as st

from posviz.models import ModelPositions

from ..views import models_words


def ignored_notice(found: ModelPositions) -> None:
    """The config's keys that transformers ignores, each with why, when there are any."""
    sentence = models_words.ignored_sentence(found)
    if sentence is not None:
        st.info(sentence, icon=":material/info:")
