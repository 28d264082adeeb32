"""Where model files come from: uploaded bytes, a file, a model folder, the local Hugging Face cache.

A Hugging Face folder holds ``config.json`` and ``model.safetensors`` or ``pytorch_model.bin``; a large model splits
them into shards listed by ``model.safetensors.index.json`` / ``pytorch_model.bin.index.json`` (``weight_map``:
tensor name -> shard file), and only the shard holding the wanted tensor is opened. A sentence-transformers folder
has ``modules.json``, whose ``sentence_transformers.models.Transformer`` entry names the subfolder ("" for the folder
itself) with the Hugging Face layout. Nothing here touches the network.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from .blob import Blob, TensorInfo
from .errors import MAX_UPLOAD_BYTES, CheckpointError, CorruptFile, NoPositionTable
from .formats import open_tensor_file

#: Weight files of the Hugging Face layout, in order of preference; each may instead be sharded with an index.
HF_WEIGHTS = ("model.safetensors", "pytorch_model.bin")

#: Extensions of a lone weights file in a folder without the Hugging Face names.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".npy", ".npz")


def read_json(path: Path, expected: type = dict):
    """A JSON file that must hold an object (or ``expected``); CorruptFile with the reason otherwise."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise CorruptFile(f"{path.name} is not valid JSON ({exc})") from None
    if not isinstance(value, expected):
        raise CorruptFile(f"{path.name} must hold a JSON {'object' if expected is dict else 'list'}")
    return value


def _inside(folder: Path, relative: str, what: str) -> Path:
    """``folder / relative``, refusing absolute paths and ``..`` so a json file cannot point outside the folder."""
    if not isinstance(relative, str) or Path(relative).is_absolute() or ".." in Path(relative).parts:
        raise CorruptFile(f"{what} names {relative!r}; it must be a path inside the model folder")
    return folder / relative


def transformer_folder(folder: Path) -> Path:
    """The folder with the Hugging Face layout: ``folder`` itself, or the Transformer module of a sentence-transformers
    folder as named by its ``modules.json``."""
    modules = folder / "modules.json"
    if not modules.is_file():
        return folder
    for module in read_json(modules, list):
        if isinstance(module, dict) and str(module.get("type", "")).endswith(".Transformer"):
            return _inside(folder, module.get("path", ""), "modules.json")
    return folder


def load_model_config(source) -> dict | None:
    """The ``config.json`` of a model folder (of its sentence-transformers Transformer module), or of the folder
    holding a model file, as a dict; None for bytes or when there is none."""
    if isinstance(source, bytes | bytearray | memoryview):
        return None
    path = Path(source).expanduser()
    folder = transformer_folder(path) if path.is_dir() else path.parent
    config = folder / "config.json"
    return read_json(config) if config.is_file() else None


def fingerprint(source) -> str:
    """A short key that changes whenever the model could have changed: sha256 of uploaded bytes; for a path, its
    resolved name with the size and modification time of every file in it (two levels deep for a folder), so an
    edited or replaced file is never served from a cache."""
    import hashlib

    digest = hashlib.sha256()
    if isinstance(source, bytes | bytearray | memoryview):
        digest.update(b"bytes:")
        digest.update(source)
        return digest.hexdigest()
    path = Path(source).expanduser().resolve()
    if not path.exists():  # the loader's own sentence, not an OSError, for a mistyped path
        raise CheckpointError(f"{Path(source).expanduser()} does not exist")
    files = [path] if not path.is_dir() else sorted(p for p in (*path.glob("*"), *path.glob("*/*")) if p.is_file())
    digest.update(f"path:{path}".encode())
    for file in files:
        stat = file.stat()
        digest.update(f"|{file.relative_to(path) if file != path else ''}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


@dataclasses.dataclass
class Model:
    """A model's tensors, wherever they are: one file (``blob``), shards (``weight_map``: name -> file) or none."""

    name: str
    config: dict | None
    blob: Blob | None = None
    weight_map: dict[str, Path] | None = None
    _files: dict = dataclasses.field(default_factory=dict, repr=False)

    def names(self) -> list[str]:
        """Tensor names; for a sharded model from the index alone, without opening a shard."""
        if self.weight_map is not None:
            return list(self.weight_map)
        return list(self._open(self.blob).entries) if self.blob else []

    def entries(self) -> dict[str, TensorInfo]:
        """Shape and dtype of every tensor (opens every shard's header, never tensor data)."""
        if self.weight_map is None:
            return dict(self._open(self.blob).entries) if self.blob else {}
        found = {}
        for shard in dict.fromkeys(self.weight_map.values()):
            found.update(self._open(self._shard_blob(shard)).entries)
        return found

    def file_for(self, key: str):
        """The opened file holding ``key`` (only that shard is opened); NoPositionTable when there is no such key."""
        if self.weight_map is not None and key in self.weight_map:
            return self._open(self._shard_blob(self.weight_map[key]))
        if self.blob is not None and key in self.names():
            return self._open(self.blob)
        raise NoPositionTable(f"{self.name} has no tensor named {key!r}")

    def _shard_blob(self, path: Path) -> Blob:
        if not path.is_file():
            raise CorruptFile(f"{self.name}: the index lists the shard {path.name}, but that file is missing")
        return Blob(path.name, path=path)

    def _open(self, blob: Blob):
        if blob.name not in self._files:
            self._files[blob.name] = open_tensor_file(blob)
        return self._files[blob.name]


def open_model(source, name: str | None = None) -> Model:
    """A :class:`Model` for bytes (an upload, within MAX_UPLOAD_BYTES), a file path or a folder path."""
    if isinstance(source, bytes | bytearray | memoryview):
        return Model(
            name or "uploaded file", None, blob=Blob.from_bytes(source, name or "uploaded file", MAX_UPLOAD_BYTES)
        )
    path = Path(source).expanduser()
    if path.is_file():
        return Model(name or path.name, load_model_config(path), blob=Blob(name or path.name, path=path))
    if not path.is_dir():
        raise CheckpointError(f"{path} does not exist")
    folder = transformer_folder(path)
    model = Model(name or path.name, load_model_config(path))
    for weights in HF_WEIGHTS:
        index = folder / f"{weights}.index.json"
        if index.is_file():
            model.weight_map = _weight_map(folder, index)
            return model
        if (folder / weights).is_file():
            model.blob = Blob(weights, path=folder / weights)
            return model
    lone = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in WEIGHT_SUFFIXES)
    if len(lone) > 1:
        raise NoPositionTable(
            f"{model.name} holds several weight files ({', '.join(p.name for p in lone)}) and no Hugging Face index; "
            "open one of them"
        )
    if lone:
        model.blob = Blob(lone[0].name, path=lone[0])
    return model


def _weight_map(folder: Path, index: Path) -> dict[str, Path]:
    weight_map = read_json(index).get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise CorruptFile(f"{index.name} must have a non-empty weight_map of tensor name -> shard file")
    return {key: _inside(folder, shard, index.name) for key, shard in weight_map.items()}


@dataclasses.dataclass(frozen=True)
class CachedModel:
    """A model in the local Hugging Face cache: its repo id ("org/name") and the snapshot folder to open."""

    name: str
    path: Path


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def list_cached_models(cache_dir: str | os.PathLike | None = None) -> list[CachedModel]:
    """Models already downloaded to the Hugging Face cache (layout ``models--org--name/snapshots/<revision>/``),
    sorted by name, each with the snapshot that ``refs/main`` points to (else the newest one). Reads the disk only."""
    root = Path(cache_dir).expanduser() if cache_dir is not None else hf_cache_dir()
    if not root.is_dir():
        return []
    found = []
    for repo in sorted(root.glob("models--*")):
        snapshot = _snapshot(repo)
        if snapshot is not None:
            found.append(CachedModel(repo.name.removeprefix("models--").replace("--", "/"), snapshot))
    return found


def _snapshot(repo: Path) -> Path | None:
    ref = repo / "refs" / "main"
    if ref.is_file():
        pointed = repo / "snapshots" / ref.read_text(encoding="utf-8").strip()
        if pointed.is_dir() and any(pointed.iterdir()):
            return pointed
    snapshots = [p for p in (repo / "snapshots").glob("*") if p.is_dir() and any(p.iterdir())]
    return max(snapshots, key=lambda p: p.stat().st_mtime) if snapshots else None
