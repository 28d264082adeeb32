"""rope_frequency_usage and the score pattern against tiny transformers models saved with save_pretrained.

The oracle never uses posviz's idea of the layout: each model's own attention module is run on the unit vectors of
its hidden space, with its own ``apply_rotary_pos_emb`` spied on, so the query and key states it rotates give the
rows of every head as the model splits its (possibly fused) weights; the model's own rotation of the basis vectors of
a head, at position 1, says which two dimensions form each pair and how fast that pair turns."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import torch
import transformers

from posviz import checkpoint as ckpt
from posviz.checkpoint import qk_weights
from posviz.lessons import frequency_usage as fu

HIDDEN = 32


def _config(kind: str):
    common = dict(hidden_size=HIDDEN, intermediate_size=16, num_hidden_layers=2, vocab_size=40)
    if kind == "llama":
        return transformers.LlamaConfig(num_attention_heads=4, num_key_value_heads=2, **common)
    if kind == "qwen2":
        return transformers.Qwen2Config(num_attention_heads=4, num_key_value_heads=2, **common)
    if kind == "gemma":
        return transformers.GemmaConfig(num_attention_heads=2, num_key_value_heads=1, head_dim=16, **common)
    if kind == "phi3":
        return transformers.Phi3Config(
            num_attention_heads=4, num_key_value_heads=2, partial_rotary_factor=0.5, pad_token_id=0, **common
        )
    if kind == "gpt_neox":
        return transformers.GPTNeoXConfig(num_attention_heads=2, rotary_pct=0.5, **common)
    raise AssertionError(kind)


KINDS = ("llama", "qwen2", "gemma", "phi3", "gpt_neox")


def _build(kind: str, seed: int = 0):
    torch.manual_seed(seed)
    config = _config(kind)
    config._attn_implementation = "eager"
    return transformers.AutoModelForCausalLM.from_config(config).eval()


def _layers(model):
    base = model.gpt_neox if hasattr(model, "gpt_neox") else model.model
    return base, base.layers


def _attention(layer):
    return layer.attention if hasattr(layer, "attention") else layer.self_attn


def hf_states(model, layer_index: int, hidden: torch.Tensor, monkeypatch):
    """The query and key states (batch 1, heads, tokens, head_dim) the model's attention rotates, for ``hidden``."""
    base, layers = _layers(model)
    attention = _attention(layers[layer_index])
    module = sys.modules[type(attention).__module__]
    original = module.apply_rotary_pos_emb
    captured = {}

    def spy(q, k, cos, sin, *args, **kwargs):
        captured["q"], captured["k"] = q, k
        return original(q, k, cos, sin, *args, **kwargs)

    monkeypatch.setattr(module, "apply_rotary_pos_emb", spy)
    x = hidden[None].float()
    cos, sin = base.rotary_emb(x, position_ids=torch.zeros(1, x.shape[1], dtype=torch.long))
    with torch.no_grad():
        attention(hidden_states=x, position_embeddings=(cos, sin), attention_mask=None)
    monkeypatch.setattr(module, "apply_rotary_pos_emb", original)
    return captured["q"][0].double().numpy(), captured["k"][0].double().numpy()


def hf_rows(model, layer_index: int, monkeypatch):
    """(heads, head_dim, hidden) weight rows of the queries and keys, as the model's forward splits them."""
    basis = torch.cat([torch.eye(HIDDEN), torch.zeros(1, HIDDEN)])
    q, k = hf_states(model, layer_index, basis, monkeypatch)
    q, k = q[:, :HIDDEN] - q[:, HIDDEN:], k[:, :HIDDEN] - k[:, HIDDEN:]  # minus the bias
    return q.transpose(0, 2, 1), k.transpose(0, 2, 1)


def hf_pairs(model, head_dim: int, monkeypatch):
    """The model's own pairs, fastest first: [(dim a, dim b, theta)], from turning a head's basis to position 1."""
    base, layers = _layers(model)
    module = sys.modules[type(_attention(layers[0])).__module__]
    cos, sin = base.rotary_emb(torch.zeros(1, 1, 1), position_ids=torch.ones(1, 1, dtype=torch.long))
    eye = torch.eye(head_dim, dtype=torch.float64)[None, None]
    turned, _ = module.apply_rotary_pos_emb(eye, eye, cos.double(), sin.double())
    turned = turned[0, 0].numpy()
    pairs = {}
    for d in range(head_dim):
        partners = [e for e in range(head_dim) if e != d and abs(turned[d, e]) > 1e-9]
        if partners:
            theta = np.arctan2(abs(turned[d, partners[0]]), turned[d, d])
            pairs[tuple(sorted((d, partners[0])))] = float(theta)
    return sorted(((a, b, theta) for (a, b), theta in pairs.items()), key=lambda p: -p[2])


def expected_usage(model, kind: str, monkeypatch):
    head_dim = _head_dim(model)
    pairs = hf_pairs(model, head_dim, monkeypatch)
    query, key = [], []
    for n in range(model.config.num_hidden_layers):
        q_rows, k_rows = hf_rows(model, n, monkeypatch)
        query.append(
            [
                [np.sqrt((q_rows[h, a] ** 2).sum() + (q_rows[h, b] ** 2).sum()) for a, b, _ in pairs]
                for h in range(len(q_rows))
            ]
        )
        key.append(
            [
                [np.sqrt((k_rows[h, a] ** 2).sum() + (k_rows[h, b] ** 2).sum()) for a, b, _ in pairs]
                for h in range(len(k_rows))
            ]
        )
    return np.array(query), np.array(key), np.array([theta for *_, theta in pairs])


def _head_dim(model) -> int:
    config = model.config
    return getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads


def _q_weight_view(model, layer: int, kind: str):
    """(heads, head_dim, hidden) view of the query weights, to set some by hand."""
    attention = _attention(_layers(model)[1][layer])
    hd, nq = _head_dim(model), model.config.num_attention_heads
    if kind == "gpt_neox":
        return attention.query_key_value.weight.data.view(nq, 3, hd, HIDDEN)[:, 0]
    if kind == "phi3":
        return attention.qkv_proj.weight.data[: nq * hd].view(nq, hd, HIDDEN)
    return attention.q_proj.weight.data.view(nq, hd, HIDDEN)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Each kind saved twice (one file, and shards of ~20 KB), with head 1 of layer 1 set to use only pair 1."""
    out = {}
    for kind in KINDS:
        model = _build(kind)
        hd = _head_dim(model)
        rot = int(hd * getattr(model.config, "rope_parameters", {}).get("partial_rotary_factor", 1.0))
        with torch.no_grad():
            view = _q_weight_view(model, 1, kind)
            view[1].zero_()
            view[1, 1] = 0.5  # pair 1 of a half-split head is dims 1 and 1 + rot / 2
            view[1, 1 + rot // 2] = -0.25
        folder = tmp_path_factory.mktemp(kind)
        model.save_pretrained(folder / "whole")
        model.save_pretrained(folder / "sharded", max_shard_size="20KB")
        out[kind] = (model, folder, rot)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_usage_equals_the_models_own_split(kind, saved, monkeypatch):
    model, folder, rot = saved[kind]
    query, key, theta = expected_usage(model, kind, monkeypatch)
    assert (folder / "sharded" / "model.safetensors.index.json").is_file()
    for source in (folder / "whole", folder / "sharded", folder / "whole" / "model.safetensors"):
        usage = fu.rope_frequency_usage(source)
        assert usage.query.shape == query.shape and usage.key.shape == key.shape
        np.testing.assert_allclose(usage.query, query, rtol=1e-6)
        np.testing.assert_allclose(usage.key, key, rtol=1e-6)
        np.testing.assert_allclose(usage.inv_freq, theta, rtol=1e-6)
        np.testing.assert_allclose(usage.wavelength, 2 * np.pi / theta, rtol=1e-6)
        assert usage.rotary_dim == rot and usage.layout == "half"
        np.testing.assert_array_equal(usage.layers, [0, 1])
    # the head set by hand: only pair 1, norm sqrt(32 x 0.5^2 + 32 x 0.25^2)
    expected = np.zeros(rot // 2)
    expected[1] = np.sqrt(HIDDEN * (0.5**2 + 0.25**2))
    np.testing.assert_allclose(usage.query[1, 1], expected, atol=1e-7)
    one = fu.rope_frequency_usage(folder / "sharded", layers=[1])
    np.testing.assert_array_equal(one.query, usage.query[1:])


@pytest.mark.slow
def test_usage_from_a_state_dict_and_training_context(saved, monkeypatch):
    model, folder, _ = saved["llama"]
    config = json.loads((folder / "whole" / "config.json").read_text())
    from_dict = fu.rope_frequency_usage(model.state_dict(), config=config)
    from_numpy = fu.rope_frequency_usage({k: v.numpy() for k, v in model.state_dict().items()}, config=config)
    from_disk = fu.rope_frequency_usage(folder / "whole")
    np.testing.assert_allclose(from_dict.query, from_disk.query, rtol=1e-12)
    np.testing.assert_allclose(from_numpy.key, from_disk.key, rtol=1e-12)
    assert from_disk.training_context == model.config.max_position_embeddings
    pytorch = folder / "pytorch"  # a PyTorch checkpoint, read through posviz's weights-only loader
    pytorch.mkdir()
    torch.save(model.state_dict(), pytorch / "pytorch_model.bin")
    (pytorch / "config.json").write_text(json.dumps(config))
    np.testing.assert_allclose(fu.rope_frequency_usage(pytorch).query, from_disk.query, rtol=1e-12)
    bf16 = {k: v.to(torch.bfloat16) for k, v in model.state_dict().items()}
    rounded = fu.rope_frequency_usage(bf16, config=config)
    np.testing.assert_allclose(rounded.query, from_disk.query, rtol=1e-2)


def test_bfloat16_safetensors_read_in_blocks(tmp_path, monkeypatch):
    torch.manual_seed(1)
    model = _build("llama").to(torch.bfloat16)
    model.save_pretrained(tmp_path)
    monkeypatch.setattr(qk_weights, "BLOCK_ELEMENTS", 3 * HIDDEN)  # three rows at a time
    usage = fu.rope_frequency_usage(tmp_path)
    hd = _head_dim(model)
    w = model.model.layers[0].self_attn.q_proj.weight.detach().double().numpy().reshape(4, hd, HIDDEN)
    energy = (w**2).sum(-1)
    np.testing.assert_allclose(usage.query[0], np.sqrt(energy[:, : hd // 2] + energy[:, hd // 2 :]), rtol=1e-12)


# ---------------------------------------------------------------------------------------------------------- errors


def _write(folder, tensors: dict, config: dict):
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    save_file({k: np.asarray(v, dtype=np.float32) for k, v in tensors.items()}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(config))


LLAMA = {"model_type": "llama", "hidden_size": 8, "num_attention_heads": 2, "num_key_value_heads": 1}


def test_checkpoint_without_projections(tmp_path):
    _write(tmp_path, {"model.embed_tokens.weight": np.ones((5, 8))}, LLAMA)
    with pytest.raises(ckpt.NoAttentionProjections, match=r"expected tensors named like .*q_proj.* found 1 tensors"):
        fu.rope_frequency_usage(tmp_path)


def test_a_checkpoint_without_tensors_says_so():
    with pytest.raises(ckpt.NoAttentionProjections, match=r"found no tensors at all$"):
        fu.rope_frequency_usage({}, config=LLAMA)


def test_layer_missing_its_key_projection(tmp_path):
    _write(tmp_path, {"model.layers.0.self_attn.q_proj.weight": np.ones((8, 8))}, LLAMA)
    with pytest.raises(ckpt.NoAttentionProjections, match="layer 0 has no k_proj"):
        fu.rope_frequency_usage(tmp_path)


def test_unknown_fused_layout(tmp_path):
    _write(tmp_path, {"model.layers.0.self_attn.qkv_proj.weight": np.ones((16, 8))}, LLAMA)
    with pytest.raises(ckpt.UnknownFusedLayout, match=r"fused in model\.layers\.0\.self_attn\.qkv_proj.*'llama'"):
        fu.rope_frequency_usage(tmp_path)


def test_config_that_does_not_match_the_weights(tmp_path):
    tensors = {
        "model.layers.0.self_attn.q_proj.weight": np.ones((8, 8)),
        "model.layers.0.self_attn.k_proj.weight": np.ones((4, 8)),
    }
    _write(tmp_path, tensors, {**LLAMA, "num_key_value_heads": 2})
    with pytest.raises(ckpt.ConfigMismatch, match=r"2 key-value heads x head_dim 4 = 8 rows .* shape \(4, 8\)"):
        fu.rope_frequency_usage(tmp_path)


def test_missing_or_non_rope_config(tmp_path):
    tensors = {"model.layers.0.self_attn.q_proj.weight": np.ones((8, 8))}
    with pytest.raises(ckpt.ConfigMismatch, match="without a config.json"):
        fu.rope_frequency_usage(tensors)
    with pytest.raises(ckpt.ConfigMismatch, match="cannot be read: BertConfig holds no rope parameters"):
        fu.rope_frequency_usage(tensors, config={"model_type": "bert", "hidden_size": 8, "num_attention_heads": 2})
    with pytest.raises(ckpt.ConfigMismatch, match="describes no RoPE model.*found model_type 'gpt2' whose layers are"):
        fu.rope_frequency_usage(tensors, config={"model_type": "gpt2", "n_embd": 8, "n_head": 2})
    with pytest.raises(
        ckpt.ConfigMismatch, match="cannot be read: RoPE turns dimensions in pairs.*even head_dim; got head_dim 5"
    ):
        fu.rope_frequency_usage(tensors, config={**LLAMA, "head_dim": 5, "rope_theta": 10000.0})
    assert issubclass(ckpt.ConfigMismatch, posviz_checkpoint_error())


def posviz_checkpoint_error():
    from posviz.checkpoint import CheckpointError

    return CheckpointError


def test_missing_layer_is_named(tmp_path):
    tensors = {
        "model.layers.0.self_attn.q_proj.weight": np.ones((8, 8)),
        "model.layers.0.self_attn.k_proj.weight": np.ones((4, 8)),
    }
    with pytest.raises(ValueError, match="there is no layer 3"):
        fu.rope_frequency_usage(tensors, config=LLAMA, layers=[3])


# ------------------------------------------------------------------------------------------------------------ p-RoPE


@pytest.mark.parametrize(("n", "p"), [(8, 0.25), (8, 0.75), (8, 0.0), (8, 1.0), (64, 0.25), (5, 0.5)])
def test_p_rope_keeps_the_highest_frequencies(n, p):
    theta = 10000.0 ** (-np.arange(n) / n)
    dropped = fu.p_rope_dropped(theta, p)
    kept = int(np.floor(p * n + 0.5))
    assert (~dropped).sum() == kept
    if kept and dropped.any():
        assert theta[~dropped].min() > theta[dropped].max()  # every kept frequency above every dropped one
    shuffled = np.random.default_rng(0).permutation(n)
    np.testing.assert_array_equal(fu.p_rope_dropped(theta[shuffled], p), dropped[shuffled])


def test_p_rope_share():
    usage = np.array([[3.0, 4.0, 0.0], [1.0, 1.0, 1.0]])
    share = fu.p_rope_share(usage, np.array([False, True, True]))
    np.testing.assert_allclose(share, [16 / 25, 2 / 3])
    with pytest.raises(ValueError, match="fraction"):
        fu.p_rope_dropped([1.0, 0.1], 1.5)


# ------------------------------------------------------------------------------------------------- score pattern


def test_score_pattern_equals_rotated_dot_products():
    from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb
    from transformers.models.llama.modeling_llama import repeat_kv

    rng = np.random.default_rng(2)
    head_dim, rot, heads, kv = 12, 8, 4, 2
    theta = 10000.0 ** (-np.arange(0, rot, 2) / rot)
    q, k = rng.standard_normal((heads, head_dim)), rng.standard_normal((kv, head_dim))
    distances = np.arange(-6, 7)
    pattern = fu.rope_score_pattern(q, k, theta, distances)
    for m, n in [(0, 0), (7, 3), (3, 7), (20, 14), (9, 15)]:

        def rotated(x, position):
            angles = position * np.concatenate([theta, theta])
            cos = torch.from_numpy(np.cos(angles))[None, None]
            sin = torch.from_numpy(np.sin(angles))[None, None]
            out, _ = apply_rotary_pos_emb(torch.from_numpy(x)[None], torch.from_numpy(x)[None], cos, sin)
            return out[0].numpy()

        dots = np.einsum(
            "hd,hd->h",
            rotated(q[:, None], m)[:, 0],
            rotated(repeat_kv(torch.from_numpy(k)[None, :, None], 2)[0].numpy(), n)[:, 0],
        )
        column = int(np.flatnonzero(distances == m - n)[0])
        np.testing.assert_allclose(pattern.score[:, column] + pattern.constant, dots, rtol=1e-10, atol=1e-10)
    assert np.all(np.abs(pattern.score) <= pattern.amplitude.sum(-1)[:, None] + 1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["llama", "qwen2", "gpt_neox"])
def test_head_score_pattern_from_a_folder(kind, saved, monkeypatch):
    model, folder, _ = saved[kind]
    base, _ = _layers(model)
    embedding = base.get_input_embeddings().weight.detach().double()
    x = embedding.mean(0)
    q, k = hf_states(model, 1, x[None], monkeypatch)  # the model's own q and k of the mean row
    q, k = q[:, 0], k[:, 0]
    pattern = fu.head_score_pattern(folder / "sharded", 1, np.arange(-3, 4))
    module = sys.modules[
        type(_attention(model.model.layers[0] if hasattr(model, "model") else model.gpt_neox.layers[0])).__module__
    ]
    from transformers.models.llama.modeling_llama import repeat_kv

    group = q.shape[0] // k.shape[0]
    for m, n in [(5, 2), (2, 5), (4, 4)]:
        cos_m, sin_m = base.rotary_emb(torch.zeros(1, 1, 1), position_ids=torch.tensor([[m]]))
        cos_n, sin_n = base.rotary_emb(torch.zeros(1, 1, 1), position_ids=torch.tensor([[n]]))
        qt = torch.from_numpy(q)[None, :, None]
        kt = repeat_kv(torch.from_numpy(k)[None, :, None], group)  # the key head each query head reads
        q_m, _ = module.apply_rotary_pos_emb(qt, qt, cos_m.double(), sin_m.double())
        _, k_n = module.apply_rotary_pos_emb(kt, kt, cos_n.double(), sin_n.double())
        dots = (q_m[0, :, 0] * k_n[0, :, 0]).sum(-1).numpy()
        column = int(np.flatnonzero(pattern.distances == m - n)[0])
        np.testing.assert_allclose(pattern.score[:, column] + pattern.constant, dots, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_usage_of_an_interleaved_gptj(tmp_path, monkeypatch):
    """GPT-J turns neighbouring dims (rotate_every_two) of its first rotary_dim dims; its q_proj and k_proj live
    under transformer.h.<n>.attn. Its own apply_rotary_pos_emb(tensor, sin, cos) is spied on: called on k_rot, then
    q_rot."""
    from transformers.models.gptj import modeling_gptj

    torch.manual_seed(3)
    config = transformers.GPTJConfig(n_embd=HIDDEN, n_head=4, rotary_dim=4, n_layer=2, vocab_size=40, n_positions=64)
    config._attn_implementation = "eager"
    model = transformers.GPTJForCausalLM(config).eval()
    model.save_pretrained(tmp_path)
    usage = fu.rope_frequency_usage(tmp_path)
    assert usage.layout == "interleaved" and usage.rotary_dim == 4

    original = modeling_gptj.apply_rotary_pos_emb
    sin1, cos1 = model.transformer.rotary_emb(torch.zeros(1), position_ids=torch.ones(1, 1, dtype=torch.long))
    eye = torch.eye(4)[None, None]  # (batch, seq, "heads" = basis vectors, rot)
    turned = original(eye, sin1, cos1)[0, 0].double().numpy()
    pairs = sorted(
        {tuple(sorted((d, next(e for e in range(4) if e != d and abs(turned[d, e]) > 1e-7)))) for d in range(4)},
        key=lambda pair: -np.arctan2(abs(turned[pair[0], pair[1]]), turned[pair[0], pair[0]]),
    )
    assert pairs == [(0, 1), (2, 3)]
    basis = torch.cat([torch.eye(HIDDEN), torch.zeros(1, HIDDEN)])[None]
    sin0, cos0 = model.transformer.rotary_emb(basis, position_ids=torch.zeros(1, HIDDEN + 1, dtype=torch.long))
    for n, block in enumerate(model.transformer.h):
        captured = []

        def spy(tensor, sin, cos, captured=captured):
            captured.append(tensor.double().numpy()[0])  # (tokens, heads, rot)
            return original(tensor, sin, cos)

        monkeypatch.setattr(modeling_gptj, "apply_rotary_pos_emb", spy)
        with torch.no_grad():
            block.attn(hidden_states=basis, position_embeddings=(sin0, cos0), attention_mask=None)
        monkeypatch.setattr(modeling_gptj, "apply_rotary_pos_emb", original)
        k_rot, q_rot = captured
        for states, result in ((q_rot, usage.query[n]), (k_rot, usage.key[n])):
            rows = states[:HIDDEN] - states[HIDDEN:]  # (hidden, heads, rot)
            expected = [[np.sqrt((rows[:, h, list(p)] ** 2).sum()) for p in pairs] for h in range(4)]
            np.testing.assert_allclose(result, expected, rtol=1e-6)


def test_quantised_projections_are_refused(tmp_path):
    from safetensors.torch import save_file

    tensors = {
        "model.layers.0.self_attn.q_proj.weight": torch.ones(8, 8).to(torch.float8_e4m3fn),
        "model.layers.0.self_attn.k_proj.weight": torch.ones(4, 8).to(torch.float8_e4m3fn),
    }
    save_file(tensors, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(LLAMA))
    with pytest.raises(posviz_checkpoint_error(), match="stored as float8_e4m3fn; posviz reads projections stored as"):
        fu.rope_frequency_usage(tmp_path)


def test_multimodal_checkpoint_reads_its_language_model():
    rng = np.random.default_rng(5)
    text = {**LLAMA, "head_dim": 4}
    language = {
        f"model.layers.{n}.self_attn.{p}.weight": rng.standard_normal((rows, 8))
        for n in range(2)
        for p, rows in (("q_proj", 8), ("k_proj", 4))
    }
    vision = {  # a longer stack whose shapes do not fit the text config
        f"vision_tower.encoder.layers.{n}.self_attn.{p}.weight": rng.standard_normal((6, 6))
        for n in range(3)
        for p in ("q_proj", "k_proj")
    }
    renamed = {k.replace("model.layers", "model.language_model.layers"): v for k, v in language.items()}
    config = {"model_type": "llava", "text_config": text, "vision_config": {"hidden_size": 6, "num_attention_heads": 2}}
    usage = fu.rope_frequency_usage({**vision, **renamed}, config=config)
    alone = fu.rope_frequency_usage(language, config=text)
    np.testing.assert_array_equal(usage.layers, [0, 1])
    np.testing.assert_array_equal(usage.query, alone.query)
    np.testing.assert_array_equal(usage.key, alone.key)
    with pytest.raises(
        ckpt.ConfigMismatch, match=r"2 query heads x head_dim 4 = 8 rows for vision_tower.* shape \(6, 6\)"
    ):
        fu.rope_frequency_usage(vision, config=config)


def test_swing_sorts_positional_heads():
    theta = 10000.0 ** (-np.arange(4) / 4)
    q = np.random.default_rng(6).standard_normal((3, 8))
    q[1, :] = 0.0  # a head whose query is zero on every pair: no positional score at all
    k = np.random.default_rng(7).standard_normal((1, 8))
    pattern = fu.rope_score_pattern(q, k, theta, np.arange(-20, 21))
    np.testing.assert_allclose(pattern.swing, pattern.score.max(1) - pattern.score.min(1))
    assert pattern.swing[1] == 0 and pattern.swing[0] > 0 and pattern.swing[2] > 0


def test_uploaded_bytes_read_like_the_state_dict():
    from safetensors.numpy import save

    rng = np.random.default_rng(8)
    tensors = {
        "model.layers.0.self_attn.q_proj.weight": rng.standard_normal((8, 8)).astype(np.float32),
        "model.layers.0.self_attn.k_proj.weight": rng.standard_normal((4, 8)).astype(np.float32),
    }
    uploaded = fu.rope_frequency_usage(save(tensors), config=LLAMA)
    np.testing.assert_array_equal(uploaded.query, fu.rope_frequency_usage(tensors, config=LLAMA).query)
    w = tensors["model.layers.0.self_attn.q_proj.weight"].astype(np.float64).reshape(2, 4, 8)
    np.testing.assert_allclose(uploaded.query[0], np.sqrt((w[:, :2] ** 2).sum(-1) + (w[:, 2:] ** 2).sum(-1)))
