"""Reading a config.json safely: from a dict, JSON text, a file or a model folder, within a size limit, and the
checks (``posviz.base.checks``) that turn a malformed value into a sentence a student understands."""

from __future__ import annotations

import json
import os
from pathlib import Path

#: The largest config.json posviz reads, in bytes. Published configs are a few kilobytes (Phi-3.5's, with its two
#: lists of 48 LongRoPE factors, about 7 KB); anything near a megabyte is not a model config.
MAX_CONFIG_BYTES = 1_000_000

#: The most decoder layers a config may declare (the largest published models have about 130).
MAX_LAYERS = 4096


def load(config) -> dict:
    """The config as a dict: ``config`` is a dict, the text of a config.json, or a path (str or Path) to a
    config.json or to a folder holding one. Text and files above ``MAX_CONFIG_BYTES`` are refused."""
    if isinstance(config, dict):
        try:
            size = len(json.dumps(config))
        except (TypeError, ValueError):
            raise ValueError("the config must hold only JSON values (numbers, strings, lists, objects)") from None
        if size > MAX_CONFIG_BYTES:
            raise ValueError(_too_big(size))
        return config
    if isinstance(config, os.PathLike) or (isinstance(config, str) and not config.lstrip().startswith(("{", "["))):
        path = Path(config)
        if len(str(config)) > 4096 or not path.exists():
            raise ValueError(
                "the config is neither JSON text (it should start with '{') nor the path of a config.json or of a "
                f"model folder: {str(config)[:80]!r}"
            )
        if path.is_dir():
            path = path / "config.json"
            if not path.is_file():
                raise ValueError(f"the folder {path.parent} holds no config.json")
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ValueError(_too_big(size))
        try:
            config = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read {path}: {exc}") from None
    if isinstance(config, bytes):
        try:
            config = config.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("the config is not UTF-8 text") from None
    if not isinstance(config, str):
        raise ValueError(f"a config is a dict, the text of a config.json or a path to one; got {type(config).__name__}")
    if len(config) > MAX_CONFIG_BYTES:
        raise ValueError(_too_big(len(config.encode("utf-8"))))
    try:
        parsed = json.loads(config)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the config is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(parsed, dict):
        raise ValueError(f"a config.json holds one JSON object {{...}}; got {type(parsed).__name__}")
    return parsed


def _too_big(size: int) -> str:
    return (
        f"the config is {size:,} bytes; a model's config.json is a few kilobytes, and posviz reads at most "
        f"{MAX_CONFIG_BYTES:,} bytes (is this a weights file or a tokenizer rather than config.json?)"
    )
