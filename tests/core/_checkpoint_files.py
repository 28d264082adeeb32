"""Model files for the checkpoint tests, written by the real tools (transformers, torch, safetensors, numpy)."""

from __future__ import annotations

import io
import json
import os
import struct
import zipfile
from pathlib import Path

import numpy as np
import torch
from safetensors.numpy import save as safetensors_save


def tiny_models() -> dict:
    """Tiny randomly initialised models: name -> (model, key of its position table, offset rows, kind)."""
    import transformers as tf

    torch.manual_seed(0)
    small = {"num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 100}
    return {
        "bert": (
            tf.BertModel(tf.BertConfig(hidden_size=32, intermediate_size=37, max_position_embeddings=64, **small)),
            "embeddings.position_embeddings.weight",
            0,
            "absolute",
        ),
        "gpt2": (
            tf.GPT2LMHeadModel(
                tf.GPT2Config(n_embd=32, n_layer=2, n_head=2, n_positions=64, vocab_size=100, bos_token_id=0,
                              eos_token_id=0)
            ),
            "transformer.wpe.weight",
            0,
            "absolute",
        ),
        "roberta": (
            tf.RobertaForMaskedLM(
                tf.RobertaConfig(hidden_size=32, intermediate_size=37, max_position_embeddings=66, pad_token_id=1,
                                 **small)
            ),
            "roberta.embeddings.position_embeddings.weight",
            2,
            "absolute",
        ),
        "opt": (
            tf.OPTForCausalLM(
                tf.OPTConfig(hidden_size=32, ffn_dim=37, max_position_embeddings=64, word_embed_proj_dim=32,
                             **small)
            ),
            "model.decoder.embed_positions.weight",
            2,
            "absolute",
        ),
        "t5": (
            tf.T5Model(tf.T5Config(d_model=32, d_kv=16, d_ff=37, num_layers=2, num_heads=2, vocab_size=100)),
            "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
            0,
            "t5_bias",
        ),
    }  # fmt: skip


def save_bin(model, folder: Path) -> Path:
    """config.json + pytorch_model.bin as torch.save(model.state_dict()) (transformers 5 writes safetensors only)."""
    folder.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(folder)
    torch.save(model.state_dict(), folder / "pytorch_model.bin")
    return folder


def save_sharded_bin(model, folder: Path, shards: int = 3) -> Path:
    """A sharded .bin checkpoint: the state dict split over ``shards`` torch.save files with their index json."""
    folder.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(folder)
    state = model.state_dict()
    names = [f"pytorch_model-{i + 1:05d}-of-{shards:05d}.bin" for i in range(shards)]
    weight_map = {key: names[i * shards // len(state)] for i, key in enumerate(state)}
    for name in names:
        torch.save({k: v for k, v in state.items() if weight_map[k] == name}, folder / name)
    (folder / "pytorch_model.bin.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return folder


def safetensors_bytes(tensors: dict[str, np.ndarray]) -> bytes:
    return safetensors_save({k: np.ascontiguousarray(v) for k, v in tensors.items()})


def raw_safetensors(header: dict, data: bytes, length: int | None = None) -> bytes:
    """A safetensors file written by hand: ``length`` (default: the true one), the JSON header, the data bytes."""
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def torch_bytes(obj, legacy: bool = False) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer, _use_new_zipfile_serialization=not legacy)
    return buffer.getvalue()


def npz_bytes(compressed: bool = False, **arrays) -> bytes:
    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, **arrays)
    return buffer.getvalue()


def npy_bytes(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    """A zip archive of ``members``, the same bytes on every call: each member is dated 1980-01-01, not now (a test
    id holding the bytes must be the same on every test worker, however long collection takes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return buffer.getvalue()


class Evil:
    """Unpickling this object calls os.system(command): what a malicious checkpoint does."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


#: How pickle names os.system on this platform ("posix.system" on Linux).
SYSTEM_GLOBAL = f"{os.system.__module__}.{os.system.__name__}"


def sample_files() -> dict[str, bytes]:
    """One small valid file of every format, each holding a GPT-2-style table under a known key."""
    rng = np.random.default_rng(0)
    table = rng.normal(size=(16, 8)).astype(np.float32)
    return {
        "safetensors": safetensors_bytes({"transformer.wpe.weight": table, "ln.bias": table[0]}),
        "torch-zip": torch_bytes({"transformer.wpe.weight": torch.from_numpy(table)}),
        "torch-legacy": torch_bytes({"transformer.wpe.weight": torch.from_numpy(table)}, legacy=True),
        "npy": npy_bytes(table),
        "npz": npz_bytes(**{"transformer.wpe.weight": table, "other": table[:2]}),
    }
