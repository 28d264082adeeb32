"""The bytes of one model file, on disk or in memory, and the format they are in.

A :class:`Blob` reads by range, so a multi-gigabyte file is never read whole. :func:`sniff` decides the format from
the leading bytes, never from the file name, and names what the bytes look like when they are none of the formats
posviz reads.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

from .errors import CorruptFile, TooLarge, UnsupportedFormat

READABLE = "posviz reads safetensors, PyTorch (.bin, .pt, .pth, .ckpt), .npy and .npz files"

#: The floating dtypes a position table may be stored in (names as numpy and torch print them).
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


@dataclasses.dataclass(frozen=True)
class TensorInfo:
    """Shape and dtype name of one stored tensor, known without reading its data."""

    shape: tuple[int, ...]
    dtype: str

    @property
    def floating(self) -> bool:
        return self.dtype in FLOAT_DTYPES


class Blob:
    """One file: ``path`` on disk or ``data`` in memory, shown to the user as ``name``."""

    def __init__(self, name: str, *, path: Path | None = None, data: bytes | None = None):
        self.name, self.path = name, path
        self._source: memoryview | Path
        if data is not None:
            self._source, self.size = memoryview(data), len(data)
        elif path is not None:
            self._source, self.size = path, path.stat().st_size
        else:
            raise TypeError(f"{name}: a Blob needs a path or data")

    @classmethod
    def from_bytes(
        cls, data: bytes | bytearray | memoryview, name: str = "uploaded file", limit: int | None = None
    ) -> Blob:
        """Wrap the bytes of an upload; refuse more than ``limit`` bytes."""
        if limit is not None and len(data) > limit:
            raise TooLarge(
                f"{name} is {len(data) / 1024**2:,.0f} MiB; uploads are limited to {limit / 1024**2:,.0f} MiB. "
                "Open a large model from a local path instead: only its position table is read."
            )
        return cls(name, data=bytes(data))

    def read(self, start: int, length: int) -> bytes | memoryview:
        """``length`` bytes from ``start``; CorruptFile if the file ends before that."""
        chunk: bytes | memoryview
        if isinstance(self._source, memoryview):
            chunk = self._source[start : start + length]
        else:
            with open(self._source, "rb") as f:
                f.seek(start)
                chunk = f.read(length)
        if len(chunk) != length:
            raise CorruptFile(f"{self.name} ends after {self.size:,} bytes, before the data it describes: truncated?")
        return chunk

    def open(self) -> io.BytesIO | io.BufferedReader:
        """A binary file object over the whole file."""
        if isinstance(self._source, memoryview):
            return io.BytesIO(self._source)
        return open(self._source, "rb")


def sniff(blob: Blob) -> str:
    """The container format from the leading bytes: "zip", "npy", "safetensors" or "torch-legacy".

    - zip archive ``PK\\x03\\x04`` (or an empty one, ``PK\\x05\\x06``): a PyTorch checkpoint or an .npz, told apart
      by its members later;
    - ``\\x93NUMPY``: a numpy .npy array;
    - an 8-byte little-endian header length followed by ``{``: safetensors;
    - the pickle protocol opcode ``0x80``: a PyTorch file in the old (pre-1.6) pickle format.
    """
    head = bytes(blob.read(0, min(blob.size, 64)))
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if len(head) > 8 and head[8:9] == b"{":
        return "safetensors"
    if head[:1] == b"\x80":
        return "torch-legacy"
    raise UnsupportedFormat(f"{blob.name}: {READABLE}; this looks like {looks_like(head)}.")


def looks_like(head: bytes) -> str:
    """A few words on what the leading bytes of an unreadable file seem to be."""
    text = head.lstrip()
    if not head:
        return "an empty file (0 bytes)"
    if head.startswith(b"version https://git-lfs"):
        return "a Git LFS pointer, a small text file standing in for the real weights (fetch them with `git lfs pull`)"
    if head.startswith(b"\x1f\x8b"):
        return "gzip-compressed data (decompress it first)"
    if text[:1] in (b"{", b"["):
        return "JSON text (a config or tokenizer file?), not model weights"
    if text[:1] == b"<":
        return "HTML or XML text (a web page saved instead of the file?)"
    if all(32 <= b < 127 or b in b"\t\r\n" for b in head):
        return "plain text, not model weights"
    return f"binary data of an unknown kind (it starts with {head[:8].hex(' ')})"
