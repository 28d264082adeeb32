"""Bad input shows a readable st.error with the core's message, never a traceback; the rest of the page stays. The
message starts with what was wrong with what the user gave: a file cannot be read, a typed order cannot be used, a
setting cannot be drawn; every kind is checked where the app really shows it."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import posviz
from posviz.encodings import xlnet
from posviz.models import rope_configs
from posviz.ui import INPUT_KINDS

from ._support import LANGS, TIMEOUT, assert_clean, assert_matrix, catalog, figures, heatmap_z, open_page, tr


def core_message(func, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as info:
        func(*args, **kwargs)
    return str(info.value)


def lead(lang: str, kind: str) -> str:
    """The words before the core's message in an error about ``kind``."""
    return tr(lang, f"error.input.{kind}", message="")


def only_error(at) -> str:
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    return errors[0]


# ----------------------------------------------------------------------------------------------- the sentences


@pytest.mark.parametrize("lang", LANGS)
def test_every_kind_of_input_has_its_own_first_words(lang):
    """Each kind says what the user gave, in both languages; no two kinds share their first words, and only a
    setting is said to be a setting (the old message called a text file "this setting")."""
    leads = {kind: lead(lang, kind) for kind in INPUT_KINDS}
    assert len(set(leads.values())) == len(INPUT_KINDS), leads
    setting = {"en": "setting", "zh": "设置"}[lang]
    assert [kind for kind, text in leads.items() if setting in text] == ["setting"], leads
    named = {"file": ("file", "文件"), "order": ("order", "顺序"), "config": ("config.json", "config.json"),
             "sentence": ("sentence", "句子"), "path": ("path", "路径"), "table": ("table", "表")}  # fmt: skip
    for kind, words in named.items():
        assert words[LANGS.index(lang)] in leads[kind], (kind, leads[kind])
    assert {key.removeprefix("error.input.") for key in catalog(lang) if key.startswith("error.input.")} == set(
        INPUT_KINDS
    )


def _errors_shown_script(kind: str, error: str) -> None:
    import streamlit as st

    from posviz.ui import errors_shown

    with errors_shown(kind):
        st.write("before")
        if error == "value":
            raise ValueError("head_dim must be even; got 7")
        if error == "index":
            raise IndexError("position 9 is outside the learned table")
        raise TypeError("a programming error")
    st.write("after")


@pytest.mark.parametrize("kind", INPUT_KINDS)
@pytest.mark.parametrize(
    ("error", "message"),
    [("value", "head_dim must be even; got 7"), ("index", "position 9 is outside the learned table")],
)
def test_errors_shown_names_what_was_wrong(kind, error, message):
    at = AppTest.from_function(_errors_shown_script, args=(kind, error), default_timeout=TIMEOUT)
    at.run()
    assert only_error(at) == tr("en", f"error.input.{kind}", message=message)
    assert [m.value for m in at.markdown] == ["before", "after"]  # the script goes on after the block


def test_errors_shown_does_not_hide_programming_errors():
    at = AppTest.from_function(_errors_shown_script, args=("setting", "type"), default_timeout=TIMEOUT)
    at.run()
    assert not at.error
    assert len(at.exception) == 1  # its text is redacted (.streamlit/config.toml: showErrorDetails = "none")
    assert [m.value for m in at.markdown] == ["before"]


def _unknown_kind_script() -> None:
    from posviz.ui import errors_shown

    with errors_shown("thing"):
        raise ValueError("never shown")


def test_a_call_site_must_say_what_the_input_is():
    """A kind the catalog has no sentence for is a programming error, not a message for the student."""
    at = AppTest.from_function(_unknown_kind_script, default_timeout=TIMEOUT)
    at.run()
    assert not at.error and len(at.exception) == 1


# ------------------------------------------------------------------------------------- where the app shows them


@pytest.mark.parametrize(
    ("controls", "kwargs"),
    [
        # 128 buckets leave an exact region of 32 positions per side, which a max distance of 16 cannot exceed
        ({"t5_buckets": 128, "t5_max_distance": 16}, dict(num_buckets=128, max_distance=16, bidirectional=True)),
        ({"t5_buckets": 64, "t5_max_distance": 16}, dict(num_buckets=64, max_distance=16, bidirectional=True)),
    ],
    ids=["exact-region-32", "exact-region-16"],
)
def test_t5_settings_that_cannot_work_show_an_error(controls, kwargs):
    """Reachable with the sliders: the T5 tab shows the core's reason as a setting's, and the Shaw tab still draws."""
    at = open_page("relative", query={"tab": "t5"})
    for key, value in controls.items():
        at.slider(key=key).set_value(value)
    at.run()
    message = core_message(posviz.t5_bucket_matrix, 64, 64, **kwargs)
    assert only_error(at) == tr("en", "error.input.setting", message=message)
    assert not figures(at)  # nothing half-drawn under the message
    at.slider(key="t5_buckets").set_value(32)
    at.slider(key="t5_max_distance").set_value(128)
    at.run()
    assert not at.error and len(figures(at)) == 4  # back to a drawable setting: matrix, curve, sizes, bias
    at.session_state["tab"] = tr("en", "relative.shaw")
    at.run()
    assert not at.error
    assert_matrix(heatmap_z(figures(at)[0]), posviz.shaw_relative_index(32, 32, 8))


def test_odd_head_dim_from_the_url_is_named_and_the_page_stays():
    """The slider steps by 2 but a hand-edited URL can say head_dim=7: the control takes only even values, so the
    link's notice names it, the default is drawn and the page stays RoPE; typed into the box, 7 goes to the nearest
    even value with a message under the box."""
    at = open_page("rope", query={"head_dim": "7"})
    assert_clean(at)
    assert [t.value for t in at.title] == [tr("en", "page.rope")]
    assert at.slider(key="head_dim").value == 64
    assert [t.value for t in at.toast] == [tr("en", "link.ignored", values="head_dim=7")]
    at.number_input(key="head_dim.exact").set_value(7).run()
    assert_clean(at)
    used = at.slider(key="head_dim").value
    assert used in (6, 8) and at.query_params["head_dim"] == str(used)
    said = tr("en", "number.grid", given="7", value=str(used), step="2")
    assert said in [c.value.removeprefix(":orange[").removesuffix("]") for c in at.caption]


def test_error_is_shown_in_the_chosen_language():
    at = open_page("relative", query={"t5_buckets": "128", "t5_max_distance": "16", "tab": "t5"}, lang="zh")
    message = core_message(posviz.t5_bucket_matrix, 64, 64, num_buckets=128, max_distance=16)
    assert message == tr("en", "core.t5.exact_region", max_distance=16, exact=32)  # the core speaks English
    said = tr("zh", "core.t5.exact_region", max_distance=16, exact=32)  # the page, the chosen language
    assert only_error(at) == tr("zh", "error.input.setting", message=said)
    assert only_error(at).startswith("这组设置无法绘制：")


@pytest.mark.parametrize("lang", LANGS)
def test_a_text_file_is_a_file_that_could_not_be_read(lang):
    """The issue's example: a text file uploaded to the inspector is not "a setting"."""
    data = b"These are my lecture notes, not a model.\n"
    at = open_page("inspect", lang=lang)
    at.file_uploader(key="upload").set_value(("notes.txt", data, "text/plain")).run()
    with pytest.raises(posviz.CheckpointError) as info:
        posviz.load_position_embeddings(data, name="notes.txt")
    assert only_error(at) == tr(lang, "error.input.file", message=str(info.value))
    assert not only_error(at).startswith(lead(lang, "setting"))
    assert not figures(at)


def test_a_mistyped_path_is_a_path_that_could_not_be_read(tmp_path):
    missing = tmp_path / "bert-base-uncased"
    at = open_page("inspect", query={"from": "path", "path": str(missing)})
    assert only_error(at) == tr("en", "error.input.path", message=f"{missing} does not exist")


def test_a_broken_cached_model_is_named_as_the_cached_one(tmp_path, monkeypatch):
    snapshot = tmp_path / "hub" / "models--tiny--broken" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all")
    (tmp_path / "hub" / "models--tiny--broken" / "refs").mkdir()
    (tmp_path / "hub" / "models--tiny--broken" / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    at = open_page("inspect", query={"from": "cache"})
    with pytest.raises(posviz.CheckpointError) as info:
        posviz.load_position_embeddings(str(snapshot))
    assert only_error(at) == tr("en", "error.input.cached", message=str(info.value))


def test_a_table_too_short_for_the_probe_is_the_table_that_cannot_be_analysed():
    """An 8-row table loads and draws, but the probe's five folds need ten positions: said about the table."""
    table = np.random.default_rng(8).normal(size=(8, 4))
    buffer = io.BytesIO()
    np.save(buffer, table)
    at = open_page("inspect", query={"tab": "probe"})
    at.file_uploader(key="upload").set_value(("short.npy", buffer.getvalue(), "application/octet-stream")).run()
    message = core_message(posviz.position_probe, table)
    assert only_error(at) == tr("en", "error.input.table", message=message)


@pytest.mark.parametrize("lang", LANGS)
def test_a_typed_order_that_is_not_a_permutation_is_an_order(lang):
    at = open_page("xlnet", query={"order": "0,2"}, lang=lang)
    message = core_message(xlnet.parse_order, "0,2", 32)
    values = {"n": 2, "last": 1, "missing": 1, "largest": 2}
    assert message == tr("en", "core.xlnet.order.missing", **values)
    assert only_error(at) == tr(lang, "error.input.order", message=tr(lang, "core.xlnet.order.missing", **values))
    assert only_error(at).startswith({"en": "This order cannot be used: ", "zh": "这个顺序无法使用："}[lang])


def test_a_broken_config_is_the_config_that_cannot_be_used():
    text = json.dumps({"head_dim": 63})
    at = open_page("rope", query={"tab": "config", "cfg": text})
    message = core_message(rope_configs.config_frequencies, text)
    assert only_error(at) == tr("en", "error.input.config", message=message)


def test_a_sentence_of_one_token_is_the_sentence_that_cannot_be_used():
    at = open_page("home", query={"ex": "own", "text": "狗"}, lang="zh")
    assert only_error(at) == tr("zh", "error.input.sentence", message=tr("zh", "core.home.single_token", token="'狗'"))


def test_an_unexpected_error_is_a_message_and_the_app_frame_stays(monkeypatch):
    """The last net in app.py: an exception no page expected becomes a sentence, not a traceback."""
    import posviz.encodings.xlnet as xlnet_module

    def broken(*args, **kwargs):
        raise RuntimeError("the order could not be drawn")

    monkeypatch.setattr(xlnet_module, "factorisation_order", broken)  # the XLNet views call the core itself
    at = open_page("xlnet", query={"len": "11", "seed": "913"})  # settings no earlier test has cached
    assert not at.exception
    message = tr("en", "error.unexpected", kind="RuntimeError", message="the order could not be drawn")
    assert message in [e.value for e in at.error]
    assert [r.key for r in at.sidebar.radio] == ["lang"]  # the frame (language switch, navigation) is intact
