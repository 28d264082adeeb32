"""posviz: see how a Transformer knows where a token is.

The compute core of the posviz app, usable from a notebook or a script without Streamlit. Every function is
vectorised numpy in float64, states its formula and its source in its docstring, and raises ``ValueError``
with a readable sentence on bad input.

Encodings
    sinusoidal, sinusoidal_frequencies, shift_matrix     Vaswani et al. 2017
    learned_init, sin_init, lookup                       BERT / GPT-2 learned tables, sinusoidal-initialised
    rope_inv_freq, apply_rope, rope_cos_sin,             RoPE (Su et al. 2021) and its context-extension
    rope_scores, rope_score_matrix,                      scalings (linear, dynamic, yarn, longrope, llama3)
    interleaved_to_half, normalize_scaling, ROPE_TYPES
    alibi_slopes, alibi_bias                             ALiBi (Press et al. 2022)
    t5_relative_bucket, t5_bucket_matrix,                relative positions: T5 (Raffel et al. 2020) and
    shaw_relative_index                                  Shaw et al. 2018
    xlnet_masks, factorisation_rank,                     XLNet two-stream attention (Yang et al. 2019)
    factorisation_order
    transformer_xl_pos_emb, rel_shift,                   Transformer-XL's relative encoding, XLNet's positions
    transformer_xl_score_terms, segment_positions        (Dai et al. 2019): R_(i-j), the four score terms, memory

Analysis (any (positions, dims) table)
    cosine_similarity_matrix, offset_profile, project, position_probe, row_norms, evenly_spaced
    principal_components (a helix?), similarity_decay and relative_order_probe (Wang & Chen 2020),
    roughness_by_position (rows noisier past some index?)

Models (posviz.models: real configs read as transformers 5.24 reads them; presets shipped, nothing downloaded)
    model_positions(config) -> ModelPositions: one LayerPositions per layer (RoPE / NoPE / ALiBi / relative bias,
    attention window, frequencies); mrope_position_ids(segments), mrope_axes(head_dim, mrope_section): Qwen2-VL /
    Qwen3-VL M-RoPE (Wang et al. 2024); rope_2d_angles(n_rows, n_cols, head_dim): Pixtral's axial 2-D RoPE

Registry
    FAMILIES, family(key): every family's name, summary, parameters and capabilities.

Checkpoints (posviz.checkpoint: safe loading of safetensors, PyTorch, .npy and .npz files and model folders)
    load_position_embeddings(source, key=None) -> PositionTable, list_position_candidates(source) -> [Candidate],
    load_model_config(source), list_cached_models(cache_dir=None) -> [CachedModel];
    errors: CheckpointError > UnsupportedFormat, CorruptFile, UnsafePickle, NoPositionTable > RopeModel,
    BadTable, TooLarge, PathNotAllowed (a path outside the app's read roots: posviz.checkpoint.read_roots);
    limits MAX_UPLOAD_BYTES, MAX_NPZ_MEMBERS
    rope_frequency_usage(source, *, layers=None, config=None) -> FrequencyUsage: the norm of the q/k weight rows
    feeding each rotary pair of each head (Barbero et al. 2025); p_rope_dropped(inv_freq, p), p_rope_share;
    head_score_pattern(source, layer, distances) / rope_score_pattern(q, k, inv_freq, distances): the positional
    part of q_m . k_n a head implies for a constant input

Training lab (posviz.lab, needs torch; loaded on first use, so ``import posviz`` does not import torch)
    TrainConfig, train(config, progress=None, snapshot_every=None, should_stop=None) -> RunResult,
    evaluate_lengths(result, lengths) -> LengthAccuracy, position_accuracy(encoding, config=None) -> float;
    posviz.lab also has ENCODINGS, save(result, path), load(path) and the corpus

Example::

    >>> import posviz
    >>> pe = posviz.sinusoidal(128, 64)
    >>> posviz.offset_profile(pe).mean_cosine[:3].round(3)
    array([1.   , 0.966, 0.884])
"""

from .analysis import (
    MAX_SIMILARITY_POSITIONS,
    Components,
    OffsetProfile,
    Roughness,
    SimilarityDecay,
    cosine_similarity_matrix,
    evenly_spaced,
    offset_profile,
    position_probe,
    principal_components,
    project,
    relative_order_probe,
    roughness_by_position,
    row_norms,
    similarity_decay,
)
from .base.checks import MAX_DIM, MAX_POSITIONS
from .checkpoint import (
    MAX_NPZ_MEMBERS,
    MAX_UPLOAD_BYTES,
    BadTable,
    CachedModel,
    Candidate,
    CheckpointError,
    CorruptFile,
    NoPositionTable,
    PathNotAllowed,
    PositionTable,
    RopeModel,
    TooLarge,
    UnsafePickle,
    UnsupportedFormat,
    list_cached_models,
    list_position_candidates,
    load_model_config,
    load_position_embeddings,
)
from .encodings.alibi import alibi_bias, alibi_slopes
from .encodings.learned import learned_init, lookup, sin_init
from .encodings.registry import FAMILIES, Family, Param, family
from .encodings.relative import shaw_relative_index, t5_bucket_matrix, t5_relative_bucket
from .encodings.rope import (
    ROPE_TYPES,
    apply_rope,
    interleaved_to_half,
    normalize_scaling,
    rope_cos_sin,
    rope_inv_freq,
    rope_score_matrix,
    rope_scores,
)
from .encodings.sinusoidal import shift_matrix, sinusoidal, sinusoidal_frequencies
from .encodings.transformer_xl import (
    ScoreTerms,
    SegmentPositions,
    XLWeights,
    rel_shift,
    segment_positions,
    transformer_xl_offsets,
    transformer_xl_pos_emb,
    transformer_xl_score_terms,
    xl_demo_weights,
)
from .encodings.xlnet import factorisation_order, factorisation_rank, xlnet_masks
from .lessons.frequency_usage import (
    FrequencyUsage,
    ScorePattern,
    head_score_pattern,
    p_rope_dropped,
    p_rope_share,
    rope_frequency_usage,
    rope_score_pattern,
)
from .models import (
    LayerPositions,
    ModelPositions,
    model_positions,
    mrope_axes,
    mrope_position_ids,
    rope_2d_angles,
)

__version__ = "0.1.0"

__all__ = [
    "FAMILIES",
    "MAX_DIM",
    "MAX_NPZ_MEMBERS",
    "MAX_POSITIONS",
    "MAX_SIMILARITY_POSITIONS",
    "MAX_UPLOAD_BYTES",
    "ROPE_TYPES",
    "BadTable",
    "CachedModel",
    "Candidate",
    "CheckpointError",
    "CorruptFile",
    "Family",
    "LayerPositions",
    "ModelPositions",
    "NoPositionTable",
    "OffsetProfile",
    "Param",
    "PathNotAllowed",
    "PositionTable",
    "RopeModel",
    "TooLarge",
    "UnsafePickle",
    "UnsupportedFormat",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "cosine_similarity_matrix",
    "evenly_spaced",
    "factorisation_order",
    "factorisation_rank",
    "family",
    "interleaved_to_half",
    "learned_init",
    "list_cached_models",
    "list_position_candidates",
    "load_model_config",
    "load_position_embeddings",
    "lookup",
    "model_positions",
    "mrope_axes",
    "mrope_position_ids",
    "normalize_scaling",
    "offset_profile",
    "position_probe",
    "project",
    "rope_2d_angles",
    "rope_cos_sin",
    "rope_inv_freq",
    "rope_score_matrix",
    "rope_scores",
    "row_norms",
    "shaw_relative_index",
    "shift_matrix",
    "sin_init",
    "sinusoidal",
    "sinusoidal_frequencies",
    "t5_bucket_matrix",
    "t5_relative_bucket",
    "xlnet_masks",
]

#: Transformer-XL's relative encoding (Dai et al. 2019), XLNet's positions.
__all__ += [
    "ScoreTerms",
    "SegmentPositions",
    "XLWeights",
    "rel_shift",
    "segment_positions",
    "transformer_xl_offsets",
    "transformer_xl_pos_emb",
    "transformer_xl_score_terms",
    "xl_demo_weights",
]

#: The classic findings about learned tables, as questions any table answers (analysis.py).
__all__ += [
    "Components",
    "Roughness",
    "SimilarityDecay",
    "principal_components",
    "relative_order_probe",
    "roughness_by_position",
    "similarity_decay",
]

#: RoPE frequency usage of a checkpoint (Barbero et al. 2025).
__all__ += [
    "FrequencyUsage",
    "ScorePattern",
    "head_score_pattern",
    "p_rope_dropped",
    "p_rope_share",
    "rope_frequency_usage",
    "rope_score_pattern",
]

#: Names of the training lab re-exported here; they import torch, so they load on first use (PEP 562).
_LAB_NAMES = ("LengthAccuracy", "RunResult", "TrainConfig", "evaluate_lengths", "position_accuracy", "train")


def __getattr__(name: str):
    if name == "lab" or name in _LAB_NAMES:
        from importlib import import_module

        lab = import_module(".lab", __name__)
        return lab if name == "lab" else getattr(lab, name)
    raise AttributeError(f"module 'posviz' has no attribute {name!r}")
