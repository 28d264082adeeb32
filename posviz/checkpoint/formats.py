"""Open one model file as a table of tensors, whatever its format.

Every opened file offers ``format``, ``entries`` (tensor name -> :class:`TensorInfo`, read without loading any
tensor data) and ``read(key)`` (that one tensor as a numpy array).
"""

from __future__ import annotations

import zipfile

from .blob import READABLE, Blob, sniff
from .errors import CorruptFile, UnsupportedFormat
from .numpy_format import ZIP_ERRORS, NpyFile, NpzFile
from .safetensors_format import SafetensorsFile
from .torch_format import TorchFile


def open_tensor_file(blob: Blob) -> SafetensorsFile | TorchFile | NpyFile | NpzFile:
    """Sniff ``blob`` and open it with the reader of its format."""
    kind = sniff(blob)
    if kind == "safetensors":
        return SafetensorsFile(blob)
    if kind == "npy":
        return NpyFile(blob)
    if kind == "torch-legacy":
        return TorchFile(blob, legacy=True)
    return _open_zip(blob)


def _open_zip(blob: Blob) -> TorchFile | NpzFile:
    """A zip is a PyTorch checkpoint when it holds ``<name>/data.pkl``, an .npz when all its members are .npy."""
    with blob.open() as f:
        try:
            archive = zipfile.ZipFile(f)
        except ZIP_ERRORS as exc:
            raise CorruptFile(
                f"{blob.name} is a zip archive (a PyTorch or .npz file) that is cut short or damaged ({exc})"
            ) from None
        with archive:
            names = archive.namelist()
            if any(name.endswith("/constants.pkl") for name in names):
                raise UnsupportedFormat(
                    f"{blob.name} is a TorchScript archive (torch.jit.save), which holds code; save the model's "
                    "state_dict() with torch.save, or use safetensors"
                )
            if any(name.count("/") == 1 and name.endswith("/data.pkl") for name in names):
                return TorchFile(blob, legacy=False)
            if names and all(name.endswith(".npy") for name in names):
                return NpzFile(blob, archive)
    listed = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "") if names else "nothing"
    raise UnsupportedFormat(
        f"{blob.name} is a zip archive but neither a PyTorch checkpoint nor a numpy .npz (it holds {listed}); "
        f"{READABLE}"
    )
