"""M-RoPE (Qwen2-VL, arXiv:2409.12191) against transformers 5.24: ``mrope_position_ids`` against
``Qwen2VLModel.get_rope_index`` of a tiny Qwen2-VL model (on token ids and grids built here), and ``mrope_axes`` against
the axis each pair of ``Qwen2VLRotaryEmbedding`` (sectioned) and ``Qwen3VLTextRotaryEmbedding`` (interleaved)
really turns with."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import Qwen2VLConfig, Qwen2VLTextConfig, Qwen3VLTextConfig
from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel, Qwen2VLRotaryEmbedding
from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding

import posviz

from . import _oracles  # noqa: F401  (quiets the transformers config warnings)
from .test_model_positions import float64_torch

TYPE = {"image": 1, "video": 2}


@functools.cache
def tiny_qwen2_vl(merge: int) -> Qwen2VLModel:
    """A Qwen2-VL model with tiny layers (positions do not depend on the sizes), its vision encoder merging
    ``merge`` x ``merge`` patches."""
    config = Qwen2VLConfig(
        text_config={
            "hidden_size": 16,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "intermediate_size": 16,
            "vocab_size": 64,
            "rope_scaling": {"type": "mrope", "mrope_section": [1, 1, 2]},
        },
        vision_config={"depth": 1, "embed_dim": 16, "hidden_size": 16, "num_heads": 2, "spatial_merge_size": merge},
    )
    return Qwen2VLModel(config)


def hf_rope_index(segments, merge: int) -> np.ndarray:
    """``Qwen2VLModel.get_rope_index`` for the sequence: text tokens of type 0, one token per merged patch of type 1
    (image) or 2 (video), the grids in ``image_grid_thw`` / ``video_grid_thw``."""
    token_types, images, videos = [], [], []
    for item in segments:
        if isinstance(item, int):
            token_types += [0] * item
        else:
            kind, t, h, w = item
            token_types += [TYPE[kind]] * (t * (h // merge) * (w // merge))
            (images if kind == "image" else videos).append([t, h, w])
    ids = torch.arange(len(token_types)).view(1, -1) % 64
    position_ids, _ = tiny_qwen2_vl(merge).get_rope_index(
        ids,
        torch.tensor([token_types]),
        image_grid_thw=torch.tensor(images) if images else None,
        video_grid_thw=torch.tensor(videos) if videos else None,
    )
    return position_ids[:, 0].numpy()


SEQUENCES = {
    "text only": [7],
    "an image between text": [3, ("image", 1, 4, 6), 5],
    "an image first": [("image", 1, 8, 4), 2],
    "a video of 3 frames": [2, ("video", 3, 4, 4), 4],
    "a long video on a small grid (time outruns the grid)": [1, ("video", 9, 2, 4), 3],
    "image, video, image": [2, ("image", 1, 6, 6), 1, ("video", 2, 4, 8), 1, ("image", 1, 2, 2), 3],
    "a video then an image, no text between": [1, ("video", 2, 4, 4), ("image", 1, 4, 2), 1],
}


@pytest.mark.parametrize("case", list(SEQUENCES))
def test_position_ids_equal_get_rope_index(case):
    got = posviz.mrope_position_ids(SEQUENCES[case])
    want = hf_rope_index(SEQUENCES[case], 2)
    assert got.dtype == np.int64 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


segment = st.one_of(
    st.integers(1, 6),
    st.builds(lambda h, w: ("image", 1, h, w), st.integers(1, 5), st.integers(1, 5)),
    st.builds(lambda t, h, w: ("video", t, h, w), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)),
)


@settings(max_examples=60)
@given(st.lists(segment, min_size=1, max_size=6), st.sampled_from([1, 2, 3]))
def test_position_ids_equal_get_rope_index_for_any_sequence(segments, merge):
    segments = [s if isinstance(s, int) else (s[0], s[1], s[2] * merge, s[3] * merge) for s in segments]
    # two grids of the same kind side by side are one block to get_rope_index: a real prompt has text between
    cleaned = []
    for s in segments:
        if cleaned and not isinstance(s, int) and not isinstance(cleaned[-1], int) and cleaned[-1][0] == s[0]:
            cleaned.append(1)
        cleaned.append(s)
    np.testing.assert_array_equal(
        posviz.mrope_position_ids(cleaned, spatial_merge_size=merge), hf_rope_index(cleaned, merge)
    )


def test_text_positions_are_the_same_on_all_three_axes():
    ids = posviz.mrope_position_ids([4, ("image", 1, 4, 4), 3])
    text = np.r_[0:4, 8:11]
    assert (ids[:, text] == ids[0, text]).all()
    np.testing.assert_array_equal(ids[0, text], [0, 1, 2, 3, 6, 7, 8])


def hf_axes(head_dim: int, section, interleaved: bool) -> np.ndarray:
    """The axis each rotary pair turns with, read from the model's rotary module: positions (time, height,
    width) = (1, 2, 3), so the angle of pair j divided by its frequency is 1, 2 or 3."""
    kw = dict(hidden_size=head_dim * 2, num_attention_heads=2, num_key_value_heads=2, head_dim=head_dim)
    with float64_torch():
        if interleaved:
            config = Qwen3VLTextConfig(
                **kw,
                rope_parameters={"rope_type": "default", "mrope_section": list(section), "mrope_interleaved": True},
            )
            module = Qwen3VLTextRotaryEmbedding(config)
        else:
            config = Qwen2VLTextConfig(**kw, rope_parameters={"rope_type": "default", "mrope_section": list(section)})
            module = Qwen2VLRotaryEmbedding(config)
        x = torch.zeros(1, dtype=torch.float64)
        cos, sin = module(x, torch.tensor([1, 2, 3], dtype=torch.int64).view(3, 1, 1))
    half = head_dim // 2
    angle = torch.atan2(sin[0, 0, :half], cos[0, 0, :half]).numpy()
    ratio = angle / module.inv_freq.numpy()
    np.testing.assert_allclose(ratio, np.round(ratio), atol=1e-9)
    return np.round(ratio).astype(np.int64) - 1


SECTIONS = {
    "Qwen2-VL": (128, (16, 24, 24), False),
    "Qwen3-VL": (128, (24, 20, 20), True),
    "uneven, sectioned": (64, (10, 12, 10), False),
    "uneven, interleaved": (64, (14, 9, 9), True),
    "time gets nothing, interleaved": (24, (0, 6, 6), True),
    "no width, sectioned": (16, (4, 4, 0), False),
}


@pytest.mark.parametrize("case", list(SECTIONS))
def test_axes_are_the_rotary_modules(case):
    head_dim, section, interleaved = SECTIONS[case]
    got = posviz.mrope_axes(head_dim, section, interleaved=interleaved)
    np.testing.assert_array_equal(got, hf_axes(head_dim, section, interleaved))
    if not interleaved or 3 * max(section[1:]) <= head_dim // 2:
        # each axis gets its share; interleaved, only when height's and width's strides fit in the head
        assert [int((got == a).sum()) for a in range(3)] == list(section)


def test_sectioned_and_interleaved_differ_in_where_each_axis_lives():
    sectioned = posviz.mrope_axes(128, [24, 20, 20])
    interleaved = posviz.mrope_axes(128, [24, 20, 20], interleaved=True)
    # sectioned: width only has the slowest pairs; interleaved: width has one of the fastest three
    assert sectioned[:3].tolist() == [0, 0, 0] and interleaved[:3].tolist() == [0, 1, 2]
    assert set(sectioned[-20:]) == {2}


BAD = {
    "a section off by one": (lambda: posviz.mrope_axes(128, [16, 24, 25]), "add up to 64"),
    "two numbers": (lambda: posviz.mrope_axes(128, [32, 32]), "three whole numbers"),
    "a negative share": (lambda: posviz.mrope_axes(128, [-1, 33, 32]), "at least 0"),
    "an odd head": (lambda: posviz.mrope_axes(127, [21, 21, 21]), "even"),
    "a grid of 0 patches": (lambda: posviz.mrope_position_ids([3, ("image", 1, 0, 4)]), "no patch"),
    "a grid not a multiple of the merge": (lambda: posviz.mrope_position_ids([("image", 1, 3, 4)]), "multiples of 2"),
    "an image with frames": (lambda: posviz.mrope_position_ids([("image", 2, 4, 4)]), "one frame"),
    "two images side by side": (
        lambda: posviz.mrope_position_ids([("image", 1, 2, 2), ("image", 1, 2, 2)]),
        "no text between",
    ),
    "an unknown segment": (lambda: posviz.mrope_position_ids([("audio", 1, 2, 2)]), "segment 0"),
    "no segment": (lambda: posviz.mrope_position_ids([]), "empty"),
    "a huge video": (lambda: posviz.mrope_position_ids([("video", 64, 512, 512)]), "at most"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_a_sentence(case):
    call, words = BAD[case]
    with pytest.raises(ValueError, match=words):
        call()


def test_the_presets_sections_fit_their_heads():
    for name in ("qwen2_vl_7b", "qwen3_vl_8b"):
        layer = posviz.model_positions(posviz.models.preset(name)).layers[0]
        axes = posviz.mrope_axes(layer.head_dim, layer.mrope_section, interleaved=layer.mrope_interleaved)
        assert axes.size == layer.inv_freq.size
