"""The exceptions of the checkpoint loader and the limits it enforces.

Every exception is a ``CheckpointError``, itself a ``ValueError``, so a page that already catches ``ValueError``
shows the sentence instead of a traceback. Each message says what was wrong with the file in words a student
understands, and when possible what to do about it.
"""

from __future__ import annotations

#: Largest file accepted as bytes (an upload), and largest file that has to be read whole (an old-style PyTorch
#: pickle, an .npz member). Paths to safetensors and zip PyTorch files have no limit: only the table is read.
#: 500 MB, the one upload limit of the app: the inspector's uploader and the server's ``server.maxUploadSize``
#: (.streamlit/config.toml) say the same number, in the megabytes of 1024 x 1024 bytes that Streamlit's server
#: counts. Not 512: outside Windows, Streamlit's uploader shows sizes in units of 1000 and switches to gigabytes
#: above 500 of them, so 512 MB read "1GB per file" there. BERT-base (440 MB) fits; GPT-2 (548 MB) opens from a path.
MAX_UPLOAD_BYTES = 500 * 1024**2

#: Most arrays an .npz file may hold.
MAX_NPZ_MEMBERS = 1024


class CheckpointError(ValueError):
    """A model file that posviz cannot or will not open, with a sentence that says why."""


class UnsupportedFormat(CheckpointError):
    """The leading bytes are not safetensors, a PyTorch file, .npy or .npz."""


class CorruptFile(CheckpointError):
    """The format is recognised but the file is truncated or damaged (bad header, offsets past its end, ...)."""


class UnsafePickle(CheckpointError):
    """A pickle that would import or call something outside the tensor-only allowlist; nothing in it was run.

    ``globals`` lists what it wanted, as ``module.name`` strings (for example ``posix.system``).
    """

    def __init__(self, message: str, globals: tuple[str, ...] = ()):
        super().__init__(message)
        self.globals = tuple(globals)


class NoPositionTable(CheckpointError):
    """No tensor has a known position-table name and none was chosen; the message lists the candidates."""


class RopeModel(NoPositionTable):
    """The model has no position table because it rotates queries and keys (RoPE).

    ``config`` is the model's config.json as a dict and ``rope`` its parsed
    :class:`posviz.models.rope_configs.RopeConfig`, ready for the RoPE view.
    """

    def __init__(self, message: str, config: dict, rope):
        super().__init__(message)
        self.config = config
        self.rope = rope


class BadTable(CheckpointError):
    """The chosen tensor is not a usable table: not 2-D, empty, not floating point, or holding NaN/Inf."""


class TooLarge(CheckpointError):
    """The file, the table or an .npz archive exceeds the limits posviz sets to keep memory bounded."""


class NoAttentionProjections(CheckpointError):
    """The checkpoint has no query/key projections posviz can find (or a layer lacks one of them)."""


class UnknownFusedLayout(CheckpointError):
    """The queries and keys are fused in one weight whose split posviz does not know for this model type."""


class ConfigMismatch(CheckpointError):
    """The config is missing, is not a RoPE config, or does not match the shapes of the weights."""


class UnsupportedAttention(CheckpointError):
    """The attention makes its queries or keys through a normalisation, so a quantity that needs them linear in the
    input (the score pattern of a constant input) is not computed for it (DeepSeek-V3's latent attention)."""
