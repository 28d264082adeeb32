"""Open trained models safely and find their position tables.

Sources: the bytes of an uploaded file, a path to a file, a Hugging Face model folder (also sharded, also a
sentence-transformers folder) or a model in the local Hugging Face cache. Formats, decided from the leading bytes:
safetensors, PyTorch zip and old-style pickle files, numpy .npy and .npz.

Safety: PyTorch files load with ``weights_only=True`` and numpy files with ``allow_pickle=False``, so no code in a
file ever runs; a safetensors header is validated against the file size before it is trusted; only the chosen
tensor is read.

API
    load_position_embeddings(source, key=None) -> PositionTable
    list_position_candidates(source) -> list[Candidate]
    load_model_config(source) -> dict | None
    list_cached_models(cache_dir=None) -> list[CachedModel]
    fingerprint(source) -> str: a cache key that changes with the file's contents (bytes) or size and time (paths)
    CheckpointError and its subclasses UnsupportedFormat, CorruptFile, UnsafePickle, NoPositionTable, RopeModel,
    BadTable, TooLarge; the limits MAX_UPLOAD_BYTES and MAX_NPZ_MEMBERS.
    read_roots(address=None) -> tuple[Path, ...], allowed_path(path, roots) -> Path: the folders the app may read
    under (POSVIZ_READ_ROOTS, else a default that depends on whether the server listens on loopback only) and the
    check of a path against them; PathNotAllowed and ReadingNotAllowed (CheckpointErrors) when refused.
    ``qk_weights``: a RoPE checkpoint's query and key projections, found and read a block of rows at a time, with
    the errors NoAttentionProjections, UnknownFusedLayout, ConfigMismatch and UnsupportedAttention (CheckpointErrors);
    what they say about the frequencies is ``posviz.lessons.frequency_usage``.
"""

from .errors import (
    MAX_NPZ_MEMBERS,
    MAX_UPLOAD_BYTES,
    BadTable,
    CheckpointError,
    ConfigMismatch,
    CorruptFile,
    NoAttentionProjections,
    NoPositionTable,
    RopeModel,
    TooLarge,
    UnknownFusedLayout,
    UnsafePickle,
    UnsupportedAttention,
    UnsupportedFormat,
)
from .roots import PathNotAllowed, ReadingNotAllowed, allowed_path, read_roots
from .sources import CachedModel, fingerprint, hf_cache_dir, list_cached_models, load_model_config
from .tables import (
    KNOWN_KEYS,
    Candidate,
    PositionTable,
    known_key,
    list_position_candidates,
    load_position_embeddings,
    rope_config,
)

__all__ = [
    "KNOWN_KEYS",
    "MAX_NPZ_MEMBERS",
    "MAX_UPLOAD_BYTES",
    "BadTable",
    "CachedModel",
    "Candidate",
    "CheckpointError",
    "CorruptFile",
    "NoPositionTable",
    "PathNotAllowed",
    "PositionTable",
    "ReadingNotAllowed",
    "RopeModel",
    "TooLarge",
    "UnsafePickle",
    "UnsupportedAttention",
    "UnsupportedFormat",
    "allowed_path",
    "fingerprint",
    "hf_cache_dir",
    "known_key",
    "list_cached_models",
    "list_position_candidates",
    "load_model_config",
    "load_position_embeddings",
    "read_roots",
    "rope_config",
]

#: What a RoPE checkpoint's q/k weights say about its frequencies (frequency_usage.py).
__all__ += [
    "ConfigMismatch",
    "NoAttentionProjections",
    "UnknownFusedLayout",
]
