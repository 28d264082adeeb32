"""Colours for every eye: a colour-vision-deficiency simulation, the distances that say whether two colours can
be told apart, and the palettes of the high-contrast, colour-blind-safe mode with the map onto them from the
colours the figures are built with.

The simulation is Machado, Oliveira & Fernandes (2009), "A Physiologically-based Model for Simulation of Color
Vision Deficiency", IEEE TVCG 15(6): one 3 x 3 matrix per deficiency at severity 1 (protanopia, deuteranopia,
tritanopia), applied to linear sRGB. Distances are CIE 1976 Delta E in CIELAB under D65.
"""

from __future__ import annotations

import functools
import re

import numpy as np
from plotly.colors import get_colorscale, sample_colorscale

#: Machado et al. (2009), table of matrices, severity 1.0: simulated linear RGB = M @ linear RGB.
MACHADO_2009 = {
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
    ),
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
    ),
    "tritanopia": np.array(
        [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]]
    ),
}
DEFICIENCIES = tuple(MACHADO_2009)

#: sRGB (D65) to CIE XYZ, IEC 61966-2-1; and the D65 white point, Y = 1.
_SRGB_TO_XYZ = np.array(
    [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]]
)
_WHITE = _SRGB_TO_XYZ.sum(axis=1)


def to_linear(rgb) -> np.ndarray:
    """sRGB in [0, 1] to linear light (IEC 61966-2-1): c / 12.92 up to 0.04045, ((c + 0.055) / 1.055)^2.4 above."""
    rgb = np.asarray(rgb, dtype=np.float64)
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def from_linear(linear) -> np.ndarray:
    """Linear light to sRGB in [0, 1], clipped to the gamut first."""
    linear = np.clip(np.asarray(linear, dtype=np.float64), 0.0, 1.0)
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)


def simulate(rgb, deficiency: str) -> np.ndarray:
    """How ``rgb`` (sRGB in [0, 1], shape (..., 3)) looks with ``deficiency`` (``DEFICIENCIES``): Machado et al.
    (2009)'s matrix at severity 1 applied to linear sRGB, the result clipped to the gamut."""
    if deficiency not in MACHADO_2009:
        raise ValueError(f"the simulation knows {', '.join(DEFICIENCIES)}; got {deficiency!r}")
    return from_linear(to_linear(rgb) @ MACHADO_2009[deficiency].T)


def lab(rgb) -> np.ndarray:
    """sRGB in [0, 1] (shape (..., 3)) to CIELAB (D65): L* from 0 (black) to 100 (white)."""
    xyz = (to_linear(rgb) @ _SRGB_TO_XYZ.T) / _WHITE
    eps, kappa = 216 / 24389, 24389 / 27
    f = np.where(xyz > eps, np.cbrt(xyz), (kappa * xyz + 16) / 116)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


def delta_e(a, b) -> np.ndarray:
    """CIE 1976 colour difference of sRGB colours ``a`` and ``b``: the Euclidean distance in CIELAB (about 2.3 is
    the smallest difference an eye notices side by side)."""
    return np.linalg.norm(lab(a) - lab(b), axis=-1)


def worst_delta_e(a, b) -> np.ndarray:
    """The smallest CIE 1976 difference of ``a`` and ``b`` for normal vision and under each simulated deficiency."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.min([delta_e(a, b), *(delta_e(simulate(a, d), simulate(b, d)) for d in DEFICIENCIES)], axis=0)


def contrast_ratio(a, b=(1.0, 1.0, 1.0)) -> np.ndarray:
    """WCAG 2 contrast ratio (L1 + 0.05) / (L2 + 0.05) of sRGB colours ``a`` and ``b`` (default white), from
    their relative luminance; 3 is the minimum for lines and marks, 4.5 for text."""
    la, lb = (to_linear(c) @ _SRGB_TO_XYZ[1] for c in (np.asarray(a, np.float64), np.asarray(b, np.float64)))
    return (np.maximum(la, lb) + 0.05) / (np.minimum(la, lb) + 0.05)


# ------------------------------------------------------------------------------------------- reading colours

_RGB = re.compile(r"rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*(?:,\s*([\d.]+)\s*)?\)", re.IGNORECASE)


def parse(colour: str) -> tuple[np.ndarray, float | None] | None:
    """``(rgb in [0, 1], alpha or None)`` of a CSS colour written as ``#rgb``, ``#rrggbb``, ``rgb()`` or
    ``rgba()``; None for anything else (a name, a number)."""
    text = colour.strip()
    if text.startswith("#") and len(text) in (4, 7):
        digits = text[1:] if len(text) == 7 else "".join(c * 2 for c in text[1:])
        try:
            return np.array([int(digits[i : i + 2], 16) for i in (0, 2, 4)]) / 255.0, None
        except ValueError:
            return None
    match = _RGB.fullmatch(text)
    if match:
        rgb = np.array([float(match.group(i)) for i in (1, 2, 3)]) / 255.0
        return rgb, None if match.group(4) is None else float(match.group(4))
    return None


def _rgb(colour: str) -> np.ndarray:
    """The rgb in [0, 1] of a colour ``parse`` reads; ValueError for anything else."""
    parsed = parse(colour)
    if parsed is None:
        raise ValueError(f"{colour!r} is not a #rgb, #rrggbb, rgb() or rgba() colour")
    return parsed[0]


def to_hex(rgb) -> str:
    return "#" + "".join(f"{int(round(c * 255)):02x}" for c in np.clip(rgb, 0, 1))


# ------------------------------------------------------------------------------------ the colour-blind-safe set

#: Okabe & Ito (2008), "Color Universal Design": colours that stay apart for every common colour-vision deficiency.
#: Ordered so that neighbours differ most (the order of ``SAFE_COLORWAY``); yellow, too faint on white, is left out.
OKABE_ITO = {
    "blue": "#0072b2",
    "vermillion": "#d55e00",
    "reddish purple": "#cc79a7",
    "black": "#000000",
    "bluish green": "#009e73",
    "orange": "#e69f00",
    "sky blue": "#56b4e9",
}
#: Line and bar colours, in the order traces without a colour of their own take them.
SAFE_COLORWAY = tuple(OKABE_ITO.values())
#: Grey for reference marks in the safe mode: the lightest grey with a 4.5:1 contrast on white.
SAFE_GREY = "#767676"
#: Magnitudes (sequential) and signed values (diverging) in the safe mode. Cividis (Nuñez, Anderton & Renslow 2018)
#: was made to look the same with deuteranopia; PuOr (ColorBrewer, purple - white - orange) keeps its two ends apart
#: for all three deficiencies, where RdBu's dark ends come close for protanopia.
SAFE_SEQUENTIAL = "Cividis"
SAFE_DIVERGING = "PuOr"
#: Named scales that are safe as they are: single hues (light to dark) and the viridis family.
SAFE_SCALES = frozenset({"Blues", "Greys", "Oranges", "Purples", "Greens", "Reds", "Viridis", "Cividis", "Inferno"})
SAFE_SCALES |= frozenset({"Magma", "Plasma", "PuOr", "gray"})

#: Where each colour the figures use (and plotly's default palettes) goes in the safe mode: the same role, an
#: Okabe-Ito colour. Anything not listed goes to the nearest Okabe-Ito colour (``safe_colour``).
_SAFE_FOR = {
    # plotly's and D3's category colours, by hue
    **dict.fromkeys(("#1f77b4", "#636efa", "#2b8cbe", "#3558d4"), OKABE_ITO["blue"]),
    **dict.fromkeys(("#d62728", "#ef553b", "#e34a33"), OKABE_ITO["vermillion"]),
    **dict.fromkeys(("#2ca02c", "#00cc96", "#31a354", "#b6e880"), OKABE_ITO["bluish green"]),
    **dict.fromkeys(("#9467bd", "#ab63fa", "#ff97ff", "#ff6692"), OKABE_ITO["reddish purple"]),
    **dict.fromkeys(("#ff7f0e", "#ffa15a", "#fecb52", "#bcbd22"), OKABE_ITO["orange"]),
    **dict.fromkeys(("#17becf", "#19d3f3", "#9ebcda", "#e377c2"), OKABE_ITO["sky blue"]),
    **dict.fromkeys(("#8c564b", "#7f0000"), OKABE_ITO["black"]),
    # Okabe-Ito itself, and its yellow (too faint on white) as orange
    **{value: value for value in OKABE_ITO.values()},
    "#f0e442": OKABE_ITO["orange"],
}


@functools.lru_cache(maxsize=512)
def safe_colour(colour: str) -> str:
    """``colour`` in the colour-blind-safe mode: its listed Okabe-Ito stand-in; a grey stays a grey, at least as dark
    as ``SAFE_GREY``; any other colour becomes the Okabe-Ito colour nearest to it in CIELAB. Transparency is kept."""
    parsed = parse(colour)
    if parsed is None:
        return colour
    rgb, alpha = parsed
    hexed = to_hex(rgb)
    if hexed in _SAFE_FOR:
        out = _SAFE_FOR[hexed]
    elif np.ptp(rgb) < 0.1:  # a grey (or black, white): keep it, darkened to a readable grey
        grey = _rgb(SAFE_GREY)
        out = hexed if lab(rgb)[0] <= lab(grey)[0] or alpha is not None else SAFE_GREY
    else:
        safe = np.array([_rgb(c) for c in SAFE_COLORWAY])
        out = SAFE_COLORWAY[int(np.argmin(delta_e(safe, rgb)))]
    if alpha is None:
        return out
    r, g, b = (int(round(c * 255)) for c in _rgb(out))
    return f"rgba({r}, {g}, {b}, {alpha:g})"


# ---------------------------------------------------------------------------------------------- colour scales


def scale_colours(scale, n: int = 11) -> np.ndarray:
    """``n`` colours (sRGB in [0, 1]) sampled evenly from a plotly colour scale (a name or ``[[t, colour], ...]``)."""
    named = get_colorscale(scale) if isinstance(scale, str) else [list(s) for s in scale]
    return np.array([_rgb(c) for c in sample_colorscale(named, np.linspace(0, 1, n), colortype="rgb")])


def diverging_separation(scale, n: int = 11) -> float:
    """How well a diverging scale keeps its two sides apart for every eye: the smallest ``worst_delta_e`` between a
    colour and its mirror image about the middle, over the outer half of the scale (near the middle both sides fade
    into the same neutral colour on purpose)."""
    colours = scale_colours(scale, n)
    outer = range(n // 4 + 1)
    return float(min(worst_delta_e(colours[i], colours[n - 1 - i]) for i in outer))


def _named_scales() -> dict[tuple, tuple[str, bool]]:
    """Every named plotly scale, as plotly writes it into a figure (a tuple of its colours), with its reversed form:
    colours -> (name, reversed)."""
    from plotly.colors import PLOTLY_SCALES, named_colorscales

    out: dict[tuple, tuple[str, bool]] = {}
    for name in named_colorscales():
        try:
            stops = get_colorscale(name)
        except Exception:  # pragma: no cover - a name plotly lists but cannot build
            continue
        colours = tuple(to_hex(p[0]) for _, c in stops if (p := parse(c)) is not None)
        out.setdefault(colours, (name, False))
        out.setdefault(colours[::-1], (name, True))
    for name, stops in PLOTLY_SCALES.items():
        colours = tuple(to_hex(p[0]) for _, c in stops if (p := parse(c)) is not None)
        out.setdefault(colours, (name, False))
    return out


@functools.cache
def _known_scales() -> dict[tuple, tuple[str, bool]]:
    return _named_scales()


def _diverging_names() -> frozenset[str]:
    from plotly.colors import diverging

    return frozenset(n.lower() for n in dir(diverging) if not n.startswith("_") and not n.endswith("_r"))


def safe_scale(scale) -> list | str:
    """A colour scale in the colour-blind-safe mode, in the same direction: a named diverging scale becomes
    ``SAFE_DIVERGING``, a multi-hue sequential one (Turbo, Jet, ...) ``SAFE_SEQUENTIAL``, a safe one stays, and a scale
    of its own (steps of category colours) has each colour replaced by ``safe_colour``."""
    if isinstance(scale, str):
        stops = get_colorscale(scale)
    else:
        stops = [list(s) for s in scale]
    colours = tuple(to_hex(p[0]) if (p := parse(c)) is not None else c for _, c in stops)
    known = _known_scales().get(colours)
    if known is None:
        return [[t, safe_colour(c)] for t, c in stops]
    name, flipped = known
    base = name[:-2] if name.endswith("_r") else name
    flipped ^= name.endswith("_r")
    if base.lower() in {s.lower() for s in SAFE_SCALES}:
        return scale if not isinstance(scale, str) else get_colorscale(scale)
    target = SAFE_DIVERGING if base.lower() in _diverging_names() else SAFE_SEQUENTIAL
    return get_colorscale(target + ("_r" if flipped else ""))
