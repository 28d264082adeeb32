"""The inspector's frequency usage of a RoPE model opened from a folder: a tiny Llama saved with transformers'
save_pretrained, its usage read back from the charts and checked against its own weights (q_proj / k_proj split the
way LlamaAttention splits them, pairs half-split as its rotate_half pairs them), its rotary frequencies, p-RoPE's
share and the positional score that transformers' own rotation gives; bad folders show a sentence and no chart."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import transformers
from transformers.models.llama import modeling_llama

import posviz
from posviz import checkpoint as ckpt
from posviz.lessons import frequency_usage as fu

from ._support import as_array, assert_clean, chart, charts, charts_by_key, heatmap_z, open_page, tr

HIDDEN, HEADS, KV_HEADS, LAYERS, CONTEXT = 32, 4, 2, 3, 256
HEAD_DIM = HIDDEN // HEADS
PAIRS = HEAD_DIM // 2
USAGE = ("usage.by_layer", "usage.by_head.query", "usage.wavelength", "usage.prope", "usage.pattern")


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """A tiny Llama whose head 2 of layer 1 reads only pair 0 (dims 0 and 4 of its half-split head), saved."""
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=HIDDEN,
        intermediate_size=16,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        vocab_size=50,
        max_position_embeddings=CONTEXT,
    )
    config._attn_implementation = "eager"
    model = transformers.LlamaForCausalLM(config).eval()
    with torch.no_grad():
        rows = model.model.layers[1].self_attn.q_proj.weight.view(HEADS, HEAD_DIM, HIDDEN)
        rows[2].zero_()
        rows[2, 0], rows[2, PAIRS] = 0.5, -0.25
    folder = tmp_path_factory.mktemp("llama")
    model.save_pretrained(folder)
    return model, folder


def rows(model, layer: int, which: str) -> np.ndarray:
    """(heads, head_dim, hidden): the projection's rows of each head, as LlamaAttention's view(..., -1, head_dim)."""
    attention = model.model.layers[layer].self_attn
    weight = (attention.q_proj if which == "query" else attention.k_proj).weight.detach().double().numpy()
    return weight.reshape(-1, HEAD_DIM, HIDDEN)


def usage_from_weights(model, layer: int, which: str) -> np.ndarray:
    """(heads, pairs): pair i of a half-split head is dims i and i + head_dim / 2 (rotate_half); a scalar loop."""
    w = rows(model, layer, which)
    out = np.zeros((len(w), PAIRS))
    for h in range(len(w)):
        for i in range(PAIRS):
            out[h, i] = np.sqrt(sum(w[h, i, c] ** 2 + w[h, i + PAIRS, c] ** 2 for c in range(HIDDEN)))
    return out


def model_inv_freq(model) -> np.ndarray:
    return model.model.rotary_emb.inv_freq.double().numpy()


def open_usage(folder, lang="en", **query):
    """The inspector on ``folder``: the config's wavelengths, then the five usage charts (by head: of the queries,
    or of the key-value heads with ``usage="key"``), and nothing else."""
    at = open_page("inspect", query={"from": "path", "path": str(folder), **query}, lang=lang)
    assert_clean(at)
    found = charts(at)
    rope_chart = chart(found, lang, "rope.cfg.wavelength")
    keys = [k.replace("query", query.get("usage", "query")) for k in USAGE]
    drawn = charts_by_key([c for c in found if c is not rope_chart], lang, keys)
    return at, drawn


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_usage_by_layer_and_by_head_are_the_weights_row_norms(llama, lang):
    model, folder = llama
    at, drawn = open_usage(folder, lang, layer="1")
    expected = np.stack([usage_from_weights(model, n, "query") for n in range(LAYERS)])
    by_layer = heatmap_z(drawn["usage.by_layer"].fig)
    np.testing.assert_allclose(by_layer, expected.mean(axis=1), rtol=1e-5)
    np.testing.assert_allclose(by_layer, posviz.rope_frequency_usage(folder).layer_means("query"), rtol=1e-6)
    heads = drawn["usage.by_head.query"]
    assert heads.title == tr(lang, "usage.by_head.query", layer=1)
    np.testing.assert_allclose(heatmap_z(heads.fig), expected[1], rtol=1e-5)
    hand = np.zeros(PAIRS)
    hand[0] = np.sqrt(HIDDEN * (0.5**2 + 0.25**2))  # the head set by hand reads pair 0 only
    np.testing.assert_allclose(heatmap_z(heads.fig)[2], hand, atol=1e-6)
    for key in ("usage.by_layer", "usage.by_head.query", "usage.prope", "usage.pattern"):  # captions without numbers
        assert drawn[key].notice == tr(lang, f"{key}.notice"), key
    assert drawn["usage.wavelength"].notice == tr(lang, "usage.wavelength.notice", n=CONTEXT)


@pytest.mark.slow
def test_key_usage_has_one_row_per_key_value_head(llama):
    model, folder = llama
    _, drawn = open_usage(folder, usage="key", layer="2")
    keys = drawn["usage.by_head.key"]
    assert keys.title == tr("en", "usage.by_head.key", layer=2)
    np.testing.assert_allclose(heatmap_z(keys.fig), usage_from_weights(model, 2, "key"), rtol=1e-5)
    assert heatmap_z(keys.fig).shape == (KV_HEADS, PAIRS)


@pytest.mark.slow
def test_usage_against_wavelength_marks_the_training_context(llama):
    model, folder = llama
    _, drawn = open_usage(folder)
    wave = drawn["usage.wavelength"]
    wavelength = 2 * np.pi / model_inv_freq(model)
    order = np.argsort(wavelength)
    expected = {
        "usage.query": np.stack([usage_from_weights(model, n, "query") for n in range(LAYERS)]).mean(axis=(0, 1)),
        "usage.key": np.stack([usage_from_weights(model, n, "key") for n in range(LAYERS)]).mean(axis=(0, 1)),
    }
    lines = {trace["name"]: trace for trace in wave.traces("scatter")}
    for key, values in expected.items():
        line = lines[tr("en", key)]
        np.testing.assert_allclose(as_array(line["x"]), wavelength[order], rtol=1e-6)
        np.testing.assert_allclose(as_array(line["y"]), values[order], rtol=1e-5)
    assert [shape["x0"] for shape in wave.fig["layout"]["shapes"]] == [CONTEXT]
    assert wave.notice == tr("en", "usage.wavelength.notice", n=CONTEXT)


@pytest.mark.slow
@pytest.mark.parametrize("p", [0.75, 0.25])
def test_p_rope_drops_the_slowest_pairs_and_says_their_share(llama, p):
    model, folder = llama
    _, drawn = open_usage(folder, p=str(p))
    prope = drawn["usage.prope"]
    kept, gone = prope.traces("scatter")
    wavelength = 2 * np.pi / model_inv_freq(model)
    n_dropped = PAIRS - round(p * PAIRS)
    slowest = np.argsort(-wavelength)[:n_dropped]  # the longest wavelengths, from transformers' inv_freq
    np.testing.assert_allclose(np.sort(as_array(gone["x"])), np.sort(wavelength[slowest]), rtol=1e-6)
    assert len(as_array(kept["x"])) == PAIRS - n_dropped
    mean = np.stack([usage_from_weights(model, n, "query") for n in range(LAYERS)]).mean(axis=(0, 1))
    share = (mean[slowest] ** 2).sum() / (mean**2).sum()
    dropped = np.isin(np.arange(PAIRS), slowest)
    np.testing.assert_allclose(share, fu.p_rope_share(mean, dropped), rtol=1e-9)
    text = tr("en", "usage.prope.share", share=f"{share:.1%}", dropped=n_dropped, pairs=PAIRS)
    assert [a["text"] for a in prope.fig["layout"]["annotations"]] == [text]


def rotated_score(model, layer: int, distances) -> np.ndarray:
    """q_m . k_n for the mean token embedding as the input at every position, m - n = d, through transformers'
    own LlamaRotaryEmbedding and apply_rotary_pos_emb (k at position 0 and q at d, or q at 0 and k at -d), minus
    nothing: Llama rotates every dimension of the head."""
    attention = model.model.layers[layer].self_attn
    x = model.model.embed_tokens.weight.detach().double().mean(axis=0)
    q = (attention.q_proj.weight.double() @ x).reshape(1, HEADS, 1, HEAD_DIM)
    k = (attention.k_proj.weight.double() @ x).reshape(1, KV_HEADS, 1, HEAD_DIM)
    k = modeling_llama.repeat_kv(k, HEADS // KV_HEADS)
    out = np.zeros((HEADS, len(distances)))
    for col, d in enumerate(distances):
        m, n = max(d, 0), max(-d, 0)
        pos = torch.tensor([[m, n]])
        cos, sin = model.model.rotary_emb(q.float(), position_ids=pos)
        cos, sin = cos.double(), sin.double()
        q_m, _ = modeling_llama.apply_rotary_pos_emb(q, q, cos[:, :1], sin[:, :1])
        _, k_n = modeling_llama.apply_rotary_pos_emb(k, k, cos[:, 1:], sin[:, 1:])
        out[:, col] = (q_m * k_n).sum(-1)[0, :, 0].detach().numpy()
    return out


@pytest.mark.slow
def test_score_pattern_of_each_head_is_the_rotated_dot_product(llama):
    model, folder = llama
    _, drawn = open_usage(folder, layer="1")
    pattern = drawn["usage.pattern"]
    assert pattern.title == tr("en", "usage.pattern", layer=1)
    lines = pattern.traces("scatter")
    distances = as_array(lines[0]["x"])
    np.testing.assert_array_equal(distances, np.arange(-64, 65))
    expected = rotated_score(model, 1, distances.astype(int))
    swing = expected.max(axis=1) - expected.min(axis=1)
    assert [line["name"] for line in lines] == [tr("en", "usage.head", h=int(h)) for h in np.argsort(-swing)]
    for line in lines:
        h = int(line["name"].split()[-1])
        np.testing.assert_allclose(as_array(line["y"]), expected[h], rtol=1e-4, atol=1e-6)


def usage_charts(at, lang="en"):
    keys = [*USAGE, "usage.by_head.key"]
    return [c for c in charts(at) if any(c.title.startswith(tr(lang, k).split("{")[0]) for k in keys)]


@pytest.mark.slow
def test_a_folder_without_attention_projections_says_what_it_expected(llama, tmp_path):
    model, folder = llama
    from safetensors.numpy import save_file

    state = {
        "model.embed_tokens.weight": model.model.embed_tokens.weight.detach().numpy(),
        "lm_head.weight": model.lm_head.weight.detach().numpy(),
    }
    save_file(state, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text((folder / "config.json").read_text())
    at = open_page("inspect", query={"from": "path", "path": str(tmp_path)})
    assert not at.exception
    with pytest.raises(ckpt.NoAttentionProjections) as info:
        fu.rope_frequency_usage(tmp_path)
    assert [e.value for e in at.error] == [tr("en", "error.input.path", message=str(info.value))]
    assert "q_proj" in str(info.value)
    assert not usage_charts(at)  # nothing drawn as if it were the usage


@pytest.mark.slow
def test_a_config_that_does_not_match_the_weights_says_so(llama, tmp_path):
    model, folder = llama
    import shutil

    shutil.copy(folder / "model.safetensors", tmp_path / "model.safetensors")
    config = json.loads((folder / "config.json").read_text())
    config["num_key_value_heads"] = HEADS  # the weights have KV_HEADS key-value heads
    (tmp_path / "config.json").write_text(json.dumps(config))
    at = open_page("inspect", query={"from": "path", "path": str(tmp_path)})
    assert not at.exception
    with pytest.raises(ckpt.ConfigMismatch) as info:
        fu.rope_frequency_usage(tmp_path)
    assert [e.value for e in at.error] == [tr("en", "error.input.path", message=str(info.value))]
    assert not usage_charts(at)


def test_a_config_only_folder_has_nothing_to_measure(tmp_path):
    from posviz.models import rope_configs

    (tmp_path / "config.json").write_text(json.dumps({**rope_configs.PRESETS["llama2_7b"], "model_type": "llama"}))
    at = open_page("inspect", query={"from": "path", "path": str(tmp_path)})
    assert_clean(at)
    assert tr("en", "usage.no_weights") in [i.value for i in at.info]
    assert not usage_charts(at)


def _smollm3(folder):
    config = transformers.SmolLM3Config(
        hidden_size=HIDDEN,
        intermediate_size=16,
        num_hidden_layers=4,
        vocab_size=50,
        num_attention_heads=4,
        num_key_value_heads=2,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    transformers.AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    return folder


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_nope_layers_and_groups_are_said(tmp_path, lang):
    """SmolLM3's NoPE layer 3 is named, not measured, and the pairing used is said, in both languages; its by-layer
    usage has the three rotating layers only."""
    smol = _smollm3(tmp_path / "smol")
    at = open_page("inspect", query={"from": "path", "path": str(smol)}, lang=lang)
    assert_clean(at)
    captions = [c.value for c in at.caption]
    assert tr(lang, "usage.nope", layers="3", n=1) in captions
    assert tr(lang, "usage.layout.half") in " ".join(captions)
    by_layer = heatmap_z(chart(charts(at), lang, "usage.by_layer", which=tr(lang, "usage.query")).fig)
    assert by_layer.shape == (3, 4)
