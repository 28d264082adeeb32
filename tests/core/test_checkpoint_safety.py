"""Bad and hostile files: malicious pickles never run, damaged files of every format raise a CheckpointError with a
readable sentence, unusable tables raise BadTable, and byte-level fuzzing lets nothing else escape."""

import contextlib
import io
import json
import pickle
import struct

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import posviz
from posviz import BadTable, CheckpointError, CorruptFile, TooLarge, UnsafePickle, UnsupportedFormat
from posviz.checkpoint import numpy_format, safetensors_format

from ._checkpoint_files import (
    SYSTEM_GLOBAL,
    Evil,
    npy_bytes,
    npz_bytes,
    raw_safetensors,
    safetensors_bytes,
    sample_files,
    torch_bytes,
    zip_bytes,
)

pytestmark = pytest.mark.filterwarnings("ignore:Detected pickle protocol:UserWarning")

SAMPLES = sample_files()
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _open_everything(data: bytes) -> None:
    """What a page does with an upload: list the candidates, then load the best table."""
    posviz.list_position_candidates(data)
    posviz.load_position_embeddings(data)


# --- valid files of every format -------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_every_format_loads_the_same_table(fmt, tmp_path):
    expected = np.random.default_rng(0).normal(size=(16, 8)).astype(np.float32).astype(np.float64)
    path = tmp_path / "weights.anything"  # the extension does not matter: the leading bytes decide
    path.write_bytes(SAMPLES[fmt])
    for source in (SAMPLES[fmt], path):
        table = posviz.load_position_embeddings(source)
        np.testing.assert_array_equal(table.matrix, expected)
        assert table.format == fmt and table.offset == 0
        assert table.key == ("array" if fmt == "npy" else "transformer.wpe.weight")


def test_float16_float64_and_compressed_npz(tmp_path):
    table = np.random.default_rng(1).normal(size=(10, 4))
    for dtype in (np.float16, np.float64):
        loaded = posviz.load_position_embeddings(safetensors_bytes({"wpe.weight": table.astype(dtype)}))
        np.testing.assert_array_equal(loaded.matrix, table.astype(dtype).astype(np.float64))
        assert loaded.dtype == np.dtype(dtype).name
    loaded = posviz.load_position_embeddings(npz_bytes(compressed=True, position_embeddings=table))
    np.testing.assert_array_equal(loaded.matrix, table)


def test_unknown_names_list_candidates_and_a_single_tensor_is_taken(tmp_path):
    data = safetensors_bytes(
        {
            "a.weight": np.ones((4, 4), np.float32),
            "b.pos_weight": np.ones((8, 4), np.float32),
            "c.bias": np.ones(4, np.float32),
            "d.index": np.ones((3, 3), np.int64),
        }
    )
    assert [c.key for c in posviz.list_position_candidates(data)] == ["b.pos_weight", "a.weight"]
    with pytest.raises(posviz.NoPositionTable, match=r"b\.pos_weight \(8, 4\); a\.weight \(4, 4\)"):
        posviz.load_position_embeddings(data)
    assert posviz.load_position_embeddings(data, key="b.pos_weight").matrix.shape == (8, 4)
    with pytest.raises(posviz.NoPositionTable, match="no tensor named 'missing'"):
        posviz.load_position_embeddings(data, key="missing")
    single = posviz.load_position_embeddings(safetensors_bytes({"my_table": np.ones((5, 2), np.float32)}))
    assert single.key == "my_table" and single.known is None


# --- malicious pickles -----------------------------------------------------------------------------------------


def _malicious(kind: str, marker) -> bytes:
    evil = Evil(f"touch {marker}")
    if kind.startswith("raw-pickle"):
        return pickle.dumps(evil, protocol=int(kind[-1]))
    if kind == "inside-state-dict":
        return torch_bytes({"wpe.weight": torch.zeros(4, 2), "hook": evil})
    return torch_bytes(evil, legacy=kind == "legacy")


@pytest.mark.parametrize("kind", ["zip", "legacy", "raw-pickle-2", "raw-pickle-4", "inside-state-dict"])
@pytest.mark.parametrize("as_bytes", [False, True])
def test_malicious_pickle_never_runs(kind, as_bytes, tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # an explicit weights_only=True still wins
    marker = tmp_path / "pwned"
    data = _malicious(kind, marker)
    path = tmp_path / "model.bin"
    path.write_bytes(data)
    for call in (posviz.list_position_candidates, posviz.load_position_embeddings):
        with pytest.raises(UnsafePickle) as caught:
            call(data if as_bytes else path)
        assert SYSTEM_GLOBAL in caught.value.globals
        assert SYSTEM_GLOBAL in str(caught.value) and "ran nothing" in str(caught.value)
    assert not marker.exists()


def test_object_arrays_in_numpy_files_are_refused(tmp_path):
    objects = np.array([Evil("true"), 1], dtype=object)
    with pytest.raises(UnsafePickle, match="Python objects"):
        posviz.load_position_embeddings(npy_bytes(objects, allow_pickle=True))
    buffer = io.BytesIO()
    np.savez(buffer, table=np.ones((3, 2)), objects=objects)
    with pytest.raises(UnsafePickle):
        posviz.list_position_candidates(buffer.getvalue())


# --- unusable tables -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.array([[0.0, np.nan], [1.0, 2.0]], np.float32), "1 NaN and 0 infinite"),
        (np.array([[0.0, np.inf], [-np.inf, 2.0]]), "0 NaN and 2 infinite"),
        (np.ones(8, np.float32), "1-D with shape"),
        (np.ones((2, 3, 4), np.float32), "3-D with shape"),
        (np.ones((0, 4), np.float32), "empty"),
        (np.ones((4, 4), np.int32), "int32 values"),
    ],
)
def test_bad_tables(array, message):
    for data in (safetensors_bytes({"transformer.wpe.weight": array}), npy_bytes(array)):
        with pytest.raises(BadTable, match=message):
            posviz.load_position_embeddings(data)
    with pytest.raises(BadTable, match=message):
        posviz.load_position_embeddings(torch_bytes({"wpe.weight": torch.from_numpy(array)}))


def test_sparse_torch_tensor_is_bad_table():
    with pytest.raises(BadTable, match="sparse"):
        posviz.load_position_embeddings(torch_bytes({"wpe.weight": torch.eye(4).to_sparse()}))


def test_limits():
    huge = safetensors_bytes({"wpe.weight": np.zeros((posviz.MAX_POSITIONS + 1, 1), np.float16)})
    with pytest.raises(TooLarge, match="32,769"):
        posviz.load_position_embeddings(huge)
    many = {f"a{i}": np.zeros(1) for i in range(posviz.MAX_NPZ_MEMBERS + 1)}
    with pytest.raises(TooLarge, match="arrays"):
        posviz.list_position_candidates(npz_bytes(**many))


def test_upload_and_npz_member_size_limits(monkeypatch):
    monkeypatch.setattr(posviz.checkpoint.sources, "MAX_UPLOAD_BYTES", 100)
    with pytest.raises(TooLarge, match="uploads are limited"):
        posviz.load_position_embeddings(SAMPLES["safetensors"])
    monkeypatch.setattr(numpy_format, "MAX_UPLOAD_BYTES", 100)
    with pytest.raises(TooLarge, match="limit for one array"):
        posviz.checkpoint.formats.open_tensor_file(posviz.checkpoint.blob.Blob("x.npz", data=SAMPLES["npz"]))


# --- what is not a model file ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty file"),
        (b'{"model_type": "bert"}', "JSON"),
        (b"<!DOCTYPE html><html>", "HTML"),
        (b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\n", "Git LFS"),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "gzip"),
        (b"hello, this is text", "plain text"),
        (bytes(range(200, 216)), "unknown kind"),
        (zip_bytes({"readme.txt": b"hi"}), "neither a PyTorch checkpoint nor a numpy .npz"),
    ],
)
def test_unsupported_files_say_what_they_look_like(data, message):
    with pytest.raises(UnsupportedFormat, match=message):
        posviz.load_position_embeddings(data)


@pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")
def test_torchscript_is_refused(tmp_path):
    path = tmp_path / "scripted.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), path)
    with pytest.raises(UnsupportedFormat, match="TorchScript"):
        posviz.load_position_embeddings(path)


def test_missing_path_and_bad_config(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        posviz.load_position_embeddings(tmp_path / "nothing-here")
    (tmp_path / "config.json").write_text("{not json")
    (tmp_path / "model.safetensors").write_bytes(SAMPLES["safetensors"])
    with pytest.raises(CorruptFile, match="config.json is not valid JSON"):
        posviz.load_position_embeddings(tmp_path)


# --- damaged files ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_truncated_copies_raise_corrupt_or_unsupported(fmt):
    data = SAMPLES[fmt]
    for length in sorted({0, 1, 7, 8, 9, 20, 64, len(data) // 3, len(data) // 2, len(data) - 8, len(data) - 1}):
        with pytest.raises((CorruptFile, UnsupportedFormat)):
            _open_everything(data[:length])


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_corrupted_copies_raise_only_checkpoint_errors(fmt):
    data = SAMPLES[fmt]
    rng = np.random.default_rng(1)
    for _ in range(40):
        damaged = np.frombuffer(data, np.uint8).copy()
        positions = rng.integers(0, len(data), size=rng.integers(1, 8))
        damaged[positions] = rng.integers(0, 256, size=positions.size)
        with contextlib.suppress(CheckpointError):
            _open_everything(damaged.tobytes())


def _header(**changes) -> dict:
    entry = {"dtype": "F32", "shape": [4, 2], "data_offsets": [0, 32]}
    return {"wpe.weight": {**entry, **changes}}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (raw_safetensors(_header(), bytes(32), length=10**6), "claims 1,000,000 bytes"),
        (raw_safetensors(_header(), bytes(16)), "truncated"),
        (raw_safetensors(_header(data_offsets=[0, 16]), bytes(32)), "span 16 bytes"),
        (raw_safetensors(_header(data_offsets=[8, 4]), bytes(32)), "begin <= end"),
        (raw_safetensors(_header(shape=[4, -2]), bytes(32)), "list of whole numbers"),
        (raw_safetensors(_header(shape=[4, 2.0]), bytes(32)), "list of whole numbers"),
        (raw_safetensors(_header(dtype="F7"), bytes(32)), "unknown dtype 'F7'"),
        (raw_safetensors({**_header(), "b": {"dtype": "F32", "shape": [2], "data_offsets": [24, 32]}}, bytes(32)),
         "overlaps"),
        (raw_safetensors({"__metadata__": [1]}, b""), "__metadata__"),
        (raw_safetensors({"wpe.weight": [1, 2]}, b""), "exactly dtype, shape and data_offsets"),
        (b"\x05\x00\x00\x00\x00\x00\x00\x00{abcd", "not valid JSON"),
        (b"\x02\x00\x00\x00\x00\x00\x00\x00{\xff", "not valid JSON"),
        (struct.pack("<Q", 2) + b"[]", "looks like"),
    ],
)  # fmt: skip
def test_safetensors_header_is_validated(data, message):
    with pytest.raises((CorruptFile, UnsupportedFormat), match=message):
        _open_everything(data)


def test_npz_member_header_must_match_its_size():
    header = npy_bytes(np.zeros((100, 4)))[:128]
    with pytest.raises(CorruptFile, match="describes 3,328 bytes but the member has 128"):
        posviz.load_position_embeddings(zip_bytes({"wpe.weight.npy": header}))


# --- fuzzing ---------------------------------------------------------------------------------------------------


@FUZZ
@given(st.binary(max_size=600))
def test_fuzz_random_bytes(data):
    with pytest.raises(CheckpointError):
        _open_everything(data)


PREFIXES = [b"PK\x03\x04", b"PK\x05\x06", b"\x93NUMPY", b"\x93NUMPY\x01\x00", b"\x80\x02", b"\x80\x04\x95",
            struct.pack("<Q", 40) + b"{", struct.pack("<Q", 3) + b"{}"]  # fmt: skip


@FUZZ
@given(st.sampled_from(PREFIXES), st.binary(max_size=300))
def test_fuzz_random_bytes_after_a_real_magic(prefix, rest):
    with pytest.raises(CheckpointError):
        _open_everything(prefix + rest)


@FUZZ
@given(
    st.sampled_from(list(SAMPLES)),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6),
    st.one_of(st.none(), st.integers(0, 10**6)),
)
def test_fuzz_mutated_and_truncated_files(fmt, edits, cut):
    damaged = bytearray(SAMPLES[fmt])
    for position, value in edits:
        damaged[position % len(damaged)] = value
    with contextlib.suppress(CheckpointError):
        _open_everything(bytes(damaged[: None if cut is None else cut % len(damaged)]))


dtypes = st.sampled_from([*safetensors_format.DTYPES, "F7", "", 3, None])
whole = st.integers(-2, 40) | st.sampled_from([2**63, 10**30, 1.5, True, "4"])
entries = st.fixed_dictionaries(
    {"dtype": dtypes, "shape": st.lists(whole, max_size=3), "data_offsets": st.lists(whole, min_size=0, max_size=3)}
)
headers = st.dictionaries(st.sampled_from(["wpe.weight", "a", "b.pos", "__metadata__"]), entries | st.integers(),
                          max_size=4)  # fmt: skip


@FUZZ
@given(headers, st.integers(0, 160), st.one_of(st.none(), st.integers(0, 400)))
def test_fuzz_mutated_safetensors_headers(header, data_size, claimed):
    data = raw_safetensors(header, bytes(range(256))[:data_size] * 1, length=claimed)
    try:
        candidates = posviz.list_position_candidates(data)
    except CheckpointError:
        return
    for candidate in candidates:  # a header that passed validation describes tensors that really can be read
        with contextlib.suppress(BadTable):
            table = posviz.load_position_embeddings(data, key=candidate.key)
            assert table.matrix.shape == candidate.shape


@FUZZ
@given(
    st.dictionaries(
        st.text("abcdefgh._", min_size=1, max_size=12),
        st.tuples(st.sampled_from(["float16", "float32", "float64"]), st.integers(1, 6), st.integers(1, 5)),
        min_size=1,
        max_size=4,
    ),
    st.integers(0, 2**31),
)
def test_fuzz_what_safetensors_writes_loads_exactly(spec, seed):
    rng = np.random.default_rng(seed)
    arrays = {key: rng.normal(size=(rows, cols)).astype(dtype) for key, (dtype, rows, cols) in spec.items()}
    data = safetensors_bytes(arrays)
    for key, array in arrays.items():
        np.testing.assert_array_equal(posviz.load_position_embeddings(data, key=key).matrix, array.astype(np.float64))


def test_json_of_a_deeply_nested_header_is_corrupt_not_a_crash():
    text = b"{" + b'"a":[' * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(CorruptFile):
        _open_everything(struct.pack("<Q", len(text)) + text)


def test_header_sizes_in_the_file_are_checked_against_json_length():
    header = json.dumps(_header()).encode()
    with pytest.raises(CorruptFile, match="claims 1 bytes"):
        _open_everything(struct.pack("<Q", 1) + header + bytes(32))


def test_a_damaged_npy_header_gets_the_same_sentence_every_time():
    """numpy quotes a parsed node with its memory address (``<ast.BinOp object at 0x7f...>``); the sentence keeps
    the words and drops the address, so a page shows the same message for the same file."""
    from posviz.checkpoint import CorruptFile
    from posviz.checkpoint.numpy_format import read_npy_header

    buffer = io.BytesIO()
    np.save(buffer, np.zeros((15, 2), dtype=np.float32))
    data = bytearray(buffer.getvalue())
    data[data.index(b"(15, 2)") : data.index(b"(15, 2)") + 7] = b"(15-2,)"  # an expression, not a literal
    messages = set()
    for _ in range(3):
        with pytest.raises(CorruptFile) as caught:
            read_npy_header(io.BytesIO(bytes(data)), "table.npy")
        messages.add(str(caught.value))
    assert len(messages) == 1 and " at 0x" not in messages.pop()
