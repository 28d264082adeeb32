"""PyTorch files: the zip format of ``torch.save`` (torch >= 1.6) and the older bare pickle format.

Both hold a pickle, and a pickle can import and call anything while it loads. They are loaded only through
``torch.load(..., weights_only=True)`` passed explicitly (no environment variable can flip an explicit value), which
refuses every global outside a tensor-only allowlist before anything runs. A refused file is reported with the
globals it wanted: ``torch.serialization.get_unsafe_globals_in_checkpoint`` for zip files, and a static walk over the
pickle opcodes (``pickletools.genops``) for the old format. Nothing is executed to find them.

Only what is needed is read: the list of tensors comes from ``map_location="meta"`` (shapes and dtypes, no data),
and a tensor from a zip file on disk through ``mmap=True``, so only its pages are touched. The old format and
uploaded bytes are read whole, within ``MAX_UPLOAD_BYTES``.
"""

from __future__ import annotations

import pickle
import pickletools
from collections.abc import Mapping
from typing import cast

import numpy as np

from .blob import Blob, TensorInfo
from .errors import MAX_UPLOAD_BYTES, BadTable, CorruptFile, TooLarge, UnsafePickle

#: Deepest nesting of dicts searched for tensors ({"state_dict": {"model": {...}}}).
MAX_DEPTH = 8


class TorchFile:
    """The tensors of a ``torch.save`` file, flattened to dotted keys; :meth:`read` one of them as numpy."""

    def __init__(self, blob: Blob, *, legacy: bool):
        self.blob, self.legacy = blob, legacy
        self.format = "torch-legacy" if legacy else "torch-zip"
        if legacy and blob.size > MAX_UPLOAD_BYTES:
            raise TooLarge(
                f"{blob.name} is a PyTorch file in the old pickle format, which has to be read whole, and it is "
                f"larger than {MAX_UPLOAD_BYTES / 1024**2:,.0f} MiB; re-save it with torch.save (zip format) or "
                "as safetensors"
            )
        self._tensors = self._load(map_location="cpu" if legacy else "meta")
        self.entries = {
            key: TensorInfo(tuple(t.shape), str(t.dtype).removeprefix("torch.")) for key, t in self._tensors.items()
        }

    def read(self, key: str) -> np.ndarray:
        """The tensor ``key`` as float64 numpy (from disk only its own pages, through mmap)."""
        import torch

        tensors = self._tensors
        if not self.legacy:
            tensors = self._load(map_location="cpu", mmap=self.blob.path is not None)
        tensor = tensors[key]
        if tensor.layout != torch.strided:
            raise BadTable(f"{self.blob.name}: {key!r} is a {tensor.layout} tensor; a position table is a dense one")
        return tensor.detach().to(torch.float64).numpy()

    def _load(self, **options) -> dict:
        import torch

        source = str(self.blob.path) if options.get("mmap") else self.blob.open()
        try:
            loaded = torch.load(source, weights_only=True, **options)
        except pickle.UnpicklingError:
            unsafe = unsafe_globals(self.blob, legacy=self.legacy)
            if unsafe:
                raise UnsafePickle(_unsafe_message(self.blob.name, unsafe), unsafe) from None
            raise CorruptFile(
                f"{self.blob.name}: the pickle inside this PyTorch file is damaged or holds objects other than "
                "tensors, so it cannot be loaded safely"
            ) from None
        except Exception as exc:  # torch reports damaged files as RuntimeError, EOFError, KeyError, struct.error ...
            raise CorruptFile(
                f"{self.blob.name}: the PyTorch file is truncated or damaged ({_first_line(exc)})"
            ) from None
        finally:
            if not isinstance(source, str):
                source.close()
        return flatten(loaded)


def flatten(obj, prefix: str = "", depth: int = 0) -> dict:
    """Every tensor in nested dicts, keyed by its dotted path ({"model": {"wpe.weight": t}} -> "model.wpe.weight");
    a file holding a single tensor gives the key "tensor"."""
    import torch

    if isinstance(obj, torch.Tensor):
        return {prefix or "tensor": obj}
    if not isinstance(obj, Mapping) or depth >= MAX_DEPTH:
        return {}
    found = {}
    for name, value in obj.items():
        found.update(flatten(value, f"{prefix}.{name}" if prefix else str(name), depth + 1))
    return found


def unsafe_globals(blob: Blob, *, legacy: bool) -> tuple[str, ...]:
    """The ``module.name`` globals a refused pickle asks for that the weights-only allowlist does not hold."""
    import torch

    if not legacy:
        with blob.open() as f:
            try:
                return tuple(sorted(torch.serialization.get_unsafe_globals_in_checkpoint(f)))
            except Exception:  # the zip itself is damaged: no globals to report
                return ()
    allowed = weights_only_allowlist()
    with blob.open() as f:
        return tuple(sorted(pickle_globals(f) - allowed))


def weights_only_allowlist() -> set[str]:
    """The ``module.name`` globals torch's weights-only loader accepts without being told (tensors, storages,
    ``OrderedDict`` ...), plus any a caller added with ``torch.serialization.add_safe_globals``.

    torch names the globals a refused zip checkpoint asks for (``get_unsafe_globals_in_checkpoint``) but has no
    public list of its defaults, which an old-style (legacy, pre-zip) file needs: this is the one private call of the
    core, checked against the installed torch by ``tests/core/test_checkpoint_internals.py``."""
    import torch
    from torch import _weights_only_unpickler

    allowed = set(_weights_only_unpickler._get_allowed_globals())
    for entry in torch.serialization.get_safe_globals():
        obj = entry[0] if isinstance(entry, tuple) else entry
        allowed.add(f"{obj.__module__}.{obj.__qualname__}")
    return allowed


def pickle_globals(stream, max_pickles: int = 5) -> set[str]:
    """Globals named by the consecutive pickles at the start of ``stream`` (an old-style torch file is five pickles
    followed by raw storage bytes), read from the opcodes without unpickling. STACK_GLOBAL takes the two most
    recently pushed strings, following the memo for strings fetched again with GET."""
    found: set[str] = set()
    for _ in range(max_pickles):
        strings: list[str] = []
        memo: dict[object, str | None] = {}  # keyed by the memo index the opcodes carry
        last: str | None = None
        try:
            for opcode, arg, _ in pickletools.genops(stream):
                name, pushed = opcode.name, None
                if name in ("GLOBAL", "INST"):
                    # pickletools decodes the argument of GLOBAL and INST as the string "module name"
                    found.add(cast(str, arg).replace(" ", "."))
                elif name == "STACK_GLOBAL" and len(strings) >= 2:
                    found.add(f"{strings[-2]}.{strings[-1]}")
                elif isinstance(arg, str) and ("UNICODE" in name or "STRING" in name):
                    pushed = arg
                elif name in ("GET", "BINGET", "LONG_BINGET"):
                    pushed = memo.get(arg)
                elif name in ("PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"):
                    memo[len(memo) if name == "MEMOIZE" else arg] = last
                    continue
                if isinstance(pushed, str):
                    strings.append(pushed)
                last = pushed
        except Exception:  # the stream ends or the bytes after the pickles are not opcodes
            break
    return found


def _unsafe_message(name: str, unsafe: tuple[str, ...]) -> str:
    return (
        f"{name} is a pickle that asks to import {', '.join(unsafe)} while loading, which could run any code. "
        "posviz loads only tensors and ran nothing from it. If it is a whole model saved with torch.save(model), "
        "save model.state_dict() instead, or use safetensors."
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:160]
