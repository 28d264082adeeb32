"""Fuzzing the checkpoint inspector's uploader: random bytes, and small model files made on the fly then damaged
(cut at a random offset, bytes overwritten, the safetensors header length changed, a wrong file extension),
uploaded through the real ``st.file_uploader`` of page_scripts/8_inspect.py.

The oracle is the core loader run on the same bytes: when it refuses the file, the page shows its sentence as an
``st.error`` and no chart; when it loads a table, the page shows that table (the first heatmap of the table tab,
and the table handed to the other pages), and an analysis of the open tab may at most refuse an odd table with
an ``st.error``. In every case: no uncaught exception, and a good file uploaded next shows its own table. A
failing state prints the file kind, the damage and the first bytes. ``FUZZ_EXAMPLES`` sets the number of uploads
per test (CI: 8; a deep run: ``FUZZ_EXAMPLES=300 pytest tests/app/test_fuzz_upload.py``).
"""

from __future__ import annotations

import io
import json
import os
import struct

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.numpy import save as safetensors_save

import posviz
from posviz.ui import SESSION_TABLES

from ._support import assert_clean, assert_matrix, figures, heatmap_z, open_page, tr

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "8"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OCTETS = "application/octet-stream"
KEY = "transformer.wpe.weight"
TABS = ["table", "similarity", "projection", "spectrum", "probe", "sinusoidal", "compare"]
#: Random bytes alone, or after the leading bytes of a zip (PyTorch, .npz), .npy, a pickle or a safetensors header.
MAGIC = [b"", b"", b"PK\x03\x04", b"\x93NUMPY\x01\x00", b"\x80\x02", struct.pack("<Q", 40) + b'{"a": ']
EXTENSIONS = [".safetensors", ".bin", ".pt", ".npy", ".npz", ".json", ".txt", ""]


def _torch_bytes(obj, legacy: bool = False) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer, _use_new_zipfile_serialization=not legacy)
    return buffer.getvalue()


def _numpy_bytes(table: np.ndarray, **members) -> bytes:
    buffer = io.BytesIO()
    if members:
        np.savez(buffer, **members)
    else:
        np.save(buffer, table)
    return buffer.getvalue()


def model_file(kind: str, table: np.ndarray) -> tuple[bytes, str]:
    """A small valid file of ``kind`` holding ``table`` under GPT-2's position-table name, and its file name."""
    tensor = torch.from_numpy(table)
    if kind == "safetensors":
        return safetensors_save({KEY: table, "ln_f.bias": table[0].copy()}), "model.safetensors"
    if kind == "torch-zip":
        return _torch_bytes({KEY: tensor, "ln_f.bias": tensor[0].clone()}), "pytorch_model.bin"
    if kind == "torch-legacy":
        return _torch_bytes({KEY: tensor}, legacy=True), "model.pt"
    if kind == "npy":
        return _numpy_bytes(table), "table.npy"
    if kind == "npz":
        return _numpy_bytes(table, **{KEY: table, "other": table[:2]}), "tables.npz"
    config = {"model_type": "gpt2", "n_positions": table.shape[0], "n_embd": table.shape[1]}
    return json.dumps(config).encode(), "config.json"


KINDS = ["safetensors", "torch-zip", "torch-legacy", "npy", "npz", "config.json"]
GOOD_TABLE = np.random.default_rng(99).normal(size=(16, 8)).astype(np.float32)


def damaged(data: bytes, name: str, mutation: str, draw) -> tuple[bytes, str]:
    """``data`` with one kind of damage; ``draw`` takes a hypothesis strategy and returns a value."""
    if mutation == "truncate":
        return data[: draw(st.integers(0, max(len(data) - 1, 0)))], name
    if mutation == "flip":
        out = bytearray(data)
        for position, value in draw(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1)):
            out[position % len(out)] = value
        return bytes(out), name
    if mutation == "header-length":  # safetensors' little-endian u64 header length (any format's first 8 bytes)
        true = struct.unpack("<Q", data[:8])[0] if len(data) >= 8 else 0
        claimed = draw(st.one_of(st.integers(0, 2**64 - 1), st.integers(max(true - 8, 0), true + 8)))
        return struct.pack("<Q", claimed) + data[8:], name
    if mutation == "extension":
        return data, "model" + draw(st.sampled_from([e for e in EXTENSIONS if not name.endswith(e or "\0")]))
    return data, name


def expected(data: bytes, name: str):
    """What the loader makes of the file: a PositionTable, or the CheckpointError the page must show. A file
    without a known table name gets its first candidate tensor, as the page picks it."""
    try:
        return posviz.load_position_embeddings(data, name=name)
    except posviz.NoPositionTable as exc:
        candidates = posviz.list_position_candidates(data, name=name)
        if not candidates:
            return exc
        try:
            return posviz.load_position_embeddings(data, candidates[0].key, name=name)
        except posviz.CheckpointError as inner:
            return inner
    except posviz.CheckpointError as exc:
        return exc


def upload(at, data: bytes, name: str):
    at.file_uploader(key="upload").set_value((name, data, OCTETS))
    return at.run()


def describe(kind: str, mutation: str, data: bytes, name: str) -> str:
    return f"{kind} / {mutation} as {name!r}, {len(data)} bytes starting {data[:24]!r}"


def shows(at, found, label: str, tab: str, what: str) -> None:
    """The page shows the loaded ``found``: its table handed to the other pages under ``label``, and the stored
    matrix as the table tab's heatmap."""
    handed = at.session_state[SESSION_TABLES].get(label)
    assert handed is not None, f"{what}: no table {label!r} handed over, errors {[e.value for e in at.error]}"
    table = found.matrix if found.kind == "t5_bias" else found.table
    np.testing.assert_array_equal(handed, table, err_msg=f"{what}: table handed to the other pages")
    if tab == "table" and found.kind != "t5_bias":
        scale = max(1.0, float(np.abs(found.matrix).max()))
        assert_matrix(heatmap_z(figures(at)[0]), found.matrix, atol=1e-6 * scale, what=f"{what}: table heatmap")


def check_upload(data: bytes, name: str, what: str, tab: str = "table", proj: str = "pca") -> None:
    """Upload ``data`` on ``tab`` and compare the page with the loader's verdict; then upload a good file."""
    at = upload(open_page("inspect", query={"tab": tab, "proj": proj}), data, name)
    what = f"{what}, tab {tab}, projection {proj}"
    assert not at.exception, f"{what}: uncaught exception\n" + "\n".join(e.value for e in at.exception)
    outcome = expected(data, name)
    if isinstance(outcome, posviz.CheckpointError):
        errors = [e.value for e in at.error]
        assert errors == [tr("en", "error.input.file", message=str(outcome))], f"{what}: errors {errors}"
        assert not figures(at), f"{what}: a chart is shown for a refused file"
    else:  # an analysis of the open tab may refuse an odd table (say, identical rows): an st.error, not a crash
        shows(at, outcome, f"{name} · {outcome.key}", tab, what)
    good = model_file("npy", GOOD_TABLE)[0]
    at = upload(at, good, "good.npy")
    assert_clean(at)
    found = posviz.load_position_embeddings(good, name="good.npy")
    shows(at, found, "good.npy · array", tab, f"good file after {what}")


@FUZZ
@given(prefix=st.sampled_from(MAGIC), rest=st.binary(max_size=2048), extension=st.sampled_from(EXTENSIONS))
def test_random_bytes_through_the_uploader(prefix, rest, extension):
    data, name = prefix + rest, "upload" + extension
    check_upload(data, name, describe("random bytes", "none", data, name))


#: Tables to start from: ordinary, every row the same, and values near the ends of float32's range.
STYLES = {"normal": 1.0, "constant": 0.0, "huge": 1e30, "tiny": 1e-30}


@FUZZ
@given(
    kind=st.sampled_from(KINDS),
    mutation=st.sampled_from(["none", "truncate", "flip", "header-length", "extension"]),
    shape=st.tuples(st.integers(1, 16), st.integers(1, 8)),
    style=st.sampled_from(list(STYLES)),
    seed=st.integers(0, 2**16),
    tab=st.sampled_from(TABS),
    proj=st.sampled_from(["pca", "tsne"]),
    draws=st.data(),
)
def test_damaged_model_files_through_the_uploader(kind, mutation, shape, style, seed, tab, proj, draws):
    rng = np.random.default_rng(seed)
    table = (rng.normal(size=shape) * STYLES[style] + (style == "constant")).astype(np.float32)
    data, name = model_file(kind, table)
    data, name = damaged(data, name, mutation, lambda strategy: draws.draw(strategy, label=mutation))
    check_upload(data, name, describe(f"{kind} of a {style} {shape} table", mutation, data, name), tab, proj)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "config.json"])
def test_every_intact_kind_shows_its_table(kind):
    """The fuzzing's starting points load: each kind of file shows the table it was made from."""
    table = np.arange(48, dtype=np.float32).reshape(12, 4) / 7.0
    data, name = model_file(kind, table)
    at = upload(open_page("inspect"), data, name)
    assert_clean(at)
    assert_matrix(heatmap_z(figures(at)[0]), table, what=kind)
