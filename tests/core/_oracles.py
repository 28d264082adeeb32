"""Independent reference implementations ("oracles") the core tests compare posviz against.

Two kinds of oracle live here:

* thin wrappers around the code Hugging Face ``transformers`` runs in real models (LLaMA, GPT-NeoX, GPT-J,
  DistilBERT, RoFormer, BLOOM, T5, XLNet). They are imported from the installed package, never downloaded:
  configs are built in-process, no ``from_pretrained``.
* plain scalar-loop derivations straight from the papers' formulas, written for clarity, not speed.

Nothing here imports posviz, so an oracle can never agree with posviz by sharing its bugs.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import transformers
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.bloom.modeling_bloom import _get_alibi_slopes, build_alibi_tensor
from transformers.models.distilbert.modeling_distilbert import _create_sinusoidal_embeddings
from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb as neox_apply_rotary_pos_emb
from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb as gptj_apply_rotary_pos_emb
from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions as gptj_sinusoidal_positions
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as llama_apply_rotary_pos_emb
from transformers.models.roformer.modeling_roformer import RoFormerSinusoidalPositionalEmbedding
from transformers.models.t5.modeling_t5 import T5Attention

# The HF config validators log warnings for the deliberately odd corner cases we feed them (factor=None, ...).
transformers.logging.set_verbosity_error()

# ----------------------------------------------------------------------------------------------------------
# Sinusoidal tables
# ----------------------------------------------------------------------------------------------------------


def bert_init_blocks(n_positions: int, d_model: int, *, std: float, seed: int, block_rows: int) -> np.ndarray:
    """A BERT-style random table as ``torch.nn.init.normal_`` fills float32 parameters: blocks of ``block_rows``
    rows, block b from a generator seeded (key + b) mod 2^32, key the first 32-bit word of SeedSequence(seed)."""
    key = int(np.random.SeedSequence(seed).generate_state(1, np.uint32)[0])
    blocks = []
    for b, first in enumerate(range(0, n_positions, block_rows)):
        weight = torch.empty(block_rows, d_model, dtype=torch.float32)
        torch.nn.init.normal_(weight, std=std, generator=torch.Generator().manual_seed((key + b) % (1 << 32)))
        blocks.append(weight.numpy()[: n_positions - first].astype(np.float64))
    return np.vstack(blocks)


def distilbert_sinusoidal(n_positions: int, d_model: int) -> np.ndarray:
    """DistilBERT's (= XLM's) interleaved table: float64 maths, stored as float32."""
    out = torch.empty(n_positions, d_model, dtype=torch.float32)
    return _create_sinusoidal_embeddings(n_pos=n_positions, dim=d_model, out=out).double().numpy()


def roformer_sinusoidal(n_positions: int, d_model: int) -> np.ndarray:
    """RoFormer's non-interleaved table: all sin columns, then all cos columns (float32)."""
    module = RoFormerSinusoidalPositionalEmbedding(n_positions, d_model)
    return module.create_weight().double().numpy()


def sinusoidal_loop(n_positions: int, d_model: int, base: float, layout: str) -> np.ndarray:
    """Vaswani et al. 2017, one scalar at a time: PE[p, 2k] = sin(p / base^(2k/d)), PE[p, 2k+1] = cos(same)."""
    n_sin = (d_model + 1) // 2  # an odd d_model ends on a sin column
    n_cos = d_model // 2
    out = np.zeros((n_positions, d_model))
    for p in range(n_positions):
        for k in range(n_sin):
            angle = p / base ** (2 * k / d_model)
            col = 2 * k if layout == "interleaved" else k
            out[p, col] = math.sin(angle)
        for k in range(n_cos):
            angle = p / base ** (2 * k / d_model)
            col = 2 * k + 1 if layout == "interleaved" else n_sin + k
            out[p, col] = math.cos(angle)
    return out


# ----------------------------------------------------------------------------------------------------------
# RoPE
# ----------------------------------------------------------------------------------------------------------


def hf_rope_config(
    head_dim: int,
    *,
    base: float,
    scaling: dict | None,
    max_position_embeddings: int,
    partial_rotary_factor: float = 1.0,
    n_heads: int = 2,
) -> LlamaConfig:
    """A tiny LlamaConfig carrying the same RoPE parameters as a posviz ``rope_inv_freq`` call."""
    params = dict(scaling or {})
    rope_type = params.pop("rope_type", None) or params.pop("type", None) or "default"
    params.pop("type", None)
    params = {"rope_type": rope_type, "rope_theta": float(base), **params}
    if partial_rotary_factor != 1.0:
        params["partial_rotary_factor"] = partial_rotary_factor
    return LlamaConfig(
        hidden_size=head_dim * n_heads,
        num_attention_heads=n_heads,
        num_key_value_heads=n_heads,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=params,
        num_hidden_layers=1,
        intermediate_size=8,
        vocab_size=8,
    )


def hf_rope_inv_freq(
    head_dim: int,
    *,
    base: float = 10000.0,
    scaling: dict | None = None,
    max_position_embeddings: int = 2048,
    seq_len: int | None = None,
    partial_rotary_factor: float = 1.0,
) -> tuple[np.ndarray, float]:
    """``transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS[type](config, "cpu", seq_len)`` (float32 maths).

    The "default" type has no entry in ROPE_INIT_FUNCTIONS; it is the linear formula with factor 1 (identical
    maths to ``LlamaRotaryEmbedding.compute_default_rope_parameters``, which ignores partial_rotary_factor).
    """
    scaling = dict(scaling or {})
    rope_type = scaling.get("rope_type", scaling.get("type", "default"))
    if rope_type == "default":
        scaling = {"rope_type": "linear", "factor": 1.0}
        rope_type = "linear"
    config = hf_rope_config(
        head_dim,
        base=base,
        scaling=scaling,
        max_position_embeddings=max_position_embeddings,
        partial_rotary_factor=partial_rotary_factor,
    )
    inv_freq, attention_factor = ROPE_INIT_FUNCTIONS[rope_type](config, "cpu", seq_len=seq_len)
    return inv_freq.double().numpy(), float(attention_factor)


def hf_default_rope_inv_freq(head_dim: int, base: float) -> np.ndarray:
    """``LlamaRotaryEmbedding.compute_default_rope_parameters`` for a full-rotary head."""
    config = hf_rope_config(head_dim, base=base, scaling=None, max_position_embeddings=2048)
    inv_freq, _ = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    return inv_freq.double().numpy()


def _as_bhsd(x: np.ndarray) -> torch.Tensor:
    """(..., seq, d) numpy -> (batch, heads, seq, d) float64 torch, flattening any leading axes into batch."""
    x = np.asarray(x, dtype=np.float64)
    lead = x.shape[:-2]
    return torch.from_numpy(x.reshape((int(np.prod(lead, dtype=int)), 1) + x.shape[-2:]).copy())


def llama_rope(x: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """Rotate x (..., seq, head_dim) the LLaMA / GPT-NeoX way ("half" layout: pairs (i, i + rot/2)).

    cos/sin are built exactly as ``LlamaRotaryEmbedding.forward`` builds them (``emb = cat(freqs, freqs)``) but in
    float64. A full-rotary head goes through ``modeling_llama.apply_rotary_pos_emb``; a partial one through
    ``modeling_gpt_neox.apply_rotary_pos_emb``, which rotates the first ``cos.shape[-1]`` dims and passes the rest.
    """
    q = _as_bhsd(x)
    pos = torch.as_tensor(np.asarray(positions, dtype=np.float64))
    inv = torch.as_tensor(np.asarray(inv_freq, dtype=np.float64))
    freqs = pos[:, None] * inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None], emb.sin()[None]  # (1, seq, rot)
    if emb.shape[-1] == q.shape[-1]:
        out, _ = llama_apply_rotary_pos_emb(q, q.clone(), cos, sin, unsqueeze_dim=1)
    else:
        out, _ = neox_apply_rotary_pos_emb(q, q.clone(), cos, sin, unsqueeze_dim=1)
    return out.numpy().reshape(np.shape(x))


def gptj_rope(x: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """Rotate x (..., seq, head_dim) the GPT-J way ("interleaved": pairs (2i, 2i+1), ``rotate_every_two``).

    Uses ``modeling_gptj.apply_rotary_pos_emb`` on the first ``rotary_dim`` dims exactly as ``GPTJAttention``
    slices ``key[:, :, :, :rotary_dim]``; sin/cos built in float64 like ``create_sinusoidal_positions``.
    """
    t = _as_bhsd(x).transpose(1, 2).contiguous()  # GPT-J works on (batch, seq, heads, head_dim)
    pos = torch.as_tensor(np.asarray(positions, dtype=np.float64))
    inv = torch.as_tensor(np.asarray(inv_freq, dtype=np.float64))
    rot = 2 * inv.shape[0]
    freqs = pos[:, None] * inv[None, :]
    sin, cos = freqs.sin()[None], freqs.cos()[None]  # (1, seq, rot/2)
    t_rot, t_pass = t[..., :rot], t[..., rot:]
    t_rot = gptj_apply_rotary_pos_emb(t_rot, sin, cos)
    out = torch.cat([t_rot, t_pass], dim=-1).transpose(1, 2)
    return out.numpy().reshape(np.shape(x))


def gptj_rope_float32(x: np.ndarray, positions: np.ndarray, rotary_dim: int) -> np.ndarray:
    """GPT-J end to end in float32: its own ``create_sinusoidal_positions`` table (base 10000), then rotation."""
    t = _as_bhsd(x).float().transpose(1, 2).contiguous()
    table = gptj_sinusoidal_positions(int(np.max(positions)) + 1, rotary_dim)
    sincos = table[torch.as_tensor(np.asarray(positions, dtype=np.int64))][None]
    sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
    t_rot, t_pass = t[..., :rotary_dim], t[..., rotary_dim:]
    out = torch.cat([gptj_apply_rotary_pos_emb(t_rot, sin, cos), t_pass], dim=-1).transpose(1, 2)
    return out.double().numpy().reshape(np.shape(x))


def llama_rope_module_float32(x: np.ndarray, positions: np.ndarray, config: LlamaConfig) -> np.ndarray:
    """LLaMA end to end in float32: a real ``LlamaRotaryEmbedding(config)`` module, then apply_rotary_pos_emb."""
    q = _as_bhsd(x).float()
    module = LlamaRotaryEmbedding(config)
    position_ids = torch.as_tensor(np.asarray(positions, dtype=np.int64))[None]
    cos, sin = module(q, position_ids)
    out, _ = llama_apply_rotary_pos_emb(q, q.clone(), cos, sin, unsqueeze_dim=1)
    return out.double().numpy().reshape(np.shape(x))


# ----------------------------------------------------------------------------------------------------------
# ALiBi
# ----------------------------------------------------------------------------------------------------------


def bloom_alibi_slopes(n_heads: int) -> np.ndarray:
    """BLOOM's ``_get_alibi_slopes`` (float32)."""
    return _get_alibi_slopes(n_heads, torch.device("cpu")).double().numpy()


def bloom_alibi_rows(n_heads: int, k_len: int) -> np.ndarray:
    """BLOOM's ``build_alibi_tensor`` for one unpadded sequence: (n_heads, k_len) = slope_h * j."""
    mask = torch.ones(1, k_len, dtype=torch.long)
    return build_alibi_tensor(mask, n_heads, torch.float32).reshape(n_heads, k_len).double().numpy()


def paper_alibi_slopes(n_heads: int) -> list[float]:
    """Press et al. 2022 reference code (ofirpress/attention_with_linear_biases), in float64."""

    def power_of_2(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n_heads).is_integer():
        return power_of_2(n_heads)
    closest = 2 ** math.floor(math.log2(n_heads))
    return power_of_2(closest) + paper_alibi_slopes(2 * closest)[0::2][: n_heads - closest]


# ----------------------------------------------------------------------------------------------------------
# Relative positions
# ----------------------------------------------------------------------------------------------------------


def t5_bucket(relative_position: np.ndarray, *, bidirectional: bool, num_buckets: int, max_distance: int) -> np.ndarray:
    """``T5Attention._relative_position_bucket`` (key index - query index -> bucket id)."""
    rel = torch.as_tensor(np.asarray(relative_position, dtype=np.int64))
    return T5Attention._relative_position_bucket(
        rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    ).numpy()


# ----------------------------------------------------------------------------------------------------------
# XLNet
# ----------------------------------------------------------------------------------------------------------


def xlnet_hf_masks(permutation) -> tuple[np.ndarray, np.ndarray]:
    """(content, query) "may attend" masks the way transformers builds them for XLNet.

    * ``DataCollatorForPermutationLanguageModeling.torch_mask_tokens``: with ``perm_index[t]`` the factorisation
      rank of token t and every token a prediction target,
      ``perm_mask = (perm_index[:, None] <= perm_index[None, :]) & masked`` (1 = i may NOT attend to j).
    * ``XLNetModel.forward``: the query stream uses ``attn_mask = perm_mask > 0``; the content stream uses
      ``non_tgt_mask = (attn_mask - eye) > 0``, i.e. it may additionally see itself.
    """
    perm = torch.as_tensor(np.asarray(permutation, dtype=np.int64))
    length = perm.shape[0]
    perm_index = torch.empty_like(perm)
    perm_index[perm] = torch.arange(length)  # rank of each token in the factorisation order
    masked = torch.ones(length, dtype=torch.bool)
    perm_mask = ((perm_index.reshape(length, 1) <= perm_index.reshape(1, length)) & masked).float()
    attn_mask = (perm_mask > 0).float()
    non_tgt_mask = ((attn_mask - torch.eye(length)) > 0).float()
    return ~non_tgt_mask.bool().numpy(), ~attn_mask.bool().numpy()
