"""safetensors: an 8-byte little-endian header length N, N bytes of JSON, then the raw tensor bytes.

The JSON maps each tensor name to ``{"dtype": "F32", "shape": [rows, cols], "data_offsets": [begin, end]}`` with
offsets relative to the start of the data region (an optional ``__metadata__`` entry maps strings to strings).
Nothing in the header is trusted before it is checked against the file size, and a table is read alone: a seek and
one read of ``end - begin`` bytes, so opening a 10 GB model costs the size of its position table.
"""

from __future__ import annotations

import json
import math

import numpy as np

from .blob import Blob, TensorInfo
from .errors import CorruptFile

#: safetensors dtype -> (dtype name, little-endian numpy storage dtype). BF16 is stored as its upper 16 bits.
DTYPES = {
    "F64": ("float64", "<f8"),
    "F32": ("float32", "<f4"),
    "F16": ("float16", "<f2"),
    "BF16": ("bfloat16", "<u2"),
    "F8_E4M3": ("float8_e4m3fn", "u1"),
    "F8_E5M2": ("float8_e5m2", "u1"),
    "I64": ("int64", "<i8"),
    "I32": ("int32", "<i4"),
    "I16": ("int16", "<i2"),
    "I8": ("int8", "i1"),
    "U64": ("uint64", "<u8"),
    "U32": ("uint32", "<u4"),
    "U16": ("uint16", "<u2"),
    "U8": ("uint8", "u1"),
    "BOOL": ("bool", "u1"),
}

#: The safetensors library refuses headers above 100 MB; so does posviz.
MAX_HEADER_BYTES = 100_000_000


def bf16_to_float32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 is the upper half of a float32: shift the 16 stored bits into place and reinterpret."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


class SafetensorsFile:
    """A validated safetensors header; :meth:`read` reads one tensor's bytes."""

    format = "safetensors"

    def __init__(self, blob: Blob):
        self.blob = blob
        length = int.from_bytes(blob.read(0, 8), "little")
        if not 2 <= length <= min(blob.size - 8, MAX_HEADER_BYTES):
            raise CorruptFile(
                f"{blob.name}: the safetensors header claims {length:,} bytes but the file has {blob.size - 8:,} "
                "after the length field: the file is truncated or damaged"
            )
        self.data_start = 8 + length
        header = _parse_json(blob, blob.read(8, length))
        self._spans = {key: _check_entry(blob, key, value) for key, value in header.items() if key != "__metadata__"}
        if not isinstance(header.get("__metadata__", {}), dict):
            raise CorruptFile(f"{blob.name}: the safetensors __metadata__ entry must be a JSON object")
        _check_layout(blob, self._spans, blob.size - self.data_start)
        self.entries = {key: TensorInfo(shape, DTYPES[code][0]) for key, (code, shape, _, _) in self._spans.items()}

    def read(self, key: str) -> np.ndarray:
        """The tensor ``key`` in its stored precision (bfloat16 widened to float32)."""
        code, shape, begin, end = self._spans[key]
        raw = np.frombuffer(self.blob.read(self.data_start + begin, end - begin), dtype=DTYPES[code][1])
        values = bf16_to_float32(raw) if code == "BF16" else raw
        return values.reshape(shape)


def _parse_json(blob: Blob, raw) -> dict:
    try:
        header = json.loads(bytes(raw).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise CorruptFile(f"{blob.name}: the safetensors header is not valid JSON ({exc})") from None
    if not isinstance(header, dict):
        raise CorruptFile(f"{blob.name}: the safetensors header must be a JSON object of tensors")
    return header


def _whole_numbers(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)


def _check_entry(blob: Blob, key: str, value) -> tuple[str, tuple[int, ...], int, int]:
    """(dtype code, shape, begin, end) of one header entry, after checking its fields agree with each other."""
    where = f"{blob.name}: tensor {key!r} in the safetensors header"
    if not isinstance(value, dict) or set(value) != {"dtype", "shape", "data_offsets"}:
        raise CorruptFile(f"{where} must have exactly dtype, shape and data_offsets")
    code, shape, offsets = value["dtype"], value["shape"], value["data_offsets"]
    if code not in DTYPES:
        raise CorruptFile(f"{where} has the unknown dtype {code!r}")
    if not _whole_numbers(shape):
        raise CorruptFile(f"{where} has the shape {shape!r}; a shape is a list of whole numbers")
    if not _whole_numbers(offsets) or len(offsets) != 2 or offsets[0] > offsets[1]:
        raise CorruptFile(f"{where} has the data_offsets {offsets!r}; they must be [begin, end] with begin <= end")
    expected = math.prod(shape) * np.dtype(DTYPES[code][1]).itemsize
    if offsets[1] - offsets[0] != expected:
        raise CorruptFile(
            f"{where} has shape {shape} of {code} ({expected:,} bytes) but its data_offsets span "
            f"{offsets[1] - offsets[0]:,} bytes"
        )
    return code, tuple(shape), offsets[0], offsets[1]


def _check_layout(blob: Blob, spans: dict, data_size: int) -> None:
    """Every tensor lies inside the data region and no two overlap."""
    previous_end = 0
    for key, (_, _, begin, end) in sorted(spans.items(), key=lambda item: item[1][2:]):
        if end > data_size:
            raise CorruptFile(
                f"{blob.name}: tensor {key!r} ends at byte {end:,} of the data but the file holds only "
                f"{data_size:,} bytes of data: the file is truncated"
            )
        if begin < previous_end:
            raise CorruptFile(f"{blob.name}: tensor {key!r} overlaps the tensor before it in the safetensors data")
        previous_end = end
