"""Real model configs read as transformers reads them: every layer's positions, the presets, M-RoPE and 2-D RoPE.

model_positions(config) -> ModelPositions       one LayerPositions per layer (positions.py)
mrope_position_ids(segments), mrope_axes(...)   Qwen2-VL / Qwen3-VL multimodal RoPE (mrope.py)
rope_2d_angles(n_rows, n_cols, head_dim)        Pixtral's axial 2-D RoPE (rope2d.py)
PRESETS, preset(name), preset_text(name)        published configs shipped with posviz (presets.py)
"""

from .mrope import mrope_axes, mrope_position_ids
from .positions import (
    MAX_CONFIG_BYTES,
    MODEL_TYPES,
    LayerGroup,
    LayerPositions,
    ModelPositions,
    TemperatureTuning,
    model_positions,
)
from .presets import PRESETS, preset, preset_text
from .rope2d import rope_2d_angles, rope_2d_axes

__all__ = [
    "MAX_CONFIG_BYTES",
    "MODEL_TYPES",
    "PRESETS",
    "LayerGroup",
    "LayerPositions",
    "ModelPositions",
    "TemperatureTuning",
    "model_positions",
    "mrope_axes",
    "mrope_position_ids",
    "preset",
    "preset_text",
    "rope_2d_angles",
    "rope_2d_axes",
]
