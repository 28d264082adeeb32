"""The checkpoint inspector through AppTest: real model files written by transformers and torch, uploaded through
the file uploader or given as a path in the URL; every chart holds the loaded table's numbers; unsafe, corrupt
and odd files give a message and the page keeps working."""

from __future__ import annotations

import io
import json
import os
import pickle
from urllib.parse import parse_qs

import numpy as np
import pytest
import torch

import posviz
from posviz import analysis
from posviz.models import rope_configs
from posviz.pages import script
from posviz.ui import SESSION_TABLES

from ._support import (
    ROOT,
    as_array,
    assert_clean,
    assert_matrix,
    chart,
    charts,
    charts_by_key,
    figures,
    heatmap_z,
    open_page,
    title,
    tr,
    visit_tabs,
)

TABS = ["table", "similarity", "projection", "spectrum", "probe", "sinusoidal", "compare"]
OCTETS = "application/octet-stream"


def stored_table(at) -> dict:
    """The heatmap of the table the inspector found, by its title."""
    return chart(charts(at), "en", "inspect.table").fig


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Tiny randomly initialised models saved by transformers: name -> (folder, position table as float64)."""
    import transformers as tf

    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("models")
    made = {
        "gpt2": tf.GPT2LMHeadModel(tf.GPT2Config(n_embd=32, n_layer=1, n_head=2, n_positions=64, vocab_size=50)),
        "opt": tf.OPTForCausalLM(
            tf.OPTConfig(
                hidden_size=16, ffn_dim=20, num_hidden_layers=1, num_attention_heads=2, vocab_size=50,
                max_position_embeddings=40, word_embed_proj_dim=16,
            )
        ),
        "t5": tf.T5Model(tf.T5Config(d_model=16, d_kv=8, d_ff=20, num_layers=1, num_heads=3, vocab_size=50)),
    }  # fmt: skip
    tables = {
        "gpt2": made["gpt2"].transformer.wpe.weight,
        "opt": made["opt"].model.decoder.embed_positions.weight,
        "t5": made["t5"].encoder.block[0].layer[0].SelfAttention.relative_attention_bias.weight,
    }
    out = {}
    for name, model in made.items():
        model.save_pretrained(root / name)
        out[name] = (root / name, tables[name].detach().double().numpy())
    llama = root / "llama"  # a RoPE model: config only, no table
    llama.mkdir()
    (llama / "config.json").write_text(json.dumps({**rope_configs.PRESETS["llama2_7b"], "model_type": "llama"}))
    out["llama"] = (llama, None)
    return out


def upload(at, data: bytes, name: str = "model.safetensors", key: str = "upload"):
    at.file_uploader(key=key).set_value((name, data, OCTETS))
    return at.run()


def model_bytes(models, name: str) -> bytes:
    return (models[name][0] / "model.safetensors").read_bytes()


def test_empty_page_explains_what_to_do_in_both_languages():
    for lang in ("en", "zh"):
        at = open_page("inspect", lang=lang)
        assert_clean(at)
        assert [t.value for t in at.title] == [tr(lang, "page.inspect")]
        assert tr(lang, "inspect.empty") in [i.value for i in at.info]
        assert not figures(at)


def test_uploaded_gpt2_every_tab_holds_its_table(models):
    table = models["gpt2"][1]
    at = upload(open_page("inspect"), model_bytes(models, "gpt2"))
    assert_clean(at)
    summary = tr("en", "inspect.summary", tensor="transformer.wpe.weight", rows=64, dims=32, dtype="float32",
                 format="safetensors", known="GPT-2-style absolute")  # fmt: skip
    assert summary in [m.value for m in at.markdown]
    view = visit_tabs(at, "inspect", TABS)
    assert not view.exceptions and not view.errors, view.exceptions + view.errors
    by_tab = view.by_tab

    stored, norms = by_tab["table"]
    assert title(stored) == tr("en", "inspect.table", tensor="transformer.wpe.weight")
    assert_matrix(heatmap_z(stored), table, what="stored table")
    assert not stored["layout"].get("shapes")  # GPT-2 has no offset rows to mark
    np.testing.assert_allclose(as_array(norms["data"][0]["y"]), np.linalg.norm(table, axis=1), rtol=1e-12)
    np.testing.assert_allclose(as_array(norms["data"][1]["y"]), np.sqrt(16.0), rtol=1e-12)

    similarity, profile = by_tab["similarity"]
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    assert_matrix(heatmap_z(similarity), unit @ unit.T, what="similarity")
    offsets, _, cosine = analysis.strided_offset_profile(table)
    np.testing.assert_array_equal(as_array(profile["data"][0]["x"]), offsets)
    lags = np.arange(64)
    by_hand = [np.mean(np.sum(unit[: 64 - k] * unit[k:], axis=1)) for k in lags]  # mean cos at each offset
    np.testing.assert_allclose(as_array(profile["data"][0]["y"]), by_hand, rtol=1e-9)
    sinusoidal = posviz.sinusoidal(64, 32)
    np.testing.assert_allclose(
        as_array(profile["data"][1]["y"]), analysis.strided_offset_profile(sinusoidal)[2], rtol=1e-12
    )

    (projection,) = by_tab["projection"]
    np.testing.assert_allclose(
        np.c_[as_array(projection["data"][1]["x"]), as_array(projection["data"][1]["y"])],
        analysis.project(table, "pca"),
        atol=1e-9,
    )
    dominant, power = by_tab["spectrum"]
    np.testing.assert_allclose(as_array(dominant["data"][1]["y"]), analysis.position_spectrum(table).dominant)

    (probe,) = by_tab["probe"]
    expected = [
        analysis.position_probe(table),
        analysis.position_probe(sinusoidal),
        analysis.position_probe(posviz.learned_init(64, 32)),
        analysis.constant_guess_error(64),
    ]
    np.testing.assert_allclose(as_array(probe["data"][0]["y"]), expected, rtol=1e-9)

    side = by_tab["sinusoidal"]
    assert_matrix(heatmap_z(side[0]), table, what="side: table")
    assert_matrix(heatmap_z(side[2]), sinusoidal, what="side: sinusoidal of the same shape")
    assert by_tab["compare"] == []  # nothing chosen yet for the second checkpoint


def test_the_table_is_handed_to_the_learned_page(models):
    at = upload(open_page("inspect"), model_bytes(models, "gpt2"), name="gpt2.safetensors")
    label = "gpt2.safetensors · transformer.wpe.weight"
    np.testing.assert_array_equal(at.session_state[SESSION_TABLES][label], models["gpt2"][1])
    (link,) = [p.proto for p in at.get("page_link") if p.proto.label == tr("en", "inspect.open.learned")]
    assert parse_qs(link.query_string) == {"init": ["session:" + label]}
    at.switch_page(script("learned"))
    at.query_params["init"] = "session:" + label
    at.run()
    assert_clean(at)
    assert at.radio(key="init").value == "session:" + label
    assert_matrix(
        heatmap_z(chart(charts(at), "en", "learned.table").fig), models["gpt2"][1], what="on the Learned page"
    )


def test_opt_folder_by_path_in_the_url_marks_its_offset_rows(models):
    folder, matrix = models["opt"]
    at = open_page("inspect", query={"from": "path", "path": str(folder)})
    assert_clean(at)
    assert at.text_input(key="path").value == str(folder)
    info = tr("en", "inspect.offset", offset=2, rows=42, positions=40)
    assert info in [i.value for i in at.info]
    stored = stored_table(at)
    assert_matrix(heatmap_z(stored), matrix, what="all 42 stored rows are drawn")
    (box,) = stored["layout"]["shapes"]
    assert (box["y0"], box["y1"]) == (-0.5, 1.5)
    at.run()  # a rerun draws the same box once (the heatmap of a cached table is shared, never marked in place)
    assert stored_table(at)["layout"]["shapes"] == [box]
    view = visit_tabs(at, "inspect", ["similarity"])
    (similarity,) = [c.fig for c in view.charts["similarity"] if c.traces("heatmap")]
    assert_matrix(heatmap_z(similarity), analysis.cosine_similarity_matrix(matrix[2:]), what="40 real positions")


def test_t5_biases_open_the_relative_page(models):
    folder, bias = models["t5"]
    at = upload(open_page("inspect"), (folder / "model.safetensors").read_bytes())
    assert_clean(at)
    (fig,) = figures(at)
    assert title(fig) == tr("en", "inspect.t5", buckets=32, heads=3)
    assert_matrix(heatmap_z(fig), bias, what="T5 bias")
    (link,) = [p.proto for p in at.get("page_link") if p.proto.label == tr("en", "inspect.open.relative")]
    assert parse_qs(link.query_string) == {"tab": ["t5"]}
    at.switch_page(script("relative"))
    at.query_params["tab"] = "t5"
    at.run()
    assert_clean(at)
    label = "model.safetensors · encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
    learned = chart(charts(at), "en", "relative.t5.bias.learned", name=label, b=32, h=3).fig
    offsets = as_array(learned["data"][0]["x"]).astype(int)
    buckets = posviz.t5_relative_bucket(offsets, num_buckets=32, max_distance=128, bidirectional=True)
    np.testing.assert_allclose(as_array(learned["data"][1]["y"]), bias[buckets, 1], rtol=1e-12)


def test_a_rope_model_shows_its_frequencies_and_links_to_the_rope_page(models):
    folder, _ = models["llama"]
    at = open_page("inspect", query={"from": "path", "path": str(folder)})
    assert_clean(at)
    assert tr("en", "inspect.rope") in [i.value for i in at.info]
    (fig,) = figures(at)
    plain = as_array(fig["data"][0]["y"])
    np.testing.assert_allclose(plain, 2 * np.pi / posviz.rope_inv_freq(128)[0], rtol=1e-12)
    (link,) = [p.proto for p in at.get("page_link") if p.proto.label == tr("en", "inspect.open.rope")]
    query = parse_qs(link.query_string)
    linked = json.loads(query["cfg"][0])
    assert rope_configs.parse_config(linked) == rope_configs.parse_config(
        json.loads((folder / "config.json").read_text())
    )
    opened = open_page("rope", query={key: values[0] for key, values in query.items()})  # the link's target
    assert_clean(opened)
    assert opened.session_state["tab.code"] == "config"
    assert json.loads(opened.text_area(key="cfg").value) == linked


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_a_pickle_that_runs_code_is_refused_and_nothing_runs(tmp_path, models):
    marker = tmp_path / "pwned"
    buffer = io.BytesIO()
    torch.save({"wpe.weight": torch.zeros(4, 4), "evil": _Payload(marker)}, buffer)
    at = upload(open_page("inspect"), buffer.getvalue(), name="model.bin")
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert "system" in error and not marker.exists()
    assert not figures(at)
    at = upload(at, model_bytes(models, "gpt2"))  # the page still works: a good file loads after a bad one
    assert_clean(at)
    assert_matrix(heatmap_z(stored_table(at)), models["gpt2"][1], what="after the refused file")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"<html><body>not a model</body></html>", "HTML"),
        (pickle.dumps([1, 2, 3])[:5], None),
    ],
    ids=["empty", "html", "truncated-pickle"],
)
def test_files_that_are_not_models_get_a_sentence(data, message):
    at = upload(open_page("inspect"), data, name="model.safetensors")
    assert not at.exception
    assert len(at.error) == 1
    with pytest.raises(posviz.CheckpointError) as info:
        posviz.load_position_embeddings(data, name="model.safetensors")
    assert at.error[0].value == tr("en", "error.input.file", message=str(info.value))
    if message:
        assert message.lower() in str(info.value).lower()


def test_truncated_safetensors_is_a_clear_error(models):
    data = model_bytes(models, "gpt2")
    at = upload(open_page("inspect"), data[: len(data) // 2])
    assert not at.exception
    (error,) = [e.value for e in at.error]
    expected = _error_of(data[: len(data) // 2])
    assert isinstance(expected, posviz.CorruptFile) and error == tr("en", "error.input.file", message=str(expected))


def _error_of(data):
    try:
        posviz.load_position_embeddings(data, name="model.safetensors")
    except posviz.CheckpointError as exc:
        return exc
    raise AssertionError("loaded")


def test_an_npz_without_known_names_lets_the_user_pick():
    rng = np.random.default_rng(3)
    first, second = rng.normal(size=(20, 6)), rng.normal(size=(30, 8))
    buffer = io.BytesIO()
    np.savez(buffer, alpha=first, beta=second)
    at = upload(open_page("inspect"), buffer.getvalue(), name="tables.npz")
    assert_clean(at)
    assert tr("en", "inspect.pick") in [i.value for i in at.info]
    assert at.selectbox(key="tensor").options == ["alpha", "beta"]
    assert_matrix(heatmap_z(stored_table(at)), first, what="first candidate")
    at.selectbox(key="tensor").set_value("beta").run()
    assert_clean(at)
    assert_matrix(heatmap_z(stored_table(at)), second, what="picked candidate")


def test_a_one_element_change_in_the_upload_is_never_stale():
    table = np.random.default_rng(4).normal(size=(16, 4))
    at = upload(open_page("inspect"), _npy(table), name="t.npy")
    assert_matrix(heatmap_z(stored_table(at)), table, what="first upload")
    changed = table.copy()
    changed[7, 2] += 1.0
    at = upload(at, _npy(changed), name="t.npy")
    assert_clean(at)
    assert_matrix(heatmap_z(stored_table(at)), changed, what="changed upload")


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_two_checkpoints_side_by_side(models):
    a = np.random.default_rng(5).normal(size=(24, 8))
    at = upload(open_page("inspect", query={"tab": "compare"}), _npy(a), name="a.npy")
    at = upload(at, model_bytes(models, "gpt2"), name="b.safetensors", key="upload2")
    assert_clean(at)
    left, right, profile, probe = figures(at)
    assert title(left) == "a.npy · array" and title(right) == "b.safetensors · transformer.wpe.weight"
    assert_matrix(heatmap_z(left), analysis.cosine_similarity_matrix(a), what="first")
    assert_matrix(heatmap_z(right), analysis.cosine_similarity_matrix(models["gpt2"][1]), what="second")
    np.testing.assert_allclose(
        as_array(probe["data"][0]["y"]),
        [analysis.position_probe(a), analysis.position_probe(models["gpt2"][1])],
        rtol=1e-9,
    )
    # the offset profiles of tables of different lengths, each over its own offsets: the mean cosine of rows k apart
    tables = {"a.npy · array": a, "b.safetensors · transformer.wpe.weight": models["gpt2"][1]}
    assert [trace["name"] for trace in profile["data"]] == list(tables)
    for trace, table in zip(profile["data"], tables.values(), strict=True):
        unit = table / np.linalg.norm(table, axis=1, keepdims=True)
        offsets, cosine = as_array(trace["x"]), as_array(trace["y"])
        assert offsets.max() == len(table) - 1
        for k, value in zip(offsets.astype(int), cosine, strict=True):
            k = abs(k)
            assert value == pytest.approx(np.mean(np.sum(unit[: len(unit) - k] * unit[k:], axis=1)), abs=1e-9)


def test_cached_models_are_listed_from_disk(models, tmp_path, monkeypatch):
    snapshot = tmp_path / "hub" / "models--tiny--gpt2" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    for item in models["gpt2"][0].iterdir():
        (snapshot / item.name).write_bytes(item.read_bytes())
    (tmp_path / "hub" / "models--tiny--gpt2" / "refs").mkdir()
    (tmp_path / "hub" / "models--tiny--gpt2" / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    at = open_page("inspect", query={"from": "cache"})
    assert_clean(at)
    assert at.selectbox(key="model").options == ["tiny/gpt2"]
    assert_matrix(heatmap_z(stored_table(at)), models["gpt2"][1], what="cached model")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    at = open_page("inspect", query={"from": "cache"})
    assert_clean(at)
    assert tr("en", "inspect.cache.empty", folder=str(tmp_path / "empty")) in [i.value for i in at.info]


def test_presentation_mode_and_csv_with_a_loaded_model(models):
    at = upload(open_page("inspect", query={"present": "true", "lang": "zh"}, lang="zh"), model_bytes(models, "gpt2"))
    assert_clean(at)
    figs = figures(at)
    assert figs and all(f["layout"]["font"]["size"] == 20 for f in figs)
    assert tr("zh", "present.controls") in [e.label for e in at.expander]
    csv = [b.proto.label for b in at.get("download_button") if b.key != "posviz-handout"]  # the lesson's handout
    assert csv == [tr("zh", "download.csv")] * len(figs)
    charts_by_key(charts(at), "zh", [("inspect.table", {"tensor": "transformer.wpe.weight"}), "inspect.norms"])
    assert tr("zh", "inspect.table.notice.random") in [c.value for c in at.caption]  # an untrained GPT-2
    summary = tr("zh", "inspect.summary", tensor="transformer.wpe.weight", rows=64, dims=32, dtype="float32",
                 format="safetensors", known=tr("zh", "inspect.known.wpe.weight"))  # fmt: skip
    assert summary in [m.value for m in at.markdown]


# --------------------------------------------------------------------------------------------- the upload limit


def test_one_upload_limit_everywhere_and_said_before_the_upload():
    """The core's limit is what the uploader enforces in the browser, what the server accepts
    (.streamlit/config.toml), what its help says and what the sentence under it says, with the way round it."""
    import tomllib

    mb = posviz.MAX_UPLOAD_BYTES // 1024**2
    assert posviz.MAX_UPLOAD_BYTES == mb * 1024**2  # whole megabytes of 1024 x 1024 bytes, as the server counts
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] == mb
    # Streamlit's uploader writes sizes in decimal units and switches to gigabytes above 500 of them (outside
    # Windows): a limit above 500 MB would read "1GB per file" on it
    assert mb <= 500
    for lang in ("en", "zh"):
        at = open_page("inspect", lang=lang)
        assert_clean(at)
        uploader = at.file_uploader(key="upload").proto
        assert uploader.max_upload_size_mb == mb
        assert uploader.help == tr(lang, "inspect.ctl.upload.help", mb=mb) and f"{mb} MB" in uploader.help
        sentence = tr(lang, "inspect.upload.limit", mb=mb, path=tr(lang, "inspect.origin.path"),
                      cache=tr(lang, "inspect.origin.cache"))  # fmt: skip
        assert sentence in [c.value for c in at.caption]
        # the sentence names both ways round the limit, as the source radio labels them, and the two checkpoints
        for needed in (f"{mb} MB", tr(lang, "inspect.origin.path"), tr(lang, "inspect.origin.cache"), "BERT-base",
                       "440 MB", "GPT-2", "548 MB"):  # fmt: skip
            assert needed in sentence, needed
    # BERT-base's pytorch_model.bin (440,473,133 bytes) can be uploaded; GPT-2's model.safetensors (548,105,171
    # bytes) cannot, which is why the sentence sends it to a path
    assert 440_473_133 <= mb * 10**6 < 548_105_171 and 548_105_171 > posviz.MAX_UPLOAD_BYTES


def test_a_file_larger_than_the_limit_that_reaches_the_loader_gets_the_loader_sentence(monkeypatch):
    """The browser refuses a larger file before the page sees it (the e2e test checks that); if one reached the
    loader anyway, the page says so as a file that could not be read, with the advice to open it from a path."""
    import posviz.checkpoint.sources as sources

    monkeypatch.setattr(sources, "MAX_UPLOAD_BYTES", 100)
    at = upload(open_page("inspect"), _npy(np.zeros((8, 8))), name="big.npy")
    (error,) = [e.value for e in at.error]
    assert error.startswith(tr("en", "error.input.file", message="")) and "local path" in error
    assert not figures(at)


# -------------------------------------------------------------------------- captions for random, tiny, trained


NOTICE_TABS = {  # tab -> the caption keys its figures carry, in order
    "table": ["inspect.table.notice", "inspect.norms.notice"],
    "similarity": ["inspect.similarity.notice", "inspect.offset.notice"],
    "projection": ["inspect.projection.notice"],
    "spectrum": ["inspect.spectrum.notice"],
    "probe": ["inspect.probe.notice"],
}


def captions_by_tab(at, lang: str) -> dict:
    view = visit_tabs(at, "inspect", list(NOTICE_TABS), lang=lang)
    assert not view.exceptions and not view.errors, view.exceptions + view.errors
    found = {}
    for tab in NOTICE_TABS:
        at.session_state["tab"] = tr(lang, f"inspect.tab.{tab}")
        at.run()
        found[tab] = [c.value for c in at.caption]
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("kind", "make"),
    [
        # what BERT and GPT-2 start from, N(0, 0.02^2): a probe reads nothing in it
        ("random", lambda: np.random.default_rng(11).normal(0.0, 0.02, size=(96, 32))),
        # the trained example of the Learned page (3,000 steps): positions readable to a few places
        ("ordered", lambda: np.load(ROOT / "assets" / "trained" / "example_positions.npy")),
        ("tiny", lambda: np.random.default_rng(12).normal(size=(12, 6))),
    ],
)
def test_captions_say_what_a_random_a_tiny_and_a_trained_table_show(lang, kind, make):
    table = make()
    n = table.shape[0]
    at = upload(open_page("inspect", lang=lang), _npy(table), name=f"{kind}.npy")
    assert_clean(at)
    # the verdict, from the probe computed here: noise scores about n/4 (always guessing the middle), a table that
    # encodes positions a fraction of it; a table of 12 rows is too short to tell
    guess = np.mean(np.abs(np.arange(n) - np.median(np.arange(n)).round()))
    assert analysis.constant_guess_error(n) == pytest.approx(guess)
    if kind == "tiny":
        assert n < 16 and tr(lang, "inspect.reading.tiny", n=n) in [i.value for i in at.info]
    else:
        probe = analysis.position_probe(table)
        assert (probe > 0.75 * guess) == (kind == "random"), (probe, guess)
        values = {"probe": f"{probe:.1f}", "guess": f"{guess:.1f}"}
        if kind == "random":
            assert tr(lang, "inspect.reading.random", **values) in [i.value for i in at.info]
        else:
            assert tr(lang, "inspect.reading.ordered", **values) in [m.value for m in at.markdown]
    suffix = "" if kind == "ordered" else f".{kind}"
    for tab, shown in captions_by_tab(at, lang).items():
        for key in NOTICE_TABS[tab]:
            assert tr(lang, key + suffix, n=n) in shown, (tab, key + suffix)
            others = {"", ".random", ".tiny"} - {suffix}
            assert not [s for s in others if tr(lang, key + s, n=n) in shown], (tab, key)
