"""numpy files: ``.npy`` (one array) and ``.npz`` (a zip of ``.npy`` members, from ``np.savez``).

Arrays load with ``allow_pickle=False``; an array of Python objects (stored as a pickle) is refused. The header of
every member is read and checked against the member's size before any data is loaded, and an .npz may hold at most
``MAX_NPZ_MEMBERS`` arrays of at most ``MAX_UPLOAD_BYTES`` each.
"""

from __future__ import annotations

import math
import re
import zipfile
import zlib

import numpy as np

from .blob import Blob, TensorInfo
from .errors import MAX_NPZ_MEMBERS, MAX_UPLOAD_BYTES, CorruptFile, TooLarge, UnsafePickle

#: The key of the single array in an .npy file.
NPY_KEY = "array"

#: What zipfile raises for a damaged, encrypted or oddly compressed archive or member.
ZIP_ERRORS = (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError, ValueError, zlib.error)

_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def read_npy_header(f, name: str) -> tuple[TensorInfo, int]:
    """Shape and dtype of the .npy stream ``f`` (positioned at its start) and the size of header plus data."""
    try:
        start = f.tell()
        version = np.lib.format.read_magic(f)
        shape, _, dtype = _HEADER_READERS[version](f)
    except KeyError:
        raise CorruptFile(f"{name}: .npy format version {version} is not one posviz reads (1.0 or 2.0)") from None
    except Exception as exc:  # numpy reports bad headers as ValueError, SyntaxError, EOFError ...
        raise CorruptFile(f"{name}: the .npy header is damaged ({_reason(exc)})") from None
    if dtype.hasobject:
        raise UnsafePickle(
            f"{name} holds Python objects (stored as a pickle), not numbers; posviz does not load pickles from numpy "
            "files. Save a float array instead."
        )
    return TensorInfo(tuple(shape), dtype.name), f.tell() - start + math.prod(shape) * dtype.itemsize


def _reason(exc: Exception) -> str:
    """numpy's reason for refusing a header, without what changes from run to run: a message that quotes a parsed
    node (``<ast.BinOp object at 0x7f...>``) keeps its words and loses the address, so the same file always gets the
    same sentence."""
    return re.sub(r"<([\w.]+) object at 0x[0-9a-fA-F]+>", r"<\1>", str(exc))


def _read_array(f, name: str) -> np.ndarray:
    try:
        return np.lib.format.read_array(f, allow_pickle=False)
    except Exception as exc:  # a short or damaged data block
        raise CorruptFile(f"{name}: the array data is truncated or damaged ({exc})") from None


class NpyFile:
    """One array from ``np.save``, under the key "array"."""

    format = "npy"

    def __init__(self, blob: Blob):
        self.blob = blob
        with blob.open() as f:
            info, size = read_npy_header(f, blob.name)
        if size > blob.size:
            raise CorruptFile(f"{blob.name}: the .npy header describes {size:,} bytes but the file has {blob.size:,}")
        self.entries = {NPY_KEY: info}

    def read(self, key: str) -> np.ndarray:
        with self.blob.open() as f:
            return _read_array(f, self.blob.name)


class NpzFile:
    """The arrays of an ``np.savez`` archive, keyed by member name without ".npy"."""

    format = "npz"

    def __init__(self, blob: Blob, archive: zipfile.ZipFile):
        self.blob = blob
        members = archive.infolist()
        if len(members) > MAX_NPZ_MEMBERS:
            raise TooLarge(
                f"{blob.name} holds {len(members):,} arrays; posviz opens .npz files of up to {MAX_NPZ_MEMBERS:,}"
            )
        self.entries = {}
        for member in members:
            where = f"{blob.name}/{member.filename}"
            if member.file_size > MAX_UPLOAD_BYTES:
                raise TooLarge(
                    f"{where} is {member.file_size / 1024**2:,.0f} MiB; the limit for one array is "
                    f"{MAX_UPLOAD_BYTES / 1024**2:,.0f} MiB"
                )
            with _open_member(archive, member, where) as f:
                info, size = read_npy_header(f, where)
            if size != member.file_size:
                raise CorruptFile(
                    f"{where}: the .npy header describes {size:,} bytes but the member has {member.file_size:,}"
                )
            self.entries[member.filename.removesuffix(".npy")] = info

    def read(self, key: str) -> np.ndarray:
        where = f"{self.blob.name}/{key}.npy"
        with self.blob.open() as f, zipfile.ZipFile(f) as archive, _open_member(archive, f"{key}.npy", where) as member:
            return _read_array(member, where)


def _open_member(archive: zipfile.ZipFile, member, where: str):
    try:
        return archive.open(member)
    except ZIP_ERRORS as exc:
        raise CorruptFile(f"{where}: the archive member cannot be read ({exc})") from None
