"""Multimodal RoPE (M-RoPE; Wang et al. 2024, "Qwen2-VL", arXiv:2409.12191, section 2.1).

Each token gets three positions, (time, height, width). A text token has the same number on all three, so for
text M-RoPE is ordinary RoPE. The tokens of an image (or of a video) of t x h x w merged patches, placed after
text that ends at position p - 1, get

    time = p + k,   height = p + r,   width = p + c        (frame k, row r, column c),

and the text after it continues from p + max(h, w) (transformers 5.24's ``get_rope_index``; the paper and the
original code continue from the largest position used, plus one). The rotary pairs are shared among the three
axes by ``mrope_section`` = (s_t, s_h, s_w), s_t + s_h + s_w = head_dim / 2: Qwen2-VL gives the first s_t pairs
(the fastest) to time, the next s_h to height and the last s_w (the slowest) to width; Qwen3-VL interleaves
them (pair j: height if j = 1 mod 3 and j < 3 s_h, width if j = 2 mod 3 and j < 3 s_w, else time), so each axis
gets fast and slow frequencies.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..base.checks import whole

AXES = ("time", "height", "width")
#: The most tokens ``mrope_position_ids`` builds (a video of 64 frames of 64 x 64 merged patches).
MAX_TOKENS = 1 << 18


def check_section(mrope_section, n_pairs: int) -> tuple[int, int, int]:
    """``mrope_section`` as three whole numbers >= 0 that add up to ``n_pairs`` (head_dim / 2), else ValueError."""
    if isinstance(mrope_section, (str, bytes)) or not hasattr(mrope_section, "__len__") or len(mrope_section) != 3:
        raise ValueError(
            "mrope_section gives the number of rotary pairs for time, height and width: three whole numbers, "
            f"such as [16, 24, 24]; got {mrope_section!r}"
        )
    section = tuple(whole(f"mrope_section[{i}]", v, minimum=0) for i, v in enumerate(mrope_section))
    if sum(section) != n_pairs:
        raise ValueError(
            f"mrope_section {list(section)} shares {sum(section)} rotary pairs among time, height and width, but a "
            f"head of {2 * n_pairs} dimensions has {n_pairs} pairs (head_dim / 2); the three numbers must add up "
            f"to {n_pairs}"
        )
    return section  # type: ignore[return-value]


def mrope_axes(head_dim: int, mrope_section, *, interleaved: bool = False) -> np.ndarray:
    """For each of the head_dim / 2 rotary pairs, the axis whose position turns it: 0 time, 1 height, 2 width.

    Sectioned (Qwen2-VL, ``Qwen2VLRotaryEmbedding``): pairs [0, s_t) time, [s_t, s_t + s_h) height, the rest width.
    Interleaved (Qwen3-VL, ``Qwen3VLTextRotaryEmbedding``): pair j is height if j mod 3 = 1 and j < 3 s_h, width if
    j mod 3 = 2 and j < 3 s_w, time otherwise (so the shares are s_t, s_h, s_w only when 3 s_h and 3 s_w fit in
    the head, as in the published [24, 20, 20]). In both, pair j turns with frequency theta_j =
    base^(-2j / head_dim) times that axis's position."""
    head_dim = whole("head_dim", head_dim, minimum=2, maximum=4096)
    if head_dim % 2:
        raise ValueError(f"RoPE turns pairs of dimensions, so head_dim must be even; got {head_dim}")
    n_pairs = head_dim // 2
    s_t, s_h, s_w = check_section(mrope_section, n_pairs)
    j = np.arange(n_pairs)
    if not interleaved:
        return np.where(j < s_t, 0, np.where(j < s_t + s_h, 1, 2)).astype(np.int64)
    axes = np.zeros(n_pairs, dtype=np.int64)
    axes[(j % 3 == 1) & (j < 3 * s_h)] = 1
    axes[(j % 3 == 2) & (j < 3 * s_w)] = 2
    return axes


def _segment(item, index: int, merge: int) -> tuple[str, int, int, int] | int:
    if isinstance(item, numbers.Integral) and not isinstance(item, bool):
        return whole(f"segment {index} (a number of text tokens)", item)
    if not isinstance(item, (tuple, list)) or len(item) != 4 or item[0] not in ("image", "video"):
        raise ValueError(
            f"segment {index} must be a number of text tokens or ('image' | 'video', t, h, w); got {item!r}"
        )
    kind = item[0]
    t = whole(f"segment {index}: t (frames)", item[1], maximum=MAX_TOKENS)
    h = whole(f"segment {index}: h (rows of patches)", item[2], minimum=0, maximum=MAX_TOKENS)
    w = whole(f"segment {index}: w (columns of patches)", item[3], minimum=0, maximum=MAX_TOKENS)
    if h == 0 or w == 0:
        raise ValueError(f"segment {index}: an {kind} of {h} x {w} patches has no patch at all; h and w must be >= 1")
    if kind == "image" and t != 1:
        raise ValueError(f"segment {index}: an image has one frame (t = 1); got t = {t}. Use 'video' for more")
    if h % merge or w % merge:
        raise ValueError(
            f"segment {index}: the vision encoder merges {merge} x {merge} patches into one token, so h and w must "
            f"be multiples of {merge}; got {h} x {w}"
        )
    return kind, t, h, w


def mrope_position_ids(segments, *, spatial_merge_size: int = 2) -> np.ndarray:
    """The (time, height, width) positions of every token of a Qwen2-VL sequence: int64 array (3, seq_len).

    ``segments``: a list whose items are an int (that many text tokens, special tokens such as
    <|vision_start|> included) or ``("image", 1, h, w)`` / ``("video", t, h, w)`` (the grid in patches before
    merging, as in ``image_grid_thw`` / ``video_grid_thw``). A grid becomes t (h/m) (w/m) tokens, m =
    ``spatial_merge_size``, in frame, row, column order, at positions (p + k, p + r, p + c) after text ending at
    p - 1; the text after it starts at p + max(h, w) / m. Equal to transformers 5.24's
    ``Qwen2VLModel.get_rope_index`` for the same tokens (Wang et al. 2024, arXiv:2409.12191).

    Two images (or two videos) with no text between them would be one block to ``get_rope_index`` (it groups
    neighbouring tokens of the same kind), which a real prompt never has (<|vision_start|> and <|vision_end|> are
    text): such a sequence is refused.
    """
    merge = whole("spatial_merge_size", spatial_merge_size, maximum=64)
    if isinstance(segments, (str, bytes)) or not hasattr(segments, "__iter__"):
        raise ValueError(f"segments must be a list of text lengths and ('image' | 'video', t, h, w); got {segments!r}")
    items = [_segment(item, i, merge) for i, item in enumerate(segments)]
    if not items:
        raise ValueError("segments is empty: give at least one text token or one image")
    for i in range(1, len(items)):
        a, b = items[i - 1], items[i]
        if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
            raise ValueError(
                f"segments {i - 1} and {i} are two {a[0]}s with no text between them; put at least one text token "
                "(Qwen2-VL's <|vision_end|> and <|vision_start|>) between them"
            )
    total = sum(x if isinstance(x, int) else x[1] * (x[2] // merge) * (x[3] // merge) for x in items)
    if total > MAX_TOKENS:
        raise ValueError(f"the sequence would have {total:,} tokens; posviz builds at most {MAX_TOKENS:,}")
    parts = []
    current = 0
    for item in items:
        if isinstance(item, int):
            parts.append(np.broadcast_to(np.arange(current, current + item), (3, item)))
            current += item
            continue
        _, t, h, w = item
        gh, gw = h // merge, w // merge
        tt, hh, ww = np.meshgrid(np.arange(t), np.arange(gh), np.arange(gw), indexing="ij")
        parts.append(np.stack([tt.ravel(), hh.ravel(), ww.ravel()]) + current)
        current += max(gh, gw)
    return np.concatenate(parts, axis=1).astype(np.int64)


__all__ = ["AXES", "MAX_TOKENS", "check_section", "mrope_axes", "mrope_position_ids"]
