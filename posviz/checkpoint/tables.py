"""Find the position table in a model and load it as a float64 (positions, dims) matrix.

Known tensor names, matched at the end of the key whatever its prefix (``bert.``, ``transformer.``, ``model.``):

==========================================  ==========================================================  ========
key ends with                               models                                                      kind
==========================================  ==========================================================  ========
``embeddings.position_embeddings.weight``   BERT, ALBERT, ELECTRA, RoBERTa, XLM-R, DistilBERT           absolute
``wpe.weight``                              GPT-2, GPT-Neo                                              absolute
``embed_positions.weight``                  OPT, BART (2 offset rows)                                   absolute
``relative_attention_bias.weight``          T5: (num_buckets, n_heads) learned biases                   t5_bias
``position_embeddings.weight``              any other learned table, e.g. the posviz training lab       absolute
==========================================  ==========================================================  ========

Offset rows are rows of the table that no real position uses:

- OPT and BART (``OPTLearnedPositionalEmbedding``, ``BartLearnedPositionalEmbedding``) look up position p at row
  p + 2, a shift kept from fairseq; rows 0 and 1 are never used.
- RoBERTa and its relatives (XLM-R, CamemBERT, Longformer, MPNet, ...) number positions from ``padding_idx + 1``
  (``create_position_ids_from_input_ids`` in transformers): with ``pad_token_id`` = 1, row 1 is the padding
  position (kept at zero by ``nn.Embedding(padding_idx=1)``), row 0 is unused and the first token sits at row 2.

With a config.json the offset follows ``model_type`` (and ``rows == max_position_embeddings + 2`` for other models
with ``embed_positions``); without one, a BERT- or OPT-style table with 2^k + 2 rows is taken to have 2 offset rows.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..base.checks import MAX_DIM, MAX_POSITIONS
from ..models.rope_configs import RopeConfig, parse_config
from .blob import FLOAT_DTYPES, TensorInfo
from .errors import BadTable, NoPositionTable, RopeModel, TooLarge
from .sources import Model, open_model


@dataclasses.dataclass(frozen=True)
class KnownKey:
    """A tensor name known to hold position information, the models that use it and what kind of table it is."""

    suffix: str
    name: str
    kind: str

    def matches(self, key: str) -> bool:
        return key == self.suffix or key.endswith("." + self.suffix)


BERT = KnownKey("embeddings.position_embeddings.weight", "BERT-style absolute", "absolute")
GPT2 = KnownKey("wpe.weight", "GPT-2-style absolute", "absolute")
OPT = KnownKey("embed_positions.weight", "OPT/BART-style absolute", "absolute")
T5 = KnownKey("relative_attention_bias.weight", "T5 relative attention bias", "t5_bias")
LEARNED = KnownKey("position_embeddings.weight", "learned absolute", "absolute")

#: Checked in this order: the first that matches names the key's family.
KNOWN_KEYS = (BERT, GPT2, OPT, T5, LEARNED)

#: model_type values whose ``embed_positions`` table has 2 offset rows.
OFFSET_TWO_TYPES = frozenset({"opt", "bart", "mbart", "mvp", "plbart", "biogpt", "trocr"})

#: model_type values that number positions from padding_idx + 1 (RoBERTa's scheme).
PADDING_OFFSET_TYPES = frozenset(
    {
        "roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "data2vec-text", "ibert", "longformer",
        "roberta-prelayernorm", "mpnet", "xmod", "lilt", "markuplm", "layoutlmv3", "luke",
    }
)  # fmt: skip


def known_key(key: str) -> KnownKey | None:
    """The family a tensor name is known for, or None."""
    return next((known for known in KNOWN_KEYS if known.matches(key)), None)


def _rank(key: str) -> tuple:
    """Sort order of candidates: known names first (in KNOWN_KEYS order, encoder before decoder), then names
    containing "pos", then the rest, alphabetically within each group."""
    known = known_key(key)
    if known is not None:
        return (0, KNOWN_KEYS.index(known), "decoder" in key, len(key), key)
    return (1 if "pos" in key.lower() else 2, 0, False, 0, key)


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A 2-D floating-point tensor that could be a position table."""

    key: str
    shape: tuple[int, ...]
    dtype: str
    known: str | None


@dataclasses.dataclass(frozen=True, eq=False)
class PositionTable:
    """A position table loaded from a model file.

    ``matrix`` is every stored row, (n_rows, d) float64 and C-contiguous; its first ``offset`` rows are not real
    positions (see the module docstring), so ``table`` = ``matrix[offset:]`` is indexed by position. For ``kind`` =
    "t5_bias" the matrix is T5's (num_buckets, n_heads) bias table. ``dtype`` is the precision it was stored in,
    ``format`` the file format, ``source`` a name to show, ``config`` the model's config.json (or None) and ``known``
    the family its key is known for (or None when the key was picked by hand).
    """

    matrix: np.ndarray
    key: str
    offset: int
    kind: str
    format: str
    source: str
    config: dict | None
    dtype: str
    known: str | None = None

    @property
    def table(self) -> np.ndarray:
        """The rows that belong to positions 0, 1, 2, ...: ``matrix[offset:]``."""
        return self.matrix[self.offset :]

    def summary(self) -> dict:
        """Shape, offset, kind, stored dtype, row norms (min, mean, max) and the mean cosine similarity of each
        position with the next one, cos(PE(p), PE(p+1)), over the real positions."""
        table = self.table
        norms = np.linalg.norm(table, axis=1)
        unit = table / np.where(norms > 0, norms, 1.0)[:, None]
        neighbour = np.einsum("ij,ij->i", unit[1:], unit[:-1])
        return {
            "key": self.key,
            "shape": list(self.matrix.shape),
            "offset": self.offset,
            "kind": self.kind,
            "dtype": self.dtype,
            "format": self.format,
            "row_norm_min": float(norms.min()),
            "row_norm_mean": float(norms.mean()),
            "row_norm_max": float(norms.max()),
            "neighbour_cosine_mean": float(neighbour.mean()) if neighbour.size else float("nan"),
        }


def list_position_candidates(source, *, name: str | None = None) -> list[Candidate]:
    """Every 2-D floating-point tensor of ``source`` (bytes, a file or a folder path) that could be a position table,
    known names first, then names containing "pos", then the rest. Reads headers and shapes only, never tensor
    data (a sharded model: every shard's header)."""
    return _candidates(open_model(source, name))


def _candidates(model: Model) -> list[Candidate]:
    entries = model.entries()
    return [
        Candidate(key, info.shape, info.dtype, getattr(known_key(key), "name", None))
        for key, info in sorted(entries.items(), key=lambda item: _rank(item[0]))
        if len(info.shape) == 2 and info.floating
    ]


def load_position_embeddings(source, key: str | None = None, *, name: str | None = None) -> PositionTable:
    """Load the position table of a model file or folder (a path) or of a file's bytes (an upload).

    ``key`` selects a tensor by its full name; None picks the best known key (see the module docstring), or the
    only tensor of a single-array file. Only that tensor is read. ``name`` labels bytes in messages and in
    ``.source``.

    Raises a :class:`CheckpointError` subclass with a readable sentence: UnsupportedFormat, CorruptFile,
    UnsafePickle, NoPositionTable (listing the candidates), RopeModel (a RoPE model: ``.config`` and ``.rope`` hold
    its settings), BadTable (not 2-D, empty, not floating point, NaN/Inf) or TooLarge.
    """
    model = open_model(source, name)
    key = key if key is not None else _choose(model)
    tensor_file = model.file_for(key)
    info = tensor_file.entries[key]
    where = f"{model.name}: {key!r}"
    _check_shape(where, info)
    with np.errstate(invalid="ignore"):  # a signalling NaN widens with a warning; _check_finite reports it
        matrix = np.array(tensor_file.read(key), dtype=np.float64, order="C")
    _check_finite(where, matrix)
    known = known_key(key)
    return PositionTable(
        matrix=matrix,
        key=key,
        offset=position_offset(known, matrix.shape[0], model.config),
        kind=known.kind if known else "absolute",
        format=tensor_file.format,
        source=model.name,
        config=model.config,
        dtype=info.dtype,
        known=known.name if known else None,
    )


def _choose(model: Model) -> str:
    names = model.names()
    known = sorted((key for key in names if known_key(key)), key=_rank)
    if known:
        return known[0]
    if len(names) == 1:
        return names[0]
    rope = rope_config(model.config)
    if rope is not None and model.config is not None:  # rope_config finds RoPE settings only in a config
        raise RopeModel(
            f"{model.name} is a RoPE model: it has no position table, it rotates queries and keys instead "
            f"(head_dim {rope.head_dim}, base {rope.base:g}, scaling {rope.rope_type}). Open it in the RoPE view.",
            model.config,
            rope,
        )
    if not names:
        raise NoPositionTable(
            f"{model.name} holds no model weights (model.safetensors, pytorch_model.bin or a sharded index)"
        )
    candidates = _candidates(model)
    if not candidates:
        raise NoPositionTable(f"{model.name} holds no 2-D floating-point tensor that could be a position table")
    listed = "; ".join(f"{c.key} {c.shape}" for c in candidates[:8]) + ("; ..." if len(candidates) > 8 else "")
    raise NoPositionTable(
        f"{model.name} has no tensor with a known position-table name; pick one of its {len(candidates)} "
        f"2-D tensors by key: {listed}"
    )


def rope_config(config: dict | None) -> RopeConfig | None:
    """The RoPE settings of its first rotating layer when ``config`` describes a model that rotates (read by
    ``parse_config``, through the one config reader: any model type transformers registers), else None."""
    if not config:
        return None
    try:
        return parse_config(config)
    except ValueError:
        return None


def position_offset(known: KnownKey | None, rows: int, config: dict | None) -> int:
    """How many leading rows of the table are not positions (see the module docstring)."""
    if known not in (BERT, OPT):
        return 0
    config = config or {}
    model_type = config.get("model_type")
    if known is BERT and model_type in PADDING_OFFSET_TYPES:
        pad = config.get("pad_token_id")
        offset = pad + 1 if isinstance(pad, int) and pad >= 0 else 2
    elif known is OPT and model_type in OFFSET_TWO_TYPES:
        offset = 2
    elif known is OPT and isinstance(config.get("max_position_embeddings"), int):
        offset = 2 if rows == config["max_position_embeddings"] + 2 else 0
    elif not config:
        offset = 2 if rows > 3 and (rows - 2) & (rows - 3) == 0 else 0
    else:
        offset = 0
    return offset if offset < rows else 0


def _check_shape(where: str, info: TensorInfo) -> None:
    """BadTable / TooLarge from the stored shape and dtype, before any data is read."""
    shape = info.shape
    if len(shape) != 2:
        raise BadTable(
            f"{where} is {len(shape)}-D with shape {shape}; a position table has two axes, (positions, dimensions)"
        )
    if not info.floating:
        raise BadTable(f"{where} holds {info.dtype} values; a position table is stored as {', '.join(FLOAT_DTYPES)}")
    if 0 in shape:
        raise BadTable(f"{where} is empty (shape {shape})")
    if shape[0] > MAX_POSITIONS or shape[1] > MAX_DIM:
        raise TooLarge(
            f"{where} has shape ({shape[0]:,}, {shape[1]:,}); posviz shows tables of up to {MAX_POSITIONS:,} "
            f"positions x {MAX_DIM:,} dimensions"
        )


def _check_finite(where: str, matrix: np.ndarray) -> None:
    nan, inf = int(np.isnan(matrix).sum()), int(np.isinf(matrix).sum())
    if nan or inf:
        raise BadTable(
            f"{where} holds {nan:,} NaN and {inf:,} infinite values among {matrix.size:,}: the checkpoint is damaged "
            "or its training diverged"
        )
