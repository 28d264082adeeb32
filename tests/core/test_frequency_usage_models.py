"""Frequency usage of tiny checkpoints of today's RoPE models against each model's own attention module.

For every model the oracle is its modeling code, never posviz's idea of the layout: which layers rotate is seen by
spying on the model's own apply-rotary function during a forward pass; which dimensions form a pair, and how fast
each pair turns, by turning the basis vectors of a head with that function and the model's rotary embedding at
positions 0 and 1 (G[a, b] = R_1 e_a . R_0 e_b is the rotation in the head's own coordinates, so a permuted output,
as DeepSeek-V3's interleaved variant returns, does not matter); the rows of each head are taken from the attention
module's weights as its forward splits them (MLA: q_proj / q_b_proj per head, the rope dims last; the rotary key the
last qk_rope_head_dim rows of kv_a_proj_with_mqa). The norms are then computed in torch."""

from __future__ import annotations

import inspect
import json
import sys

import numpy as np
import pytest
import torch
import transformers

from posviz import checkpoint as ckpt
from posviz.lessons import frequency_usage as fu

HIDDEN = 32
COMMON = dict(hidden_size=HIDDEN, intermediate_size=16, num_hidden_layers=4, vocab_size=40)


def _config(kind: str):
    if kind == "llama":
        return transformers.LlamaConfig(num_attention_heads=4, num_key_value_heads=2, **COMMON)
    if kind == "qwen3_moe":
        return transformers.Qwen3MoeConfig(
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            num_experts=2,
            num_experts_per_tok=1,
            moe_intermediate_size=8,
            **COMMON,
        )
    if kind == "mixtral":
        return transformers.MixtralConfig(
            num_attention_heads=4, num_key_value_heads=2, num_local_experts=2, num_experts_per_tok=1, **COMMON
        )
    if kind in ("gemma4_text", "gemma4_shared"):
        # sliding layers: head_dim 8, default RoPE; full layers: 16, proportional, 2 kv heads; gemma4_shared: the
        # last two layers reuse the keys of the first two (KV sharing)
        return transformers.Gemma4TextConfig(
            num_kv_shared_layers=2 if kind == "gemma4_shared" else 0,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=8,
            global_head_dim=16,
            attention_k_eq_v=True,
            num_global_key_value_heads=2,
            layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
            sliding_window=16,
            hidden_size_per_layer_input=4,
            vocab_size_per_layer_input=40,
            **COMMON,
        )
    if kind == "cohere2":
        return transformers.Cohere2Config(num_attention_heads=4, num_key_value_heads=2, **COMMON)
    if kind in ("deepseek_v3", "deepseek_v3_q"):  # with a low-rank query (q_b_proj), and without (q_proj)
        return transformers.DeepseekV3Config(
            num_attention_heads=4,
            num_key_value_heads=4,
            q_lora_rank=12 if kind == "deepseek_v3" else None,
            kv_lora_rank=10,
            qk_nope_head_dim=6,
            qk_rope_head_dim=8,
            v_head_dim=6,
            n_routed_experts=2,
            num_experts_per_tok=1,
            moe_intermediate_size=8,
            first_k_dense_replace=1,
            n_group=1,
            topk_group=1,
            **COMMON,
        )
    if kind == "deepseek_v4":  # a sliding, a compressed-sparse, a heavily compressed layer: two bases
        return transformers.DeepseekV4Config(
            num_attention_heads=4,
            num_key_value_heads=1,
            head_dim=16,
            q_lora_rank=12,
            o_groups=2,
            o_lora_rank=8,
            n_routed_experts=2,
            num_experts_per_tok=1,
            moe_intermediate_size=8,
            index_n_heads=2,
            index_head_dim=8,
            index_topk=4,
            sliding_window=8,
            hc_mult=2,
            layer_types=[
                "sliding_attention",
                "compressed_sparse_attention",
                "heavily_compressed_attention",
                "sliding_attention",
            ],
            rope_parameters={
                "main": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
                "compress": {"rope_type": "default", "rope_theta": 160000.0, "partial_rotary_factor": 0.5},
            },
            **COMMON,
        )
    if kind == "smollm3":
        return transformers.SmolLM3Config(num_attention_heads=4, num_key_value_heads=2, pad_token_id=0, **COMMON)
    raise AssertionError(kind)


KINDS = (
    "llama", "qwen3_moe", "mixtral", "gemma4_text", "gemma4_shared", "cohere2", "deepseek_v3", "deepseek_v3_q",
    "deepseek_v4", "smollm3",
)  # fmt: skip
#: What each model's modeling code does, for the assertions that name it (the oracle finds it by itself).
LAYOUTS = {k: "interleaved" for k in ("cohere2", "deepseek_v3", "deepseek_v3_q", "deepseek_v4")}
NOPE = {"cohere2": [3], "smollm3": [3]}


def _build(kind: str):
    torch.manual_seed(KINDS.index(kind))
    config = _config(kind)
    config._attn_implementation = "eager"
    return transformers.AutoModelForCausalLM.from_config(config).eval()


def _modeling(model):
    return sys.modules[type(model.model.layers[0].self_attn).__module__]


def _apply_name(model) -> str:
    mla = hasattr(model.model.layers[0].self_attn, "kv_a_proj_with_mqa")
    return "apply_rotary_pos_emb_interleave" if mla and model.config.rope_interleave else "apply_rotary_pos_emb"


def rotating_layers(model, monkeypatch) -> list[int]:
    """The layers whose attention calls the model's apply-rotary function in a forward pass."""
    module, name = _modeling(model), _apply_name(model)
    original = getattr(module, name)
    current, seen = [None], set()

    def spy(*args, **kwargs):
        seen.add(current[0])
        return original(*args, **kwargs)

    hooks = [
        layer.self_attn.register_forward_pre_hook(lambda _m, _a, n=n: current.__setitem__(0, n))
        for n, layer in enumerate(model.model.layers)
    ]
    monkeypatch.setattr(module, name, spy)
    with torch.no_grad():
        model(input_ids=torch.tensor([[1, 2, 3]]))
    monkeypatch.setattr(module, name, original)
    for hook in hooks:
        hook.remove()
    return sorted(seen)


def model_pairs(model, layer: int) -> list[tuple[int, int, float]]:
    """[(dim a, dim b, theta)] of the rotary part of layer ``layer``'s heads, fastest first, by the model's own
    rotary embedding and apply-rotary function; dims that do not turn (zero frequency) are in no pair."""
    module = _modeling(model)
    apply = getattr(module, _apply_name(model))
    attention = model.model.layers[layer].self_attn
    dim = getattr(attention, "qk_rope_head_dim", None) or attention.head_dim
    rotary = model.model.rotary_emb
    takes_type = "layer_type" in inspect.signature(rotary.forward).parameters
    eye = torch.eye(dim, dtype=torch.float64)[None, :, None, :]  # (batch, "heads" = basis vectors, seq, dim)

    def turned(position: int) -> np.ndarray:
        ids = torch.tensor([[position]])
        # the rope parameters the layer reads: its layer type's, or those its attention names (DeepSeek-V4)
        extra = {}
        if takes_type:
            extra["layer_type"] = getattr(attention, "rope_layer_type", None) or model.config.layer_types[layer]
        cos, sin = rotary(torch.zeros(1, 1, dim), position_ids=ids, **extra)
        if "k" in inspect.signature(apply).parameters:
            out, _ = apply(eye, eye, cos.double(), sin.double())
        else:
            out = apply(eye, cos.double(), sin.double())
        return out[0, :, 0].numpy()

    g = turned(1) @ turned(0).T  # g[a, b] = R_1 e_a . R_0 e_b
    pairs = []
    for a in range(dim):
        for b in range(a + 1, dim):
            if abs(g[a, b]) > 1e-9:
                pairs.append((a, b, float(np.arctan2(abs(g[a, b]), g[a, a]))))
    return sorted(pairs, key=lambda p: -p[2])


def model_rows(model, layer: int) -> tuple[torch.Tensor, torch.Tensor, int]:
    """(query rows (heads, head_dim, in), key rows (kv heads, k dims, in), offset of the rotary dims in a query
    head), from the attention module's weights as its forward splits them."""
    attention = model.model.layers[layer].self_attn
    if hasattr(attention, "kv_a_proj_with_mqa"):  # DeepseekV3Attention
        q = attention.q_proj if attention.q_proj is not None else attention.q_b_proj
        w = q.weight.detach().double()
        q_rows = w.view(attention.num_heads, attention.qk_head_dim, w.shape[1])
        k_rows = attention.kv_a_proj_with_mqa.weight.detach().double()[attention.kv_lora_rank :][None]
        return q_rows, k_rows, attention.qk_nope_head_dim
    hd = attention.head_dim
    if getattr(attention, "is_kv_shared_layer", False):  # its keys: the layer of its type that stores them
        modes, types = model.config.kv_sharing_modes, model.config.layer_types
        source = next(j for j, m in enumerate(modes) if m == "store" and types[j] == types[layer])
        wq = attention.q_proj.weight.detach().double()
        wk = model.model.layers[source].self_attn.k_proj.weight.detach().double()
        return wq.view(-1, hd, wq.shape[1]), wk.view(-1, hd, wk.shape[1]), 0
    if hasattr(attention, "kv_proj"):  # DeepseekV4Attention: q_b_proj per head, one key(-and-value) head
        wq, wk = attention.q_b_proj.weight.detach().double(), attention.kv_proj.weight.detach().double()
        return wq.view(-1, hd, wq.shape[1]), wk.view(-1, hd, wk.shape[1]), 0
    wq, wk = attention.q_proj.weight.detach().double(), attention.k_proj.weight.detach().double()
    return wq.view(-1, hd, wq.shape[1]), wk.view(-1, hd, wk.shape[1]), 0


def expected(model, layer: int):
    pairs = model_pairs(model, layer)
    q_rows, k_rows, offset = model_rows(model, layer)
    a = torch.tensor([p[0] for p in pairs])
    b = torch.tensor([p[1] for p in pairs])

    def norms(rows, shift):
        return torch.sqrt((rows[:, shift + a] ** 2).sum(-1) + (rows[:, shift + b] ** 2).sum(-1)).numpy()

    return norms(q_rows, offset), norms(k_rows, 0), np.array([p[2] for p in pairs]), pairs


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    out = {}
    for kind in KINDS:
        model = _build(kind)
        folder = tmp_path_factory.mktemp(kind)
        model.save_pretrained(folder, safe_serialization=True)
        out[kind] = (model, folder)
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_usage_equals_the_models_own_attention(kind, saved, monkeypatch):
    model, folder = saved[kind]
    assert (folder / "model.safetensors").is_file()
    rotating = rotating_layers(model, monkeypatch)
    assert rotating == [n for n in range(4) if n not in NOPE.get(kind, [])]
    first = fu.rope_frequency_usage(folder)
    assert list(first.nope_layers) == [n for n in range(4) if n not in rotating]
    measured = []
    for group in range(len(first.groups)):
        usage = fu.rope_frequency_usage(folder, group=group)
        assert usage.group == group and list(usage.layers) == list(usage.groups[group].layers)
        for slot, n in enumerate(usage.layers):
            query, key, theta, pairs = expected(model, int(n))
            np.testing.assert_allclose(usage.query[slot], query, rtol=1e-6)
            np.testing.assert_allclose(usage.key[slot], key, rtol=1e-6)
            np.testing.assert_allclose(usage.inv_freq, theta, rtol=1e-5, atol=1e-7)
            interleaved = all(b == a + 1 and a % 2 == 0 for a, b, _ in pairs)
            assert usage.layout == ("interleaved" if interleaved else "half") == LAYOUTS.get(kind, "half")
            measured.append(int(n))
    assert sorted(measured) == rotating  # every rotating layer in exactly one group, no NoPE layer among them


def test_gemma4_groups_and_zero_frequency_pairs(saved):
    """Gemma 4's sliding layers (head_dim 8, default RoPE) and full layers (head_dim 16, proportional RoPE that turns
    a quarter of the pairs, 2 key-value heads) are two groups; the full layers' 6 pairs at zero frequency are left
    out, and the two that turn pair dims (i, i + 8) of the whole head."""
    _, folder = saved["gemma4_text"]
    local, full = (fu.rope_frequency_usage(folder, group=g) for g in (0, 1))
    assert [list(g.layers) for g in local.groups] == [[0, 2], [1, 3]]
    assert local.query.shape == (2, 2, 4) and local.key.shape == (2, 1, 4) and local.zero_frequency_pairs == 0
    assert full.query.shape == (2, 2, 2) and full.key.shape == (2, 2, 2) and full.zero_frequency_pairs == 6
    assert full.head_dim == full.rotary_dim == 16 and np.all(full.inv_freq > 0)
    assert [list(g.layers) for g in full.other_groups] == [[0, 2]]
    np.testing.assert_array_equal(fu.rope_frequency_usage(folder, layers=[3]).query, full.query[1:])
    with pytest.raises(ValueError, match="layer 1 .* rotates with other frequencies than layer 0"):
        fu.rope_frequency_usage(folder, layers=[0, 1])


def test_nope_layers_are_named_not_measured(saved):
    _, folder = saved["smollm3"]
    with pytest.raises(ValueError, match="layer 3 has no rotary embedding \\(NoPE\\)"):
        fu.rope_frequency_usage(folder, layers=[3])
    with pytest.raises(ValueError, match="layer 3 has no rotary embedding"):
        fu.head_score_pattern(folder, 3, np.arange(-2, 3))


def test_mla_shapes_and_score_pattern_refused(saved):
    model, folder = saved["deepseek_v3"]
    usage = fu.rope_frequency_usage(folder)
    assert usage.mla and usage.head_dim == 14 and usage.rotary_dim == 8
    assert usage.query.shape == (4, 4, 4) and usage.key.shape == (4, 1, 4)  # one rotary key shared by all heads
    with pytest.raises(ckpt.UnsupportedAttention, match="multi-head latent attention"):
        fu.head_score_pattern(folder, 0, np.arange(-2, 3))


@pytest.mark.parametrize("kind", ["gemma4_text", "deepseek_v3", "cohere2"])
def test_weights_of_another_config_are_one_sentence(kind, saved, tmp_path):
    model, folder = saved[kind]
    config = json.loads((folder / "config.json").read_text())
    if kind == "deepseek_v3":
        config["kv_lora_rank"] = 12
        pattern = r"kv_lora_rank 12 \+ qk_rope_head_dim 8 = 20 rows .* shape \(18, 32\)"
    elif kind == "gemma4_text":
        for n in ("1", "3"):  # the full layers' keys read as one head
            config["per_layer_config"][n]["num_key_value_heads"] = 1
        pattern = r"1 key-value heads x head_dim 16 = 16 rows .*k_proj.* shape \(32, 32\)"
    else:
        config["num_attention_heads"] = 2
        pattern = r"2 query heads x head_dim 8 = 16 rows .*q_proj.* shape \(32, 32\)"
    with pytest.raises(ckpt.ConfigMismatch, match=pattern) as caught:
        fu.rope_frequency_usage(folder, config=config, group=1 if kind == "gemma4_text" else None)
    assert "\n" not in str(caught.value)


def head_norm_modules(model, layer: int) -> list[str]:
    """The attention's weighted normalisations whose input, in a forward pass, is a query or key head (or all of
    them): the modules that rescale each dimension after the projections."""
    attention = model.model.layers[layer].self_attn
    projections = ("q_proj", "k_proj", "q_b_proj", "kv_proj")
    sizes = {getattr(attention, "head_dim", None) or attention.qk_head_dim}
    sizes |= {getattr(attention, p).out_features for p in projections if getattr(attention, p, None) is not None}
    seen: dict[str, int] = {}

    def record(name):
        def hook(_module, args):
            seen.setdefault(name, args[0].shape[-1])

        return hook

    hooks = [
        module.register_forward_pre_hook(record(name))
        for name, module in attention.named_children()
        if "norm" in name and getattr(module, "weight", None) is not None
    ]
    with torch.no_grad():
        model(input_ids=torch.tensor([[1, 2, 3]]))
    for hook in hooks:
        hook.remove()
    return [name for name, size in seen.items() if size in sizes]


@pytest.mark.parametrize("kind", KINDS)
def test_the_query_and_key_normalisations_are_named(kind, saved):
    """The usage leaves out a normalisation after the projections, and names the ones the model applies (Qwen3's
    and Gemma 4's q_norm / k_norm, DeepSeek-V4's kv_norm, which its checkpoints store as ``norm``), so that the
    page can say so; MLA's latent normalisations come before the projections and are not among them."""
    model, folder = saved[kind]
    usage = fu.rope_frequency_usage(folder)
    applied = head_norm_modules(model, int(usage.layers[0]))
    if kind == "deepseek_v4":
        assert applied == ["kv_norm"] and usage.head_norms == ("norm",)
    else:
        assert sorted(usage.head_norms) == sorted(applied)
    assert bool(applied) == (kind in ("qwen3_moe", "gemma4_text", "gemma4_shared", "deepseek_v4"))


def test_kv_shared_layers_read_the_keys_they_reuse(saved):
    """Gemma 4's last num_kv_shared_layers layers project no keys: their key usage is that of the layer whose keys
    they reuse (the one transformers' kv_sharing_modes marks "store" for their type), and the page is told which."""
    model, folder = saved["gemma4_shared"]
    assert model.model.layers[2].self_attn.is_kv_shared_layer and model.model.layers[3].self_attn.is_kv_shared_layer
    local, full = (fu.rope_frequency_usage(folder, group=g) for g in (0, 1))
    assert local.kv_shared == {2: 0} and full.kv_shared == {3: 1}
    np.testing.assert_array_equal(local.key[1], local.key[0])
    assert not np.array_equal(local.query[1], local.query[0])  # the queries stay the layer's own
